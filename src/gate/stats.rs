//! The statistics of the gate, on the log scale: per-side summaries, Welch's t (with each side's
//! variance optionally moderated by a noise prior), the prediction interval for one new run, the
//! noise prior alone for one run a side, one-sided p-values, intervals, and Holm's step-down
//! adjustment. Pure functions over numbers; built on statrs' `StudentsT`.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Why two sets of runs cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("no runs on one side")]
    Empty,
    #[error("value {0} is not positive and finite; cannot compare on the log scale")]
    NonPositive(f64),
    #[error("one run a side and no noise prior (prior_df = 0): no noise estimate")]
    NoVariance,
}

/// Mean and variance of the natural logs of one side's runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogSummary {
    pub n: usize,
    pub mean: f64,
    /// Sample variance (n − 1 denominator); 0 for one run.
    pub var: f64,
}

impl LogSummary {
    pub fn of(values: &[f64]) -> Result<LogSummary, StatsError> {
        if values.is_empty() {
            return Err(StatsError::Empty);
        }
        if let Some(v) = values.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(StatsError::NonPositive(*v));
        }
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        Ok(LogSummary::of_logs(&logs))
    }

    /// Summary of values already on the scale to compare (used for textbook checks).
    pub fn of_logs(xs: &[f64]) -> LogSummary {
        let n = xs.len();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)
        } else {
            0.0
        };
        LogSummary { n, mean, var }
    }

    /// The geometric mean of the runs (the central value shown in reports).
    pub fn center(&self) -> f64 {
        self.mean.exp()
    }
}

/// How a comparison's standard error was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// ≥ 2 runs a side: Welch's t, each side's variance moderated by the noise prior.
    Welch,
    /// One run against ≥ 2 runs: prediction interval from the side with runs.
    Prediction,
    /// One run a side: the stated noise prior alone.
    Prior,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::Welch => "Welch t on logs",
            Method::Prediction => "prediction interval",
            Method::Prior => "noise prior (1 vs 1 run)",
        }
    }
}

/// current − baseline on the log scale, with its standard error and degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    pub diff: f64,
    pub se: f64,
    /// Degrees of freedom of the t reference (may be fractional; `f64::INFINITY` = normal).
    pub df: f64,
    pub method: Method,
}

/// Plain Welch's t-test of `b − a`: (t, Welch–Satterthwaite df).
pub fn welch(a: &LogSummary, b: &LogSummary) -> (f64, f64) {
    let (va, vb) = (a.var / a.n as f64, b.var / b.n as f64);
    let se2 = va + vb;
    let df = se2 * se2 / (va * va / (a.n as f64 - 1.0) + vb * vb / (b.n as f64 - 1.0));
    ((b.mean - a.mean) / se2.sqrt(), df)
}

/// A side's variance moderated by a prior of variance `s0²` worth `df0` degrees of freedom:
/// (variance, degrees of freedom). With `df0 = 0` this is the plain sample variance.
pub fn moderated(s: &LogSummary, s0: f64, df0: f64) -> (f64, f64) {
    let k = s.n as f64 - 1.0;
    let df = df0 + k;
    if df <= 0.0 {
        return (0.0, 0.0);
    }
    ((df0 * s0 * s0 + k * s.var) / df, df)
}

/// Compare current runs with baseline runs on the log scale.
///
/// `prior_sigma` is the noise prior (sd of the log value of one run); `prior_df` its weight.
/// * ≥2 runs a side: Welch–Satterthwaite with moderated per-side variances;
/// * 1 run on one side: the other side's (moderated) variance for both, i.e. a prediction
///   interval for the single run;
/// * 1 run a side: the prior alone, with `prior_df` degrees of freedom.
pub fn compare(
    base: &LogSummary,
    cur: &LogSummary,
    prior_sigma: f64,
    prior_df: f64,
) -> Result<Comparison, StatsError> {
    let diff = cur.mean - base.mean;
    let (m, n) = (base.n as f64, cur.n as f64);
    let (vb, db) = moderated(base, prior_sigma, prior_df);
    let (vc, dc) = moderated(cur, prior_sigma, prior_df);
    let c = match (base.n >= 2, cur.n >= 2) {
        (true, true) => {
            let (a, b) = (vb / m, vc / n);
            let se2 = a + b;
            let df = if se2 > 0.0 {
                se2 * se2 / (a * a / db + b * b / dc)
            } else {
                db + dc
            };
            Comparison {
                diff,
                se: se2.sqrt(),
                df,
                method: Method::Welch,
            }
        }
        (true, false) | (false, true) => {
            let (v, d) = if base.n >= 2 { (vb, db) } else { (vc, dc) };
            Comparison {
                diff,
                se: (v * (1.0 / m + 1.0 / n)).sqrt(),
                df: d,
                method: Method::Prediction,
            }
        }
        (false, false) => {
            if prior_df <= 0.0 {
                return Err(StatsError::NoVariance);
            }
            Comparison {
                diff,
                se: prior_sigma * (1.0 / m + 1.0 / n).sqrt(),
                df: prior_df,
                method: Method::Prior,
            }
        }
    };
    Ok(c)
}

fn t_dist(df: f64) -> StudentsT {
    let df = if df.is_finite() && df > 0.0 {
        df
    } else {
        f64::INFINITY
    };
    StudentsT::new(0.0, 1.0, df).expect("valid t distribution")
}

/// P(T ≥ t) for Student's t with `df` degrees of freedom.
pub fn t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return 0.5;
    }
    if t == f64::INFINITY {
        return 0.0;
    }
    if t == f64::NEG_INFINITY {
        return 1.0;
    }
    t_dist(df).sf(t)
}

/// The `p` quantile of Student's t with `df` degrees of freedom (normal when `df` is infinite
/// or huge: statrs' inverse does not terminate for an infinite `df`).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(df.is_finite() && df > 0.0 && df < 1e7) {
        return statrs::distribution::Normal::standard().inverse_cdf(p);
    }
    // The inverse is an iterative search; a check asks for the same few (p, df) many times.
    thread_local! {
        static MEMO: std::cell::RefCell<Vec<((u64, u64), f64)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = (p.to_bits(), df.to_bits());
    if let Some(q) = MEMO.with(|m| m.borrow().iter().find(|(k, _)| *k == key).map(|(_, q)| *q)) {
        return q;
    }
    let q = t_dist(df).inverse_cdf(p);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 64 {
            m.remove(0);
        }
        m.push((key, q));
    });
    q
}

impl Comparison {
    /// One-sided p-value of "current is larger than baseline" (H0: diff ≤ 0).
    pub fn p_larger(&self) -> f64 {
        t_sf(self.t(), self.df)
    }

    /// One-sided p-value of "current is smaller than baseline" (H0: diff ≥ 0).
    pub fn p_smaller(&self) -> f64 {
        t_sf(-self.t(), self.df)
    }

    fn t(&self) -> f64 {
        if self.se > 0.0 {
            self.diff / self.se
        } else if self.diff > 0.0 {
            f64::INFINITY
        } else if self.diff < 0.0 {
            f64::NEG_INFINITY
        } else {
            0.0
        }
    }

    /// Two-sided interval of the log difference at level 1 − 2·`alpha` (each tail `alpha`).
    pub fn interval(&self, alpha: f64) -> (f64, f64) {
        let q = t_quantile(1.0 - alpha, self.df) * self.se;
        (self.diff - q, self.diff + q)
    }
}

/// A log difference as a percent change: (e^d − 1) × 100.
pub fn pct(d: f64) -> f64 {
    d.exp_m1() * 100.0
}

/// A percent tolerance as a log distance: ln(1 + δ/100).
pub fn log_tolerance(pct: f64) -> f64 {
    (pct / 100.0).ln_1p()
}

/// Holm's step-down adjusted p-values (same order as the input).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let adj = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b} (tol {tol})");
    }

    // Welch's t-test, example 1 of the Wikipedia article "Welch's t-test":
    // t = −2.46, ν ≈ 25.0, two-sided p = 0.021.
    const A1: [f64; 15] = [
        27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
    ];
    const A2: [f64; 15] = [
        27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
    ];

    #[test]
    fn welch_matches_textbook_example() {
        let (a, b) = (LogSummary::of_logs(&A1), LogSummary::of_logs(&A2));
        let (t, df) = welch(&b, &a);
        close(t, -2.46, 0.005);
        close(df, 25.0, 0.05);
        let p = 2.0 * t_sf(t.abs(), df);
        close(p, 0.021, 0.0005);
        // The same through `compare` with no prior: identical numbers.
        let c = compare(&b, &a, 0.0, 0.0).unwrap();
        assert_eq!(c.method, Method::Welch);
        close(c.diff / c.se, t, 1e-12);
        close(c.df, df, 1e-9);
    }

    #[test]
    fn welch_golden_digits() {
        // Pinned from the closed forms (checked independently by numeric integration).
        let (a, b) = (LogSummary::of_logs(&A1), LogSummary::of_logs(&A2));
        close(a.mean, 20.82, 1e-12);
        close(b.mean, 22.986_666_666_666_667, 1e-12);
        close(a.var, 7.867_428_571_428_573, 1e-9);
        close(b.var, 3.812_666_666_666_668, 1e-9);
        let (t, df) = welch(&a, &b);
        close(t, 2.455_356_398_286_006, 1e-9);
        close(df, 24.988_529_290_231_42, 1e-8);
        close(2.0 * t_sf(t, df), 0.021_377_997, 1e-6);
    }

    #[test]
    fn t_quantiles_match_tables() {
        close(t_quantile(0.975, 10.0), 2.228_138_851_986_27, 1e-9);
        close(t_quantile(0.95, 1.0), 6.313_751_514_675_04, 1e-8);
        close(t_quantile(0.95, f64::INFINITY), 1.644_853_626_951_47, 1e-9);
        close(t_sf(2.228_138_851_986_27, 10.0), 0.025, 1e-10);
    }

    #[test]
    fn holm_matches_r_p_adjust() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        for (a, e) in adj.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            close(*a, e, 1e-12);
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.2, 0.3]), vec![0.4, 0.4]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn prediction_interval_for_one_new_run() {
        // Baseline runs 1, 2, 3 (sd 1); one new run: se = sd·√(1 + 1/3), df = 2.
        let b = LogSummary::of_logs(&[1.0, 2.0, 3.0]);
        let c = LogSummary::of_logs(&[4.0]);
        let cmp = compare(&b, &c, 0.0, 0.0).unwrap();
        assert_eq!(cmp.method, Method::Prediction);
        close(cmp.se, (4.0f64 / 3.0).sqrt(), 1e-12);
        assert_eq!(cmp.df, 2.0);
        let (lo, hi) = cmp.interval(0.025);
        close(
            hi - cmp.diff,
            4.302_652_729_911 * (4.0f64 / 3.0).sqrt(),
            1e-6,
        );
        close(cmp.diff - lo, hi - cmp.diff, 1e-12);
    }

    #[test]
    fn one_run_a_side_uses_the_prior() {
        let b = LogSummary::of(&[100.0]).unwrap();
        let c = LogSummary::of(&[80.0]).unwrap();
        let cmp = compare(&b, &c, 0.02, 30.0).unwrap();
        assert_eq!(cmp.method, Method::Prior);
        close(cmp.se, 0.02 * 2f64.sqrt(), 1e-15);
        assert_eq!(cmp.df, 30.0);
        assert!(cmp.p_smaller() < 1e-7, "{}", cmp.p_smaller());
        assert_eq!(compare(&b, &c, 0.02, 0.0), Err(StatsError::NoVariance));
    }

    #[test]
    fn moderation_pulls_towards_the_prior() {
        let s = LogSummary::of_logs(&[0.0, 0.0, 0.0]);
        let (v, df) = moderated(&s, 0.1, 2.0);
        close(v, 0.005, 1e-15);
        assert_eq!(df, 4.0);
    }

    #[test]
    fn rejects_non_positive_values() {
        assert_eq!(
            LogSummary::of(&[1.0, 0.0]),
            Err(StatsError::NonPositive(0.0))
        );
        assert_eq!(LogSummary::of(&[]), Err(StatsError::Empty));
    }

    #[test]
    fn zero_spread_is_handled() {
        let s = LogSummary::of_logs(&[1.0, 1.0]);
        let c = compare(&s, &s, 0.0, 0.0).unwrap();
        assert_eq!(c.p_larger(), 0.5);
        let d = LogSummary::of_logs(&[2.0, 2.0]);
        assert_eq!(compare(&s, &d, 0.0, 0.0).unwrap().p_larger(), 0.0);
    }
}
