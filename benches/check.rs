//! How fast the gate is on a full seed-sized suite: 6 models × 4 scenarios with 1 and with 3 runs
//! a side, in-process (evaluate + all three renderers) and as the `perfgate check` binary on
//! files. `cargo bench --bench check` (set PERFGATE_BENCH_SPLIT=1 to see each renderer's time).
//! The target is well under 100 ms per check.

use std::time::{Duration, Instant};

use perfgate::gate::{evaluate, GateConfig, Inputs};
use perfgate::record::{self, ScenarioResult};
use perfgate::report;

fn records(runs: usize, factor: f64) -> Vec<ScenarioResult> {
    let mut out = Vec::new();
    for m in 0..6 {
        for s in 0..4u64 {
            for i in 0..runs {
                let wiggle = factor * (1.0 + 0.01 * i as f64);
                let n = 1000 * (s + 1);
                let mut r = ScenarioResult {
                    run_index: i as u32,
                    duration: 300.0 / wiggle,
                    total_output_tokens: 128 * n,
                    request_throughput: n as f64 / 300.0 * wiggle,
                    output_throughput: 128.0 * n as f64 / 300.0 * wiggle,
                    total_token_throughput: Some(1152.0 * n as f64 / 300.0 * wiggle),
                    ..ScenarioResult::synthetic(&format!("org/model-{m}"), n, 1024, 128 << s)
                };
                for stat in ["mean", "median", "std", "p99"] {
                    for metric in ["ttft", "tpot", "itl", "e2el"] {
                        r.stats
                            .insert(format!("{stat}_{metric}_ms"), 100.0 / wiggle);
                    }
                }
                out.push(r);
            }
        }
    }
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let cfg = GateConfig::default();
    for runs in [1, 3] {
        let (base, cur) = (records(runs, 1.0), records(runs, 0.97));
        let mut times = Vec::new();
        let mut gate_times = Vec::new();
        let mut rows = 0;
        for _ in 0..50 {
            let t = Instant::now();
            let rep = evaluate(Inputs::new(&base, &cur, &cfg));
            gate_times.push(t.elapsed());
            let t1 = Instant::now();
            let a = report::render_terminal(&rep, false);
            let t2 = Instant::now();
            let b = report::render_markdown(&rep);
            let t3 = Instant::now();
            let c = report::render_json(&rep);
            if std::env::var_os("PERFGATE_BENCH_SPLIT").is_some() {
                eprintln!(
                    "terminal {:?} markdown {:?} json {:?}",
                    t2 - t1,
                    t3 - t2,
                    t3.elapsed()
                );
            }
            std::hint::black_box((a, b, c));
            times.push(t.elapsed());
            rows = rep.rows.len();
        }
        println!(
            "in-process gate + 3 renderers, 6 models × 4 scenarios, {runs} run(s) a side ({rows} rows): median {:.2} ms (gate alone {:.2} ms)",
            median(times).as_secs_f64() * 1e3,
            median(gate_times).as_secs_f64() * 1e3
        );
    }

    // The binary on files, as CI runs it.
    let dir = std::env::temp_dir().join(format!("perfgate-bench-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (b, c) = (dir.join("base.jsonl"), dir.join("cur.jsonl"));
    std::fs::write(&b, record::to_jsonl(&records(1, 1.0))).unwrap();
    std::fs::write(&c, record::to_jsonl(&records(1, 0.97))).unwrap();
    let mut times = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
            .args(["check", "--baseline"])
            .arg(&b)
            .arg("--results")
            .arg(&c)
            .arg("--json")
            .arg(dir.join("r.json"))
            .arg("--markdown")
            .arg(dir.join("r.md"))
            .output()
            .unwrap();
        times.push(t.elapsed());
        assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    }
    println!(
        "`perfgate check` process on JSONL files (24 scenarios, JSON + markdown written): median {:.2} ms",
        median(times).as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&dir);
}
