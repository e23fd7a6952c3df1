//! Decision quality on real GPU launches (tests/data/gpu-llamacpp-h100: llama.cpp with CUDA on
//! one H100, 8 launches of an unchanged engine and one of an engine with 24 slots instead of 32).
//! The figures the README reports come from `cargo run --example replay`; these tests pin the
//! verdicts that must hold.

use std::path::{Path, PathBuf};

use perfgate::gate::replay::{replay, Change, Design, Launch};
use perfgate::gate::{evaluate, GateConfig, Side, TopVerdict, Verdict};
use perfgate::record::{read_jsonl, ScenarioResult};

use crate::support::perfgate;

const UNCHANGED: [&str; 8] = ["rec", "aa", "aa1", "l1", "l2", "l3", "l4", "l5"];
const PREFILL: &str = "random-in1024-out32-n128-c32";

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/gpu-llamacpp-h100")
        .join(format!("{name}.jsonl"))
}

fn launch(name: &str) -> Launch {
    Launch::new(name, read_jsonl(&corpus(name)).unwrap())
}

#[test]
fn the_slot_starved_engine_fails_on_prefill_median_ttft() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b.toml");
    let out = perfgate()
        .args(["baseline", "record"])
        .args(UNCHANGED.map(corpus))
        .arg("-o")
        .arg(&b)
        .args(["--engine", "llama.cpp", "--engine-version", "b11434-cuda"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(
        text.contains("launch_id = \"l5\""),
        "the baseline keeps launch ids"
    );

    let json = dir.path().join("report.json");
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(&b)
        .arg("--results")
        .arg(corpus("b2"))
        .arg("--json")
        .arg(&json)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rep["verdict"], "fail");
    let row = rep["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scenario"] == PREFILL && r["metric"] == "median_ttft_ms")
        .unwrap();
    assert_eq!(row["verdict"], "regressed", "{row}");
    assert!(row["change_pct"].as_f64().unwrap() > 100.0, "{row}");
    assert_eq!(row["launches"], serde_json::json!([8, 1]), "{row}");
    assert_eq!(row["noise"]["source"], "launches", "{row}");
}

#[test]
fn no_unchanged_launch_regresses_against_the_others() {
    let all: Vec<Launch> = UNCHANGED.iter().map(|n| launch(n)).collect();
    for (i, l) in all.iter().enumerate() {
        let base: Vec<ScenarioResult> = all
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, l)| l.records.clone())
            .collect();
        let rep = evaluate(
            &base,
            &l.records,
            &[],
            &GateConfig::default(),
            "check",
            Side::default(),
            Side::default(),
        );
        assert_ne!(rep.verdict, TopVerdict::Fail, "{}", l.name);
        assert!(
            rep.rows.iter().all(|r| r.verdict != Verdict::Regressed),
            "{}: {:?}",
            l.name,
            rep.rows
                .iter()
                .filter(|r| r.verdict == Verdict::Regressed)
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn replayed_false_alarms_stay_at_alpha_and_a_big_slowdown_is_seen() {
    let all: Vec<Launch> = UNCHANGED.iter().map(|n| launch(n)).collect();
    let cfg = GateConfig::default();
    let d = Design {
        n_base: 3,
        n_cur: 3,
    };
    let same = replay(&all, d, &Change::None, &cfg, 200, 1);
    assert_eq!(same.checks, 200);
    assert!(
        same.fail_rate() <= 0.01,
        "false alarms {}",
        same.fail_rate()
    );
    // A doubled prefill TTFT (slot starvation doubled it and more) is caught in 90 % of the
    // 3 × 3 checks on this noisy corpus (README, "Decision quality").
    let ttft = Change::Latency {
        metric: "ttft".into(),
        pct: 100.0,
        scenario: Some(PREFILL.into()),
    };
    let hit = replay(&all, d, &ttft, &cfg, 200, 2);
    assert!(hit.fail_rate() >= 0.85, "detection {}", hit.fail_rate());
}
