//! The statistics of the gate, on the log scale: summaries, the noise prior's shrinkage, the
//! two-sample comparison of launch values with one-sided tests against a *shifted* null
//! ("worse than the tolerance"), the non-inferiority bound behind a `pass`, Holm's step-down
//! adjustment, the α-spending of sequential looks, robust location/scale, and how many launches
//! would likely decide an open question. Pure functions over numbers; built on statrs.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::record::Direction;

/// Why two sets of runs cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("no runs on one side")]
    Empty,
    #[error("value {0} is not positive and finite; cannot compare on the log scale")]
    NonPositive(f64),
    #[error(
        "no repeated launches of this metric anywhere in the check: its noise cannot be learnt \
         (2 launches on a side would let it)"
    )]
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

/// A log difference as a percent change: (e^d − 1) × 100.
pub fn pct(d: f64) -> f64 {
    d.exp_m1() * 100.0
}

/// A percent tolerance as a log distance: ln(1 + δ/100).
pub fn log_tolerance(pct: f64) -> f64 {
    (pct / 100.0).ln_1p()
}

/// The tolerance of a metric as oriented log distances (worse, better). The tolerance keeps
/// the meaning the tables show: a throughput is worse beyond −δ, a latency beyond +δ.
pub fn limits(direction: Direction, tol_pct: f64) -> (f64, f64) {
    let t = tol_pct / 100.0;
    match direction {
        Direction::Higher => (-(-t).ln_1p(), t.ln_1p()),
        Direction::Lower => (t.ln_1p(), -(-t).ln_1p()),
    }
}

/// +1 when a larger log value is worse (latencies), −1 when it is better (throughputs).
pub fn orientation(direction: Direction) -> f64 {
    match direction {
        Direction::Lower => 1.0,
        Direction::Higher => -1.0,
    }
}

/// Holm's step-down adjusted p-values (same order as the input).
pub fn holm(p: &[f64]) -> Vec<f64> {
    holm_weighted(p, &vec![1.0; p.len()])
}

/// Weighted Holm (Holm 1979): the step-down procedure whose step tests each remaining
/// hypothesis i at α · wᵢ / Σ(remaining weights), i.e. the closure of weighted Bonferroni
/// tests; it holds the family-wise error rate at α for any positive weights. Returns adjusted
/// p-values (same order as the input): reject i at level α when its value is ≤ α.
pub fn holm_weighted(p: &[f64], w: &[f64]) -> Vec<f64> {
    assert_eq!(p.len(), w.len(), "one weight per p-value");
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| (p[a] / w[a]).total_cmp(&(p[b] / w[b])).then(a.cmp(&b)));
    let mut left: f64 = w.iter().sum();
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for &i in &order {
        let adj = (p[i] / w[i] * left).min(1.0);
        running = running.max(adj);
        out[i] = running;
        left -= w[i];
    }
    out
}

/// The variance of one launch's log value, shrunk toward a prior: `prior_sd²` worth `prior_df`
/// degrees of freedom, combined with `ss` (sum of squared deviations) on `nu` degrees of
/// freedom. Returns (variance, degrees of freedom); `None` when both weigh nothing.
pub fn shrunk_variance(ss: f64, nu: f64, prior_sd: f64, prior_df: f64) -> Option<(f64, f64)> {
    let df = prior_df + nu;
    if df <= 0.0 {
        return None;
    }
    Some(((prior_df * prior_sd * prior_sd + ss) / df, df))
}

/// Candidate minus baseline on the log scale, oriented so that a positive `worse` is worse for
/// the metric (slower latency, lower throughput), with its standard error and the degrees of
/// freedom of its t reference.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Shift {
    /// Oriented difference: > 0 is worse.
    pub worse: f64,
    pub se: f64,
    pub df: f64,
}

impl Shift {
    /// One-sided p-value of H0 "worse by at most `lim`" (the shifted null): small when the
    /// evidence says the change is worse than the tolerance.
    pub fn p_worse_than(&self, lim: f64) -> f64 {
        t_sf(self.z(self.worse - lim), self.df)
    }

    /// One-sided p-value of H0 "better by at most `lim`": small when the evidence says the
    /// change is better than the tolerance.
    pub fn p_better_than(&self, lim: f64) -> f64 {
        t_sf(self.z(-self.worse - lim), self.df)
    }

    /// The upper confidence bound of `worse` at one-sided level `alpha`: a `pass` needs it
    /// below the tolerance (non-inferiority).
    pub fn upper(&self, alpha: f64) -> f64 {
        self.worse + t_quantile(1.0 - alpha, self.df) * self.se
    }

    /// The lower confidence bound of `worse` at one-sided level `alpha`.
    pub fn lower(&self, alpha: f64) -> f64 {
        self.worse - t_quantile(1.0 - alpha, self.df) * self.se
    }

    fn z(&self, x: f64) -> f64 {
        if self.se > 0.0 {
            x / self.se
        } else if x > 0.0 {
            f64::INFINITY
        } else if x < 0.0 {
            f64::NEG_INFINITY
        } else {
            0.0
        }
    }
}

/// The α spent by look `t` (information fraction in (0, 1]) under the Lan–DeMets spending
/// function of Pocock type, α·ln(1 + (e − 1)·t): it spends early, so a sequential check can stop
/// at its first look when the answer is clear.
pub fn pocock_spent(alpha: f64, t: f64) -> f64 {
    alpha * (1.0 + (std::f64::consts::E - 1.0) * t.clamp(0.0, 1.0)).ln()
}

/// The nominal one-sided level of look `k` (1-based) of `looks` planned, equally spaced looks of
/// a statistic whose information grows by equal steps (a sum of independent pairs or launches):
/// the group-sequential boundary whose chance of being crossed first at look k is the α that the
/// Pocock-type spending function spends between looks k − 1 and k ([`pocock_spent`]), found by
/// recursive numerical integration of the statistic's density over the looks not yet crossed
/// (Armitage, McPherson and Rowe). Over all looks the chance of a crossing is α, where testing
/// each look at its bare increment (a union bound) would spend far less: at 40 looks the last
/// look's level is about 6 times its increment. Look 1 is its increment exactly.
pub fn look_alpha(alpha: f64, k: u32, looks: u32) -> f64 {
    let looks = looks.max(1);
    let k = k.clamp(1, looks);
    if looks == 1 || !(alpha > 0.0 && alpha < 0.5) {
        return alpha;
    }
    boundary(alpha, looks)[k as usize - 1]
}

/// The share of a look's boundary level that a t statistic with `df` degrees of freedom may
/// use: df / (df + 10), 1 for a known variance. [`look_alpha`]'s boundary is exact for a statistic
/// whose variance is known; a t statistic with few df, judged look after look at those nominal
/// levels, crosses somewhere more often than α (measured: 1.09–1.20 × α for 10–40 looks with
/// df = pairs − 1). [`look_alpha_df`] moves the level from the boundary towards the bare
/// increment of α that the look spends, which keeps α by the union bound whatever the df. In
/// `examples/seq-t.rs`'s simulation of the sequential t test this share keeps the crossing
/// chance at 0.73–0.90 × α for α from 0.05 to 0.001 and 10 or 40 looks, where df / (df + 4)
/// still crossed at 1.02–1.03 × α with 40 looks (docs/gate.md, "Method": the table).
pub fn df_share(df: f64) -> f64 {
    if df.is_infinite() {
        1.0
    } else if df > 0.0 {
        df / (df + DF_SHARE_HALF)
    } else {
        0.0
    }
}

/// The df at which a t statistic gets half of the boundary's excess over the bare increment
/// ([`df_share`]).
pub const DF_SHARE_HALF: f64 = 10.0;

/// The nominal level of look `k` of `looks` for a t statistic with `df` degrees of freedom: the
/// α this look spends plus [`df_share`] of the boundary's excess over it ([`look_alpha`]).
pub fn look_alpha_df(alpha: f64, k: u32, looks: u32, df: f64) -> f64 {
    look_alpha_shared(alpha, k, looks, df_share(df))
}

/// The nominal level of look `k` of `looks`: the α the look spends plus `share` (in [0, 1]) of
/// the boundary's excess over it; 1 gives [`look_alpha`], 0 the bare increment.
pub fn look_alpha_shared(alpha: f64, k: u32, looks: u32, share: f64) -> f64 {
    let nominal = look_alpha(alpha, k, looks);
    let looks = looks.max(1);
    let k = k.clamp(1, looks);
    if looks == 1 || !(alpha > 0.0 && alpha < 0.5) {
        return nominal;
    }
    let at = |k: u32| pocock_spent(alpha, f64::from(k) / f64::from(looks));
    let increment = at(k) - at(k - 1);
    increment + (nominal - increment).max(0.0) * share.clamp(0.0, 1.0)
}

/// The nominal levels of every look, memoized by (α, looks): a boundary costs some 10⁸
/// multiply-adds at 40 looks, and a check asks for the same few again and again.
fn boundary(alpha: f64, looks: u32) -> std::sync::Arc<[f64]> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Memo = Mutex<HashMap<(u64, u32), Arc<[f64]>>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    let key = (alpha.to_bits(), looks);
    if let Some(b) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return b.clone();
    }
    let b: Arc<[f64]> = compute_boundary(alpha, looks).into();
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, b.clone());
    b
}

/// The recursion behind [`look_alpha`], on the score S_k (a sum of k unit-variance steps under the
/// null at the tolerance): the density of S_k on the paths that have not crossed is kept on a
/// grid of step `H` that ends exactly at the bound; look k's bound b_k solves
/// P(not crossed before k, S_k ≥ b_k) = the α spent at k; the next density is the old one
/// convolved with one step. Nominal level = P(Z ≥ b_k / √k).
fn compute_boundary(alpha: f64, looks: u32) -> Vec<f64> {
    const H: f64 = 0.02;
    // Steps further than this many sd carry nothing (φ(8) ≈ 5e-15).
    const REACH: f64 = 8.0;
    let std_normal = statrs::distribution::Normal::standard();
    let sf = |x: f64| std_normal.sf(x);
    let pdf = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let lo = -REACH * f64::from(looks).sqrt() - REACH;
    // φ at whole multiples of H, for the aligned part of each convolution.
    let taps: Vec<f64> = (0..=(REACH / H) as usize)
        .map(|i| pdf(i as f64 * H))
        .collect();
    let spent = |k: u32| pocock_spent(alpha, f64::from(k) / f64::from(looks));
    // The survivors below bound b: points lo + i·H up to b, then b itself; `mass` is the
    // trapezoid weight times the density at each point.
    struct Survivors {
        xs: Vec<f64>,
        mass: Vec<f64>,
    }
    let nodes = |b: f64| -> Vec<f64> {
        let n = ((b - lo) / H).floor() as usize + 1;
        let mut xs: Vec<f64> = (0..n).map(|i| lo + i as f64 * H).collect();
        if b - xs[n - 1] > 1e-12 {
            xs.push(b);
        }
        xs
    };
    let weigh = |xs: &[f64], density: Vec<f64>| -> Vec<f64> {
        let n = xs.len();
        let mut w = vec![0.0; n];
        for i in 0..n.saturating_sub(1) {
            let h = xs[i + 1] - xs[i];
            w[i] += h / 2.0;
            w[i + 1] += h / 2.0;
        }
        w.iter().zip(density).map(|(w, d)| w * d).collect()
    };
    let mut out = Vec::with_capacity(looks as usize);
    // Look 1: S_1 ~ N(0, 1), nothing crossed yet.
    let inc = spent(1);
    out.push(inc);
    let mut b = std_normal.inverse_cdf(1.0 - inc);
    let xs = nodes(b);
    let density = xs.iter().map(|&x| pdf(x)).collect();
    let mut alive = Survivors {
        mass: weigh(&xs, density),
        xs,
    };
    for k in 2..=looks {
        let inc = spent(k) - spent(k - 1);
        // The mass that crosses c at this look; points more than REACH + 1 sd below c add nothing.
        let exit = |c: f64| -> f64 {
            let from = ((c - REACH - 1.0 - lo) / H).floor().max(0.0) as usize;
            let from = from.min(alive.xs.len());
            alive.xs[from..]
                .iter()
                .zip(&alive.mass[from..])
                .map(|(x, m)| m * sf(c - x))
                .sum()
        };
        // exit() falls as c grows; bisect between a bound surely too low and one surely too high.
        let (mut a, mut z) = (b - REACH, b + REACH + 1.0);
        while z - a > 1e-9 {
            let mid = 0.5 * (a + z);
            if exit(mid) > inc {
                a = mid;
            } else {
                z = mid;
            }
        }
        b = 0.5 * (a + z);
        out.push(sf(b / f64::from(k).sqrt()));
        if k == looks {
            break;
        }
        // The density of S_k below b_k: the survivors' mass moved by one N(0, 1) step. The
        // aligned points of both grids differ by whole steps (taps); the old end node and the new
        // end node are summed directly.
        let xs = nodes(b);
        let aligned =
            ((alive.xs.len() as f64 - 1.0) * H + lo - alive.xs[alive.xs.len() - 1]).abs() < 1e-12;
        let n_old = alive.xs.len() - usize::from(!aligned);
        let reach = taps.len() - 1;
        let density: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(j, &y)| {
                let on_grid = (y - (lo + j as f64 * H)).abs() < 1e-12;
                let mut d: f64 = if on_grid {
                    let from = j.saturating_sub(reach);
                    let to = (j + reach + 1).min(n_old);
                    (from..to.max(from))
                        .map(|i| alive.mass[i] * taps[i.abs_diff(j)])
                        .sum()
                } else {
                    (0..n_old)
                        .filter(|&i| (y - alive.xs[i]).abs() <= REACH)
                        .map(|i| alive.mass[i] * pdf(y - alive.xs[i]))
                        .sum()
                };
                if n_old < alive.xs.len() {
                    let x = alive.xs[n_old];
                    d += alive.mass[n_old] * pdf(y - x);
                }
                d
            })
            .collect();
        alive = Survivors {
            mass: weigh(&xs, density),
            xs,
        };
    }
    out
}

/// What [`look_alpha`] gives a family's per-look level relative to its overall level:
/// `look_alpha(level, k, looks) / level`.
pub fn look_ratio(level: f64, k: u32, looks: u32) -> f64 {
    if level.is_nan() || level <= 0.0 {
        return 1.0;
    }
    look_alpha(level, k, looks) / level
}

/// The median of `xs` (NaN-free); `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The median absolute deviation, scaled by 1.4826 to estimate a normal standard deviation.
pub fn mad(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&dev).map(|d| 1.482_602_218_505_602 * d)
}

/// Indices of values further than `k` robust standard deviations (MAD) from the median. Needs
/// at least 5 values (fewer cannot tell an outlier from the spread); a zero MAD flags nothing.
pub fn outliers(xs: &[f64], k: f64) -> Vec<usize> {
    if xs.len() < 5 {
        return Vec::new();
    }
    let (Some(m), Some(s)) = (median(xs), mad(xs)) else {
        return Vec::new();
    };
    if s <= 0.0 {
        return Vec::new();
    }
    (0..xs.len())
        .filter(|&i| (xs[i] - m).abs() > k * s)
        .collect()
}

/// Why no number of candidate launches is given for an open row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotDecidable {
    /// Even endless candidate launches would not do: the baseline needs more launches.
    BaselineTooShort,
    /// Even endless candidate and baseline launches would not do: the between-session term
    /// bounds the precision (measure it over sessions, or compare in pairs with `ab`).
    SessionBound,
    /// It would take more than the cap.
    MoreThan(u32),
}

/// A stored comparison as it stands, for [`launches_needed`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// The true (or estimated) oriented shift.
    pub worse: f64,
    /// The limit the question is about (δ as a log distance).
    pub lim: f64,
    /// The noise of one launch, and its degrees of freedom with the launches so far.
    pub sd: f64,
    pub df: f64,
    /// Baseline launches, and the candidate's so far.
    pub n_base: usize,
    pub n_now: usize,
    /// The part of se² no candidate launch shrinks (the session term).
    pub fixed_var: f64,
}

/// The power term of the gate's "would likely decide" (one standard error: about 84 %).
pub const LIKELY_Z: f64 = 1.0;

/// The standard normal quantile that a wanted power puts beside the critical value: Φ⁻¹(power)
/// (0.95 → 1.645; [`LIKELY_Z`] is the gate's own, ≈ 0.841).
pub fn power_z(power: f64) -> f64 {
    statrs::distribution::Normal::standard().inverse_cdf(power)
}

/// Whether a one-sided test at level `alpha` with a t reference of `df` degrees of freedom
/// likely detects a true distance `gap` from its limit when the estimate's standard error is
/// `se`: (t₁₋α,df + z)·se ≤ gap, with z = [`power_z`] of the power wanted. The one power rule
/// of [`launches_needed`], [`pairs_needed`] and `perfgate plan`.
pub fn detects(gap: f64, se: f64, alpha: f64, df: f64, z: f64) -> bool {
    (t_quantile(1.0 - alpha, df) + z) * se <= gap
}

/// The power the rule of [`detects`] gives: Φ(gap/se − t₁₋α,df).
pub fn power_of(gap: f64, se: f64, alpha: f64, df: f64) -> f64 {
    if se <= 0.0 {
        return if gap > 0.0 { 1.0 } else { 0.0 };
    }
    statrs::distribution::Normal::standard().cdf(gap / se - t_quantile(1.0 - alpha, df))
}

impl Design {
    /// The standard error with `n` candidate launches.
    pub fn se(&self, n: u32) -> f64 {
        let n = f64::from(n);
        (self.sd * self.sd * (1.0 / self.n_base.max(1) as f64 + 1.0 / n) + self.fixed_var)
            .max(0.0)
            .sqrt()
    }

    /// The df of the noise with `n` candidate launches.
    pub fn df_at(&self, n: u32) -> f64 {
        (self.df + (f64::from(n) - self.n_now as f64).max(0.0)).max(1.0)
    }

    /// Whether `n` candidate launches would likely decide: the distance to the limit exceeds
    /// the critical value at the df that n launches will have, plus `z` standard errors.
    fn decides(&self, n: u32, alpha: f64, z: f64) -> bool {
        let gap = (self.lim - self.worse).abs();
        detects(gap, self.se(n), alpha, self.df_at(n), z)
    }
}

/// The fewest candidate launches in all (the baseline keeping its `n_base`) that would likely
/// decide a row (about 84 % chance): its critical value taken at the level of the question
/// and the df those launches will have.
pub fn launches_needed(d: &Design, alpha: f64, cap: u32) -> Result<u32, NotDecidable> {
    launches_needed_z(d, alpha, LIKELY_Z, cap)
}

/// [`launches_needed`] at the power whose normal quantile is `z` ([`power_z`]).
pub fn launches_needed_z(d: &Design, alpha: f64, z: f64, cap: u32) -> Result<u32, NotDecidable> {
    if d.sd <= 0.0 && d.fixed_var <= 0.0 {
        return Ok(1);
    }
    if !d.decides(cap, alpha, z) {
        // Even endless launches keep the baseline's and the session's share of se².
        let floor = (d.sd * d.sd / d.n_base.max(1) as f64 + d.fixed_var).sqrt();
        let z = t_quantile(1.0 - alpha, f64::INFINITY) + z;
        let gap = (d.lim - d.worse).abs();
        return Err(if z * d.fixed_var.sqrt() >= gap {
            NotDecidable::SessionBound
        } else if z * floor >= gap {
            NotDecidable::BaselineTooShort
        } else {
            NotDecidable::MoreThan(cap)
        });
    }
    // More launches, a smaller se and more df: the launches that suffice are every n from
    // some n* on; bisect for n*.
    let (mut lo, mut hi) = (0u32, cap);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if d.decides(mid, alpha, z) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// The fewest pairs in all that would likely decide a paired row whose true oriented shift is
/// `worse`, with `sd` the noise of one pair's difference, against the limit `lim`: the distance
/// to the limit must exceed the critical value plus one standard error, sd/√n (about 84 % chance
/// to decide). `df` is the noise's degrees of freedom with `n_now` pairs; each further pair adds
/// one, so the critical value is taken at the df that n pairs will have (the usual sample-size
/// iteration; with the few df of the first looks a fixed df would ask for several times the pairs
/// a t-test at n pairs needs).
pub fn pairs_needed(
    worse: f64,
    lim: f64,
    sd: f64,
    df: f64,
    n_now: u32,
    alpha: f64,
    cap: u32,
) -> Result<u32, NotDecidable> {
    let q = PairQuestion {
        worse,
        lim,
        sd,
        df,
        n_now,
    };
    pairs_needed_z(&q, alpha, LIKELY_Z, cap)
}

/// A paired row's question for [`pairs_needed_z`]: the true oriented shift, the limit, the
/// noise of one pair's difference with its df at `n_now` pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairQuestion {
    pub worse: f64,
    pub lim: f64,
    pub sd: f64,
    pub df: f64,
    pub n_now: u32,
}

/// [`pairs_needed`] at the power whose normal quantile is `z` ([`power_z`]).
pub fn pairs_needed_z(q: &PairQuestion, alpha: f64, z: f64, cap: u32) -> Result<u32, NotDecidable> {
    let PairQuestion {
        worse,
        lim,
        sd,
        df,
        n_now,
    } = *q;
    let gap = (lim - worse).abs();
    if sd <= 0.0 {
        return Ok(1);
    }
    if gap <= 0.0 {
        return Err(NotDecidable::MoreThan(cap));
    }
    let at = |n: f64| {
        let df_n = (df + (n - f64::from(n_now))).max(1.0);
        ((t_quantile(1.0 - alpha, df_n) + z) * sd / gap)
            .powi(2)
            .ceil()
            .max(1.0)
    };
    // More pairs, more df, a smaller critical value: `at` is non-increasing, so the pairs that
    // suffice (at(n) ≤ n) are every n from some n* on; bisect for n*.
    let ok = |n: u32| at(f64::from(n)) <= f64::from(n);
    if !ok(cap) {
        return Err(NotDecidable::MoreThan(cap));
    }
    let (mut lo, mut hi) = (0u32, cap); // ok(hi), and lo = 0 never counts
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let n = f64::from(hi);
    Ok(n as u32)
}

#[cfg(test)]
mod tests;
