//! `perfgate check` end to end: the binary on JSON Lines and baseline TOML files, for the
//! "Done when" cases of the gate (same records, one scenario 20 % slower, ±1 % jitter, 20 %
//! better), exit codes, and the report files.

use std::path::{Path, PathBuf};
use std::process::Output;

use perfgate::baseline::{Baseline, EngineInfo};
use perfgate::record::{self, ScenarioResult};

use crate::support::fixture::{baseline_of, on_launches, scaled, seed_records};
use crate::support::perfgate;

/// Which rows regressed are allowed when only `target` was made worse: its own rows and its
/// model's engine-wide tests.
fn only(target: &(String, String), flagged: &[(String, String)]) -> bool {
    flagged
        .iter()
        .all(|(m, s)| *m == target.0 && (*s == target.1 || s == "(engine-wide)"))
}

struct Case {
    dir: tempfile::TempDir,
    baseline: PathBuf,
}

impl Case {
    /// The seed-like baseline: one run per scenario, no repeated launches.
    fn new() -> Case {
        let dir = tempfile::tempdir().unwrap();
        let baseline = dir.path().join("v0.10.1.toml");
        std::fs::write(&baseline, baseline_of(&seed_records()).to_toml()).unwrap();
        Case { dir, baseline }
    }

    /// A baseline of the seed-like records measured on 3 launches.
    fn launched() -> Case {
        let dir = tempfile::tempdir().unwrap();
        let baseline = dir.path().join("v0.10.1.toml");
        let (b, _) = Baseline::from_records(
            &on_launches(&seed_records(), "B", 3),
            EngineInfo {
                name: "vllm".into(),
                version: Some("v0.10.1".into()),
                ..Default::default()
            },
            Default::default(),
            None,
        )
        .unwrap();
        std::fs::write(&baseline, b.to_toml()).unwrap();
        Case { dir, baseline }
    }

    fn results(&self, name: &str, recs: &[ScenarioResult]) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, record::to_jsonl(recs)).unwrap();
        p
    }

    fn check(&self, results: &Path, extra: &[&str]) -> (Output, serde_json::Value) {
        let json = self.dir.path().join("report.json");
        let _ = std::fs::remove_file(&json);
        let out = perfgate()
            .arg("check")
            .arg("--baseline")
            .arg(&self.baseline)
            .arg("--results")
            .arg(results)
            .arg("--json")
            .arg(&json)
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let v = std::fs::read_to_string(&json)
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or(serde_json::Value::Null);
        (out, v)
    }
}

fn regressed(report: &serde_json::Value) -> Vec<(String, String)> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "regressed")
        .map(|r| {
            (
                r["model"].as_str().unwrap().to_string(),
                r["scenario"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn same_records_exit_0() {
    let case = Case::new();
    let res = case.results("same.jsonl", &seed_records());
    let (out, report) = case.check(&res, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(regressed(&report).is_empty());
    assert_ne!(report["verdict"], "fail");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Qwen/Qwen3-235B-A22B"), "{stdout}");
    assert!(!stdout.contains('\x1b'), "NO_COLOR is honoured");
}

#[test]
fn one_scenario_twenty_percent_slower_exits_1_and_only_it_regresses() {
    let case = Case::launched();
    let recs = on_launches(&seed_records(), "C", 3);
    let target = (recs[9].model.clone(), recs[9].scenario_id());
    let cur: Vec<_> = recs
        .iter()
        .map(|r| {
            if (r.model.clone(), r.scenario_id()) == target {
                scaled(r, 0.8, 1.25)
            } else {
                r.clone()
            }
        })
        .collect();
    let res = case.results("slower.jsonl", &cur);
    let (out, report) = case.check(&res, &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(report["verdict"], "fail");
    let flagged = regressed(&report);
    assert!(flagged.contains(&target), "{flagged:?}");
    assert!(only(&target, &flagged), "{flagged:?}");
    let thr = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["model"] == target.0.as_str()
                && r["scenario"] == target.1.as_str()
                && r["metric"] == "output_throughput"
        })
        .unwrap();
    assert_eq!(thr["verdict"], "regressed");
    assert!((thr["change_pct"].as_f64().unwrap() + 20.0).abs() < 1e-9);
}

/// Every value of every record moved by +1 % or −1 %, deterministically.
fn jittered(recs: &[ScenarioResult]) -> Vec<ScenarioResult> {
    let mut k = 0u32;
    let mut sign = || {
        k = k.wrapping_mul(1_103_515_245).wrapping_add(12345);
        if (k >> 16) & 1 == 0 {
            1.01
        } else {
            0.99
        }
    };
    recs.iter()
        .map(|r| {
            let mut r = r.clone();
            r.output_throughput *= sign();
            r.request_throughput *= sign();
            r.total_token_throughput = r.total_token_throughput.map(|v| v * sign());
            r.duration *= sign();
            for v in r.stats.values_mut() {
                *v *= sign();
            }
            r
        })
        .collect()
}

#[test]
fn one_percent_jitter_exits_0() {
    let case = Case::new();
    let cur = jittered(&seed_records());
    let res = case.results("jitter.jsonl", &cur);
    let (out, report) = case.check(&res, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(regressed(&report).is_empty());
}

#[test]
fn twenty_percent_better_exits_0() {
    let case = Case::launched();
    let cur: Vec<_> = on_launches(&seed_records(), "C", 3)
        .iter()
        .map(|r| scaled(r, 1.25, 0.8))
        .collect();
    let res = case.results("better.jsonl", &cur);
    let (out, report) = case.check(&res, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(report["counts"]["improved"].as_u64().unwrap() > 0);
}

#[test]
fn fail_on_inconclusive_and_markdown_output() {
    let case = Case::new();
    let res = case.results("same.jsonl", &seed_records());
    let md = case.dir.path().join("comment.md");
    // One run a side cannot show the p99 latencies equivalent within δ: inconclusive.
    let (out, report) = case.check(
        &res,
        &[
            "--fail-on",
            "inconclusive",
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert_eq!(report["verdict"], "inconclusive");
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("<!-- perfgate:check -->"), "{text}");
    // Nothing could be tested (no repeated launches anywhere): no interval, so no chart.
    assert!(!text.contains("xychart-beta"), "{text}");
    assert!(text.chars().count() <= 65_536);
}

#[test]
fn gate_file_overrides_and_bad_input_exit_2() {
    let case = Case::launched();
    let res = case.results("same.jsonl", &on_launches(&seed_records(), "C", 3));
    let gate = case.dir.path().join("gate.toml");
    std::fs::write(&gate, "gated = [\"output_throughput\", \"success_rate\"]\n").unwrap();
    let (out, report) = case.check(&res, &["--gate", gate.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(report["verdict"], "pass");

    std::fs::write(&gate, "[metrics.output_throughput]\ntolerance = 3\n").unwrap();
    let (out, _) = case.check(&res, &["--gate", gate.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gate.toml:2:1") && err.contains("unknown field `tolerance`"),
        "{err}"
    );

    let bad = case.dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{not json}\n").unwrap();
    let (out, _) = case.check(&bad, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.jsonl:1"));
}

/// `-` means stdout for `--json` only; for a markdown or HTML report it is refused at once (exit 2,
/// before anything is read or launched) instead of becoming a file named `-`.
#[test]
fn a_dash_for_a_markdown_or_html_report_is_a_usage_error_not_a_file() {
    let case = Case::launched();
    let res = case.results("same.jsonl", &on_launches(&seed_records(), "C", 3));
    for (cmd, flag) in [
        ("check", "--markdown"),
        ("check", "--html"),
        ("ab", "--markdown"),
        ("report", "--html"),
    ] {
        let mut c = perfgate();
        c.current_dir(case.dir.path()).arg(cmd);
        if cmd == "check" {
            c.arg("--baseline")
                .arg(&case.baseline)
                .arg("--results")
                .arg(&res);
        }
        let out = c.args([flag, "-"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd} {flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is not stdout for this report"),
            "{cmd} {flag}: {err}"
        );
        assert!(!case.dir.path().join("-").exists(), "{cmd} {flag}");
    }
    // `--json -` still is stdout.
    let out = perfgate()
        .current_dir(case.dir.path())
        .arg("check")
        .arg("--baseline")
        .arg(&case.baseline)
        .arg("--results")
        .arg(&res)
        .args(["--json", "-"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "pass", "{v}");
    assert!(!case.dir.path().join("-").exists());
}

/// The done-when cases on the committed seed baseline: same, one scenario 20 % slower, 20 %
/// better, every value jittered by ±1 %.
#[test]
fn seed_baseline_done_when() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("baselines/v0.10.1.toml");
    let recs = Baseline::load(&path).unwrap().to_records();
    assert!(recs.len() >= 24, "{} records", recs.len());
    let case = Case {
        dir: tempfile::tempdir().unwrap(),
        baseline: path.clone(),
    };
    let (out, _) = case.check(&case.results("same.jsonl", &recs), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let target = (recs[5].model.clone(), recs[5].scenario_id());
    let slower: Vec<_> = recs
        .iter()
        .map(|r| {
            if (r.model.clone(), r.scenario_id()) == target {
                scaled(r, 0.8, 1.25)
            } else {
                r.clone()
            }
        })
        .collect();
    // One run a side and no repeated launches anywhere: no noise can be learnt, the rows say
    // so, and cannot show a 20 % drop beyond δ; neither can they pass it.
    let (out, report) = case.check(&case.results("slower.jsonl", &slower), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(report["verdict"], "inconclusive");
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["model"] == target.0.as_str()
                && r["scenario"] == target.1.as_str()
                && r["metric"] == "output_throughput"
        })
        .unwrap();
    assert_eq!(row["verdict"], "inconclusive", "{row}");
    assert!(row["noise"].is_null(), "{row}");
    assert!(
        row["note"]
            .as_str()
            .unwrap()
            .contains("no repeated launches"),
        "{row}"
    );
    let (out, _) = case.check(
        &case.results("slower.jsonl", &slower),
        &["--fail-on", "inconclusive"],
    );
    assert_eq!(out.status.code(), Some(1));

    let better: Vec<_> = recs.iter().map(|r| scaled(r, 1.25, 0.8)).collect();
    let (out, _) = case.check(&case.results("better.jsonl", &better), &[]);
    assert_eq!(out.status.code(), Some(0));

    let (out, report) = case.check(&case.results("jitter.jsonl", &jittered(&recs)), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(regressed(&report).is_empty());
}

/// A check that compared nothing, or saw the same records twice, is a usage error (exit 2),
/// never a pass.
#[test]
fn nothing_compared_or_doubled_data_exit_2() {
    let case = Case::launched();
    let recs = on_launches(&seed_records(), "C", 2);
    let res = case.results("cur.jsonl", &recs);
    let (out, _) = case.check(&res, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // One results file passed twice.
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(&case.baseline)
        .arg("--results")
        .arg(&res)
        .arg("--results")
        .arg(&res)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("appears twice"), "{err}");

    // Results for another model only.
    let other: Vec<_> = recs
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.model = "someone/else".into();
            r
        })
        .collect();
    let (out, _) = case.check(&case.results("other.jsonl", &other), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing was compared") && err.contains("someone/else"),
        "{err}"
    );

    // No gated metric.
    let gate = case.dir.path().join("gate.toml");
    std::fs::write(&gate, "gated = []\n").unwrap();
    let (out, _) = case.check(&res, &["--gate", gate.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    // A baseline with no models.
    let empty = case.dir.path().join("empty.toml");
    std::fs::write(&empty, "schema_version = 1\n[engine]\nname = \"vllm\"\n").unwrap();
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(&empty)
        .arg("--results")
        .arg(&res)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The same model twice in a baseline.
    let text = std::fs::read_to_string(&case.baseline).unwrap();
    let first = text.find("[[models]]").unwrap();
    let doubled = case.dir.path().join("doubled.toml");
    std::fs::write(&doubled, format!("{text}\n{}", &text[first..])).unwrap();
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(&doubled)
        .arg("--results")
        .arg(&res)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("appears twice"), "{err}");
}

/// The one rule from a top verdict and `--fail-on` to the exit code (`check`, `comment` and the
/// check run's conclusion share it).
#[test]
fn exit_codes_follow_the_gate() {
    use perfgate::app::{exit_for, Exit};
    use perfgate::cli::FailOn;
    use perfgate::gate::TopVerdict::*;
    assert_eq!(exit_for(Pass, FailOn::Inconclusive), Exit::Pass);
    assert_eq!(exit_for(Pass, FailOn::Regression), Exit::Pass);
    assert_eq!(exit_for(Fail, FailOn::Regression), Exit::Regression);
    assert_eq!(exit_for(Inconclusive, FailOn::Regression), Exit::Pass);
    assert_eq!(
        exit_for(Inconclusive, FailOn::Inconclusive),
        Exit::Regression
    );
    assert_eq!(exit_for(Error, FailOn::Regression), Exit::Infra);
    assert_eq!(exit_for(Fail, FailOn::Never), Exit::Pass);
}
