//! Release sign-off: the HTML pages opened in headless Chromium as a person would (no console
//! errors, the JS ran, every chart's SVG is there), `perfgate history` on planted and flat series,
//! and `perfgate baseline promote` round trips with provenance and refusals.
//!
//! Chromium comes from scripts/install-browser.sh (Debian's `chromium`, called by
//! scripts/test.sh). Without it the browser tests are skipped, unless PERFGATE_REQUIRE_ENGINE=1:
//! then they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use perfgate::baseline::Baseline;
use perfgate::record::{to_jsonl, ScenarioResult};

use crate::support::fixture::on_launches;
use crate::support::{perfgate, wait_with_limit};

const SEEDS: [&str; 3] = [
    "baselines/v0.10.1.toml",
    "baselines/sglang-v0.5.1.toml",
    "baselines/lmdeploy-v0.10.0.toml",
];

fn pg(args: &[&str]) -> Output {
    let child = perfgate()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_with_limit(child, Duration::from_secs(60), "perfgate")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The Chromium to drive, or `None` (skip) when none is installed and none is required.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PERFGATE_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome-stable",
        "google-chrome",
    ] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    crate::support::skip_unless_required(
        "no Chromium is installed",
        "run scripts/install-browser.sh or set PERFGATE_CHROMIUM",
    );
    None
}

/// What Chromium made of a page: the DOM after the scripts ran, and the console messages.
struct Rendered {
    dom: String,
    console: Vec<String>,
}

fn open_in_chromium(chrome: &Path, page: &Path) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    // Output to files, not pipes: a page's DOM is larger than a pipe's buffer, and nobody reads
    // the pipe until Chromium exits.
    let out_path = profile.path().join("dom.html");
    let err_path = profile.path().join("stderr.txt");
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let child = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(&url)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("chromium starts");
    let out = wait_with_limit(child, Duration::from_secs(90), "chromium --dump-dom");
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(
        out.status.success(),
        "chromium failed: {}\n{stderr}",
        out.status
    );
    Rendered {
        dom: std::fs::read_to_string(&out_path).unwrap(),
        // Every console message (log, warning, error, uncaught exception) is logged as CONSOLE.
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
    }
}

/// The page rendered cleanly: no console message, no script error, the page's own script ran
/// to its end, and every chart holds an SVG with drawn content.
fn assert_renders(chrome: &Path, page: &Path, charts: usize) -> Rendered {
    let r = open_in_chromium(chrome, page);
    assert!(
        r.console.is_empty(),
        "console messages:\n{}",
        r.console.join("\n")
    );
    assert!(!r.dom.contains("data-js-error=\""), "a script failed");
    assert!(
        r.dom.contains("data-rendered=\"ok\""),
        "the page's script did not finish"
    );
    assert_eq!(r.dom.matches("<figure class=\"chart\"").count(), charts);
    assert_eq!(r.dom.matches("<svg").count(), charts, "one SVG per chart");
    assert!(
        r.dom.matches("<rect").count() >= charts,
        "the charts are drawn"
    );
    r
}

#[test]
fn the_browser_check_catches_a_broken_page() {
    let Some(chrome) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><figure class=\"chart\"><svg><rect/></svg></figure><script>nosuch();</script></body></html>",
    )
    .unwrap();
    let r = open_in_chromium(&chrome, &page);
    assert_eq!(r.console.len(), 1, "{:?}", r.console);
    assert!(r.console[0].contains("nosuch is not defined"));
    let caught = std::panic::catch_unwind(|| assert_renders(&chrome, &page, 1));
    assert!(caught.is_err());
}

#[test]
fn seed_comparison_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.html");
    let mut args = vec!["compare"];
    args.extend(SEEDS);
    args.extend(["--html", out.to_str().unwrap()]);
    let o = pg(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    let Some(chrome) = chromium() else { return };
    // Ten models (LMDeploy ran the FP8 variants) × throughput + TTFT/TPOT/ITL/E2E.
    let r = assert_renders(&chrome, &out, 50);
    for label in ["vllm v0.10.1", "sglang v0.5.1", "lmdeploy v0.10.0"] {
        assert!(r.dom.contains(label), "{label}");
    }
    assert!(r.dom.contains("Time to first token (TTFT) — p50 / p99"));
}

/// The seed vLLM baseline measured on 3 launches (the gate needs repeated launches to call a
/// regression): written to `dir/v0.10.1.toml`; returns its path and the seed's records.
fn launched_baseline(dir: &Path) -> (PathBuf, Vec<ScenarioResult>) {
    let seed = Baseline::load(Path::new(SEEDS[0])).unwrap();
    let recs = seed.to_records();
    let mut template = seed.clone();
    for m in &mut template.models {
        m.scenarios.clear();
    }
    let (b, _) = Baseline::from_records(
        &on_launches(&recs, "B", 3),
        seed.engine.clone(),
        seed.provenance.clone(),
        Some(&template),
    )
    .unwrap();
    let p = dir.join("v0.10.1.toml");
    std::fs::write(&p, b.to_toml()).unwrap();
    (p, recs)
}

/// Results on 3 launches, with `model`'s random-in1024-out1024 scenario 20 % slower.
fn slower_results(dir: &Path, recs: &[ScenarioResult], model: &str) -> PathBuf {
    let mut cur = on_launches(recs, "C", 3);
    for r in &mut cur {
        if r.model == model && r.scenario_id() == "random-in1024-out1024-n2000" {
            r.output_throughput *= 0.8;
            r.request_throughput *= 0.8;
            r.duration /= 0.8;
            for (k, v) in r.stats.iter_mut() {
                if k.ends_with("_ms") {
                    *v *= 1.25;
                }
            }
        }
    }
    let p = dir.join("results.jsonl");
    std::fs::write(&p, to_jsonl(&cur)).unwrap();
    p
}

#[test]
fn check_page_and_report_page_render_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let (base, recs) = launched_baseline(dir.path());
    let base = base.to_str().unwrap().to_string();
    let results = slower_results(dir.path(), &recs, "Qwen/Qwen3-8B");
    // A live run writes the engine's metrics next to the results.
    std::fs::write(
        dir.path().join("engine-metrics.jsonl"),
        r#"{"model":"Qwen/Qwen3-8B","scenario":"sharegpt-n10000","run_index":0,"engine":{"scrapes":30,"namespace":"vllm","kv_cache_usage_max":0.93,"kv_cache_usage_mean":0.71,"running_max":256,"waiting_max":9000,"preemptions":17}}
"#,
    )
    .unwrap();
    let report = dir.path().join("report.json");
    let y = dir.path().join("y.html");
    let o = pg(&[
        "check",
        "--baseline",
        &base,
        "--results",
        results.to_str().unwrap(),
        "--json",
        report.to_str().unwrap(),
        "--html",
        y.to_str().unwrap(),
        "--color",
        "never",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&y).unwrap();
    assert!(html.contains("class=\"badge v-fail\""));
    assert!(html.contains("<tr class=\"t-regressed\">"));
    assert!(html.contains("<td>17</td>"), "the engine metrics table");
    assert!(
        html.contains("<td>engine launches</td><td>3</td>"),
        "provenance"
    );
    // `perfgate report` from the JSON report finds the baseline and results it names.
    let z = dir.path().join("z.html");
    let o = pg(&[
        "report",
        "--report",
        report.to_str().unwrap(),
        "--html",
        z.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let z_html = std::fs::read_to_string(&z).unwrap();
    assert_eq!(z_html.matches("<svg").count(), html.matches("<svg").count());

    // Without the files the report names, the page plots the report's own values.
    let lone = dir.path().join("lone");
    std::fs::create_dir(&lone).unwrap();
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    r["baseline"]["sources"] = serde_json::json!(["gone.toml"]);
    r["current"]["sources"] = serde_json::json!(["gone.jsonl"]);
    // A field a newer gate may add is ignored.
    r["rows"][0]["noise_source"] = serde_json::json!("history");
    std::fs::write(lone.join("report.json"), r.to_string()).unwrap();
    let w = lone.join("w.html");
    let o = pg(&[
        "report",
        "--report",
        lone.join("report.json").to_str().unwrap(),
        "--html",
        w.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("plotting the report's own values"));

    let Some(chrome) = chromium() else { return };
    // Six models × throughput + TTFT/TPOT/ITL/E2E (the seeds record p50 and p99).
    let r = assert_renders(&chrome, &y, 30);
    assert!(r.dom.contains("data-filter=\"regressed\""));
    assert_renders(&chrome, &z, 30);
    // From the report's rows alone: the gate shows the E2E mean, not a percentile, so no E2E chart.
    assert_renders(&chrome, &w, 24);
}

/// A baseline TOML of one model and scenario with one run of throughput `thr` (and TTFT
/// inversely proportional).
fn tiny_baseline(version: &str, thr: f64) -> String {
    format!(
        r#"schema_version = 1

[engine]
name = "vllm"
version = "{version}"

[[models]]
name = "org/m"

[[models.scenarios]]
id = "random-in1024-out128-n100"

[models.scenarios.params]
dataset_name = "random"
num_prompts = 100
random_input_len = 1024
random_output_len = 128
request_rate = "inf"

[[models.scenarios.runs]]

[models.scenarios.metrics]
output_throughput = {{ direction = "higher", values = [{thr}] }}
median_ttft_ms = {{ direction = "lower", values = [{ttft}] }}
"#,
        ttft = 1e6 / thr
    )
}

/// ±1.5 % of deterministic wiggle, no trend.
const WIGGLE: [f64; 9] = [1.0, 1.012, 0.991, 1.006, 0.988, 1.013, 0.995, 1.009, 0.99];

fn history_of(dir: &Path, factor: impl Fn(usize) -> f64) -> Vec<String> {
    WIGGLE
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let p = dir.join(format!("v0.{}.0.toml", i + 1));
            std::fs::write(
                &p,
                tiny_baseline(&format!("v0.{}.0", i + 1), 2000.0 * w * factor(i)),
            )
            .unwrap();
            p.display().to_string()
        })
        .collect()
}

#[test]
fn history_flags_a_planted_step_and_not_a_flat_series() {
    let dir = tempfile::tempdir().unwrap();
    let step = dir.path().join("step");
    let flat = dir.path().join("flat");
    std::fs::create_dir_all(&step).unwrap();
    std::fs::create_dir_all(&flat).unwrap();
    // The files are passed newest first: the history orders them by version.
    let mut files = history_of(&step, |i| if i >= 5 { 0.82 } else { 1.0 });
    files.reverse();
    let html = dir.path().join("h.html");
    let mut args = vec!["history"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--html", html.to_str().unwrap()]);
    let o = pg(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("#1  vllm v0.1.0"), "{out}");
    assert!(
        out.contains("output_throughput") && out.contains("▼ worse at #6"),
        "{out}"
    );
    assert!(out.contains("2 of 2 series with a change point"), "{out}");

    let files = history_of(&flat, |_| 1.0);
    let mut args = vec!["history", "--metric", "output_throughput"];
    args.extend(files.iter().map(String::as_str));
    let o = pg(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("0 of 1 series with a change point"),
        "{}",
        text(&o.stdout)
    );

    let o = pg(&["history", "--metric", "p99_itl_ms", &files[0]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("metric `p99_itl_ms` is in none of the baselines"));

    let Some(chrome) = chromium() else { return };
    // One model × two metrics.
    let r = assert_renders(&chrome, &html, 2);
    assert!(r.dom.contains("Change points"));
}

/// `git rev-parse HEAD` here, if this is a git checkout.
fn head_commit() -> Option<String> {
    let o = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| text(&o.stdout).trim().to_string())
}

#[test]
fn promote_round_trips_with_provenance_and_refuses_a_failed_check() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Results equal to the seed's: the check passes (or is inconclusive), never fails.
    let o = pg(&["baseline", "show", "--json", SEEDS[0]]);
    let results = d.join("results.jsonl");
    std::fs::write(&results, &o.stdout).unwrap();
    let report = d.join("report.json");
    let o = pg(&[
        "check",
        "--baseline",
        SEEDS[0],
        "--results",
        results.to_str().unwrap(),
        "--json",
        report.to_str().unwrap(),
        "--color",
        "never",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let to = d.join("v0.10.2.toml");
    let promote = |extra: &[&str]| {
        let mut a = vec![
            "baseline",
            "promote",
            "--from",
            results.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
            "--date",
            "2025-09-01",
        ];
        a.extend_from_slice(extra);
        pg(&a)
    };
    let o = promote(&[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("created"), "{}", text(&o.stdout));
    let new = Baseline::load(&to).unwrap();
    let seed = Baseline::load(Path::new(SEEDS[0])).unwrap();
    // The records round-trip; engine, launch and model settings come from the checked baseline.
    let strip = |mut v: Vec<ScenarioResult>| {
        for r in &mut v {
            r.source = None;
        }
        v
    };
    assert_eq!(strip(new.to_records()), strip(seed.to_records()));
    assert_eq!(new.engine, seed.engine);
    assert_eq!(new.models[0].launch_command, seed.models[0].launch_command);
    let prov = &new.provenance;
    assert_eq!(prov.date.as_deref(), Some("2025-09-01"));
    assert!(prov.sources.contains(&results.display().to_string()));
    assert!(prov.sources.contains(&report.display().to_string()));
    assert!(prov
        .notes
        .as_deref()
        .unwrap()
        .contains("after a check with verdict"));
    if let Some(head) = head_commit() {
        assert!(
            prov.commit.as_deref().unwrap().starts_with(&head),
            "{prov:?}"
        );
    }

    // An existing file needs --replace or --append.
    let o = promote(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("pass --replace"),
        "{}",
        text(&o.stderr)
    );
    let o = promote(&["--append"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("Change from the previous baseline"));
    let appended = Baseline::load(&to).unwrap();
    assert!(appended
        .models
        .iter()
        .flat_map(|m| &m.scenarios)
        .all(|s| s.runs.len() == 2));
    let o = promote(&["--replace"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let replaced = Baseline::load(&to).unwrap();
    assert!(replaced
        .models
        .iter()
        .flat_map(|m| &m.scenarios)
        .all(|s| s.runs.len() == 1));

    // A failed check is refused, and promoted with --force.
    let slow_dir = d.join("slow-dir");
    std::fs::create_dir(&slow_dir).unwrap();
    let (base3, recs) = launched_baseline(&slow_dir);
    let slow = slower_results(&slow_dir, &recs, "Qwen/Qwen3-8B");
    let slow_report = slow.with_file_name("report.json");
    let o = pg(&[
        "check",
        "--baseline",
        base3.to_str().unwrap(),
        "--results",
        slow.to_str().unwrap(),
        "--json",
        slow_report.to_str().unwrap(),
        "--color",
        "never",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let to2 = d.join("refused.toml");
    let o = pg(&[
        "baseline",
        "promote",
        "--from",
        slow.to_str().unwrap(),
        "--to",
        to2.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("refusing to promote"),
        "{}",
        text(&o.stderr)
    );
    assert!(!to2.exists());
    let o = pg(&[
        "baseline",
        "promote",
        "--from",
        slow.to_str().unwrap(),
        "--to",
        to2.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(Baseline::load(&to2)
        .unwrap()
        .provenance
        .notes
        .unwrap()
        .contains("verdict fail"));

    // No report next to the results: refused unless --force.
    let lone = d.join("lone.jsonl");
    std::fs::copy(&results, &lone).unwrap();
    std::fs::create_dir(d.join("x")).unwrap();
    let lone2 = d.join("x/results.jsonl");
    std::fs::rename(&lone, &lone2).unwrap();
    let o = pg(&[
        "baseline",
        "promote",
        "--from",
        lone2.to_str().unwrap(),
        "--to",
        d.join("n.toml").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no check report"),
        "{}",
        text(&o.stderr)
    );
}
