//! Small helpers the replay's tables share: list parsing, shares and their intervals, the
//! type of a split maker, and `--normalize-loop`'s rescaling.

use perfgate::gate::replay::{Change, Design, Launch, Split};
use perfgate::gate::stats::median;
use perfgate::record::ScenarioResult;

pub(crate) fn list(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// Pearson correlation of two equally long series.
pub(crate) fn corr(a: &[f64], b: &[f64]) -> f64 {
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (m(a), m(b));
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let ss = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    cov / (ss(a, ma) * ss(b, mb)).sqrt()
}

pub(crate) fn ratio(k: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        k as f64 / n as f64
    }
}

/// Wilson's 95 % interval for a share of `k` in `n`.
pub(crate) fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n, z) = (k as f64, n as f64, 1.959964);
    let p = k / n;
    let mid = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((mid - half).max(0.0), (mid + half).min(1.0))
}

/// The splits of one design, seeded: random ([`splits`]), with `--by-session` each side of one
/// recording session ([`session_splits`]), with `--new-session` the baseline over ≥ 2 sessions
/// and the candidate of another ([`new_session_splits`]).
pub(crate) type SplitFn<'a> = &'a dyn Fn(Design, u64) -> Vec<Split>;

/// The median of every record's calibration loop time (ms), or an error naming the first launch
/// whose records lack one.
pub(crate) fn median_loop(launches: &[Launch]) -> Result<f64, String> {
    let mut v = Vec::new();
    for l in launches {
        for r in &l.records {
            v.push(loop_ms(l, r)?);
        }
    }
    median(&v).ok_or_else(|| "no records to take a calibration loop from".to_string())
}

/// Each record rescaled to the machine speed of a `median` ms calibration loop: a record whose
/// loop took longer ran on a slower machine, so its throughputs rise and its latencies fall by
/// the loop's ratio (the replay's own [`Change::Slower`] by that factor).
pub(crate) fn normalize_loop(launches: Vec<Launch>, median: f64) -> Result<Vec<Launch>, String> {
    launches
        .into_iter()
        .map(|l| {
            let recs = l
                .records
                .iter()
                .map(|r| {
                    let c = loop_ms(&l, r)?;
                    let slower = Change::Slower {
                        pct: 100.0 * (1.0 - c / median),
                        scenario: None,
                    };
                    Ok(slower.apply(r))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(Launch::new(&l.name, recs))
        })
        .collect()
}

fn loop_ms(l: &Launch, r: &ScenarioResult) -> Result<f64, String> {
    r.telemetry
        .as_ref()
        .and_then(|t| t.calibration_ms)
        .filter(|c| c.is_finite() && *c > 0.0)
        .ok_or_else(|| format!("{}: a record without a calibration loop time", l.name))
}
