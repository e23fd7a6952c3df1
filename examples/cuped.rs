//! Does the pre-launch calibration time explain launch-to-launch noise? Per row (scenario ×
//! metric, over the launches of a corpus folder), the coefficient of variation of the metric
//! without and with the CUPED adjustment (`perfgate::telemetry::cuped`), with θ fitted on the
//! same launches (in-sample, optimistic by construction) and leave-one-out (honest), for two
//! covariates: the calibration loop's time and the 1-minute load average.
//!
//!   cargo run --example cuped -- DIR [VARIANT…]
//!
//! DIR holds one JSON Lines file of records per launch (scripts/record-corpus.sh); the launches
//! whose file name contains one of the VARIANT words are used (default: all). Per launch the
//! covariate is that run's own `telemetry.calibration_ms` (or `telemetry.cpu.load1` median).

use std::collections::BTreeMap;

use perfgate::record::ScenarioResult;
use perfgate::telemetry::{cuped, Telemetry};

const METRICS: [&str; 4] = [
    "output_throughput",
    "median_ttft_ms",
    "median_tpot_ms",
    "median_e2el_ms",
];

/// One launch of a row: the metric's value and each covariate's.
type Launch = (f64, Vec<Option<f64>>);

type Covariate = (&'static str, fn(&Telemetry) -> Option<f64>);

const COVARIATES: [Covariate; 2] = [
    ("calibration", |t| t.calibration_ms),
    ("load1", |t| t.cpu.as_ref()?.load1.map(|s| s.median)),
];

fn value(r: &ScenarioResult, m: &str) -> Option<f64> {
    match m {
        "output_throughput" => Some(r.output_throughput),
        _ => r.stats.get(m).copied(),
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.1}", v * 100.0))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.first().ok_or("usage: cuped DIR [VARIANT…]")?;
    let variants = &args[1..];
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            variants.is_empty() || variants.iter().any(|v| n.contains(v.as_str()))
        })
        .collect();
    files.sort();
    // (scenario, metric) → per launch (metric value, covariates).
    let mut rows: BTreeMap<(String, &str), Vec<Launch>> = BTreeMap::new();
    for f in &files {
        for r in perfgate::record::read_jsonl(f)? {
            let Some(t) = &r.telemetry else { continue };
            let cov: Vec<Option<f64>> = COVARIATES.iter().map(|(_, g)| g(t)).collect();
            for m in METRICS {
                if let Some(v) = value(&r, m) {
                    rows.entry((r.scenario_id(), m))
                        .or_default()
                        .push((v, cov.clone()));
                }
            }
        }
    }
    println!("{} launch files in {dir}", files.len());
    print!("| scenario | metric | launches | CV raw %");
    for (c, _) in COVARIATES {
        print!(" | ρ {c} | CV {c} in-sample % | CV {c} leave-one-out %");
    }
    println!(" |");
    println!(
        "|---|---|---|---{}|",
        "|---|---|---".repeat(COVARIATES.len())
    );
    let mut wins = vec![(0, 0); COVARIATES.len()];
    for ((scenario, metric), launches) in &rows {
        let y: Vec<f64> = launches.iter().map(|l| l.0).collect();
        print!(
            "| {scenario} | {metric} | {} | {}",
            y.len(),
            pct(cuped::cv(&y))
        );
        for (i, _) in COVARIATES.iter().enumerate() {
            let pairs: Vec<(f64, f64)> = launches
                .iter()
                .filter_map(|l| Some((l.0, l.1[i]?)))
                .collect();
            let (ys, xs): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
            let rho = rho(&ys, &xs);
            let ins = cuped::adjust(&ys, &xs).and_then(|a| cuped::cv(&a));
            let loo = cuped::adjust_loo(&ys, &xs).and_then(|a| cuped::cv(&a));
            if let (Some(l), Some(raw)) = (loo, cuped::cv(&ys)) {
                wins[i].1 += 1;
                if l < raw {
                    wins[i].0 += 1;
                }
            }
            print!(
                " | {} | {} | {}",
                rho.map_or("–".into(), |r| format!("{r:+.2}")),
                pct(ins),
                pct(loo)
            );
        }
        println!(" |");
    }
    for (i, (c, _)) in COVARIATES.iter().enumerate() {
        println!(
            "{c}: the leave-one-out adjustment lowers the CV in {} of {} rows",
            wins[i].0, wins[i].1
        );
    }
    Ok(())
}

/// Pearson's correlation.
fn rho(y: &[f64], x: &[f64]) -> Option<f64> {
    let n = y.len() as f64;
    if y.len() < 3 {
        return None;
    }
    let (my, mx) = (y.iter().sum::<f64>() / n, x.iter().sum::<f64>() / n);
    let sxy: f64 = y.iter().zip(x).map(|(a, b)| (a - my) * (b - mx)).sum();
    let sxx: f64 = x.iter().map(|b| (b - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|a| (a - my).powi(2)).sum();
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}
