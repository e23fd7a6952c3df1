//! The client benchmark (issue 7): how much CPU perfgate's load client spends per streamed token,
//! how fast it can go, how exact its TTFT and ITL are against the server's own truth, and how much
//! memory a 10,000-request run takes — side by side with SGLang's Python `bench_serving.py` against
//! the same fake server (`perfgate_fakeserver`). The server runs on core 0, each client on core 1.
//!
//! Run by hand, never as part of `cargo test`:
//!     cargo bench --bench client                 # everything, SGLang set up by scripts/setup-sglang-bench.sh
//!     cargo bench --bench client -- --skip-sglang
//!     cargo bench --bench client -- --only cpu,accuracy,rss,prep --quick
//!     cargo bench --bench client -- --no-rt     # no SCHED_FIFO for server and clients
//!     cargo bench --bench client -- --only oracle --skip-sglang   # TTFT error request by request
//!     PERFGATE_BENCH_BASE_BIN=path/to/old/perfgate cargo bench --bench client   # A/B two builds
//! The Rust clients of vLLM 0.33 (`vllm-rs bench serve`) and SGLang 0.5.23 (`sglang-bench`) are
//! set up at benchmark time by scripts/setup-rust-clients.sh (skip with --skip-rust-clients).
//! The report is printed and also written to target/bench-client/report.md.

#[path = "client/child.rs"]
mod child;
#[path = "client/oracle.rs"]
mod oracle;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use child::{run_pinned, ChildRun};
use perfgate_fakeserver::{percentile, FakeConfig, FakeServer};

const SERVER_CORE: usize = 0;
const CLIENT_CORE: usize = 1;
const CHILD_LIMIT: Duration = Duration::from_secs(600);

/// The fake server, serving the model `bench`, on [`SERVER_CORE`], at SCHED_FIFO `fifo` when
/// given.
fn start_server(cfg: FakeConfig, fifo: Option<i32>) -> std::io::Result<FakeServer> {
    let cfg = FakeConfig {
        model: "bench".into(),
        ..cfg
    };
    FakeServer::start_on(cfg, 0, move || {
        child::pin_current_thread(SERVER_CORE);
        if let Some(p) = fifo {
            child::set_fifo(p);
        }
    })
}

/// One closed-loop workload: `num_prompts` random prompts of `input_len` tokens, `output_len`
/// tokens each, at most `concurrency` in flight.
#[derive(Debug, Clone, Copy)]
struct Workload {
    num_prompts: u64,
    concurrency: u64,
    input_len: u64,
    output_len: u64,
}

/// What a client reported (its own result JSON) plus what the kernel says it used.
#[derive(Debug, Clone)]
struct ClientResult {
    child: ChildRun,
    completed: u64,
    failed: u64,
    total_output_tokens: u64,
    output_throughput: f64,
    mean_ttft_ms: f64,
    p99_ttft_ms: f64,
    mean_itl_ms: f64,
    /// The whole result document (per-request lists when run with `detailed`).
    detail: serde_json::Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Client {
    Perfgate,
    /// Another perfgate build (`PERFGATE_BENCH_BASE_BIN`), measured in the same runs.
    PerfgateBase,
    /// vLLM 0.33's Rust client, `vllm-rs bench serve` (scripts/setup-rust-clients.sh).
    VllmRs,
    /// SGLang 0.5.23's Rust client, `sglang-bench` (scripts/setup-rust-clients.sh).
    SglangRs,
    /// SGLang's Python `bench_serving.py` (scripts/setup-sglang-bench.sh).
    Sglang,
}

impl Client {
    const ALL: [Client; 5] = [
        Client::Perfgate,
        Client::PerfgateBase,
        Client::VllmRs,
        Client::SglangRs,
        Client::Sglang,
    ];

    fn name(self) -> &'static str {
        match self {
            Client::Perfgate => "perfgate",
            Client::PerfgateBase => "perfgate (base build)",
            Client::VllmRs => "vllm-rs bench serve",
            Client::SglangRs => "sglang-bench",
            Client::Sglang => "sglang bench_serving",
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Client::Perfgate => "perfgate",
            Client::PerfgateBase => "perfgate-base",
            Client::VllmRs => "vllm-rs",
            Client::SglangRs => "sglang-bench",
            Client::Sglang => "sglang",
        }
    }
}

struct Env {
    perfgate: PathBuf,
    perfgate_base: Option<PathBuf>,
    rust_clients: RustClients,
    tokenizer_dir: PathBuf,
    sglang: Option<Sglang>,
    work: PathBuf,
    quick: bool,
    sglang_rss: bool,
    /// SCHED_FIFO priorities (None with --no-rt).
    server_fifo: Option<i32>,
    client_fifo: Option<i32>,
}

struct Sglang {
    python: PathBuf,
    script: PathBuf,
}

/// The two Rust clients, each when set up: the `vllm-rs` binary from the vLLM 0.33.0 wheel, and
/// SGLang 0.5.23's `_bench` extension with the loader that runs it as `sglang-bench`.
#[derive(Default)]
struct RustClients {
    vllm_rs: Option<PathBuf>,
    sglang_bench: Option<(PathBuf, PathBuf, PathBuf)>,
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v.get(key).and_then(|x| x.as_f64()).unwrap_or(f64::NAN)
}

impl Env {
    fn command(
        &self,
        client: Client,
        w: Workload,
        base_url: &str,
        out: &Path,
        detailed: bool,
    ) -> Option<Command> {
        let (n, c, inp, outp) = (
            w.num_prompts.to_string(),
            w.concurrency.to_string(),
            w.input_len.to_string(),
            w.output_len.to_string(),
        );
        match client {
            Client::Perfgate | Client::PerfgateBase => {
                let bin = match client {
                    Client::Perfgate => &self.perfgate,
                    _ => self.perfgate_base.as_ref()?,
                };
                let mut c = Command::new(bin);
                c.arg("run")
                    .args(["--base-url", base_url, "--model", "bench"])
                    .arg("--tokenizer")
                    .arg(self.tokenizer_dir.join("tokenizer.json"))
                    .args(["--dataset-name", "random"])
                    .args(["--random-input-len", &w.input_len.to_string()])
                    .args(["--random-output-len", &w.output_len.to_string()])
                    .args(["--num-prompts", &w.num_prompts.to_string()])
                    .args(["--max-concurrency", &w.concurrency.to_string()])
                    .args(["--seed", "1", "--save-result"])
                    .arg("--result-dir")
                    .arg(out.parent().unwrap())
                    .arg("--result-filename")
                    .arg(out.file_name().unwrap());
                if detailed {
                    c.arg("--save-detailed");
                }
                Some(c)
            }
            Client::VllmRs => {
                let mut cmd = Command::new(self.rust_clients.vllm_rs.as_ref()?);
                cmd.args([
                    "bench",
                    "serve",
                    "--backend",
                    "openai",
                    "--base-url",
                    base_url,
                ])
                .args(["--model", "bench", "--tokenizer"])
                .arg(&self.tokenizer_dir)
                .args(["--dataset-name", "random", "--random-input-len", &inp])
                .args(["--random-output-len", &outp, "--num-prompts", &n])
                .args(["--max-concurrency", &c, "--seed", "1", "--ignore-eos"])
                .args(["--disable-tqdm", "--save-result", "--result-dir"])
                .arg(out.parent().unwrap())
                .arg("--result-filename")
                .arg(out.file_name().unwrap());
                if detailed {
                    cmd.arg("--save-detailed");
                }
                Some(cmd)
            }
            Client::SglangRs => {
                let (python, loader, ext) = self.rust_clients.sglang_bench.as_ref()?;
                let mut cmd = Command::new(python);
                cmd.arg(loader)
                    .arg(ext)
                    .args(["--backend", "vllm", "--base-url", base_url])
                    .arg("--model")
                    .arg(&self.tokenizer_dir)
                    .args(["--served-model-name", "bench", "--tokenizer"])
                    .arg(&self.tokenizer_dir)
                    .args([
                        "--dataset-name",
                        "random-ids",
                        "--random-range-ratio",
                        "1.0",
                    ])
                    .args(["--random-input-len", &inp, "--random-output-len", &outp])
                    .args(["--num-prompts", &n, "--max-concurrency", &c])
                    .args(["--seed", "1", "--disable-tqdm", "--warmup-requests", "1"])
                    .arg("--output-file")
                    .arg(out);
                if detailed {
                    cmd.arg("--output-details");
                }
                Some(cmd)
            }
            Client::Sglang => {
                let s = self.sglang.as_ref()?;
                let mut c = Command::new(&s.python);
                c.arg(&s.script)
                    .args(["--backend", "vllm", "--base-url", base_url])
                    .arg("--model")
                    .arg(&self.tokenizer_dir)
                    .args(["--served-model-name", "bench"])
                    .arg("--tokenizer")
                    .arg(&self.tokenizer_dir)
                    .args([
                        "--dataset-name",
                        "random-ids",
                        "--random-range-ratio",
                        "1.0",
                    ])
                    .args(["--random-input-len", &w.input_len.to_string()])
                    .args(["--random-output-len", &w.output_len.to_string()])
                    .args(["--num-prompts", &w.num_prompts.to_string()])
                    .args(["--max-concurrency", &w.concurrency.to_string()])
                    .args(["--seed", "1", "--disable-tqdm", "--warmup-requests", "1"])
                    .arg("--output-file")
                    .arg(out)
                    .env("HF_HUB_OFFLINE", "1")
                    .env("TRANSFORMERS_OFFLINE", "1")
                    .env("TOKENIZERS_PARALLELISM", "false");
                Some(c)
            }
        }
    }

    /// Run one client against a running server; Ok(None) when that client is not set up.
    fn run(
        &self,
        client: Client,
        w: Workload,
        server: &FakeServer,
        tag: &str,
    ) -> Result<Option<ClientResult>, String> {
        let before = server.requests_arrived();
        let started = || server.requests_arrived() > before;
        self.run_at(client, w, &server.url(), &started, tag, false)
    }

    /// Run one client against the server at `base_url`; `started` says when its first request
    /// arrived (the CPU of what came before is set-up). `detailed`: per-request output too.
    fn run_at(
        &self,
        client: Client,
        w: Workload,
        base_url: &str,
        started: &dyn Fn() -> bool,
        tag: &str,
        detailed: bool,
    ) -> Result<Option<ClientResult>, String> {
        let name = format!("{}-{tag}", client.tag());
        let out = self.work.join(format!("{name}.json"));
        let _ = std::fs::remove_file(&out);
        let Some(cmd) = self.command(client, w, base_url, &out, detailed) else {
            return Ok(None);
        };
        let child = run_pinned(
            cmd,
            CLIENT_CORE,
            self.client_fifo,
            &self.work,
            &name,
            CHILD_LIMIT,
            started,
        )
        .map_err(|e| e.to_string())?;
        if child.exit_code != 0 {
            return Err(format!(
                "{name}: exit code {}; stderr tail:\n{}",
                child.exit_code,
                child::tail(&child.stderr, 15)
            ));
        }
        let text = std::fs::read_to_string(&out)
            .map_err(|e| format!("{name}: no result file {}: {e}", out.display()))?;
        // Python's json writes NaN and Infinity, which are not JSON.
        let text = text
            .replace("-Infinity", "null")
            .replace("Infinity", "null")
            .replace("NaN", "null");
        // SGLang appends JSON lines; perfgate writes one object. Take the last non-empty line/object.
        let v: serde_json::Value = serde_json::from_str(text.trim())
            .or_else(|_| serde_json::from_str(text.trim().lines().last().unwrap_or("")))
            .map_err(|e| format!("{name}: bad result JSON: {e}"))?;
        let completed = num(&v, "completed") as u64;
        let failed = v
            .get("failed")
            .and_then(|x| x.as_u64())
            .unwrap_or(w.num_prompts.saturating_sub(completed));
        Ok(Some(ClientResult {
            detail: v.clone(),
            child,
            completed,
            failed,
            total_output_tokens: num(&v, "total_output_tokens") as u64,
            output_throughput: num(&v, "output_throughput"),
            mean_ttft_ms: num(&v, "mean_ttft_ms"),
            p99_ttft_ms: num(&v, "p99_ttft_ms"),
            mean_itl_ms: num(&v, "mean_itl_ms"),
        }))
    }
}

/// A result table: rows of (figure, per-client cells, target).
#[derive(Default)]
struct Report {
    rows: Vec<(String, BTreeMap<Client, String>, String, String)>,
    notes: Vec<String>,
}

impl Report {
    fn row(&mut self, figure: &str, cells: BTreeMap<Client, String>, ratio: String, target: &str) {
        self.rows
            .push((figure.to_string(), cells, ratio, target.to_string()));
    }

    fn render(&self) -> String {
        let mut s = String::new();
        // A column for each client that has a figure, in a fixed order.
        let cols: Vec<Client> = Client::ALL
            .into_iter()
            .filter(|c| self.rows.iter().any(|r| r.1.contains_key(c)))
            .collect();
        let names: Vec<&str> = cols.iter().map(|c| c.name()).collect();
        let _ = writeln!(
            s,
            "| figure | {} | sglang bench_serving / perfgate | target (perfgate) |",
            names.join(" | ")
        );
        let _ = writeln!(s, "|---|{}---:|---|", "---:|".repeat(cols.len()));
        for (fig, cells, ratio, target) in &self.rows {
            let get = |c: &Client| cells.get(c).cloned().unwrap_or_else(|| "–".into());
            let row: Vec<String> = cols.iter().map(get).collect();
            let _ = writeln!(s, "| {fig} | {} | {ratio} | {target} |", row.join(" | "));
        }
        for n in &self.notes {
            let _ = writeln!(s, "\n- {n}");
        }
        s
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(p), Some(s)) if p.abs() > 0.0 && p.is_finite() && s.is_finite() => {
            format!("{:.1}×", s / p)
        }
        _ => "–".into(),
    }
}

fn clients(env: &Env) -> Vec<Client> {
    let mut v = vec![Client::Perfgate];
    if env.perfgate_base.is_some() {
        v.push(Client::PerfgateBase);
    }
    if env.rust_clients.vllm_rs.is_some() {
        v.push(Client::VllmRs);
    }
    if env.rust_clients.sglang_bench.is_some() {
        v.push(Client::SglangRs);
    }
    if env.sglang.is_some() {
        v.push(Client::Sglang);
    }
    v
}

fn check(r: &ClientResult, w: Workload, label: &str, report: &mut Report) {
    if r.failed > 0 || r.completed != w.num_prompts {
        report.notes.push(format!(
            "{label}: completed {} of {} (failed {})",
            r.completed, w.num_prompts, r.failed
        ));
    }
}

/// Marginal CPU per streamed token and throughput: two blast runs of different output lengths.
fn phase_cpu(env: &Env, report: &mut Report) {
    // The long run streams ~2 M tokens: at a few tenths of a µs per token its load phase then
    // outweighs the run-to-run spread of the fixed costs (connection set-up, exit) that the
    // difference cancels only on average.
    let (n, short, long) = if env.quick {
        (256, 64, 2048)
    } else {
        (512, 128, 4096)
    };
    let reps = if env.quick { 1 } else { 3 };
    let w1 = Workload {
        num_prompts: n,
        concurrency: 64,
        input_len: 128,
        output_len: short,
    };
    let w2 = Workload {
        output_len: long,
        ..w1
    };
    let mut per_token = BTreeMap::new();
    let mut run_per_token = BTreeMap::new();
    let mut cells_run = BTreeMap::new();
    let mut tps = BTreeMap::new();
    let mut cells_us = BTreeMap::new();
    let mut cells_tps = BTreeMap::new();
    for client in clients(env) {
        // SGLang's Python client takes minutes per run: once.
        let reps = if client == Client::Sglang { 1 } else { reps };
        let mut marg = Vec::new();
        let mut thr = Vec::new();
        let mut run_phase = Vec::new();
        for rep in 0..reps {
            // vLLM's `/tokenize` with the benchmark's tokenizer: vllm-rs checks its prompts
            // against it. (The streams do not depend on the API mimicked.)
            let cfg = FakeConfig {
                api: perfgate_fakeserver::FakeApi::Vllm,
                tokenizer_json: Some(env.tokenizer_dir.join("tokenizer.json")),
                ..FakeConfig::blast(16)
            };
            let server = start_server(cfg, env.server_fifo).expect("server");
            let a = env.run(client, w1, &server, &format!("cpu-short-{rep}"));
            let b = env.run(client, w2, &server, &format!("cpu-long-{rep}"));
            match (a, b) {
                (Ok(Some(a)), Ok(Some(b))) => {
                    check(&a, w1, client.name(), report);
                    check(&b, w2, client.name(), report);
                    // CPU from the first request on (setup excluded), then differenced.
                    let run_cpu = |r: &ClientResult| {
                        r.child.cpu().as_secs_f64()
                            - r.child.cpu_at_start.map_or(0.0, |d| d.as_secs_f64())
                    };
                    let dt = run_cpu(&b) - run_cpu(&a);
                    run_phase.push(run_cpu(&b) / b.total_output_tokens as f64 * 1e6);
                    let dn = b.total_output_tokens as f64 - a.total_output_tokens as f64;
                    eprintln!(
                        "cpu {} rep {rep}: short cpu {:.3}s (load phase {:.3}s, {} tok), long cpu {:.3}s (load phase {:.3}s, {} tok), {:.0} tok/s",
                        client.name(),
                        a.child.cpu().as_secs_f64(),
                        run_cpu(&a),
                        a.total_output_tokens,
                        b.child.cpu().as_secs_f64(),
                        run_cpu(&b),
                        b.total_output_tokens,
                        b.output_throughput
                    );
                    marg.push(dt / dn * 1e6);
                    thr.push(b.output_throughput);
                }
                (a, b) => {
                    for e in [a.err(), b.err()].into_iter().flatten() {
                        report
                            .notes
                            .push(format!("cpu run of {}: {e}", client.name()));
                    }
                    break;
                }
            }
        }
        if !marg.is_empty() {
            let r = percentile(&mut run_phase, 50.0);
            run_per_token.insert(client, r);
            cells_run.insert(client, format!("{r:.3}"));
            let m = percentile(&mut marg, 50.0);
            let t = percentile(&mut thr, 50.0);
            per_token.insert(client, m);
            tps.insert(client, t);
            cells_us.insert(client, format!("{m:.3}"));
            cells_tps.insert(client, format!("{t:.0}"));
        }
    }
    report.row(
        &format!("client CPU µs per streamed token, marginal: load-phase CPU of {n} req × {long} minus {n} req × {short} tokens, c=64, per token of difference"),
        cells_us,
        ratio(per_token.get(&Client::Perfgate).copied(), per_token.get(&Client::Sglang).copied()),
        "≤ 0.5",
    );
    report.row(
        &format!("client CPU µs per streamed token, whole load phase of the long run ({n} req × {long} tokens, c=64)"),
        cells_run,
        ratio(run_per_token.get(&Client::Perfgate).copied(), run_per_token.get(&Client::Sglang).copied()),
        "",
    );
    report.row(
        "achieved output tokens/s (one core, blast server, long run)",
        cells_tps,
        ratio(
            tps.get(&Client::Sglang).copied(),
            tps.get(&Client::Perfgate).copied(),
        )
        .replace('×', "× (perfgate / sglang)"),
        "",
    );
}

/// TTFT and ITL against the server's truth at 50 ms TTFT and 10 ms per token.
fn phase_accuracy(env: &Env, report: &mut Report) {
    let levels: &[u64] = if env.quick {
        &[64, 256]
    } else {
        &[64, 256, 1024]
    };
    for &c in levels {
        let w = Workload {
            num_prompts: (2 * c).max(256),
            concurrency: c,
            input_len: 128,
            output_len: 64,
        };
        let mut p99 = BTreeMap::new();
        let mut mean_ttft = BTreeMap::new();
        let mut itl = BTreeMap::new();
        let mut p99_err = BTreeMap::new();
        for client in clients(env) {
            let server = start_server(
                FakeConfig::paced(Duration::from_millis(50), Duration::from_millis(10)),
                env.server_fifo,
            )
            .expect("server");
            match env.run(client, w, &server, &format!("acc-c{c}")) {
                Ok(Some(r)) => {
                    check(&r, w, client.name(), report);
                    let t = server.truth();
                    let e99 = r.p99_ttft_ms - t.ttft_percentile_ms(99.0);
                    let emean = r.mean_ttft_ms - t.mean_ttft_ms;
                    let eitl = r.mean_itl_ms - t.mean_chunk_gap_ms;
                    eprintln!(
                        "accuracy {} c={c}: p99 TTFT {:.2} vs truth {:.2}; mean TTFT {:.2} vs {:.2}; mean ITL {:.4} vs {:.4} (server saw {} requests)",
                        client.name(),
                        r.p99_ttft_ms,
                        t.ttft_percentile_ms(99.0),
                        r.mean_ttft_ms,
                        t.mean_ttft_ms,
                        r.mean_itl_ms,
                        t.mean_chunk_gap_ms,
                        t.requests
                    );
                    p99_err.insert(client, e99);
                    p99.insert(client, format!("{e99:+.2}"));
                    mean_ttft.insert(client, format!("{emean:+.2}"));
                    itl.insert(client, format!("{eitl:+.4}"));
                }
                Ok(None) => {}
                Err(e) => report
                    .notes
                    .push(format!("accuracy c={c} of {}: {e}", client.name())),
            }
        }
        let target = match c {
            256 => "≤ 2",
            1024 => "≤ 10",
            _ => "",
        };
        report.row(
            &format!("p99 TTFT error ms vs server truth, c={c} ({} req, 50 ms TTFT, 10 ms/token, 64 tokens)", w.num_prompts),
            p99,
            ratio(p99_err.get(&Client::Perfgate).map(|v| v.abs()), p99_err.get(&Client::Sglang).map(|v| v.abs())),
            target,
        );
        report.row(
            &format!("mean TTFT error ms, c={c}"),
            mean_ttft,
            "".into(),
            "",
        );
        report.row(
            &format!("mean ITL error ms, c={c}"),
            itl,
            "".into(),
            "≤ 0.1",
        );
    }
}

/// TTFT error request by request against an outside oracle ([`oracle::Oracle`]: not perfgate's
/// fake server; one thread on the server core; 50 ms TTFT, 10 ms per token): each client's TTFT of
/// a request minus the time the oracle itself took from that request's first bytes to its first
/// token, paired through the request number the oracle writes as the first token.
fn phase_oracle(env: &Env, report: &mut Report) {
    let levels: &[u64] = if env.quick { &[256] } else { &[64, 256] };
    let reps = if env.quick { 1 } else { 3 };
    for &c in levels {
        let w = Workload {
            num_prompts: 4 * c,
            concurrency: c,
            input_len: 128,
            output_len: 64,
        };
        let mut cells = [(); 4].map(|_| BTreeMap::new());
        let mut p99s = BTreeMap::new();
        for client in clients(env) {
            let mut runs: Vec<OracleRun> = Vec::new();
            for rep in 0..reps {
                match oracle_run(env, client, w, &format!("oracle-c{c}-{rep}")) {
                    Ok(Some(r)) => runs.push(r),
                    Ok(None) => break,
                    Err(e) => {
                        report
                            .notes
                            .push(format!("oracle c={c} of {}: {e}", client.name()));
                        break;
                    }
                }
            }
            if runs.is_empty() {
                continue;
            }
            // The median run of each figure, and the spread of p99 over the runs.
            let med = |f: fn(&OracleRun) -> f64| {
                let mut v: Vec<f64> = runs.iter().map(f).collect();
                percentile(&mut v, 50.0)
            };
            let (p50, p99, max) = (med(|r| r.p50), med(|r| r.p99), med(|r| r.max));
            let lo = runs.iter().map(|r| r.p99).fold(f64::INFINITY, f64::min);
            let hi = runs.iter().map(|r| r.p99).fold(f64::NEG_INFINITY, f64::max);
            let unpaired: usize = runs.iter().map(|r| r.unpaired).sum();
            eprintln!(
                "oracle {} c={c}: per-request TTFT error p50 {p50:.3} p99 {p99:.3} (runs {lo:.3}…{hi:.3}) max {max:.3} ms; {unpaired} unpaired",
                client.name()
            );
            p99s.insert(client, p99);
            cells[0].insert(client, format!("{p50:+.3}"));
            cells[1].insert(client, format!("{p99:+.3} ({lo:+.2}…{hi:+.2})"));
            cells[2].insert(client, format!("{max:+.2}"));
            cells[3].insert(client, format!("{unpaired}"));
        }
        let [c50, c99, cmax, cun] = cells;
        let what = format!(
            "{} req × {} tokens, c={c}, {reps} runs",
            w.num_prompts, w.output_len
        );
        report.row(
            &format!("TTFT error ms vs oracle, per request, median ({what})"),
            c50,
            "".into(),
            "",
        );
        report.row(
            &format!(
                "TTFT error ms vs oracle, per request, p99: median of runs (min…max) ({what})"
            ),
            c99,
            ratio(
                p99s.get(&Client::Perfgate).map(|v| v.abs()),
                p99s.get(&Client::Sglang).map(|v| v.abs()),
            ),
            if c == 256 { "≤ 2" } else { "" },
        );
        report.row(
            &format!("TTFT error ms vs oracle, worst request ({what})"),
            cmax,
            "".into(),
            "",
        );
        report.row(
            &format!("requests not paired with the oracle's record ({what})"),
            cun,
            "".into(),
            "0",
        );
    }
}

/// One client's run against a fresh oracle: the per-request TTFT errors' summary, ms.
struct OracleRun {
    p50: f64,
    p99: f64,
    max: f64,
    unpaired: usize,
}

fn oracle_run(
    env: &Env,
    client: Client,
    w: Workload,
    tag: &str,
) -> Result<Option<OracleRun>, String> {
    let fifo = env.server_fifo;
    let tokenizer =
        perfgate::tokenizer::HfTokenizer::from_path(&env.tokenizer_dir.join("tokenizer.json"))
            .map_err(|e| format!("oracle tokenizer: {e}"))?;
    let (ttft, itl) = (Duration::from_millis(50), Duration::from_millis(10));
    let server =
        oracle::Oracle::start(ttft, itl, Some(std::sync::Arc::new(tokenizer)), move || {
            child::pin_current_thread(SERVER_CORE);
            if let Some(p) = fifo {
                child::set_fifo(p);
            }
        })
        .map_err(|e| format!("oracle: {e}"))?;
    let before = server.requests();
    let started = || server.requests() > before;
    let Some(r) = env.run_at(client, w, &server.url(), &started, tag, true)? else {
        return Ok(None);
    };
    let texts = r.detail.get("generated_texts").and_then(|v| v.as_array());
    let ttfts = r.detail.get("ttfts").and_then(|v| v.as_array());
    let (Some(texts), Some(ttfts)) = (texts, ttfts) else {
        return Err(format!(
            "{tag}: no generated_texts/ttfts in its detailed output"
        ));
    };
    let mut errors = Vec::new();
    let mut unpaired = 0;
    for (text, ttft) in texts.iter().zip(ttfts) {
        let truth = text
            .as_str()
            .and_then(oracle::id_of)
            .and_then(|id| server.served(id))
            .and_then(|s| s.ttft_ms());
        match (truth, ttft.as_f64()) {
            (Some(t), Some(c)) if c > 0.0 => errors.push(c * 1e3 - t),
            _ => unpaired += 1,
        }
    }
    if errors.is_empty() {
        return Err(format!("{tag}: no request paired with the oracle's record"));
    }
    Ok(Some(OracleRun {
        p50: percentile(&mut errors, 50.0),
        p99: percentile(&mut errors, 99.0),
        max: percentile(&mut errors, 100.0),
        unpaired: unpaired + (w.num_prompts as usize).saturating_sub(texts.len()),
    }))
}

/// Peak RSS of a 10,000-request run with 256-token outputs.
fn phase_rss(env: &Env, report: &mut Report) {
    let w = Workload {
        num_prompts: 10_000,
        concurrency: 256,
        input_len: 128,
        output_len: 256,
    };
    let mut rss = BTreeMap::new();
    let mut cells = BTreeMap::new();
    // SGLang's client needs minutes for 2.56 M tokens: only with --sglang-rss.
    let mut who = vec![Client::Perfgate];
    if env.sglang_rss && env.sglang.is_some() {
        who.push(Client::Sglang);
    }
    for client in who {
        let server = start_server(FakeConfig::blast(16), env.server_fifo).expect("server");
        match env.run(client, w, &server, "rss") {
            Ok(Some(r)) => {
                check(&r, w, client.name(), report);
                let mb = r.child.max_rss_kib as f64 / 1024.0;
                eprintln!(
                    "rss {}: {mb:.1} MiB, cpu {:.2}s, wall {:.2}s",
                    client.name(),
                    r.child.cpu().as_secs_f64(),
                    r.child.wall.as_secs_f64()
                );
                rss.insert(client, mb);
                cells.insert(client, format!("{mb:.1}"));
            }
            Ok(None) => {}
            Err(e) => report
                .notes
                .push(format!("rss run of {}: {e}", client.name())),
        }
    }
    report.row(
        "peak RSS MiB, 10,000 requests × 256 tokens, c=256",
        cells,
        ratio(
            rss.get(&Client::Perfgate).copied(),
            rss.get(&Client::Sglang).copied(),
        ),
        "≤ 200 MB",
    );
}

/// Prompt preparation: 10,000 ShareGPT prompts and 10,000 exact random prompts (Qwen3
/// tokenizer), timed in a child of this bench pinned to the client core (normal priority).
fn phase_prep(env: &Env, report: &mut Report) {
    let mut cmd = Command::new(std::env::current_exe().expect("own path"));
    cmd.args(["--bench", "--prep-child"])
        .env("PERFGATE_BENCH_TOKENIZER_DIR", &env.tokenizer_dir);
    let never = || false;
    match run_pinned(
        cmd,
        CLIENT_CORE,
        None,
        &env.work,
        "prep",
        CHILD_LIMIT,
        &never,
    ) {
        Ok(r) => {
            eprintln!(
                "prep child: cpu {:.2}s wall {:.2}s",
                r.cpu().as_secs_f64(),
                r.wall.as_secs_f64()
            );
            let mut any = false;
            for line in r.stdout.lines() {
                let mut f = line.split('\t');
                if let (Some("PREP"), Some(label), Some(secs)) = (f.next(), f.next(), f.next()) {
                    let mut cells = BTreeMap::new();
                    cells.insert(Client::Perfgate, secs.to_string());
                    report.row(label, cells, "".into(), "≤ 3 s");
                    any = true;
                }
            }
            for line in r.stdout.lines().filter(|l| l.starts_with("NOTE\t")) {
                report.notes.push(format!("prompt prep: {}", &line[5..]));
            }
            if !any || r.exit_code != 0 {
                report
                    .notes
                    .push(format!("prompt prep failed: {}", child::tail(&r.stderr, 5)));
            }
        }
        Err(e) => report.notes.push(format!("prompt prep: {e}")),
    }
}

/// The `--prep-child` side of [`phase_prep`].
fn prep_child(env: &Env) {
    match prep::measure(env) {
        Ok(rows) => {
            for (label, secs) in rows {
                println!("PREP\t{label}\t{secs:.2}");
            }
        }
        Err(e) => println!("NOTE\t{e}"),
    }
}

#[path = "client/prep.rs"]
mod prep;

/// Diagnosis: run the paced server (50 ms, 10 ms) for `secs` seconds on port 18778, then print
/// each request's server-side first-byte and first-token times (ms since start).
/// `--serve-for SECS [--blast]`: only the fake server (paced, or blast), for profiling a client
/// by hand, e.g. `perf record -C 1 -- taskset -c 1 perfgate run --base-url URL ...`.
fn serve_for(secs: u64, blast: bool) {
    child::pin_current_thread(SERVER_CORE);
    let cfg = if blast {
        FakeConfig::blast(16)
    } else {
        FakeConfig::paced(Duration::from_millis(50), Duration::from_millis(10))
    };
    let server = start_server(cfg, Some(20)).expect("server");
    eprintln!("serving on {}", server.url());
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let t = server.truth();
    let mut times = t.times.clone();
    times.sort();
    let base = times.first().map(|x| x.0).unwrap_or(t0);
    for (a, b) in times {
        println!(
            "{:.3} {:.3}",
            (a - base).as_secs_f64() * 1e3,
            (b - a).as_secs_f64() * 1e3
        );
    }
}

/// Run `scripts/NAME` and return the non-empty values of the `KEY=VALUE` lines it printed.
fn run_setup(root: &Path, name: &str) -> Result<BTreeMap<String, PathBuf>, String> {
    let out = Command::new("bash")
        .arg(root.join("scripts").join(name))
        .output()
        .map_err(|e| format!("{name}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{name} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.to_string(), PathBuf::from(v)))
        .collect())
}

fn setup_rust_clients(root: &Path) -> Result<RustClients, String> {
    let mut got = run_setup(root, "setup-rust-clients.sh")?;
    let sglang_bench = match (
        got.remove("SGLANG_BENCH_PYTHON"),
        got.remove("SGLANG_BENCH_LOADER"),
        got.remove("SGLANG_BENCH_EXT"),
    ) {
        (Some(p), Some(l), Some(e)) => Some((p, l, e)),
        _ => None,
    };
    Ok(RustClients {
        vllm_rs: got.remove("VLLM_RS"),
        sglang_bench,
    })
}

fn setup_sglang(root: &Path) -> Result<Sglang, String> {
    let name = "setup-sglang-bench.sh";
    let mut got = run_setup(root, name)?;
    let mut get = |k: &str| {
        got.remove(k)
            .ok_or_else(|| format!("{name} did not print {k}"))
    };
    Ok(Sglang {
        python: get("SGLANG_BENCH_PYTHON")?,
        script: get("SGLANG_BENCH_SERVING")?,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench targets without --bench: do nothing there.
        println!("client benchmark: run it with `cargo bench --bench client`");
        return;
    }
    let flag = |f: &str| args.iter().any(|a| a == f);
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').map(str::to_string).collect());
    let want = |p: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == p));

    if let Some(secs) = args
        .iter()
        .position(|a| a == "--serve-for")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse::<u64>().ok())
    {
        serve_for(secs, flag("--blast"));
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let work = target.join("bench-client");
    std::fs::create_dir_all(&work).expect("work dir");

    let prep_only = flag("--prep-child");
    // The bench process (the fake server and this driver) lives on core 0; a prep child stays
    // where its parent put it.
    if !prep_only {
        child::pin_current_thread(SERVER_CORE);
    }

    let tokenizer_dir = std::env::var_os("PERFGATE_BENCH_TOKENIZER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".cache/sglang-bench/qwen3-tokenizer"));
    let mut notes = Vec::new();
    // Real-time priority for the server and the clients, so that other work on a shared machine
    // neither delays the server's tokens nor preempts a client (both clients get the same).
    let no_rt = prep_only || flag("--no-rt") || !child::set_fifo(1);
    if no_rt {
        notes.push("normal scheduling priority (--no-rt or SCHED_FIFO not permitted): latency figures include preemption by other work".into());
    } else {
        notes.push("server thread SCHED_FIFO 20 on core 0, clients SCHED_FIFO 10 on core 1".into());
        // Back to normal for this driver thread; the server thread sets its own.
        child::set_normal();
    }
    let sglang = if flag("--skip-sglang") || prep_only {
        None
    } else {
        match setup_sglang(&root) {
            Ok(s) => Some(s),
            Err(e) => {
                notes.push(format!("SGLang side skipped: {e}"));
                None
            }
        }
    };
    let rust_clients = if flag("--skip-rust-clients") || prep_only {
        RustClients::default()
    } else {
        setup_rust_clients(&root).unwrap_or_else(|e| {
            notes.push(format!("Rust clients skipped: {e}"));
            RustClients::default()
        })
    };
    if !tokenizer_dir.join("tokenizer.json").exists() {
        eprintln!(
            "no tokenizer at {}: run scripts/setup-sglang-bench.sh or set PERFGATE_BENCH_TOKENIZER_DIR",
            tokenizer_dir.display()
        );
        std::process::exit(2);
    }
    let env = Env {
        // PERFGATE_BENCH_BIN: measure another perfgate build (A/B of a change).
        perfgate: std::env::var_os("PERFGATE_BENCH_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_perfgate"))),
        // PERFGATE_BENCH_BASE_BIN: a second perfgate build beside it, in the same runs.
        perfgate_base: std::env::var_os("PERFGATE_BENCH_BASE_BIN").map(PathBuf::from),
        rust_clients,
        tokenizer_dir,
        sglang,
        work,
        quick: flag("--quick"),
        sglang_rss: flag("--sglang-rss"),
        server_fifo: (!no_rt).then_some(20),
        client_fifo: (!no_rt).then_some(10),
    };
    let mut report = Report {
        notes,
        ..Report::default()
    };
    if prep_only {
        prep_child(&env);
        return;
    }
    let t0 = Instant::now();
    if want("cpu") {
        phase_cpu(&env, &mut report);
    }
    if want("accuracy") {
        phase_accuracy(&env, &mut report);
    }
    if want("oracle") {
        phase_oracle(&env, &mut report);
    }
    if want("rss") {
        phase_rss(&env, &mut report);
    }
    if want("prep") {
        phase_prep(&env, &mut report);
    }
    report.notes.push(format!(
        "server on core {SERVER_CORE}, clients on core {CLIENT_CORE}; bench took {:.0} s; raw outputs in {}",
        t0.elapsed().as_secs_f64(),
        env.work.display()
    ));
    let text = report.render();
    println!("\n{text}");
    let _ = std::fs::write(env.work.join("report.md"), &text);
}
