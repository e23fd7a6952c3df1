//! Decision quality on real GPU launches (tests/data/gpu-llamacpp-h100: llama.cpp with CUDA on
//! one H100, 8 launches of an unchanged engine and one of an engine with 24 slots instead of 32).
//! The figures docs/gate.md reports come from `cargo run --example replay`; these tests pin the
//! verdicts that must hold. The H200 tests read tests/data/gpu-llamacpp-h200 (three leases).

use std::path::{Path, PathBuf};

use perfgate::gate::replay::{replay, Change, Design, Launch};
use perfgate::gate::{evaluate, GateConfig, Inputs, TopVerdict, Verdict};
use perfgate::record::{read_jsonl, ScenarioResult};

use crate::support::fixture::scaled;
use crate::support::perfgate;

const UNCHANGED: [&str; 8] = ["rec", "aa", "aa1", "l1", "l2", "l3", "l4", "l5"];
const PREFILL: &str = "random-in1024-out32-n128-c32";

fn corpus(name: &str) -> PathBuf {
    data("gpu-llamacpp-h100", name)
}

/// A launch's file in one of tests/data's folders.
fn data(folder: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(folder)
        .join(format!("{name}.jsonl"))
}

/// `perfgate baseline record -o OUT FILES… EXTRA…`, which must succeed.
fn record_baseline(files: &[PathBuf], out: &Path, extra: &[&str]) {
    write_baseline("record", files, out, extra);
}

/// `perfgate baseline SUB -o OUT FILES… EXTRA…` (`record` or `calibrate`), which must succeed.
fn write_baseline(sub: &str, files: &[PathBuf], out: &Path, extra: &[&str]) {
    let o = perfgate()
        .args(["baseline", sub, "-o"])
        .arg(out)
        .args(files)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `perfgate check` of `results` against `baseline`: its exit code and JSON report.
fn check_json(baseline: &Path, results: &[PathBuf]) -> (Option<i32>, serde_json::Value) {
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(baseline)
        .arg("--results")
        .args(results)
        .args(["--json", "-"])
        .output()
        .unwrap();
    let rep = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), rep)
}

fn launch(name: &str) -> Launch {
    Launch::new(name, read_jsonl(&corpus(name)).unwrap())
}

#[test]
fn the_slot_starved_engine_fails_on_prefill_median_ttft() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b.toml");
    let engine = ["--engine", "llama.cpp", "--engine-version", "b11434-cuda"];
    record_baseline(&UNCHANGED.map(corpus), &b, &engine);
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
    let row = prefill_ttft(&rep);
    assert_eq!(row["verdict"], "regressed", "{row}");
    assert!(row["change_pct"].as_f64().unwrap() > 100.0, "{row}");
    assert_eq!(row["launches"], serde_json::json!([8, 1]), "{row}");
    assert_eq!(row["noise"]["source"], "launches", "{row}");
    // One launch: nothing to hold back as confirmation (`--confirm`, default 1), so the row is
    // decided once and says so; `--confirm 0` decides once without the word.
    let note = |row: &serde_json::Value| row["note"].as_str().unwrap_or_default().to_string();
    assert!(
        note(row).contains("unconfirmed: decided on its 1 launch(es)"),
        "{row}"
    );
    let out = perfgate()
        .args(["check", "--confirm", "0", "--baseline"])
        .arg(&b)
        .arg("--results")
        .arg(corpus("b2"))
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = prefill_ttft(&rep);
    assert_eq!(row["verdict"], "regressed", "{row}");
    assert!(!note(row).contains("confirmed"), "{row}");
}

fn prefill_ttft(rep: &serde_json::Value) -> &serde_json::Value {
    rep["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scenario"] == PREFILL && r["metric"] == "median_ttft_ms")
        .unwrap()
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
        let rep = evaluate(Inputs::new(&base, &l.records, &GateConfig::default()));
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
    // A doubled prefill TTFT (slot starvation doubled it and more) is caught in half or more of
    // the 3 × 3 checks on this noisy corpus (55.5 % of the replay's 200 splits, at 0 % false
    // alarms; 66.5 % before its records, which have no loop times, assumed λ = 4 between its
    // sittings: docs/gate.md, "Where nothing watches the machine").
    let ttft = Change::Latency {
        metric: "ttft".into(),
        pct: 100.0,
        scenario: Some(PREFILL.into()),
    };
    let hit = replay(&all, d, &ttft, &cfg, 200, 2);
    assert!(hit.fail_rate() >= 0.5, "detection {}", hit.fail_rate());
}

/// Seed 000 (vLLM v0.10.1: 6 models × 4 scenarios) as synthetic launches with 1 % launch-to-
/// launch noise (log-normal, one draw per launch and row moving throughputs down and latencies
/// up together), the baseline's launches in one session and the candidate's in another, as a
/// stored baseline and a later check are. `change(model, scenario)` gives (throughput ×,
/// latency ×) for the candidate.
fn seed_launches(
    launches: usize,
    session: &str,
    rng: &mut rand::rngs::StdRng,
    change: &dyn Fn(&ScenarioResult) -> (f64, f64),
) -> Vec<ScenarioResult> {
    seed_launches_on(launches, session, rng, change, Host::STEADY)
}

/// The synthetic launches' host: how much perfgate's calibration loop (100 ms) varies from
/// launch to launch and from reading to reading (sd of its log), with no effect on the engine.
#[derive(Clone, Copy, Debug)]
struct Host {
    launch_sd: f64,
    reading_sd: f64,
}

impl Host {
    /// A machine that did not move: every reading the same.
    const STEADY: Host = Host {
        launch_sd: 0.0,
        reading_sd: 0.0,
    };
    /// As noisy as the CPU host of the llama.cpp corpus, s3 … s9 (tests/data/cpu-llamacpp):
    /// readings within a launch 2.0 %, launch means within a sitting 2.4 % over 3 readings,
    /// so 2.1 % a launch besides the readings' own.
    const CPU_HOST: Host = Host {
        launch_sd: 0.021,
        reading_sd: 0.020,
    };
}

fn seed_launches_on(
    launches: usize,
    session: &str,
    rng: &mut rand::rngs::StdRng,
    change: &dyn Fn(&ScenarioResult) -> (f64, f64),
    host: Host,
) -> Vec<ScenarioResult> {
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, StandardNormal};
    let path = "tests/data/seeds/000_91a68daabf788996.txt";
    let text = std::fs::read_to_string(path).unwrap();
    let seed = perfgate::import::import_text(&text, path, &Default::default())
        .unwrap()
        .records;
    let mut out = Vec::new();
    // A moving loop draws from its own stream (seeded from the engine's once per side), a steady
    // one draws nothing: the steady host's launches are those the seeds were measured on.
    let steady = host.launch_sd == 0.0 && host.reading_sd == 0.0;
    let mut loop_rng = rand::rngs::StdRng::seed_from_u64(if steady { 0 } else { rng.random() });
    let draw = |rng: &mut rand::rngs::StdRng, sd: f64| -> f64 {
        if sd == 0.0 {
            return 0.0;
        }
        let z: f64 = StandardNormal.sample(rng);
        sd * z
    };
    for l in 0..launches {
        let launch_shift = draw(&mut loop_rng, host.launch_sd);
        for r in &seed {
            let z: f64 = StandardNormal.sample(rng);
            let (thr, lat) = change(r);
            let f = (0.01 * z).exp();
            let mut r = scaled(r, thr / f, lat * f);
            r.launch_id = Some(format!("L{l}"));
            r.session_id = Some(session.to_string());
            r.run_index = l as u32;
            let reading = draw(&mut loop_rng, host.reading_sd);
            let mut machine = steady_machine();
            machine.calibration_ms = machine
                .calibration_ms
                .map(|ms| ms * (launch_shift + reading).exp());
            r.telemetry = Some(machine);
            out.push(r);
        }
    }
    out
}

/// The synthetic launches' machine: perfgate's calibration loop timed at one speed before every
/// run, a machine that did not move (the suite's model has no session offset either). Without
/// loop times nothing watches the machine and the gate assumes sittings differ as much as
/// unwatched ones measure (`unwatched_session_ratio`); `the_quiet_suite_without_loop_times`
/// pins what that costs.
fn steady_machine() -> perfgate::telemetry::Telemetry {
    perfgate::telemetry::Telemetry {
        calibration_ms: Some(100.0),
        ..Default::default()
    }
}

fn seed_check(base: &[ScenarioResult], cur: &[ScenarioResult]) -> (perfgate::gate::Report, f64) {
    let rep = evaluate(Inputs::new(base, cur, &GateConfig::default()));
    let gated = rep.rows.iter().filter(|r| r.gated).count();
    (rep.clone(), rep.counts.pass as f64 / gated as f64)
}

/// The quiet suite's criteria on the seeds it was measured on: 21, and 1 … 12, which decide the
/// assumed session ratio (docs/gate.md, "Why the assumption cannot follow": λ = 1.5 already
/// fails two of them, λ = 2 four).
#[test]
fn a_quiet_engine_is_heard_and_an_unchanged_one_passes() {
    for seed in std::iter::once(21).chain(1..=12) {
        let draw = quiet_engine(seed, Host::STEADY);
        // ≥ 90 % of the gated rows pass at 5 × 3 and at 3 × 3; the change regresses exactly
        // its scenario's three gated rows.
        assert!(
            draw.pass.iter().all(|p| *p >= 0.9),
            "{seed}: {:?}",
            draw.pass
        );
        let metrics: Vec<&str> = draw.regressed.iter().map(|r| r.2.as_str()).collect();
        assert_eq!(
            metrics,
            ["output_throughput", "median_ttft_ms", "median_tpot_ms"],
            "{seed}: {:?}",
            draw.regressed
        );
        assert!(
            draw.regressed
                .iter()
                .all(|r| r.0.contains("Qwen3-32B") && r.1.starts_with("random-in1024-out1024")),
            "{:?}",
            draw.regressed
        );
    }
}

/// The same suite on a host whose calibration loop is as noisy as the CPU corpora's, the engine
/// not following it: the machine term widens checks by what the loops' chance differences could
/// explain at slope 2, as large as this engine's own noise. What must hold does (nothing
/// regresses unchanged, the change never passes); the price is pinned as measured (docs/gate.md,
/// "A quiet engine on a noisy host"): over the 13 draws, the mean PASS share at 5 × 3 and 3 × 3
/// (88.2 and 90.1 %, each draw 55–100 %) and the draws whose change regresses all three rows (9).
#[test]
fn a_quiet_engine_on_a_host_with_a_noisy_loop() {
    let draws: Vec<QuietDraw> = std::iter::once(21)
        .chain(1..=12)
        .map(|seed| quiet_engine(seed, Host::CPU_HOST))
        .collect();
    let n = draws.len() as f64;
    let mean = |i: usize| draws.iter().map(|d| d.pass[i]).sum::<f64>() / n;
    let heard = draws.iter().filter(|d| d.regressed.len() == 3).count();
    eprintln!(
        "noisy loop: PASS {:.1} % (5 × 3), {:.1} % (3 × 3); the change heard in {heard} of 13",
        100.0 * mean(0),
        100.0 * mean(1)
    );
    assert!(mean(0) > 0.85 && mean(0) < 0.95, "{}", mean(0));
    assert!(mean(1) > 0.85 && mean(1) < 0.95, "{}", mean(1));
    assert!((7..=11).contains(&heard), "{heard}");
}

/// The same suite as results without loop times (imports, `--no-telemetry`): nothing watches
/// the machine, so the gate assumes sittings differ by twice a launch's noise (λ 4, as
/// unwatched sittings hours apart measure: docs/gate.md, "Where nothing watches the machine").
/// The price on this session-free model is passes and the 25 % latency rise; what must hold is
/// that an unchanged engine never regresses and a changed one never passes those rows.
#[test]
fn the_quiet_suite_without_loop_times() {
    use rand::SeedableRng;
    let bare = |v: Vec<ScenarioResult>| -> Vec<ScenarioResult> {
        v.into_iter()
            .map(|mut r| {
                r.telemetry = None;
                r
            })
            .collect()
    };
    let same = |_: &ScenarioResult| (1.0, 1.0);
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let base = bare(seed_launches(5, "baseline", &mut rng, &same));
    let cur = bare(seed_launches(3, "candidate", &mut rng, &same));
    let (rep, pass) = seed_check(&base, &cur);
    eprintln!(
        "seed 000 without loop times, A/A 5 × 3: {:.1} % of gated rows pass",
        100.0 * pass
    );
    assert_eq!(rep.counts.regressed, 0, "{:?}", rep.counts);
    assert!(pass > 0.5 && pass < 0.9, "{pass}");
    let open = rep
        .rows
        .iter()
        .find(|r| r.gated && r.verdict == Verdict::Inconclusive);
    let note = open.and_then(|r| r.note.as_deref()).unwrap_or_default();
    assert!(
        note.contains("(no calibration loop watched the machine)"),
        "{note}"
    );
    let slow = |r: &ScenarioResult| {
        let hit =
            r.model.contains("Qwen3-32B") && r.scenario_id().starts_with("random-in1024-out1024");
        if hit {
            (0.8, 1.25)
        } else {
            (1.0, 1.0)
        }
    };
    let cur = bare(seed_launches(3, "candidate", &mut rng, &slow));
    let (rep, _) = seed_check(&base, &cur);
    assert_ne!(rep.verdict, TopVerdict::Pass);
    let hit: Vec<&perfgate::gate::Row> = rep
        .rows
        .iter()
        .filter(|r| {
            r.gated
                && r.metric != "success_rate"
                && r.model.contains("Qwen3-32B")
                && r.scenario.starts_with("random-in1024-out1024")
        })
        .collect();
    assert_eq!(hit.len(), 3, "{hit:?}");
    assert!(hit.iter().all(|r| r.verdict != Verdict::Pass), "{hit:?}");
}

/// What one draw of the quiet suite showed: the gated rows' PASS share at A/A 5 × 3 and 3 × 3,
/// and the rows the 20 % / 25 % change in one scenario of one model regressed (model,
/// scenario, metric). Asserts what must hold on any host: an unchanged engine never regresses,
/// the changed scenario's rows never pass, nothing outside that model regresses, and 20 %
/// better everywhere does not fail.
struct QuietDraw {
    pass: [f64; 2],
    regressed: Vec<(String, String, String)>,
}

fn quiet_engine(seed: u64, host: Host) -> QuietDraw {
    use rand::SeedableRng;
    let same = |_: &ScenarioResult| (1.0, 1.0);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let base = seed_launches_on(5, "baseline", &mut rng, &same, host);
    let mut pass = [0.0; 2];
    for (i, (nb, nc)) in [(5, 3), (3, 3)].into_iter().enumerate() {
        let cur = seed_launches_on(nc, "candidate", &mut rng, &same, host);
        let b: Vec<_> = base
            .iter()
            .filter(|r| r.run_index < nb as u32)
            .cloned()
            .collect();
        let (rep, share) = seed_check(&b, &cur);
        eprintln!(
            "seed 000, 1 % noise, draw {seed}, {host:?}, A/A {nb} × {nc}: {:.1} % of gated rows \
             pass, {:?}",
            100.0 * share,
            rep.counts
        );
        assert_eq!(
            rep.counts.regressed, 0,
            "{seed}: {nb}×{nc}: {:?}",
            rep.counts
        );
        assert_ne!(rep.verdict, TopVerdict::Fail);
        pass[i] = share;
    }
    // 20 % less throughput and 25 % more latency in one scenario of one model. (The model's
    // engine-wide rows and the all-models rows, averages that contain it, may regress too: the
    // average really moved by about 5 %.)
    let target = |model: &str, scenario: &str| {
        model.contains("Qwen3-32B") && scenario.starts_with("random-in1024-out1024")
    };
    let slow = |r: &ScenarioResult| {
        if target(&r.model, &r.scenario_id()) {
            (0.8, 1.25)
        } else {
            (1.0, 1.0)
        }
    };
    let cur = seed_launches_on(3, "candidate", &mut rng, &slow, host);
    let (rep, _) = seed_check(&base, &cur);
    let regressed: Vec<(String, String, String)> = rep
        .rows
        .iter()
        .filter(|r| r.gated && r.verdict == Verdict::Regressed)
        .map(|r| (r.model.clone(), r.scenario.clone(), r.metric.clone()))
        .collect();
    eprintln!(
        "draw {seed}, {host:?}, the change: {:?}, {regressed:?}",
        rep.verdict
    );
    let hit: Vec<&perfgate::gate::Row> = rep
        .rows
        .iter()
        .filter(|r| r.gated && r.metric != "success_rate" && target(&r.model, &r.scenario))
        .collect();
    assert_eq!(hit.len(), 3, "{hit:?}");
    assert!(hit.iter().all(|r| r.verdict != Verdict::Pass), "{hit:?}");
    assert!(
        regressed
            .iter()
            .all(|r| r.0.contains("Qwen3-32B") || r.0 == perfgate::gate::ALL_MODELS),
        "{seed}: {regressed:?}"
    );
    // 20 % better everywhere: no regression, the check does not fail.
    let better = |_: &ScenarioResult| (1.2, 1.0 / 1.2);
    let cur = seed_launches_on(3, "candidate", &mut rng, &better, host);
    let (rep, _) = seed_check(&base, &cur);
    assert_eq!(rep.counts.regressed, 0, "{seed}: {:?}", rep.counts);
    assert_ne!(rep.verdict, TopVerdict::Fail, "{seed}");
    QuietDraw {
        pass,
        regressed: regressed
            .into_iter()
            .filter(|r| !r.1.starts_with('('))
            .collect(),
    }
}

/// CUDA graphs off (decode TPOT +16 %, never recorded): its stated effect on a real launch is
/// below what this corpus's sessions let a check show against a 10 % tolerance, and the row says
/// so; a decode TPOT doubled is shown (docs/gate.md, "Replay on real GPU launches").
#[test]
fn a_sixteen_percent_decode_tpot_change_is_bounded_by_the_sessions() {
    const DECODE: &str = "random-in128-out128-n64-c32";
    let base: Vec<ScenarioResult> = UNCHANGED[..7]
        .iter()
        .flat_map(|n| launch(n).records)
        .collect();
    let decode_tpot = |pct: f64| -> Vec<ScenarioResult> {
        let change = Change::Latency {
            metric: "tpot".into(),
            pct,
            scenario: Some(DECODE.into()),
        };
        launch("l5")
            .records
            .iter()
            .map(|r| change.apply(r))
            .collect()
    };
    let row = |rep: &perfgate::gate::Report| {
        rep.rows
            .iter()
            .find(|r| r.scenario == DECODE && r.metric == "median_tpot_ms")
            .cloned()
            .unwrap()
    };
    let cfg = GateConfig::default();
    let rep = evaluate(Inputs::new(&base, &decode_tpot(16.0), &cfg));
    let r = row(&rep);
    assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
    assert!(
        r.note
            .as_deref()
            .unwrap()
            .contains("the between-session offset bounds it"),
        "{r:?}"
    );
    let [lo, hi] = r.interval.unwrap();
    assert!(lo < 10.0 && hi > 16.0, "{r:?}");
    let rep = evaluate(Inputs::new(&base, &decode_tpot(100.0), &cfg));
    assert_eq!(row(&rep).verdict, Verdict::Regressed, "{:?}", row(&rep));
    assert_eq!(rep.verdict, TopVerdict::Fail);
}

/// The H200 pair (tests/data/gpu-llamacpp-h200: one launch of the unchanged engine, one with CUDA
/// graphs off): nothing is replicated, so however large a change (decode median TPOT +27.5 %),
/// no latency or throughput row is decided, and each says why and what would decide it.
#[test]
fn one_launch_a_side_of_a_real_gpu_engine_decides_nothing_and_says_why() {
    let h200 = |name: &str| read_jsonl(&data("gpu-llamacpp-h200", name)).unwrap();
    let (base, cur) = (h200("g1-same-l1"), h200("g1-b1-l1"));
    let cfg = GateConfig::default();
    let rep = evaluate(Inputs::new(&base, &cur, &cfg));
    assert_eq!(rep.verdict, TopVerdict::Inconclusive);
    let tested: Vec<_> = rep
        .rows
        .iter()
        .filter(|r| r.gated && r.metric != "success_rate")
        .collect();
    assert_eq!(tested.len(), 9, "{:?}", rep.rows);
    for r in tested {
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert_eq!(r.interval, None, "{r:?}");
        assert_eq!(r.launches_needed, Some(2), "{r:?}");
        let note = r.note.as_deref().unwrap();
        assert!(note.contains("its noise cannot be learnt"), "{r:?}");
    }
    let tpot = rep
        .rows
        .iter()
        .find(|r| r.scenario == "random-in128-out128-n64-c32" && r.metric == "median_tpot_ms")
        .unwrap();
    assert!((tpot.change_pct.unwrap() - 27.5).abs() < 0.1, "{tpot:?}");
}

/// The H200 session with FlashAttention (tests/data/gpu-llamacpp-h200, session g2: 4 launches of
/// the unchanged engine, 3 with CUDA graphs off, interleaved): CUDA graphs off did not slow this
/// machine's decode measurably, and the gate says exactly that much: INCONCLUSIVE, nothing
/// regressed, the decode median TPOT's interval covering no change and the H100's +16 % alike.
/// Two unchanged launches against the other two do not fail either.
#[test]
fn real_h200_launches_with_graphs_off_stay_inconclusive_and_an_aa_split_does_not_fail() {
    let h200 = |names: &[&str]| -> Vec<ScenarioResult> {
        names
            .iter()
            .flat_map(|n| read_jsonl(&data("gpu-llamacpp-h200", n)).unwrap())
            .collect()
    };
    let same = h200(&["g2-same-l1", "g2-same-l2", "g2-same-l3", "g2-same-l4"]);
    let b1 = h200(&["g2-b1-l1", "g2-b1-l2", "g2-b1-l3"]);
    let cfg = GateConfig::default();
    let rep = evaluate(Inputs::new(&same, &b1, &cfg));
    assert_eq!(rep.verdict, TopVerdict::Inconclusive, "{:?}", rep.rows);
    let gated: Vec<_> = rep.rows.iter().filter(|r| r.gated).collect();
    assert_eq!(gated.len(), 15, "{gated:?}");
    assert!(gated.iter().all(|r| r.verdict != Verdict::Regressed));
    let passed = gated.iter().filter(|r| r.verdict == Verdict::Pass).count();
    assert_eq!(passed, 6, "{gated:?}");
    let tpot = gated
        .iter()
        .find(|r| r.scenario == "random-in128-out128-n64-c32" && r.metric == "median_tpot_ms")
        .unwrap();
    assert_eq!(tpot.verdict, Verdict::Inconclusive, "{tpot:?}");
    assert!((tpot.change_pct.unwrap() - 6.8).abs() < 0.1, "{tpot:?}");
    let [lo, hi] = tpot.interval.unwrap();
    assert!(lo < 0.0 && hi > 16.0, "{tpot:?}");

    let (base, cur) = same.split_at(same.len() / 2);
    let aa = evaluate(Inputs::new(base, cur, &cfg));
    assert_ne!(aa.verdict, TopVerdict::Fail, "{:?}", aa.rows);
}

/// Two leases of an H200 (sessions g2 and g3: 9 launches of the unchanged engine, 7 with CUDA
/// graphs off, interleaved within each lease). Graphs off raised the decode median TPOT by about
/// 9 % (+7.4 % in one lease, +10.8 % in the other): less than the row's 10 % tolerance, so no
/// number of launches may call it a regression, and the gate does not: INCONCLUSIVE, its interval
/// covering both no change and δ. Each lease's unchanged launches against the other's (the split
/// a stored baseline and a later check make; every scenario ran 6–12 % faster in g3) do not fail.
#[test]
fn two_h200_leases_fail_neither_graphs_off_nor_each_other() {
    let h200 = |session: &str, variant: &str, n: usize| -> Vec<ScenarioResult> {
        (1..=n)
            .flat_map(|i| {
                let name = format!("{session}-{variant}-l{i}");
                read_jsonl(&data("gpu-llamacpp-h200", &name)).unwrap()
            })
            .collect()
    };
    let (g2, g3) = (h200("g2", "same", 4), h200("g3", "same", 5));
    let same: Vec<_> = g2.iter().chain(&g3).cloned().collect();
    let b1: Vec<_> = h200("g2", "b1", 3)
        .into_iter()
        .chain(h200("g3", "b1", 4))
        .collect();
    let cfg = GateConfig::default();
    let rep = evaluate(Inputs::new(&same, &b1, &cfg));
    assert_eq!(rep.verdict, TopVerdict::Inconclusive, "{:?}", rep.rows);
    assert!(rep.rows.iter().all(|r| r.verdict != Verdict::Regressed));
    let tpot = rep
        .rows
        .iter()
        .find(|r| r.scenario == "random-in128-out128-n64-c32" && r.metric == "median_tpot_ms")
        .unwrap();
    assert_eq!(tpot.verdict, Verdict::Inconclusive, "{tpot:?}");
    let change = tpot.change_pct.unwrap();
    assert!((5.0..10.0).contains(&change), "{tpot:?}");
    let [lo, hi] = tpot.interval.unwrap();
    assert!(lo < 0.0 && hi > 10.0, "{tpot:?}");

    for (base, cur) in [(&g2, &g3), (&g3, &g2)] {
        let aa = evaluate(Inputs::new(base, cur, &cfg));
        assert_ne!(aa.verdict, TopVerdict::Fail, "{:?}", aa.rows);
        assert!(aa.rows.iter().all(|r| r.verdict != Verdict::Regressed));
    }
}

/// The 20 s vLLM corpus's session s3 ran four days after s1 and s2 on another host of the same
/// machine kind: decode 27–67 % slower, prefill faster, perfgate's calibration loop 2.1× faster.
/// A stored baseline of s1 and s2 would call s3 a regression (it is slower): the machine term
/// (the loop moved by −54 %) leaves it INCONCLUSIVE, and without the term (`machine_slope = 0`)
/// it FAILs; either way the report says the machines differ. s2 against s1 (one host) says
/// nothing of the kind.
#[test]
fn a_check_on_another_host_is_not_a_regression_and_says_the_machines_differ() {
    let dir = tempfile::tempdir().unwrap();
    let vllm = |names: &[&str]| -> Vec<PathBuf> {
        names.iter().map(|n| data("cpu-vllm-20s", n)).collect()
    };
    let record = |files: &[PathBuf], name: &str| -> PathBuf {
        let b = dir.path().join(name);
        record_baseline(files, &b, &[]);
        b
    };
    let s12: Vec<&str> = vec![
        "s1-same-l1",
        "s1-same-l2",
        "s1-same-l3",
        "s1-same-l4",
        "s1-same-l5",
        "s1-same-l6",
        "s2-same-l1",
        "s2-same-l2",
        "s2-same-l3",
        "s2-same-l4",
        "s2-same-l5",
        "s2-same-l6",
    ];
    let both = record(&vllm(&s12), "b12.toml");
    let md = dir.path().join("r.md");
    let off = dir.path().join("off.toml");
    // The machine term off, and the session offset assumed as where it is on: the gate as it was
    // before the term (off alone, nothing watches the machine and λ is assumed 4).
    std::fs::write(&off, "machine_slope = 0\nunwatched_session_ratio = 1\n").unwrap();
    let s3 = vllm(&["s3-same-l1", "s3-same-l2", "s3-same-l3"]);
    let check = |gate: Option<&Path>| {
        let mut cmd = perfgate();
        cmd.args(["check", "--baseline"])
            .arg(&both)
            .arg("--results");
        cmd.args(&s3)
            .arg("--markdown")
            .arg(&md)
            .env("NO_COLOR", "1");
        if let Some(g) = gate {
            cmd.arg("--gate").arg(g);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for (gate, code, verdict) in [(None, 0, "INCONCLUSIVE"), (Some(off.as_path()), 1, "FAIL")] {
        let (status, stdout) = check(gate);
        assert_eq!(status, Some(code), "{stdout}");
        assert!(stdout.contains(verdict), "{stdout}");
        assert!(
            stdout.contains(
                "warning: the machines differ: perfgate's calibration loop ran 2.1× faster"
            ),
            "{stdout}"
        );
        let md = std::fs::read_to_string(&md).unwrap();
        assert!(md.contains("> [!WARNING]\n> the machines differ: "), "{md}");
    }

    let one = record(&vllm(&s12[..6]), "b1.toml");
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(&one)
        .arg("--results")
        .args(vllm(&["s2-same-l1", "s2-same-l2"]))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("machines differ"), "{stdout}");

    // The same launches as if s1 had run beside an H100 and s2 beside an H200: the loop's speed
    // agrees, the platforms do not, and the passing verdict stays.
    let on = |names: &[&str], gpu: &str| -> Vec<PathBuf> {
        vllm(names)
            .iter()
            .map(|src| {
                let dst = dir.path().join(format!(
                    "{gpu}-{}",
                    src.file_name().unwrap().to_string_lossy()
                ));
                with_platform(src, &dst, gpu);
                dst
            })
            .collect()
    };
    let h100 = record(&on(&s12[..6], "NVIDIA H100 80GB HBM3"), "b1-h100.toml");
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(&h100)
        .arg("--results")
        .args(on(&["s2-same-l1", "s2-same-l2"], "NVIDIA H200"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "warning: the machines differ: the candidate's runs measured on another platform \
             than the baseline's (GPUs 1 × NVIDIA H100 80GB HBM3 → 1 × NVIDIA H200), so"
        ),
        "{stdout}"
    );
}

/// Real vLLM on the AMD host (tests/data/cpu-vllm-f32): its sittings s2 and s5, under two
/// hours apart, differ by 28 % in c4 output throughput and 45 % in c4 median TPOT, while
/// perfgate's calibration loop moved 6.7 % (geometric means): the host slowed beyond what its
/// loop shows (docs/gate.md, "Five vLLM sittings"). Checked either way round, with one sitting
/// a side, the unchanged engine regresses nothing (the session term and the machine term keep
/// it INCONCLUSIVE where it is slower), and a baseline calibrated over s1 … s4 does not call s5
/// a regression either, while its TPOT rise of about 39 % does not pass: the interval reaches
/// past δ on both sides.
/// Real vLLM beside another job (`tests/data/cpu-vllm-neighbour/`, sitting n1): the candidate's
/// five launches ran with a busy loop on the engine's CPU, 34–37 % slower, the engine unchanged.
/// perfgate's loop on one CPU moved +2.6 % (it found the free CPU), the loop on every CPU +41 %:
/// the check is INCONCLUSIVE on every slower row, its machine term from the every-CPU loop, and
/// "the machines differ" says so. The same records without the every-CPU reading, as perfgate
/// recorded them before it, FAIL on every gated row.
#[test]
fn real_vllm_beside_another_job_is_not_called_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let files = |variant: &str| -> Vec<PathBuf> {
        (1..=5)
            .map(|l| data("cpu-vllm-neighbour", &format!("n1-{variant}-l{l}")))
            .collect()
    };
    let gated = |rep: &serde_json::Value| -> Vec<serde_json::Value> {
        let rows = rep["rows"].as_array().unwrap().iter();
        rows.filter(|r| r["gated"] == true && r["metric"] != "success_rate")
            .cloned()
            .collect()
    };
    let b = dir.path().join("b.toml");
    record_baseline(&files("same"), &b, &[]);
    let (code, rep) = check_json(&b, &files("slow-all"));
    assert_eq!(
        (code, &rep["verdict"]),
        (Some(0), &"inconclusive".into()),
        "{rep:#}"
    );
    let rows = gated(&rep);
    assert_eq!(rows.len(), 9, "{rows:#?}");
    for r in &rows {
        assert_eq!(r["verdict"], "inconclusive", "{r:#}");
        let m = &r["noise"]["session"]["machine"];
        assert_eq!(m["probe"], "all_cpus", "{r:#}");
        assert!(m["loop_shift_pct"].as_f64().unwrap() > 35.0, "{r:#}");
    }
    let throughput = rows.iter().find(|r| {
        r["scenario"] == "random-in32-out32-n16-c4" && r["metric"] == "output_throughput"
    });
    assert!(throughput.unwrap()["change_pct"].as_f64().unwrap() < -30.0);
    let text = perfgate()
        .args(["check", "--color", "never", "--baseline"])
        .arg(&b)
        .arg("--results")
        .args(files("slow-all"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "the machines differ: perfgate's calibration loop on every CPU ran 1.4× slower"
        ),
        "{text}"
    );
    assert!(!text.contains("calibration loop ran"), "{text}");

    // Without the every-CPU reading (records of perfgate before it): nothing saw the job.
    let strip = |f: &PathBuf| -> PathBuf {
        let out = dir.path().join(f.file_name().unwrap());
        let mut text = String::new();
        for r in read_jsonl(f).unwrap() {
            let mut r: ScenarioResult = r;
            r.telemetry.as_mut().unwrap().calibration_all_ms = None;
            text += &serde_json::to_string(&r).unwrap();
            text.push('\n');
        }
        std::fs::write(&out, text).unwrap();
        out
    };
    let blind = |variant: &str| -> Vec<PathBuf> { files(variant).iter().map(strip).collect() };
    let b1 = dir.path().join("b1.toml");
    record_baseline(&blind("same"), &b1, &[]);
    let (code, rep) = check_json(&b1, &blind("slow-all"));
    assert_eq!(
        (code, &rep["verdict"]),
        (Some(1), &"fail".into()),
        "{rep:#}"
    );
    assert!(
        gated(&rep).iter().all(|r| r["verdict"] == "regressed"),
        "{rep:#}"
    );
}

#[test]
fn real_vllm_sittings_far_apart_regress_nothing_and_pass_no_slower_row() {
    let dir = tempfile::tempdir().unwrap();
    let sitting = |s: &str, n: usize| -> Vec<PathBuf> {
        (1..=n)
            .map(|l| data("cpu-vllm-f32", &format!("{s}-same-l{l}")))
            .collect()
    };
    let check = |baseline: &Path, results: &[PathBuf]| -> serde_json::Value {
        let (code, rep) = check_json(baseline, results);
        assert_eq!(code, Some(0), "{rep:#}");
        let regressed: Vec<&serde_json::Value> = rep["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "regressed")
            .collect();
        assert!(regressed.is_empty(), "{regressed:#?}");
        rep
    };
    let c4_tpot = |rep: &serde_json::Value| -> serde_json::Value {
        rep["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["scenario"] == "random-in32-out32-n16-c4" && r["metric"] == "median_tpot_ms"
            })
            .unwrap()
            .clone()
    };
    let (b2, b5) = (dir.path().join("s2.toml"), dir.path().join("s5.toml"));
    record_baseline(&sitting("s2", 10), &b2, &[]);
    record_baseline(&sitting("s5", 12), &b5, &[]);
    // s5 against s2: every latency row slower, none regressed; TPOT +45 %, not passed.
    let rep = check(&b2, &sitting("s5", 12));
    assert_eq!(rep["verdict"], "inconclusive", "{rep:#}");
    let row = c4_tpot(&rep);
    assert!(row["change_pct"].as_f64().unwrap() > 30.0, "{row:#}");
    assert_eq!(row["verdict"], "inconclusive", "{row:#}");
    assert!(
        row["noise"]["session"]["machine"]["loop_shift_pct"]
            .as_f64()
            .unwrap()
            > 5.0
    );
    // s2 against s5: faster everywhere; nothing regressed.
    let rep = check(&b5, &sitting("s2", 10));
    assert_ne!(rep["verdict"], "fail", "{rep:#}");

    let calibrated = dir.path().join("c.toml");
    let mut files = sitting("s1", 10);
    files.extend(sitting("s2", 10));
    files.extend(sitting("s3", 11));
    files.extend(sitting("s4", 12));
    write_baseline("calibrate", &files, &calibrated, &[]);
    let rep = check(&calibrated, &sitting("s5", 3));
    let row = c4_tpot(&rep);
    assert_eq!(row["verdict"], "inconclusive", "{row:#}");
    assert_eq!(row["noise"]["session"]["measured"], true, "{row:#}");
    let [lo, hi] = [0, 1].map(|i| row["interval"][i].as_f64().unwrap());
    assert!(lo < 10.0 && hi > 10.0, "{row:#}");
}

/// Copy the records of `src` to `dst`, each with a platform of this project's CPU host and
/// one GPU named `gpu`.
fn with_platform(src: &Path, dst: &Path, gpu: &str) {
    let text = std::fs::read_to_string(src).unwrap();
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        v["telemetry"]["platform"] = serde_json::json!({
            "cpu": "Intel(R) Xeon(R) Processor",
            "cpus": 2,
            "gpus": [gpu],
            "gpu_driver": "550.54.15",
        });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    std::fs::write(dst, out).unwrap();
}
