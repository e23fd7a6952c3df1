//! `perfgate plan` on a recorded corpus, and `check --plan` / `ab --plan` taking its design.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perfgate");
const CORPUS: &str = "tests/data/cpu-llamacpp";

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("perfgate runs");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The corpus's 32 launches of the unchanged engine in sessions s1 … s4 (two hosts; later
/// sessions are left out, so that the figures below stay those of these four).
fn same_launches() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(CORPUS)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| {
            ["s1", "s2", "s3", "s4"]
                .iter()
                .any(|s| p.contains(&format!("/{s}-same-")))
                && p.ends_with(".jsonl")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn plan_on_the_cpu_corpus_costs_its_levels_and_saves_a_design() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("plan.toml");
    let files = same_launches();
    assert_eq!(files.len(), 32);
    let tsv = format!("{CORPUS}/launches.tsv");
    let mut args = vec!["plan", "--launches-tsv", &tsv, "--delta-pct", "20"];
    args.extend([
        "--max-launches",
        "8",
        "--json",
        "--save",
        save.to_str().unwrap(),
    ]);
    args.extend(files.iter().map(String::as_str));
    let (ok, out, err) = run(&args);
    assert!(ok, "{err}");
    let p: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Costs from the records and launches.tsv: a run of the 3 scenarios takes 14–16 s of
    // `duration` in this corpus, a launch 21–31 s of wall time in all.
    let c = &p["costs"][0][1];
    let (startup, run_s) = (
        c["startup_s"].as_f64().unwrap(),
        c["run_s"].as_f64().unwrap(),
    );
    assert!((12.0..18.0).contains(&run_s), "{c}");
    assert!((2.0..14.0).contains(&startup), "{c}");
    // Every row has its components: 4 sessions, one run per launch (no run component).
    let rows = p["rows"].as_array().unwrap();
    assert!(rows.len() > 30);
    for r in rows {
        assert!(r["launch_var"].as_f64().is_some(), "{r}");
        assert!(r["run_var"].is_null(), "{r}");
        assert_eq!(r["session_df"], 3.0, "{r}");
    }
    // Sessions s3 and s4 ran on another host (tests/data/cpu-llamacpp/README.md): the session
    // offsets bound every stored check, so no check design reaches the power and `ab`, whose
    // pairs cancel them, does.
    assert!(p["check"].is_null(), "{}", p["check"]);
    let ab = &p["ab"];
    assert!(ab["power"].as_f64().unwrap() >= 0.95, "{ab}");
    assert_eq!(ab["runs_per_launch"], 1, "{ab}");
    // The saved file holds the design there is.
    let text = std::fs::read_to_string(&save).unwrap();
    let f = perfgate::gate::plan::PlanFile::parse(&text, "plan.toml").unwrap();
    assert!(f.check.is_none(), "{text}");
    assert_eq!(
        u64::from(f.ab.unwrap().launches),
        p["ab"]["launches"].as_u64().unwrap()
    );

    // Without a start-up cost the plan says which flag gives one.
    let mut args = vec!["plan"];
    args.extend(files.iter().map(String::as_str));
    let (ok, _, err) = run(&args);
    assert!(!ok && err.contains("--startup-s"), "{err}");
}

#[test]
fn check_and_ab_take_the_plans_design_and_flags_win() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[check]\nlaunches = 4\nruns_per_launch = 2\n[ab]\nlaunches = 5\nruns_per_launch = 3\n",
    )
    .unwrap();
    let p = plan.to_str().unwrap();
    let suite = "suites/cpu-llamacpp.toml";
    let (ok, out, err) = run(&["check", "--baseline", suite, "--plan", p, "--dry-run"]);
    assert!(ok, "{err}");
    assert!(out.contains("4 launches × 2 runs each"), "{out}");
    let (ok, out, err) = run(&[
        "check",
        "--baseline",
        suite,
        "--plan",
        p,
        "--runs",
        "3",
        "--dry-run",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("3 launches × 2 runs each"), "{out}");
    assert!(
        err.contains("--runs 3 from the command line wins over the plan's 4"),
        "{err}"
    );
    let (ok, out, err) = run(&["ab", "--suite", suite, "--plan", p, "--dry-run"]);
    assert!(ok, "{err}");
    assert!(out.contains("5 launches × 3 runs each"), "{out}");

    // A bad plan is a usage error naming the file.
    std::fs::write(&plan, "[check]\nlaunches = 4\n").unwrap();
    let (ok, _, err) = run(&["check", "--baseline", suite, "--plan", p, "--dry-run"]);
    assert!(!ok && err.contains("plan.toml"), "{err}");
}
