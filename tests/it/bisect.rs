//! `perfgate bisect` end to end: revisions of the fake engine whose TTFT changes at known
//! revisions (one change at 11 of 16; a small one at 5 and a large one at 11), a bisect killed
//! midway and restarted, arguments that do not match the folder, and on the CPU engine
//! (llama.cpp) the quickstart's slowed launcher from a known revision on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::engine::engine_available;
use crate::support::{free_port, two_scenario_suite, wait_with_limit, word_tokenizer_json};

const BIN: &str = env!("CARGO_BIN_EXE_perfgate");

/// A suite of two small scenarios on the fake engine (the one of `tests/it/ab.rs`).
fn fake_suite() -> String {
    two_scenario_suite(&format!(
        "exec {BIN} fake-server --port {{port}} --model {{served_model_name}} --ttft-ms 20 --itl-ms 2"
    ))
}

/// The fake engine of revision `$1` (a number): TTFT `$4` ms from revision `$2` on, `$6` ms
/// from revision `$5` on, else 20 ms.
const ENGINE_SH: &str = r#"rev=$1; ttft=20
if [ "$rev" -ge "$5" ]; then ttft=$6; elif [ "$rev" -ge "$2" ]; then ttft=$4; fi
exec "$7" fake-server --port "$3" --model "$8" --ttft-ms "$ttft" --itl-ms 2
"#;

struct Bisect {
    code: i32,
    stdout: String,
    stderr: String,
    report: Value,
}

/// The folder of a bisect over revisions 0..n: the suite, the revisions file, the engine script.
fn setup(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
    std::fs::write(dir.join("suite.toml"), fake_suite()).unwrap();
    let revs: String = (0..n).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("revs.txt"), format!("# oldest first\n{revs}")).unwrap();
    std::fs::write(dir.join("engine.sh"), ENGINE_SH).unwrap();
    word_tokenizer_json(dir);
    (dir.join("suite.toml"), dir.join("out"))
}

/// The engine template: changes (TTFT ms) from revision `small_at` (`small_ms`) and `large_at`
/// (`large_ms`).
fn engine_cmd(dir: &Path, small: (usize, u64), large: (usize, u64)) -> String {
    format!(
        "exec sh {} {{rev}} {} {{port}} {} {} {} {BIN} {{served_model_name}}",
        dir.join("engine.sh").display(),
        small.0,
        small.1,
        large.0,
        large.1
    )
}

/// `perfgate bisect` over revisions 0..n of the fake engine. Without telemetry: its calibration
/// loop (0.2 s before each scenario) is much of a fake engine's launch (the 16-revision bisect
/// alone: 44.6 s with it, 27.7 s without, 2026-11-29), and these tests are about the search, not
/// the machine (the bisection on the CPU engine below keeps its telemetry).
fn command(dir: &Path, n: usize, engine: &str, extra: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(BIN);
    c.args(["bisect", "--good", "0", "--bad", &(n - 1).to_string()])
        .arg("--revisions")
        .arg(dir.join("revs.txt"))
        .arg("--baseline")
        .arg(dir.join("suite.toml"))
        .args(["--engine-cmd", engine])
        .arg("--output-dir")
        .arg(dir.join("out"))
        .arg("--tokenizer")
        .arg(dir.join("tokenizer.json"))
        .args(["--port", &free_port().to_string(), "--stop-grace", "2"])
        .arg("--no-telemetry")
        .args(extra)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

fn finish(child: std::process::Child, dir: &Path, limit: Duration) -> Bisect {
    let o = wait_with_limit(child, limit, "perfgate bisect");
    let report = std::fs::read_to_string(dir.join("out/bisect.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    Bisect {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        report,
    }
}

fn culprits(r: &Value) -> Vec<String> {
    r["culprits"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["revision"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn bisect_names_revision_11_of_16_within_6_comparisons() {
    let _serial = crate::support::serial();
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), 16);
    let engine = engine_cmd(dir.path(), (11, 80), (11, 80));
    let prepared = dir.path().join("prepared.txt");
    let prepare = format!("printf '%s\\n' {{rev}} >> {}", prepared.display());
    let child = command(dir.path(), 16, &engine, &["--prepare-cmd", &prepare])
        .spawn()
        .unwrap();
    let r = finish(child, dir.path(), Duration::from_secs(400));
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    assert_eq!(r.report["outcome"], "culprit", "{:#}", r.report);
    // --prepare-cmd ran once for each revision a step measured, with the revision as one word.
    let mut measured: Vec<String> = r.report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            [
                s["base"].as_str().unwrap(),
                s["candidate"].as_str().unwrap(),
            ]
        })
        .map(String::from)
        .collect();
    measured.sort();
    measured.dedup();
    let mut lines: Vec<String> = std::fs::read_to_string(&prepared)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    assert_eq!(lines, measured);
    assert_eq!(culprits(&r.report), ["11"], "{:#}", r.report);
    assert_eq!(r.report["culprits"][0]["previous"], "10");
    let steps = r.report["steps"].as_array().unwrap();
    assert!(steps.len() <= 6, "{} steps: {:#}", steps.len(), r.report);
    // The first step confirms the end points; every step says what it cost.
    assert_eq!(steps[0]["base"], "0");
    assert_eq!(steps[0]["candidate"], "15");
    assert_eq!(steps[0]["verdict"], "different");
    for s in steps {
        assert!(s["engine_minutes"].as_f64().unwrap() > 0.0, "{s:#}");
        assert!(s["pairs"].as_u64().unwrap() >= 1, "{s:#}");
    }
    // The culprit's evidence: TTFT regressed, with its interval.
    let ev = &r.report["culprits"][0]["changes"];
    let ttft = ev
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "median_ttft_ms" && c["verdict"] == "regressed")
        .unwrap_or_else(|| panic!("{ev:#}"));
    assert!(ttft["change_pct"].as_f64().unwrap() > 100.0, "{ttft:#}");
    assert!(ttft["interval"].is_array(), "{ttft:#}");
    assert!(r.stdout.contains("culprit: 11 (after 10)"), "{}", r.stdout);
    let md = std::fs::read_to_string(dir.path().join("out/bisect.md")).unwrap();
    assert!(md.contains("### Culprit `11` (after `10`)"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("out/bisect.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("culprit 11"),
        "{html}"
    );
    // Each step keeps its own records, reports and engine logs.
    let step1 = dir.path().join("out/steps/01-r0-r15");
    assert!(step1.join("results.jsonl").is_file());
    assert!(step1.join("report.json").is_file());
    assert!(step1.join("logs/model-a.base.log").is_file());
    eprintln!(
        "bisect 16 revisions: {} steps, {:.2} engine-minutes",
        steps.len(),
        r.report["engine_minutes"]
    );
}

#[test]
fn two_changes_are_both_reported_or_the_large_one_with_the_other_range_open() {
    let _serial = crate::support::serial();
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), 16);
    // Small: 20 → 50 ms TTFT from revision 5; large: → 200 ms from revision 11.
    let engine = engine_cmd(dir.path(), (5, 50), (11, 200));
    let child = command(
        dir.path(),
        16,
        &engine,
        &[
            "--metrics",
            "median_ttft_ms",
            "--scenarios",
            "random-in16-out8-n8-c4",
        ],
    )
    .spawn()
    .unwrap();
    let r = finish(child, dir.path(), Duration::from_secs(500));
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    let named = culprits(&r.report);
    assert!(named.contains(&"11".to_string()), "{:#}", r.report);
    if !named.contains(&"5".to_string()) {
        let open = r.report["open_ranges"].as_array().unwrap();
        let covers = open.iter().any(|o| {
            let a: usize = o["after"].as_str().unwrap().parse().unwrap();
            let t: usize = o["through"].as_str().unwrap().parse().unwrap();
            a < 5 && t >= 5
        });
        assert!(
            covers,
            "revision 5 neither named nor in an open range: {:#}",
            r.report
        );
    }
    // Only the chosen scenario and metric were measured and gated.
    let recs = perfgate::record::read_jsonl(&dir.path().join("out/steps/01-r0-r15/results.jsonl"))
        .unwrap();
    assert!(recs
        .iter()
        .all(|x| x.scenario_id() == "random-in16-out8-n8-c4"));
    for c in r.report["steps"][0]["changes"].as_array().unwrap() {
        assert_eq!(c["metric"], "median_ttft_ms", "{c:#}");
    }
    eprintln!(
        "bisect two changes: culprits {named:?}, {} steps",
        r.report["steps"].as_array().unwrap().len()
    );
}

fn state_steps(out: &Path) -> usize {
    std::fs::read_to_string(out.join("bisect-state.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["steps"].as_array().map(|a| a.len()))
        .unwrap_or(0)
}

#[test]
fn a_killed_bisect_resumes_without_measuring_its_finished_steps_again() {
    let _serial = crate::support::serial();
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = setup(dir.path(), 16);
    let engine = engine_cmd(dir.path(), (11, 80), (11, 80));
    let mut child = command(dir.path(), 16, &engine, &[]).spawn().unwrap();
    let t0 = std::time::Instant::now();
    while state_steps(&out) < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "no 2 finished steps in 300 s"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "perfgate bisect ended early"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = child.wait();
    let finished = state_steps(&out);
    let kept: Vec<(PathBuf, Vec<u8>)> = (1..=finished)
        .map(|k| {
            let d = std::fs::read_dir(out.join("steps"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    p.file_name()
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .starts_with(&format!("{k:02}-"))
                })
                .unwrap();
            let p = d.join("results.jsonl");
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    // Other arguments against the same folder are refused, naming what differs.
    let other = command(dir.path(), 16, &engine, &["--max-pairs", "7"])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2));
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("holds a bisect with other arguments"), "{err}");
    assert!(err.contains("max_pairs: saved 10, now 7"), "{err}");
    // The same arguments: the finished steps are loaded, the rest measured.
    let child = command(dir.path(), 16, &engine, &[]).spawn().unwrap();
    let r = finish(child, dir.path(), Duration::from_secs(400));
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    assert_eq!(culprits(&r.report), ["11"], "{:#}", r.report);
    assert_eq!(
        r.report["steps_reused"].as_u64().unwrap() as usize,
        finished
    );
    for k in 1..=finished {
        assert!(
            r.stderr
                .contains(&format!("bisect step {k}: loaded from bisect-state.json")),
            "{}",
            r.stderr
        );
        let measured = |l: &str| l.contains(&format!("bisect step {k}: ")) && l.contains("(base)");
        assert!(!r.stderr.lines().any(measured), "{}", r.stderr);
    }
    let steps = r.report["steps"].as_array().unwrap();
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["reused"], i < finished, "{s:#}");
    }
    // Their records were not touched.
    for (p, bytes) in kept {
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "{} changed", p.display());
    }
}

#[test]
fn bad_revisions_and_missing_flags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), 4);
    std::fs::write(dir.path().join("revs.txt"), "0\n1\n-x\n3\n").unwrap();
    let o = command(dir.path(), 4, "true {rev}", &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("revs.txt:3: revision `-x` starts with `-`"),
        "{err}"
    );
    let o = std::process::Command::new(BIN)
        .args([
            "bisect",
            "--good",
            "0",
            "--bad",
            "3",
            "--baseline",
            "s.toml",
            "--engine-cmd",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--revisions"));
}

/// The llama.cpp launcher on core 0, from revision `at` on sharing that core with two busy loops
/// (both in the engine's process group, so they stop with it): the engine keeps about a third of
/// the core instead of all of it. Both arms on the same core, so a test running on the other core
/// loads them alike. (The quickstart's launcher, one busy loop and an unpinned base, slowed the c4
/// scenario by less than the suite's tolerances at the step's α on a loaded machine, and on an
/// AMD host on 2026-11-29 idle but for the test command's other thread: UNKNOWN after 6 pairs.)
fn cpu_engine(at: usize) -> String {
    use crate::ab::{BUSY_LOOP, PINNED_CMD, SLOW_CMD};
    format!("if [ {{rev}} -ge {at} ]; then {BUSY_LOOP}{SLOW_CMD}; else {PINNED_CMD}; fi")
}

#[test]
fn on_the_cpu_engine_bisect_names_the_first_slowed_revision() {
    if !engine_available() {
        return;
    }
    let _serial = crate::support::serial();
    let dir = tempfile::tempdir().unwrap();
    let n = 3;
    let suite = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/cpu-llamacpp.toml"),
    )
    .unwrap();
    std::fs::write(dir.path().join("suite.toml"), suite).unwrap();
    let revs: String = (0..n).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.path().join("revs.txt"), revs).unwrap();
    let child = std::process::Command::new(BIN)
        .args(["bisect", "--good", "0", "--bad", &(n - 1).to_string()])
        .arg("--revisions")
        .arg(dir.path().join("revs.txt"))
        .arg("--baseline")
        .arg(dir.path().join("suite.toml"))
        .args(["--engine-cmd", &cpu_engine(2)])
        .args(["--scenarios", "random-in32-out32-n8-c4", "--max-pairs", "6"])
        .arg("--output-dir")
        .arg(dir.path().join("out"))
        .args(["--port", &free_port().to_string()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let r = finish(child, dir.path(), Duration::from_secs(900));
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    assert_eq!(culprits(&r.report), ["2"], "{:#}", r.report);
    let steps = r.report["steps"].as_array().unwrap();
    // Three revisions keep the real engine's part short (the search itself is tested on 16 above):
    // the end points (DIFFERENT) and the one bisection step (0 → 1 SAME) when every step decides,
    // more when a step stays UNKNOWN on a loaded machine, within the planned 1 + ⌈log₂ 2⌉ + 2.
    // No pair of revisions is measured twice.
    assert!(steps.len() <= 4, "{:#}", r.report);
    let mut pairs: Vec<(String, String)> = steps
        .iter()
        .map(|s| (s["base"].to_string(), s["candidate"].to_string()))
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), steps.len(), "{:#}", r.report);
    eprintln!(
        "cpu bisect: {} steps, {:.2} engine-minutes\n{}",
        steps.len(),
        r.report["engine_minutes"],
        r.stdout
    );
}
