//! The workloads of `perfgate run` beyond one prompt per request, against the fake server:
//! per-request export, LoRA adapters, speculative-decoding counters, multi-turn conversations
//! and timed traces (docs/workloads.md).

use std::path::Path;

use perfgate_fakeserver::{FakeConfig, Fault};

use crate::support::*;

/// `perfgate run` against `url` for `fake-model` with the word tokenizer written into `dir`.
fn run_cmd(url: &str, dir: &Path) -> std::process::Command {
    let tok = word_tokenizer_json(dir);
    let mut cmd = perfgate();
    cmd.args([
        "run",
        "--base-url",
        url,
        "--model",
        "fake-model",
        "--tokenizer",
    ])
    .arg(tok);
    cmd
}

/// `perfgate run` against `url` with the word tokenizer in `dir`, 12 random prompts of 8 tokens
/// asking for 6, and `extra` flags; panics unless it exits 0. Returns stdout and stderr.
fn run_ok(url: &str, dir: &Path, extra: &[&str]) -> (String, String) {
    let out = run_cmd(url, dir)
        .args(["--random-input-len", "8", "--random-output-len", "6"])
        .args([
            "--num-prompts",
            "12",
            "--max-concurrency",
            "3",
            "--seed",
            "5",
        ])
        .args(["--request-id-prefix", "t-", "--no-progress", "--result-dir"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    (stdout, stderr)
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

#[test]
fn save_detailed_format_writes_one_row_per_request() {
    let server = fake(FakeConfig {
        ttft: ms(5),
        itl: ms(1),
        fault: Fault::Http500,
        fault_every: 4,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let (_, stderr) = run_ok(
        &server.url(),
        dir.path(),
        &[
            "--result-filename",
            "r.json",
            "--save-detailed-format",
            "jsonl,csv",
        ],
    );
    assert!(stderr.contains("r.requests.jsonl"), "{stderr}");
    // Without `json` the result JSON (written: --result-dir implies --save-result, as in
    // vLLM) has no per-request arrays.
    let v: serde_json::Value = serde_json::from_str(&read(dir.path().join("r.json"))).unwrap();
    assert!(v.get("ttfts").is_none() && v["completed"] == 9, "{v}");
    let rows: Vec<serde_json::Value> = read(dir.path().join("r.requests.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 12);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["index"], i);
        assert_eq!(r["request_id"], format!("t-{i}"));
        assert_eq!(r["input_len"], 8);
    }
    let failed: Vec<_> = rows.iter().filter(|r| !r["error"].is_null()).collect();
    assert_eq!(failed.len(), 3, "every 4th request fails");
    for r in &failed {
        assert!(r["error"].as_str().unwrap().contains("500"), "{r}");
        assert!(r["ttft"].is_null() && r["latency"].is_null());
    }
    for r in rows.iter().filter(|r| r["error"].is_null()) {
        assert_eq!(r["output_len"], 6);
        assert_eq!(r["itl"].as_array().unwrap().len(), 5);
        let (ttft, e2el) = (r["ttft"].as_f64().unwrap(), r["latency"].as_f64().unwrap());
        assert!(ttft > 0.004 && e2el >= ttft, "{r}");
        assert!(r["tpot"].as_f64().unwrap() > 0.0);
    }
    let csv = read(dir.path().join("r.requests.csv"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 13);
    assert!(
        lines[0].starts_with("request_id,index,model,"),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with("t-0,0,,,,8,"), "{}", lines[1]);
    // The failed requests' lines end with their error, the others with an empty field.
    assert_eq!(lines.iter().filter(|l| !l.ends_with(',')).count(), 4);

    // `json` keeps vLLM's arrays in the result JSON; without it they are left out.
    run_ok(
        &server.url(),
        dir.path(),
        &[
            "--result-filename",
            "a.json",
            "--save-detailed-format",
            "json,csv",
            "--save-result",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&read(dir.path().join("a.json"))).unwrap();
    assert_eq!(v["ttfts"].as_array().unwrap().len(), 12);
    assert!(dir.path().join("a.requests.csv").exists());
}

#[test]
fn an_unknown_detailed_format_is_refused_before_the_run() {
    let out = perfgate()
        .args(["run", "--model", "m", "--save-detailed-format", "parquet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--save-detailed-format") && err.contains("parquet"),
        "{err}"
    );
}

/// The `model` column of a run's `r.requests.jsonl` in `dir`.
fn models(dir: &Path) -> Vec<String> {
    read(dir.join("r.requests.jsonl"))
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["error"].is_null(), "{v}");
            v["model"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn lora_modules_name_an_adapter_per_request() {
    let server = fake(FakeConfig {
        ttft: ms(2),
        itl: ms(1),
        api: perfgate_fakeserver::FakeApi::Vllm,
        lora_modules: vec!["sql-lora".into(), "chat-lora".into()],
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let flags = |how: &'static str| {
        [
            "--result-filename",
            "r.json",
            "--save-detailed-format",
            "jsonl",
            "--lora-assignment",
            how,
            "--lora-modules",
            "sql-lora",
            "chat-lora",
        ]
    };
    run_ok(&server.url(), dir.path(), &flags("round-robin"));
    let rr = models(dir.path());
    for (i, m) in rr.iter().enumerate() {
        assert_eq!(m, ["sql-lora", "chat-lora"][i % 2]);
    }
    // The server saw the adapter as the request's model.
    let last = server.last_request().unwrap();
    assert!(last.body["model"].as_str().unwrap().ends_with("-lora"));
    run_ok(&server.url(), dir.path(), &flags("random"));
    let random = models(dir.path());
    assert!(random.iter().any(|m| m == "sql-lora") && random.iter().any(|m| m == "chat-lora"));
    run_ok(&server.url(), dir.path(), &flags("random"));
    assert_eq!(models(dir.path()), random, "seeded by --seed");

    // An adapter the server does not serve: vLLM's 404, every request fails (exit 3).
    let out = run_cmd(&server.url(), dir.path())
        .args([
            "--num-prompts",
            "2",
            "--random-input-len",
            "4",
            "--no-progress",
        ])
        .args(["--lora-modules", "nope"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("The model `nope` does not exist."), "{err}");
}

#[test]
fn spec_decode_acceptance_comes_from_the_server_s_counters() {
    let server = fake(FakeConfig {
        ttft: ms(2),
        itl: ms(1),
        api: perfgate_fakeserver::FakeApi::Vllm,
        spec_decode: Some(perfgate_fakeserver::SpecDecode {
            num_speculative_tokens: 3,
            accepted: 2,
        }),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    // Counters from before the run are not the run's.
    run_ok(
        &server.url(),
        dir.path(),
        &["--result-filename", "first.json"],
    );
    let (stdout, _) = run_ok(&server.url(), dir.path(), &["--result-filename", "r.json"]);
    let v: serde_json::Value = serde_json::from_str(&read(dir.path().join("r.json"))).unwrap();
    // 12 requests of 6 tokens, 3 tokens a step: 2 drafts of 3 tokens each, 2 accepted.
    assert_eq!(v["spec_decode_num_drafts"], 24, "{v}");
    assert_eq!(v["spec_decode_draft_tokens"], 72);
    assert_eq!(v["spec_decode_accepted_tokens"], 48);
    let rate = v["spec_decode_acceptance_rate"].as_f64().unwrap();
    assert!((rate - 200.0 / 3.0).abs() < 1e-9, "{rate}");
    assert_eq!(v["spec_decode_acceptance_length"], 3.0);
    assert_eq!(
        v["spec_decode_per_position_acceptance_rates"],
        serde_json::json!([1.0, 1.0, 0.0])
    );
    let block = stdout
        .find("-------------Speculative Decoding-------------")
        .unwrap();
    assert!(stdout[block..].contains("Acceptance rate (%):                     66.67"));
    assert!(stdout.trim_end().ends_with(&"=".repeat(50)), "{stdout}");
    assert!(stdout.find("Successful requests:").unwrap() < block);

    // A server without the counters: no keys, no block.
    drop(server);
    let plain = fake(FakeConfig::default());
    let (stdout, _) = run_ok(&plain.url(), dir.path(), &["--result-filename", "p.json"]);
    let v: serde_json::Value = serde_json::from_str(&read(dir.path().join("p.json"))).unwrap();
    assert!(v.get("spec_decode_acceptance_rate").is_none(), "{v}");
    assert!(!stdout.contains("Speculative"));
}

#[test]
fn a_timed_trace_is_sent_at_its_times() {
    let server = fake(FakeConfig {
        ttft: ms(2),
        itl: ms(1),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    // Mooncake's lines, out of order; times in ms from 5000.
    let trace = dir.path().join("trace.jsonl");
    let lines = [
        (5600, 5, 4),
        (5000, 3, 2),
        (5100, 6, 3),
        (5250, 2, 5),
        (6000, 4, 1),
    ];
    let text: String = lines
        .iter()
        .map(|(t, i, o)| {
            format!("{{\"timestamp\": {t}, \"input_length\": {i}, \"output_length\": {o}, \"hash_ids\": [1, 2]}}\n")
        })
        .collect();
    std::fs::write(&trace, text).unwrap();
    let (_, stderr) = run_ok(
        &server.url(),
        dir.path(),
        &[
            "--trace",
            trace.to_str().unwrap(),
            "--result-filename",
            "r.json",
            "--save-detailed-format",
            "jsonl",
        ],
    );
    assert!(
        stderr.contains("trace: 5 requests over 1.000 s"),
        "{stderr}"
    );
    let rows: Vec<serde_json::Value> = read(dir.path().join("r.requests.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let want = [
        (0.0, 3, 2),
        (0.1, 6, 3),
        (0.25, 2, 5),
        (0.6, 5, 4),
        (1.0, 4, 1),
    ];
    assert_eq!(rows.len(), 5);
    for (r, (at, input, output)) in rows.iter().zip(want) {
        assert!(r["error"].is_null(), "{r}");
        assert_eq!(
            (r["input_len"].as_u64(), r["output_len"].as_u64()),
            (Some(input), Some(output)),
            "{r}"
        );
        let due = r["scheduled_time"].as_f64().unwrap();
        assert!((due - at).abs() < 1e-9, "{r}");
        let late = r["start_time"].as_f64().unwrap() - due;
        assert!((0.0..0.2).contains(&late), "sent {late} s late: {r}");
    }
    let v: serde_json::Value = serde_json::from_str(&read(dir.path().join("r.json"))).unwrap();
    assert!(v["duration"].as_f64().unwrap() >= 1.0, "{v}");
    assert_eq!(v["total_input_tokens"], 20);

    // A bad line: the file and the line, exit 2.
    std::fs::write(
        &trace,
        "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 1}\n",
    )
    .unwrap();
    let out = run_cmd(&server.url(), dir.path())
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:2: no `input_length`", trace.display())),
        "{err}"
    );
}

#[test]
fn multi_turn_sends_each_turn_after_the_answer_with_the_history() {
    let server = fake(FakeConfig {
        ttft: ms(20),
        itl: ms(1),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let conv = |turns: &[(&str, &str)]| {
        let msgs: Vec<serde_json::Value> = turns
            .iter()
            .flat_map(|(q, a)| {
                [
                    serde_json::json!({"from": "human", "value": q}),
                    serde_json::json!({"from": "gpt", "value": a}),
                ]
            })
            .collect();
        serde_json::json!({"id": "x", "conversations": msgs})
    };
    let file = dir.path().join("conv.json");
    let data = serde_json::json!([
        conv(&[
            ("alpha beta", "tok tok tok"),
            ("gamma", "tok tok"),
            ("delta eps zeta", "tok")
        ]),
        conv(&[("eta", "tok tok tok tok"), ("alpha", "tok tok")]),
        conv(&[("beta gamma delta", "tok tok")]),
    ]);
    std::fs::write(&file, data.to_string()).unwrap();
    let args = [
        "--dataset-name",
        "sharegpt",
        "--dataset-path",
        file.to_str().unwrap(),
        "--multi-turn",
        "--endpoint",
        "/v1/chat/completions",
        "--result-filename",
        "r.json",
        "--save-detailed-format",
        "jsonl",
    ];
    let (stdout, stderr) = run_ok(&server.url(), dir.path(), &args);
    assert!(stdout.contains("Mean TTFT, turn 2 (ms):"), "{stdout}");
    assert!(stdout.trim_end().ends_with(&"=".repeat(50)), "{stdout}");
    assert!(
        stderr.contains("multi-turn: 3 conversations, 6 turns"),
        "{stderr}"
    );
    let rows: Vec<serde_json::Value> = read(dir.path().join("r.requests.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 6);
    // Each conversation by its number of turns: (input, output) per turn. A turn's input is its
    // message plus every earlier message, the server's answers included.
    let want: [&[(u64, u64)]; 3] = [&[(3, 2)], &[(1, 4), (6, 2)], &[(2, 3), (6, 2), (11, 1)]];
    let mut seen = 0;
    for c in 0..3 {
        let turns: Vec<&serde_json::Value> =
            rows.iter().filter(|r| r["conversation"] == c).collect();
        let want = want[turns.len() - 1];
        for (t, (r, (input, output))) in turns.iter().zip(want).enumerate() {
            assert_eq!(r["turn"], t, "{r}");
            assert!(r["error"].is_null(), "{r}");
            assert_eq!(
                (r["input_len"].as_u64(), r["output_len"].as_u64()),
                (Some(*input), Some(*output)),
                "{r}"
            );
            assert!(
                r["ttft"].as_f64().unwrap() >= 0.019,
                "each turn has its own TTFT: {r}"
            );
            if t > 0 {
                let prev = turns[t - 1];
                let answered =
                    prev["start_time"].as_f64().unwrap() + prev["latency"].as_f64().unwrap();
                assert!(
                    r["start_time"].as_f64().unwrap() >= answered - 1e-6,
                    "{prev}\n{r}"
                );
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 6);
    let v: serde_json::Value = serde_json::from_str(&read(dir.path().join("r.json"))).unwrap();
    // The server counted every message of every turn: the same 29 tokens.
    assert_eq!(v["total_input_tokens"], 29, "{v}");
    assert_eq!(v["total_input_tokens_client"], 29);
    assert_eq!(v["mean_ttft_ms_by_turn"].as_array().unwrap().len(), 3);
    let last = server.last_request().unwrap();
    let roles: Vec<&str> = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles.len() % 2, 1, "{roles:?}");
    assert!(
        roles.iter().step_by(2).all(|r| *r == "user")
            && roles.iter().skip(1).step_by(2).all(|r| *r == "assistant")
    );

    // Chat only.
    let out = perfgate()
        .args([
            "run",
            "--model",
            "m",
            "--multi-turn",
            "--dataset-name",
            "sharegpt",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--endpoint /v1/chat/completions"));
}
