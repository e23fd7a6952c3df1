//! Decision quality of the gate, by simulation: draws runs of a 24-row suite (6 models ×
//! 4 scenarios) from log-normal run-to-run noise, gates them with the default settings, and
//! prints the family-wise false-alarm rate on identical engines and the power to flag a 5 %
//! throughput regression and a 10 % p99 TTFT regression with 1, 2, 3 and 5 runs a side.
//!
//! `cargo run --release --example gate-sim -- [--trials N] [--seed S] [--noise-scale K]`
//! (the README's tables were made with the dev profile: same numbers, slower).
//!
//! Noise (sd of the log value of one run, i.e. ≈ relative sd): throughput 2 % (one draw per run
//! shared by output/request throughput and duration), means and medians of latencies 4 %, p99
//! latencies 10 %, each drawn independently, times `--noise-scale`. These equal the gate's
//! default noise priors (used with one run a side; with more, the gate pools the noise from the
//! runs themselves); `--noise-scale 1.5` shows what happens when the real noise is worse.

use perfgate::gate::{evaluate, GateConfig, Side, TopVerdict, Verdict};
use perfgate::record::ScenarioResult;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const MODELS: usize = 6;
const SCENARIOS: usize = 4;
const CENTRAL: [&str; 4] = [
    "median_ttft_ms",
    "median_tpot_ms",
    "median_itl_ms",
    "mean_e2el_ms",
];
const TAIL: [&str; 2] = ["p99_ttft_ms", "p99_tpot_ms"];

#[derive(Clone, Copy, PartialEq)]
enum Effect {
    None,
    /// Throughput × 0.95; `all` = every model × scenario, else only model 0 × scenario 0.
    Throughput {
        all: bool,
    },
    /// p99 TTFT × 1.10.
    P99Ttft {
        all: bool,
    },
}

struct Noise {
    thr: f64,
    central: f64,
    tail: f64,
}

fn z(rng: &mut StdRng) -> f64 {
    StandardNormal.sample(rng)
}

fn run(
    model: usize,
    scen: usize,
    idx: u32,
    noise: &Noise,
    factor: (f64, f64),
    rng: &mut StdRng,
) -> ScenarioResult {
    let n = 100 * (scen as u64 + 1);
    let t = (noise.thr * z(rng)).exp() * factor.0;
    let mut r = ScenarioResult {
        run_index: idx,
        duration: 100.0 / t,
        total_output_tokens: 128 * n,
        request_throughput: n as f64 / 100.0 * t,
        output_throughput: 128.0 * n as f64 / 100.0 * t,
        ..ScenarioResult::synthetic(&format!("org/model-{model}"), n, 1024, 128 << scen)
    };
    for m in CENTRAL {
        r.stats
            .insert(m.into(), 500.0 * (noise.central * z(rng)).exp());
    }
    for m in TAIL {
        let f = if m == "p99_ttft_ms" { factor.1 } else { 1.0 };
        r.stats
            .insert(m.into(), 2000.0 * (noise.tail * z(rng)).exp() * f);
    }
    r
}

fn side(runs: usize, noise: &Noise, effect: Effect, rng: &mut StdRng) -> Vec<ScenarioResult> {
    let mut out = Vec::new();
    for m in 0..MODELS {
        for s in 0..SCENARIOS {
            let hit = |all: bool| all || (m == 0 && s == 0);
            let factor = match effect {
                Effect::Throughput { all } if hit(all) => (0.95, 1.0),
                Effect::P99Ttft { all } if hit(all) => (1.0, 1.10),
                _ => (1.0, 1.0),
            };
            for i in 0..runs {
                out.push(run(m, s, i as u32, noise, factor, rng));
            }
        }
    }
    out
}

/// Fraction of trials that fail the gate and, under an effect, flag an affected row.
fn rate(
    runs: usize,
    effect: Effect,
    trials: usize,
    noise: &Noise,
    cfg: &GateConfig,
    seed: u64,
) -> (f64, f64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut hits, mut all_pass) = (0usize, 0usize);
    for _ in 0..trials {
        let base = side(runs, noise, Effect::None, &mut rng);
        let cur = side(runs, noise, effect, &mut rng);
        let rep = evaluate(
            &base,
            &cur,
            &[],
            cfg,
            "sim",
            Side::default(),
            Side::default(),
        );
        let flagged = match effect {
            Effect::None => rep.verdict == TopVerdict::Fail,
            Effect::Throughput { .. } | Effect::P99Ttft { .. } => {
                let metrics: &[&str] = if matches!(effect, Effect::P99Ttft { .. }) {
                    &["p99_ttft_ms"]
                } else {
                    &["output_throughput", "request_throughput"]
                };
                rep.rows.iter().any(|r| {
                    r.verdict == Verdict::Regressed && metrics.contains(&r.metric.as_str())
                })
            }
        };
        hits += flagged as usize;
        all_pass += (rep.verdict == TopVerdict::Pass) as usize;
    }
    (hits as f64 / trials as f64, all_pass as f64 / trials as f64)
}

fn main() {
    let mut trials = 1000usize;
    let mut seed = 42u64;
    let mut scale = 1.0f64;
    let mut alpha: Option<f64> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || {
            it.next()
                .expect("a value after the flag")
                .parse::<f64>()
                .expect("a number")
        };
        match a.as_str() {
            "--trials" => trials = val() as usize,
            "--seed" => seed = val() as u64,
            "--noise-scale" => scale = val(),
            "--alpha" => alpha = Some(val()),
            other => panic!("unknown argument {other}"),
        }
    }
    let noise = Noise {
        thr: 0.02 * scale,
        central: 0.04 * scale,
        tail: 0.10 * scale,
    };
    // Only the gated metrics: the shown ones do not take part in the decision.
    let cfg = GateConfig {
        show: Some(vec![]),
        alpha,
        ..Default::default()
    };
    println!(
        "{trials} trials per cell, seed {seed}, noise sd: throughput {:.1} %, medians {:.1} %, p99 {:.1} %; \
         24-row suite (6 models × 4 scenarios, 9 gated metrics each)\n",
        noise.thr * 100.0,
        noise.central * 100.0,
        noise.tail * 100.0
    );
    println!("| runs a side | false alarm (identical) | all gated rows pass (identical) | power: throughput −5 % everywhere | power: throughput −5 % in one scenario | power: p99 TTFT +10 % everywhere | power: p99 TTFT +10 % in one scenario |");
    println!("|--:|--:|--:|--:|--:|--:|--:|");
    for runs in [1usize, 2, 3, 5] {
        let s = seed.wrapping_mul(1000).wrapping_add(runs as u64 * 10);
        let (fa, pass) = rate(runs, Effect::None, trials, &noise, &cfg, s);
        let (p1, _) = rate(
            runs,
            Effect::Throughput { all: true },
            trials,
            &noise,
            &cfg,
            s + 1,
        );
        let (p2, _) = rate(
            runs,
            Effect::Throughput { all: false },
            trials,
            &noise,
            &cfg,
            s + 2,
        );
        let (p3, _) = rate(
            runs,
            Effect::P99Ttft { all: true },
            trials,
            &noise,
            &cfg,
            s + 3,
        );
        let (p4, _) = rate(
            runs,
            Effect::P99Ttft { all: false },
            trials,
            &noise,
            &cfg,
            s + 4,
        );
        let pc = |v: f64| format!("{:.1} %", v * 100.0);
        println!(
            "| {runs} | {} | {} | {} | {} | {} | {} |",
            pc(fa),
            pc(pass),
            pc(p1),
            pc(p2),
            pc(p3),
            pc(p4)
        );
    }
}
