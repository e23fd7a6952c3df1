//! The sequential t test's error rate, by simulation: how often a row whose true change sits
//! exactly at its tolerance crosses the "worse than δ" boundary at some look, when it is judged
//! after every pair (as `perfgate ab` judges it) with a t statistic on the pairs' differences.
//!
//! `cargo run --release --example seq-t -- [--trials N] [--seed S] [--half H]`
//!
//! For each level α and number of planned looks K it prints the chance of a crossing at any of the
//! looks 2…K (look 1 has no spread without a prior) for three nominal levels per look:
//! - `z boundary`: [`look_alpha`], the group-sequential boundary of a known-variance statistic;
//! - `df-adjusted`: [`look_alpha_df`], what the gate uses;
//! - `increment`: the bare α each look spends (the union bound: at most α whatever the df);
//! - `half H`: the df-adjusted rule with df / (df + H) for the gate's df / (df + 10), to compare.
//!
//! and two variance estimates: the pairs' own (df = pairs − 1) and one moderated by a prior worth
//! one row's df (df = 2 · (pairs − 1)), the gate's cap on the prior (docs/gate.md, "Method"), with the
//! prior's scale the true one. The gate needs the crossing chance at or below α.
use perfgate::gate::stats::{look_alpha, look_alpha_df, look_alpha_shared, t_sf};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
        })
        .unwrap_or(default)
}

/// The chance that some look crosses, for each of the four level rules (the last: share
/// df / (df + `half`)), over `trials` paths.
fn crossing(
    (alpha, looks, prior): (f64, u32, bool),
    half: f64,
    trials: u64,
    rng: &mut StdRng,
) -> [f64; 4] {
    let k_max = looks as usize;
    // The per-look levels, by df: df depends only on the look here.
    let df_at = |k: usize| {
        let nu = (k - 1) as f64;
        if prior {
            2.0 * nu
        } else {
            nu
        }
    };
    let z: Vec<f64> = (1..=looks).map(|k| look_alpha(alpha, k, looks)).collect();
    let adj: Vec<f64> = (1..=looks)
        .map(|k| look_alpha_df(alpha, k, looks, df_at(k as usize)))
        .collect();
    let inc: Vec<f64> = (1..=looks)
        .map(|k| look_alpha_shared(alpha, k, looks, 0.0))
        .collect();
    let other: Vec<f64> = (1..=looks)
        .map(|k| {
            let df = df_at(k as usize);
            look_alpha_shared(alpha, k, looks, df / (df + half))
        })
        .collect();
    let mut hits = [0u64; 4];
    for _ in 0..trials {
        let (mut sum, mut sum2) = (0.0, 0.0);
        let mut crossed = [false; 4];
        for k in 1..=k_max {
            let x: f64 = StandardNormal.sample(rng);
            sum += x;
            sum2 += x * x;
            if k < 2 {
                continue;
            }
            let n = k as f64;
            let mean = sum / n;
            let ss = (sum2 - n * mean * mean).max(0.0);
            let nu = n - 1.0;
            // The prior's scale is the true variance, 1, worth `nu` df.
            let (var, df) = if prior {
                ((ss + nu) / (2.0 * nu), 2.0 * nu)
            } else {
                (ss / nu, nu)
            };
            let p = t_sf(mean / (var / n).sqrt(), df);
            for (c, levels) in [&z, &adj, &inc, &other].iter().enumerate() {
                crossed[c] |= p < levels[k - 1];
            }
        }
        for c in 0..4 {
            hits[c] += u64::from(crossed[c]);
        }
    }
    hits.map(|h| h as f64 / trials as f64)
}

fn main() {
    let trials = arg("--trials", 200_000.0) as u64;
    let mut rng = StdRng::seed_from_u64(arg("--seed", 1.0) as u64);
    let half = arg("--half", 4.0);
    println!(
        "Chance of crossing \"worse than δ\" at some look of K when the change is exactly δ \
         ({trials} paths per cell; ratio to α in brackets)"
    );
    println!(
        "| α | K | variance | z boundary | df-adjusted (the gate) | increment | half {half} |"
    );
    println!("|---|---|---|---|---|---|---|");
    for alpha in [0.05, 0.01, 0.001] {
        for looks in [10, 40] {
            for prior in [false, true] {
                let r = crossing((alpha, looks, prior), half, trials, &mut rng);
                let cell = |x: f64| format!("{:.3} % ({:.2})", 100.0 * x, x / alpha);
                println!(
                    "| {alpha} | {looks} | {} | {} | {} | {} | {} |",
                    if prior {
                        "moderated (df = 2 (k − 1))"
                    } else {
                        "own (df = k − 1)"
                    },
                    cell(r[0]),
                    cell(r[1]),
                    cell(r[2]),
                    cell(r[3])
                );
            }
        }
    }
}
