//! Decision quality of the gate, by simulation fitted to real launches: a 24-row suite (6 models ×
//! 4 scenarios) whose rows carry the launch-to-launch noise measured on the GPU corpus
//! (`tests/data/gpu-llamacpp-h100`, `perfgate baseline noise` of its 8 unchanged launches), gated
//! with the default settings, one run per launch. It prints, per design (launches of baseline ×
//! candidate), the share of checks that FAIL on an unchanged engine, the share of gated rows and
//! engine-wide tests that PASS, and the share of checks that FAIL when the candidate engine is
//! 5 % slower everywhere (throughputs × 0.95, latencies ÷ 0.95) or in one scenario only.
//!
//! `cargo run --release --example gate-sim -- [--trials N] [--seed S] [--noise-scale K]`
//!
//! Noise per scenario shape (sd of the log value of one launch, %), cycled over the suite's four
//! scenarios (prefill-heavy, decode-heavy, Poisson, prefill-heavy again), each metric drawn
//! independently per launch. `--noise-scale` multiplies every sd (0.5 = runs long enough to
//! halve the noise).

use perfgate::gate::{evaluate, GateConfig, Side, TopVerdict, Verdict};
use perfgate::record::ScenarioResult;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const MODELS: usize = 6;
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

/// One launch's record of one row; `slower`: the engine's slowdown factor (1 = unchanged).
fn launch(
    model: usize,
    scen: usize,
    launch: usize,
    scale: f64,
    slower: f64,
    rng: &mut StdRng,
) -> ScenarioResult {
    let sd = SHAPES[scen % 3];
    let n = 100 * (scen as u64 + 1);
    let t = (sd[0] / 100.0 * scale * z(rng)).exp() / slower;
    let mut r = ScenarioResult {
        run_index: launch as u32,
        launch_id: Some(format!("L{launch}")),
        duration: 100.0 / t,
        total_output_tokens: 128 * n,
        request_throughput: n as f64 / 100.0 * t,
        output_throughput: 128.0 * n as f64 / 100.0 * t,
        ..ScenarioResult::synthetic(&format!("org/model-{model}"), n, 1024, 128 << scen)
    };
    for (i, m) in LATENCIES.iter().enumerate() {
        let v = 500.0 * (sd[i + 1] / 100.0 * scale * z(rng)).exp() * slower;
        r.stats.insert(m.to_string(), v);
    }
    r
}

/// `slower` applies to every scenario, or to model 0 × scenario 0 only when `one`.
fn side(n: usize, scale: f64, slower: f64, one: bool, rng: &mut StdRng) -> Vec<ScenarioResult> {
    let mut out = Vec::new();
    for l in 0..n {
        for m in 0..MODELS {
            for s in 0..SCENARIOS {
                let f = if !one || (m == 0 && s == 0) {
                    slower
                } else {
                    1.0
                };
                out.push(launch(m, s, l, scale, f, rng));
            }
        }
    }
    out
}

struct Cell {
    fail: f64,
    pass_share: f64,
}

fn cell(d: (usize, usize), slower: f64, one: bool, trials: usize, scale: f64, seed: u64) -> Cell {
    let mut rng = StdRng::seed_from_u64(seed);
    let cfg = GateConfig::default();
    let (mut fails, mut rows, mut pass) = (0usize, 0usize, 0usize);
    for _ in 0..trials {
        let base = side(d.0, scale, 1.0, false, &mut rng);
        let cur = side(d.1, scale, slower, one, &mut rng);
        let rep = evaluate(
            &base,
            &cur,
            &[],
            &cfg,
            "sim",
            Side::default(),
            Side::default(),
        );
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
            other => panic!("unknown argument {other}"),
        }
    }
    println!(
        "{trials} trials per cell, seed {seed}, corpus noise × {scale}; 24-row suite (6 models × 4 scenarios)\n"
    );
    println!("| launches (base × cand) | false alarms | gated rows PASS | 5 % slower everywhere | 5 % slower in one scenario | 10 % slower everywhere |");
    println!("|---|--:|--:|--:|--:|--:|");
    for (i, d) in [(1, 1), (2, 2), (3, 3), (5, 5), (8, 3), (10, 10)]
        .iter()
        .enumerate()
    {
        let s = seed.wrapping_mul(1000).wrapping_add(i as u64 * 10);
        let same = cell(*d, 1.0, false, trials, scale, s);
        let all5 = cell(*d, 1.0 / 0.95, false, trials, scale, s + 1);
        let one5 = cell(*d, 1.0 / 0.95, true, trials, scale, s + 2);
        let all10 = cell(*d, 1.0 / 0.9, false, trials, scale, s + 3);
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
