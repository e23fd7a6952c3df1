//! Decision quality of the gate, by simulation fitted to real launches: a 24-row suite (6 models ×
//! 4 scenarios) whose rows carry the launch-to-launch noise measured on the GPU corpus
//! (`tests/data/gpu-llamacpp-h100`, `perfgate baseline noise` of its 8 unchanged launches), gated
//! with the default settings, one run per launch. It prints, per design (launches of baseline ×
//! candidate), the share of checks that FAIL on an unchanged engine, the share of gated rows and
//! engine-wide tests that PASS, and the share of checks that FAIL when the candidate engine is
//! 5 % slower everywhere (throughputs × 0.95, latencies ÷ 0.95) or in one scenario only.
//!
//! `cargo run --release --example gate-sim -- [--trials N] [--seed S] [--noise-scale K] [--ab 1]
//! [--alpha A] [--thr-tolerance PCT] [--engine-wide-share S] [--one-slower PCT] [--launch-corr C]
//! [--session-sd K]`
//!
//! `--fit 1` or `--fit 2` draws the rows' noise from the CPU corpora instead (llama.cpp, vLLM:
//! `tests/data/cpu-*`, their 3 and 2 scenario shapes and their own scenario correlation).
//!
//! `--session-sd K` gives each side of a stored comparison a session offset per metric, shared
//! by every row of the side, of K times the row's launch sd (the baseline recorded in one
//! session, the candidate in another; the records carry those sessions). Default 0.
//! `--same-session 1` records both sides in one session (no offset, and the gate knows it: the
//! design of a baseline recorded beside the candidate).
//!
//! `--matrix 1` checks each model on its own, as the Action's matrix jobs do, and merges the
//! reports (`perfgate merge`) into the verdict.
//!
//! `--models N` simulates a suite of N models instead of 6 (each with the 4 scenarios; `1` is the
//! one-model CPU suites that `perfgate plan` sizes); `--max-pairs N` runs `--ab 1` with that one
//! budget of pairs (at `--rho R`, default 0) instead of its table of budgets: the check of a design `perfgate plan`
//! printed (docs/plan.md).
//!
//! `--engine-wide-share` sets the gate's least share of α for the all-models tests (docs/gate.md,
//! "Settings"); `--one-slower` the slowdown of the one-scenario column of the stored-baseline
//! table (default 5 %).
//!
//! With `--ab 1` it simulates `perfgate ab` instead: per model, pairs of a base and a candidate
//! launch whose log values share a pair effect (correlation ρ between the arms of a pair: drift
//! and machine state common to both; ρ = 0 when launches are independent, as on the corpus), each
//! model judged after each pair at its look (α / 6 models, as the gate shares it) until decided or
//! out of pairs. It prints false alarms, whole-check PASS, the mean pairs per model, and the share
//! of checks that FAIL (with the mean pairs of the failing model) when one scenario of one model is
//! slower. `--thr-tolerance` sets the throughput tolerance δ (default 5 %; the engine-wide one is
//! 0.4 δ, as in the defaults). `--one-scenario K` picks the slowed scenario of model 0 (default 0,
//! prefill-heavy, throughput noise 7.4 %; 2 is the Poisson one, 2.4 %). `--noise-scale` applies to
//! the stored-baseline table only.
//!
//! Noise per scenario shape (sd of the log value of one launch, %), cycled over the suite's four
//! scenarios (prefill-heavy, decode-heavy, Poisson, prefill-heavy again), each metric drawn
//! independently, except for a launch effect each metric shares across the model's scenarios:
//! correlation c between two scenarios' values of one launch (default 0.42, the corpus's mean;
//! `cargo run --release --example replay` prints it per metric; `--launch-corr 0` gives
//! independent scenarios). `--noise-scale` multiplies every sd (0.5 = runs long enough to halve
//! the noise).

use perfgate::gate::merge::merge_reports;
use perfgate::gate::replay::sequential_ab;
use perfgate::gate::{evaluate, GateConfig, Inputs, MetricGate, TopVerdict, Verdict};
use perfgate::record::{Arm, ScenarioResult};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const SCENARIOS: usize = 4;

/// Between-launch sd (%) of: output throughput, median TTFT, median TPOT, p99 TTFT, p99 TPOT,
/// median ITL — from `perfgate baseline noise` on the corpus's 8 unchanged launches.
const SHAPES: [[f64; 6]; 3] = [
    // random-in1024-out32-n128-c32 (prefill-heavy)
    [7.4, 11.6, 8.3, 8.9, 8.6, 12.4],
    // random-in128-out128-n64-c32 (decode-heavy)
    [5.3, 10.1, 4.1, 13.7, 2.9, 5.1],
    // random-in256-out64-n64-r8 (Poisson arrivals)
    [2.4, 9.8, 25.4, 15.4, 15.1, 17.7],
];
/// Correlation of one launch's values across a model's scenarios: the corpus's mean pairwise
/// correlation of launch values between its 3 scenarios, over the 5 engine-wide metrics (15
/// pairs of 8 launches: 0.44 throughput, 0.46 median TTFT, 0.25 median TPOT, 0.56 p99 TTFT,
/// 0.40 p99 TPOT). Launches that are slow are slow in every scenario, so pooling scenarios
/// removes less noise than independent rows would suggest.
const LAUNCH_CORR: f64 = 0.42;

/// The same for the CPU corpora (`--fit 1`: `tests/data/cpu-llamacpp`, `--fit 2`:
/// `tests/data/cpu-vllm`): between-launch sd of each scenario's rows from `perfgate baseline
/// calibrate` on their 16 unchanged launches (14 df), and the mean correlation of launch values
/// between scenarios that `examples/replay` prints for them.
const CPU_LLAMACPP: [[f64; 6]; 3] = [
    // random-in32-out32-n8-c4
    [3.5, 12.8, 9.7, 4.8, 17.0, 3.7],
    // random-in128-out16-n8-c2
    [4.6, 5.4, 2.8, 10.5, 38.3, 3.2],
    // random-in16-out48-n4-c1
    [13.0, 16.1, 9.5, 40.1, 18.2, 6.1],
];
const CPU_LLAMACPP_CORR: f64 = 0.08;
const CPU_VLLM: [[f64; 6]; 2] = [
    // random-in32-out32-n8-c4
    [14.7, 13.7, 15.6, 17.6, 16.8, 13.6],
    // random-in128-out16-n8-c2
    [7.9, 9.8, 11.4, 13.0, 14.7, 9.0],
];
const CPU_VLLM_CORR: f64 = 0.44;

const LATENCIES: [&str; 5] = [
    "median_ttft_ms",
    "median_tpot_ms",
    "p99_ttft_ms",
    "p99_tpot_ms",
    "median_itl_ms",
];

fn z(rng: &mut StdRng) -> f64 {
    StandardNormal.sample(rng)
}

/// The launch effects one launch (or one pair of launches) shares across a model's scenarios,
/// per metric: with weight √c in every scenario's value (c: the cross-scenario correlation).
struct Common {
    c: f64,
    /// Shared by both arms of a pair (`perfgate ab`), or the launch's own (stored design).
    pair: [f64; 6],
    /// Each arm's own, shared across scenarios (`perfgate ab` only).
    arm: [[f64; 6]; 2],
}

impl Common {
    /// Nothing is drawn when c = 0, so that the random stream (and every table) stays that of
    /// independent scenarios.
    fn draw(c: f64, rng: &mut StdRng) -> Common {
        let mut v = || std::array::from_fn(|_| if c > 0.0 { z(rng) } else { 0.0 });
        Common {
            c,
            pair: v(),
            arm: [v(), v()],
        }
    }
}

/// One pair's two launches (base, candidate) of one row: a pair effect shared by both arms with
/// weight √ρ, each arm's own with √(1 − ρ), each of them split into a part shared with the
/// model's other scenarios (weight √c, from `common`) and the scenario's own; the candidate
/// `slower`.
fn pair_of(
    shapes: &[[f64; 6]],
    (model, scen, p): (usize, usize, u32),
    rho: f64,
    slower: f64,
    common: &Common,
    rng: &mut StdRng,
) -> [ScenarioResult; 2] {
    let sd = shapes[scen % shapes.len()];
    let shared: Vec<f64> = (0..6).map(|_| z(rng)).collect();
    let c = common.c;
    let arm = |slower: f64, arm: Arm, rng: &mut StdRng| {
        let a = usize::from(arm == Arm::Candidate);
        let e: Vec<f64> = (0..6)
            .map(|i| {
                let across = rho.sqrt() * common.pair[i] + (1.0 - rho).sqrt() * common.arm[a][i];
                let own = rho.sqrt() * shared[i] + (1.0 - rho).sqrt() * z(rng);
                sd[i] / 100.0 * (c.sqrt() * across + (1.0 - c).sqrt() * own)
            })
            .collect();
        let mut r = record(model, scen, p as usize, e[0].exp() / slower);
        for (i, m) in LATENCIES.iter().enumerate() {
            r.stats
                .insert(m.to_string(), 500.0 * e[i + 1].exp() * slower);
        }
        r.arm = Some(arm);
        r.pair = Some(p);
        r.launch_id = Some(format!("P{p}{}", arm.as_str()));
        r
    };
    [arm(1.0, Arm::Base, rng), arm(slower, Arm::Candidate, rng)]
}

fn model_name(model: usize) -> String {
    format!("org/model-{model}")
}

fn record(model: usize, scen: usize, launch: usize, t: f64) -> ScenarioResult {
    let n = 100 * (scen as u64 + 1);
    ScenarioResult {
        run_index: launch as u32,
        launch_id: Some(format!("L{launch}")),
        duration: 100.0 / t,
        total_output_tokens: 128 * n,
        request_throughput: n as f64 / 100.0 * t,
        output_throughput: 128.0 * n as f64 / 100.0 * t,
        ..ScenarioResult::synthetic(&model_name(model), n, 1024, 128 << scen)
    }
}

struct AbCell {
    fail: f64,
    pass: f64,
    /// Gated rows (and engine-wide tests) that PASS at the last look.
    row_pass: f64,
    mean_pairs: f64,
    /// Mean pairs of the model that failed, over the checks that failed.
    pairs_to_fail: f64,
}

/// `trials` simulated `perfgate ab` checks of the 24-row suite; `slower` hits model 0's
/// scenario `scen` (or every scenario of every model with `None`).
fn ab_cell(
    rho: f64,
    max_pairs: u32,
    slower: f64,
    scen: Option<usize>,
    sim: &Sim,
    seed: u64,
) -> AbCell {
    let (cfg, trials, c) = (&sim.cfg, sim.trials, sim.c);
    let mut rng = StdRng::seed_from_u64(seed);
    // Each model is its own sequential test at α / models (what the gate gives it in a suite).
    let model_cfg = GateConfig {
        alpha: Some(cfg.alpha() / sim.models as f64),
        ..cfg.clone()
    };
    let (mut fails, mut passes, mut pairs, mut pairs_fail) = (0usize, 0usize, 0u64, 0u64);
    let (mut rows, mut row_pass) = (0usize, 0usize);
    for _ in 0..trials {
        let (mut any_fail, mut all_pass) = (false, true);
        for m in 0..sim.models {
            let mut pair = |p: u32| -> Vec<ScenarioResult> {
                let common = Common::draw(c, &mut rng);
                (0..SCENARIOS)
                    .flat_map(|s| {
                        let hit = match scen {
                            None => true,
                            Some(k) => m == 0 && s == k,
                        };
                        let f = if hit { slower } else { 1.0 };
                        pair_of(sim.shapes, (m, s, p), rho, f, &common, &mut rng)
                    })
                    .collect()
            };
            let end = sequential_ab(&mut pair, max_pairs, &model_cfg);
            pairs += u64::from(end.pairs);
            rows += end.rows;
            row_pass += end.pass;
            if end.verdict == TopVerdict::Fail && !any_fail {
                any_fail = true;
                pairs_fail += u64::from(end.pairs);
            }
            all_pass &= end.verdict == TopVerdict::Pass;
        }
        fails += usize::from(any_fail);
        passes += usize::from(all_pass);
    }
    AbCell {
        fail: fails as f64 / trials as f64,
        pass: passes as f64 / trials as f64,
        row_pass: row_pass as f64 / rows.max(1) as f64,
        mean_pairs: pairs as f64 / (trials * sim.models) as f64,
        pairs_to_fail: pairs_fail as f64 / fails.max(1) as f64,
    }
}

fn ab_table(sim: &Sim, seed: u64, one: usize, design: Option<(f64, u32)>) {
    println!("| ρ | most pairs | false alarms | PASS | gated rows PASS | mean pairs per model | 5 % slower everywhere: FAIL · pairs | 5 % slower, one scenario: FAIL · pairs | 10 % slower, one scenario: FAIL · pairs |");
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    let pc = |v: f64| format!("{:.1} %", v * 100.0);
    let table = [
        (0.0, 10),
        (0.0, 20),
        (0.0, 40),
        (0.5, 10),
        (0.5, 20),
        (0.5, 40),
        (0.8, 10),
        (0.8, 20),
        (0.8, 40),
    ];
    let designs = match design {
        Some(d) => vec![d],
        None => table.to_vec(),
    };
    for (i, (rho, max)) in designs.iter().enumerate() {
        let s = seed.wrapping_mul(1000).wrapping_add(500 + i as u64 * 10);
        let same = ab_cell(*rho, *max, 1.0, Some(0), sim, s);
        let all5 = ab_cell(*rho, *max, 1.0 / 0.95, None, sim, s + 1);
        let one5 = ab_cell(*rho, *max, 1.0 / 0.95, Some(one), sim, s + 2);
        let one10 = ab_cell(*rho, *max, 1.0 / 0.9, Some(one), sim, s + 3);
        println!(
            "| {rho} | {max} | {} | {} | {} | {:.2} | {} · {:.1} | {} · {:.1} | {} · {:.1} |",
            pc(same.fail),
            pc(same.pass),
            pc(same.row_pass),
            same.mean_pairs,
            pc(all5.fail),
            all5.pairs_to_fail,
            pc(one5.fail),
            one5.pairs_to_fail,
            pc(one10.fail),
            one10.pairs_to_fail,
        );
    }
}

/// One launch's record of one row; `slower`: the engine's slowdown factor (1 = unchanged);
/// `common`: the launch's effects shared with the model's other scenarios.
fn launch(
    (model, scen, launch): (usize, usize, usize),
    sd: [f64; 6],
    slower: f64,
    common: &Common,
    session: &Session,
    rng: &mut StdRng,
) -> ScenarioResult {
    let n = 100 * (scen as u64 + 1);
    let c = common.c;
    let mut e =
        |i: usize| c.sqrt() * common.pair[i] + (1.0 - c).sqrt() * z(rng) + session.offset[i];
    let t = (sd[0] / 100.0 * e(0)).exp() / slower;
    let mut r = ScenarioResult {
        run_index: launch as u32,
        launch_id: Some(format!("L{launch}")),
        duration: 100.0 / t,
        total_output_tokens: 128 * n,
        request_throughput: n as f64 / 100.0 * t,
        output_throughput: 128.0 * n as f64 / 100.0 * t,
        ..ScenarioResult::synthetic(&model_name(model), n, 1024, 128 << scen)
    };
    r.session_id = Some(session.id.to_string());
    for (i, m) in LATENCIES.iter().enumerate() {
        let v = 500.0 * (sd[i + 1] / 100.0 * e(i + 1)).exp() * slower;
        r.stats.insert(m.to_string(), v);
    }
    r
}

/// One side's recording session: its id and its offset per metric (in units of each row's
/// launch sd), shared by every row of the side.
struct Session {
    id: &'static str,
    offset: [f64; 6],
}

impl Session {
    /// Nothing is drawn when `k` = 0, so that the random stream stays that of no sessions.
    fn draw(id: &'static str, k: f64, rng: &mut StdRng) -> Session {
        let offset = std::array::from_fn(|_| if k > 0.0 { k * z(rng) } else { 0.0 });
        Session { id, offset }
    }
}

/// `slower` applies to every scenario, or to model 0 × scenario 0 only when `one`.
fn side(
    n: usize,
    sim: &Sim,
    (slower, one): (f64, Option<usize>),
    id: &'static str,
    rng: &mut StdRng,
) -> Vec<ScenarioResult> {
    let id = if sim.same_session { "one" } else { id };
    let session = Session::draw(id, sim.session_sd, rng);
    let mut out = Vec::new();
    for l in 0..n {
        for m in 0..sim.models {
            let common = Common::draw(sim.c, rng);
            for s in 0..SCENARIOS {
                let f = if one.is_none_or(|k| m == 0 && s == k) {
                    slower
                } else {
                    1.0
                };
                let shape = sim.shapes[s % sim.shapes.len()];
                let sd = sim.uniform.unwrap_or(shape).map(|v| v * sim.scale);
                out.push(launch((m, s, l), sd, f, &common, &session, rng));
            }
        }
    }
    out
}

struct Cell {
    fail: f64,
    pass_share: f64,
}

struct Sim {
    trials: usize,
    scale: f64,
    cfg: GateConfig,
    /// Correlation of a launch's values across the model's scenarios (a shared launch effect).
    c: f64,
    /// Each side's session offset, in launch sds (0: none).
    session_sd: f64,
    /// Both sides in one session.
    same_session: bool,
    /// Every row's launch sd (%), instead of the corpus's shapes.
    uniform: Option<[f64; 6]>,
    /// The corpus's noise per scenario shape, cycled over the suite's scenarios.
    shapes: &'static [[f64; 6]],
    /// Models in the suite.
    models: usize,
    /// Each model its own check, the reports merged (`perfgate merge` of a matrix).
    matrix: bool,
}

fn cell(d: (usize, usize), slower: f64, one: Option<usize>, sim: &Sim, seed: u64) -> Cell {
    let mut rng = StdRng::seed_from_u64(seed);
    let (trials, cfg) = (sim.trials, &sim.cfg);
    let (mut fails, mut rows, mut pass) = (0usize, 0usize, 0usize);
    for _ in 0..trials {
        let base = side(d.0, sim, (1.0, None), "baseline", &mut rng);
        let cur = side(d.1, sim, (slower, one), "candidate", &mut rng);
        let rep = if sim.matrix {
            // One job a model, as the Action's matrix runs them, merged into one report.
            let jobs = (0..sim.models)
                .map(|m| {
                    let name = model_name(m);
                    let of = |side: &[ScenarioResult]| -> Vec<ScenarioResult> {
                        side.iter().filter(|r| r.model == name).cloned().collect()
                    };
                    let (b, c) = (of(&base), of(&cur));
                    let rep = evaluate(Inputs {
                        kind: "sim",
                        ..Inputs::new(&b, &c, cfg)
                    });
                    (format!("{name}.json"), rep)
                })
                .collect();
            merge_reports(jobs).expect("the jobs merge")
        } else {
            evaluate(Inputs {
                kind: "sim",
                ..Inputs::new(&base, &cur, cfg)
            })
        };
        fails += usize::from(rep.verdict == TopVerdict::Fail);
        for r in rep
            .rows
            .iter()
            .filter(|r| r.gated && r.metric != "success_rate")
        {
            rows += 1;
            pass += usize::from(r.verdict == Verdict::Pass);
        }
    }
    Cell {
        fail: fails as f64 / trials as f64,
        pass_share: pass as f64 / rows.max(1) as f64,
    }
}

fn main() {
    let (mut trials, mut seed, mut scale) = (300usize, 42u64, 1.0f64);
    let (mut ab, mut cfg, mut one) = (false, GateConfig::default(), 0usize);
    let mut one_pct = 5.0f64;
    let mut c = None;
    let mut fit = 0usize;
    let mut session_sd = 0.0f64;
    let mut same_session = false;
    let (mut uniform, mut oracle) = (None, false);
    let (mut models, mut max_pairs, mut rho) = (6usize, None, 0.0f64);
    let mut matrix = false;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v: f64 = it
            .next()
            .expect("a value after the flag")
            .parse()
            .expect("a number");
        match a.as_str() {
            "--trials" => trials = v as usize,
            "--seed" => seed = v as u64,
            "--noise-scale" => scale = v,
            "--ab" => ab = v != 0.0,
            "--one-scenario" => one = v as usize,
            "--alpha" => cfg.alpha = Some(v),
            "--engine-wide-share" => cfg.engine_wide_share = Some(v),
            "--one-slower" => one_pct = v,
            "--launch-corr" => c = Some(v),
            "--fit" => fit = v as usize,
            "--models" => models = v as usize,
            "--max-pairs" => max_pairs = Some(v as u32),
            "--rho" => rho = v,
            "--session-sd" => session_sd = v,
            "--same-session" => same_session = v != 0.0,
            "--uniform-noise" => uniform = Some([v; 6]),
            "--oracle" => oracle = v != 0.0,
            "--matrix" => matrix = v != 0.0,
            "--thr-tolerance" => {
                cfg.metrics.insert(
                    "output_throughput".into(),
                    MetricGate {
                        tolerance_pct: Some(v),
                        engine_tolerance_pct: Some(0.4 * v),
                        ..Default::default()
                    },
                );
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let (shapes, corr): (&'static [[f64; 6]], f64) = match fit {
        0 => (&SHAPES, LAUNCH_CORR),
        1 => (&CPU_LLAMACPP, CPU_LLAMACPP_CORR),
        2 => (&CPU_VLLM, CPU_VLLM_CORR),
        other => panic!("--fit {other}: 0 (GPU corpus), 1 (CPU llama.cpp) or 2 (CPU vLLM)"),
    };
    let c = c.unwrap_or(corr);
    assert!((0.0..1.0).contains(&c), "--launch-corr must be in [0, 1)");
    assert!(models >= 1, "--models must be at least 1");
    if oracle {
        // The oracle knows every row's noise: the true sd as the prior, weighed as exact.
        let sd = uniform.expect("--oracle 1 needs --uniform-noise PCT")[0] * scale;
        for m in std::iter::once("output_throughput").chain(LATENCIES) {
            let g = cfg.metrics.entry(m.to_string()).or_default();
            g.noise_pct = Some(sd);
        }
        cfg.prior_df = Some(1000.0);
    }
    println!(
        "{trials} trials per cell, seed {seed}, corpus noise × {scale}, launch effect shared across scenarios c = {c}, session offset {session_sd} launch sd; {}-row suite ({models} models × 4 scenarios)\n",
        models * 4
    );
    let sim = Sim {
        trials,
        scale,
        cfg,
        c,
        session_sd,
        same_session,
        uniform,
        shapes,
        models,
        matrix,
    };
    if ab {
        assert!((0.0..1.0).contains(&rho), "--rho must be in [0, 1)");
        ab_table(&sim, seed, one, max_pairs.map(|n| (rho, n)));
        return;
    }
    println!("| launches (base × cand) | false alarms | gated rows PASS | 5 % slower everywhere | {one_pct} % slower in one scenario | 10 % slower everywhere |");
    println!("|---|--:|--:|--:|--:|--:|");
    for (i, d) in [
        (1, 1),
        (2, 2),
        (3, 3),
        (5, 5),
        (8, 3),
        (10, 10),
        (20, 20),
        (40, 40),
    ]
    .iter()
    .enumerate()
    {
        let s = seed.wrapping_mul(1000).wrapping_add(i as u64 * 10);
        let same = cell(*d, 1.0, None, &sim, s);
        let all5 = cell(*d, 1.0 / 0.95, None, &sim, s + 1);
        let one5 = cell(*d, 1.0 / (1.0 - one_pct / 100.0), Some(one), &sim, s + 2);
        let all10 = cell(*d, 1.0 / 0.9, None, &sim, s + 3);
        let pc = |v: f64| format!("{:.1} %", v * 100.0);
        println!(
            "| {} × {} | {} | {} | {} | {} | {} |",
            d.0,
            d.1,
            pc(same.fail),
            pc(same.pass_share),
            pc(all5.fail),
            pc(one5.fail),
            pc(all10.fail)
        );
    }
}
