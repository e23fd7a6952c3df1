//! Small helpers the replay's tables share: list parsing, shares and their intervals, and the
//! type of a split maker.

use perfgate::gate::replay::{Design, Split};

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
