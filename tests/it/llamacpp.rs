//! End to end against the real engine: llama.cpp's server (xllamacpp, SmolLM2-135M, 1 thread)
//! started by scripts/llamacpp-server.py, measured by the built `perfgate run` binary on
//! `/v1/completions` and `/v1/chat/completions`. Needs scripts/install-engine.sh (run by
//! scripts/test.sh); skipped without it unless PERFGATE_REQUIRE_ENGINE=1, then it fails.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{free_port, wait_with_limit};

/// The launcher, its Python and the model, from the environment scripts/test.sh sets up.
struct Install {
    python: PathBuf,
    launcher: PathBuf,
    model: PathBuf,
}

fn install() -> Option<Install> {
    let get = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = get("PERFGATE_LLAMACPP_PYTHON");
    let launcher =
        get("PERFGATE_LLAMACPP_LAUNCHER").or(Some(root.join("scripts/llamacpp-server.py")));
    let model = get("PERFGATE_MODEL");
    match (python, launcher, model) {
        (Some(python), Some(launcher), Some(model))
            if python.is_file() && launcher.is_file() && model.is_file() =>
        {
            Some(Install {
                python,
                launcher,
                model,
            })
        }
        _ => {
            crate::support::skip_unless_required(
                "the llama.cpp engine is not installed",
                "run scripts/install-engine.sh, which writes PERFGATE_LLAMACPP_PYTHON, \
                 PERFGATE_LLAMACPP_LAUNCHER and PERFGATE_MODEL to .cache/env.sh",
            );
            None
        }
    }
}

/// A port nobody listens on right now (bound to 127.0.0.1:0, then released).
/// The running engine; its whole process group is stopped on drop, even when a test panics.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    fn start(inst: &Install, dir: &Path, parallel: u32) -> Server {
        let port = free_port();
        let log = dir.join("engine.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(&inst.python)
            .arg(&inst.launcher)
            .arg("--model")
            .arg(&inst.model)
            .args(["--alias", "smollm2", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--ctx", &(512 * parallel).to_string()])
            .args(["--parallel", &parallel.to_string(), "--threads", "1"])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0)
            .spawn()
            .expect("start the llama.cpp launcher");
        let mut s = Server { child, port, log };
        s.wait_healthy(Duration::from_secs(90));
        s
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_healthy(&mut self, limit: Duration) {
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("engine exited early ({status}); log:\n{}", self.log_text());
            }
            if http_get(self.port, "/health").is_some_and(|(code, _)| code == 200) {
                return;
            }
            if t0.elapsed() > limit {
                panic!(
                    "engine not healthy after {limit:?}; log:\n{}",
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let pgid = nix::unistd::Pid::from_raw(-(self.child.id() as i32));
        let _ = nix::sys::signal::kill(pgid, nix::sys::signal::Signal::SIGTERM);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                // The leader is gone; make sure nothing else of the group lingers.
                let _ = nix::sys::signal::kill(pgid, nix::sys::signal::Signal::SIGKILL);
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = nix::sys::signal::kill(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// A bare HTTP/1.0 GET on loopback: (status, body), or None when nothing answers yet.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    let code = buf.split_whitespace().nth(1)?.parse().ok()?;
    let body = buf
        .split_once("\r\n\r\n")
        .map(|x| x.1)
        .unwrap_or("")
        .to_string();
    Some((code, body))
}

/// Run the built binary with a hard time limit; never hangs the test.
fn perfgate(args: &[&str], limit: Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_perfgate"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_with_limit(child, limit, &format!("perfgate {args:?}"))
}

const PROMPTS: usize = 6;
const INPUT_LEN: u32 = 24;
const OUTPUT_LEN: u32 = 12;

/// `perfgate run` with a tiny random workload; returns the saved JSON result.
fn run(server: &Server, endpoint: &str, dir: &Path, name: &str) -> Value {
    let url = server.url();
    let (prompts, input, output) = (
        PROMPTS.to_string(),
        INPUT_LEN.to_string(),
        OUTPUT_LEN.to_string(),
    );
    let dir_s = dir.to_str().unwrap();
    let args = [
        "run",
        "--base-url",
        &url,
        "--endpoint",
        endpoint,
        "--backend",
        "llama.cpp",
        "--model",
        "smollm2",
        "--tokenizer",
        "server",
        "--dataset-name",
        "random",
        "--random-input-len",
        &input,
        "--random-output-len",
        &output,
        "--num-prompts",
        &prompts,
        "--max-concurrency",
        "2",
        "--seed",
        "1",
        "--ignore-eos",
        "--request-timeout",
        "60",
        "--save-result",
        "--save-detailed",
        "--result-dir",
        dir_s,
        "--result-filename",
        name,
        "--no-progress",
        // llama.cpp closes streamed connections it announced as keep-alive.
        "--no-keep-alive",
    ];
    let out = perfgate(&args, Duration::from_secs(180));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "perfgate run failed ({})\nstdout:\n{stdout}\nstderr:\n{stderr}\nengine log tail:\n{}",
        out.status,
        tail(&server.log_text(), 40)
    );
    assert!(stdout.contains("Serving Benchmark Result"), "{stdout}");
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn check(v: &Value, endpoint: &str) {
    let n = PROMPTS as u64;
    let num = |k: &str| {
        v.get(k)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("{endpoint}: no number `{k}` in {v}"))
    };
    assert_eq!(num("completed") as u64, n, "{endpoint}: {v}");
    assert_eq!(num("failed") as u64, 0, "{endpoint}: {v}");
    assert_eq!(
        num("total_output_tokens") as u64,
        n * OUTPUT_LEN as u64,
        "{endpoint}: exact output tokens with ignore_eos"
    );
    assert!(num("mean_ttft_ms") > 0.0, "{endpoint}: {v}");
    assert!(num("mean_itl_ms") > 0.0, "{endpoint}: {v}");
    assert!(num("mean_tpot_ms") > 0.0, "{endpoint}: {v}");
    assert!(num("duration") > 0.0, "{endpoint}: {v}");
    let lens: Vec<u64> = v["output_lens"]
        .as_array()
        .unwrap_or_else(|| panic!("{endpoint}: no output_lens in {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(lens, vec![OUTPUT_LEN as u64; PROMPTS], "{endpoint}");
    let in_lens: Vec<u64> = v["input_lens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(in_lens, vec![INPUT_LEN as u64; PROMPTS], "{endpoint}");
    let ttfts = v["ttfts"].as_array().unwrap();
    assert!(
        ttfts.iter().all(|t| t.as_f64().unwrap() > 0.0),
        "{endpoint}: {ttfts:?}"
    );
    let itls = v["itls"].as_array().unwrap();
    assert_eq!(itls.len(), PROMPTS);
    for gaps in itls {
        // llama.cpp streams one chunk per token, so there are gaps between chunks to measure.
        let gaps = gaps.as_array().unwrap();
        assert!(
            !gaps.is_empty(),
            "{endpoint}: a request without ITL samples"
        );
        assert!(gaps.len() <= OUTPUT_LEN as usize, "{endpoint}: {gaps:?}");
    }
}

#[test]
fn perfgate_run_against_llamacpp_completions_and_chat() {
    let Some(inst) = install() else {
        return;
    };
    let _serial = crate::support::serial();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&inst, dir.path(), 2);

    // The engine's own tokenizer: exact prompt lengths, verified here against /tokenize.
    let completions = run(&server, "/v1/completions", dir.path(), "completions.json");
    check(&completions, "/v1/completions");
    assert_eq!(
        completions["total_input_tokens"].as_u64(),
        Some(PROMPTS as u64 * INPUT_LEN as u64)
    );

    let chat = run(&server, "/v1/chat/completions", dir.path(), "chat.json");
    check(&chat, "/v1/chat/completions");

    // The server is still healthy after both runs (nothing crashed it).
    assert_eq!(http_get(server.port, "/health").map(|x| x.0), Some(200));

    // The server tokenizer on its own (one engine start serves both checks: 2 cores).
    server_tokenizer_round_trips(&server);
}

fn server_tokenizer_round_trips(server: &Server) {
    let tok = perfgate::client::tokenize::load("server", &server.url()).unwrap();
    assert_eq!(tok.vocab_size(), 49152, "SmolLM2's vocabulary");
    let ids = tok.encode("Hello world, this is a test").unwrap();
    assert!(ids.len() >= 5, "{ids:?}");
    assert_eq!(tok.decode(&ids).unwrap(), "Hello world, this is a test");
    // Exact random prompts with the engine's tokenizer, from inside a tokio runtime too.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let spec = perfgate::dataset::DatasetSpec {
        name: perfgate::dataset::DatasetName::Random,
        path: None,
        num_prompts: 5,
        random_input_len: 40,
        random_output_len: 8,
        random_range_ratio: 0.5,
        range_convention: perfgate::record::RangeConvention::Vllm,
        sharegpt_output_len: None,
        seed: 3,
        ..Default::default()
    };
    let ds = rt.block_on(async { perfgate::dataset::build(&spec, tok.as_ref()).unwrap() });
    for p in &ds.prompts {
        assert_eq!(
            tok.encode(&p.text).unwrap().len(),
            p.input_len as usize,
            "{p:?}"
        );
    }
    drop(rt);
    drop(tok);
}
