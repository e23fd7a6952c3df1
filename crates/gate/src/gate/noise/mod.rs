//! Noise per row, with the engine launch as the unit: runs are grouped by launch (a launch's
//! value is the median of its runs' logs, so one odd run inside a launch does not move it), the
//! spread between launches is learnt from the row's own launches and moderated toward what the
//! check's other rows of the metric's class show ([`Priors`], empirical Bayes), launches far from
//! the rest are flagged, and launches are grouped by recording session, whose offsets form a
//! level of their own (the session term of a stored comparison). The same numbers, split into
//! their levels (between sessions, between launches, within a launch), are what `perfgate
//! baseline noise` prints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::config::{GateConfig, MetricClass, MetricRule, DEFAULT_PRIOR_DF};
use super::moderate::{self, Prior};
use super::stats::{self, StatsError};
use crate::record::ScenarioResult;

mod breakdown;
pub mod loops;
pub use breakdown::{engine_wide_prior, new_session_var, table, two_level, NoiseRow, TwoLevel};

/// The scenario name of an engine-wide test's row.
pub const ENGINE_WIDE: &str = "(engine-wide)";

/// A launch's identity for grouping: its session and `launch_id`, else the run's own index
/// (records without launch ids — imports, older live runs — count each run as its own launch).
pub fn launch_key(r: &ScenarioResult) -> String {
    match (&r.session_id, &r.launch_id) {
        (Some(s), Some(id)) => format!("L:{s}/{id}"),
        (None, Some(id)) => format!("L:{id}"),
        (_, None) => format!("run{}", r.run_index),
    }
}

/// One side of one row: its launches' log values.
#[derive(Debug, Clone, PartialEq)]
pub struct Launches {
    /// Launch keys in first-seen order.
    pub keys: Vec<String>,
    /// Per launch: the median of its runs' natural logs.
    pub values: Vec<f64>,
    /// Per launch: the logs of its runs.
    pub runs: Vec<Vec<f64>>,
    /// Per launch: its recording session (`None`: not recorded; all such launches of a side are
    /// taken as one session).
    pub sessions: Vec<Option<String>>,
    /// Whether every record carried a launch id.
    pub has_ids: bool,
    /// Per probe ([`loops::Probe`] as the index) and launch: the median natural log of its runs'
    /// calibration loop times (ms), `None` when a run of it recorded none ([`loops`]); a stored
    /// check puts the launch's median over all its scenarios' runs here (`loops::LaunchLoops`).
    pub loops: [Vec<Option<f64>>; 2],
}

impl Launches {
    /// Group the values of `metric` in `recs` by launch. Records without the metric are skipped.
    pub fn of(recs: &[&ScenarioResult], metric: &str) -> Result<Launches, StatsError> {
        let mut keys: Vec<String> = Vec::new();
        let mut runs: Vec<Vec<f64>> = Vec::new();
        let mut sessions = Vec::new();
        let mut loop_runs: Vec<loops::Readings> = Vec::new();
        let mut has_ids = true;
        for r in recs {
            let Some(v) = r.metric(metric) else { continue };
            if !(v.is_finite() && v > 0.0) {
                return Err(StatsError::NonPositive(v));
            }
            has_ids &= r.launch_id.is_some();
            let k = launch_key(r);
            let i = match keys.iter().position(|x| *x == k) {
                Some(i) => i,
                None => {
                    keys.push(k);
                    runs.push(Vec::new());
                    sessions.push(r.session_id.clone());
                    loop_runs.push(loops::Readings::default());
                    keys.len() - 1
                }
            };
            runs[i].push(v.ln());
            loop_runs[i].add(r);
        }
        if keys.is_empty() {
            return Err(StatsError::Empty);
        }
        let values = runs
            .iter()
            .map(|r| stats::median(r).expect("a launch has a run"))
            .collect();
        let medians: Vec<[Option<f64>; 2]> = loop_runs.iter().map(|l| l.medians()).collect();
        let loops = [0, 1].map(|p| medians.iter().map(|m| m[p]).collect());
        Ok(Launches {
            keys,
            values,
            runs,
            sessions,
            has_ids,
            loops,
        })
    }

    /// A series of one value per launch (an engine-wide series), as launches of one run each,
    /// keyed by position, in one session.
    pub fn single(values: Vec<f64>, has_ids: bool) -> Launches {
        let keys = (0..values.len()).map(|i| i.to_string()).collect();
        let sessions = vec![None; values.len()];
        Launches::keyed(keys, values, sessions, has_ids)
    }

    /// One value per launch under the given keys and sessions, as launches of one run each.
    pub fn keyed(
        keys: Vec<String>,
        values: Vec<f64>,
        sessions: Vec<Option<String>>,
        has_ids: bool,
    ) -> Launches {
        Launches {
            loops: [vec![None; keys.len()], vec![None; keys.len()]],
            keys,
            runs: values.iter().map(|v| vec![*v]).collect(),
            values,
            sessions,
            has_ids,
        }
    }

    pub fn n(&self) -> usize {
        self.values.len()
    }

    /// The mean of the launch values (every launch counts, outlying or not: the mean and the
    /// spread see the same launches).
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    pub fn n_runs(&self) -> usize {
        self.runs.iter().map(Vec::len).sum()
    }

    /// The side's sessions, each with the indices of its launches, in first-seen order.
    pub fn by_session(&self) -> Vec<(Option<&str>, Vec<usize>)> {
        let mut out: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
        for (i, s) in self.sessions.iter().enumerate() {
            let s = s.as_deref();
            match out.iter_mut().find(|(k, _)| *k == s) {
                Some(g) => g.1.push(i),
                None => out.push((s, vec![i])),
            }
        }
        out
    }

    /// Launches far from the rest: more than [`OUTLIER_K`] robust sd from the median, judged
    /// only with ≥ [`OUTLIER_MIN_LAUNCHES`] launches. They are flagged in the report and kept in
    /// both the mean and the spread.
    pub fn outliers(&self) -> usize {
        if self.n() < OUTLIER_MIN_LAUNCHES {
            return 0;
        }
        stats::outliers(&self.values, OUTLIER_K).len()
    }

    /// Sum of squared deviations of the launch values from their session's mean, its degrees
    /// of freedom (launches − sessions), and how many launches are flagged as outliers. With
    /// one session this is the plain spread around the side's mean; with several, an offset
    /// between sessions is left to the session term.
    pub fn spread(&self) -> (f64, f64, usize) {
        let (mut ss, mut df) = (0.0, 0.0);
        for (_, idx) in self.by_session() {
            if idx.len() < 2 {
                continue;
            }
            let m = idx.iter().map(|&i| self.values[i]).sum::<f64>() / idx.len() as f64;
            ss += idx
                .iter()
                .map(|&i| (self.values[i] - m).powi(2))
                .sum::<f64>();
            df += (idx.len() - 1) as f64;
        }
        (ss, df, self.outliers())
    }

    /// One-way analysis of variance of the launch values by session, when the side has ≥ 2
    /// sessions and some session has ≥ 2 launches.
    pub fn session_anova(&self) -> Option<SessionAnova> {
        let (ms_between, df_between, n0) = self.between_sessions()?;
        let (n, s) = (self.n(), df_between as usize + 1);
        if n <= s {
            return None;
        }
        let (ss_w, _, _) = self.spread();
        Some(SessionAnova {
            ms_between,
            df_between,
            ms_within: ss_w / (n - s) as f64,
            df_within: (n - s) as f64,
            n0,
        })
    }

    /// The between-session part of [`Self::session_anova`] alone: (mean square between the
    /// sessions' means, its df S − 1, the effective launches per session n₀), when the side has
    /// ≥ 2 sessions, also with one launch in each: its within-session variance can then come
    /// from elsewhere (the row's other side).
    pub fn between_sessions(&self) -> Option<(f64, f64, f64)> {
        let groups = self.by_session();
        let s = groups.len();
        let n = self.n();
        if s < 2 {
            return None;
        }
        let grand = self.mean();
        let ss_b: f64 = groups
            .iter()
            .map(|(_, idx)| {
                let m = idx.iter().map(|&i| self.values[i]).sum::<f64>() / idx.len() as f64;
                idx.len() as f64 * (m - grand).powi(2)
            })
            .sum();
        let sum_sq: f64 = groups
            .iter()
            .map(|(_, idx)| (idx.len() as f64).powi(2))
            .sum();
        let df = (s - 1) as f64;
        Some((ss_b / df, df, (n as f64 - sum_sq / n as f64) / df))
    }

    /// The within-launch spread: Σ squared deviations of runs from their launch's mean, and its
    /// degrees of freedom Σ (runs − 1).
    pub fn within(&self) -> (f64, f64) {
        let (mut ss, mut df) = (0.0, 0.0);
        for r in self.runs.iter().filter(|r| r.len() >= 2) {
            let m = r.iter().sum::<f64>() / r.len() as f64;
            ss += r.iter().map(|x| (x - m).powi(2)).sum::<f64>();
            df += (r.len() - 1) as f64;
        }
        (ss, df)
    }
}

/// One side's one-way analysis of variance of launch values by session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionAnova {
    pub ms_between: f64,
    pub df_between: f64,
    pub ms_within: f64,
    pub df_within: f64,
    /// The effective launches per session, (N − Σ nₛ²/N) / (S − 1).
    pub n0: f64,
}

impl SessionAnova {
    /// The between-session variance component, max(0, (MS_between − MS_within) / n₀).
    pub fn between_var(&self) -> f64 {
        ((self.ms_between - self.ms_within) / self.n0).max(0.0)
    }
}

/// The session part of the variance of a difference of two sides' means, per unit of
/// between-session variance: Σₛ (share of the baseline's launches in s − share of the
/// candidate's)². Launches without a session id form one session per side, never shared
/// with the other side. 2 for two sides of one session each; 0 when both sides spread their
/// launches alike over the same sessions.
pub fn session_factor(b: &Launches, c: &Launches) -> f64 {
    let share = |l: &Launches, tag: &str| -> Vec<(String, f64)> {
        l.by_session()
            .into_iter()
            .map(|(s, idx)| {
                let k = s.map_or_else(|| format!("(unrecorded, {tag})"), str::to_string);
                (k, idx.len() as f64 / l.n() as f64)
            })
            .collect()
    };
    let (sb, sc) = (share(b, "baseline"), share(c, "candidate"));
    let mut f = 0.0;
    for (k, w) in &sb {
        let wc = sc.iter().find(|x| &x.0 == k).map_or(0.0, |x| x.1);
        f += (w - wc).powi(2);
    }
    for (k, w) in &sc {
        if !sb.iter().any(|x| &x.0 == k) {
            f += w * w;
        }
    }
    f
}

/// The engine-wide series of one side: for each launch (in the first row's order) that ran
/// every row, the weighted mean of its values minus the row's `centre`, keeping the launch's key
/// and session. `rows` pairs each row's launches with its weight (1/sd² in the gate) and centre
/// (the baseline's mean). Used by the engine-wide tests and by `perfgate baseline noise`.
pub fn pooled(rows: &[(&Launches, f64, f64)]) -> Launches {
    let Some(first) = rows.first() else {
        return Launches::single(Vec::new(), false);
    };
    let wsum: f64 = rows.iter().map(|r| r.1).sum();
    let (mut keys, mut values, mut sessions) = (Vec::new(), Vec::new(), Vec::new());
    let mut loops: [Vec<Option<f64>>; 2] = [Vec::new(), Vec::new()];
    for (j, key) in first.0.keys.iter().enumerate() {
        let (mut z, mut lp) = (0.0, [Some(0.0); 2]);
        let mut complete = true;
        for (l, w, centre) in rows {
            match l.keys.iter().position(|k| k == key) {
                Some(i) => {
                    z += w * (l.values[i] - centre);
                    for (sum, series) in lp.iter_mut().zip(&l.loops) {
                        *sum = sum
                            .zip(series.get(i).copied().flatten())
                            .map(|(a, x)| a + x);
                    }
                }
                None => complete = false,
            }
        }
        if complete {
            keys.push(key.clone());
            values.push(z / wsum);
            sessions.push(first.0.sessions[j].clone());
            // The launch's loop: the mean over its runs of the pooled rows.
            for (series, sum) in loops.iter_mut().zip(lp) {
                series.push(sum.map(|a| a / rows.len() as f64));
            }
        }
    }
    let ids = rows.iter().all(|r| r.0.has_ids);
    let mut out = Launches::keyed(keys, values, sessions, ids);
    out.loops = loops;
    out
}

/// The correlation of launch effects between the scenarios of one model: launches are slow or
/// fast in every scenario at once, so pooling scenarios removes less noise than independent
/// rows would. Estimated from the data: each scenario's launch values are centred on their
/// session's mean and scaled by the row's sd (`rows`: launches and sd); every pair of scenarios
/// contributes the products of the launches both ran. Returns the pooled correlation, clamped
/// to [0, 1]; `None` with fewer than 3 pairs of launch residuals behind it (then the prior takes
/// the conservative ρ = 1).
pub fn scenario_corr(sides: &[Vec<(&Launches, f64)>]) -> Option<f64> {
    let (mut sxy, mut sxx, mut syy, mut n) = (0.0, 0.0, 0.0, 0usize);
    for rows in sides {
        let resid: Vec<Vec<(String, f64)>> = rows
            .iter()
            .map(|(l, sd)| {
                let mut out = Vec::new();
                for (_, idx) in l.by_session() {
                    if idx.len() < 2 {
                        continue;
                    }
                    let m = idx.iter().map(|&i| l.values[i]).sum::<f64>() / idx.len() as f64;
                    for i in idx {
                        out.push((l.keys[i].clone(), (l.values[i] - m) / sd.max(1e-12)));
                    }
                }
                out
            })
            .collect();
        for i in 0..resid.len() {
            for j in i + 1..resid.len() {
                for (k, x) in &resid[i] {
                    if let Some((_, y)) = resid[j].iter().find(|(kj, _)| kj == k) {
                        sxy += x * y;
                        sxx += x * x;
                        syy += y * y;
                        n += 1;
                    }
                }
            }
        }
    }
    if n < 3 || sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(0.0, 1.0))
}

/// The prior sd of an engine-wide series: the sd of the weighted mean of rows whose own sd is
/// 1/√wᵢ, correlated `rho` between any two: √(Σᵢ wᵢ + ρ Σᵢ≠ⱼ √(wᵢ wⱼ)) / Σ w.
pub fn pooled_prior_sd(weights: &[f64], rho: f64) -> f64 {
    let wsum: f64 = weights.iter().sum();
    let roots: f64 = weights.iter().map(|w| w.sqrt()).sum();
    // Σᵢ≠ⱼ √(wᵢ wⱼ) = (Σ √wᵢ)² − Σ wᵢ
    let cross = roots * roots - wsum;
    (wsum + rho * cross).sqrt() / wsum
}

/// A launch further than this many robust standard deviations (MAD) from the median of its
/// side is flagged as an outlier. Under plain normal noise, K = 6 flags a launch on 2.7 % of
/// 8-launch sides, 1.7 % of 10 and 0.7 % of 16; K = 4 flagged 16.6 % of 5-launch sides (numpy,
/// 100,000 draws each; docs/gate.md, "Method").
pub const OUTLIER_K: f64 = 6.0;
/// Fewer launches than this cannot tell an outlier from the spread.
pub const OUTLIER_MIN_LAUNCHES: usize = 8;

/// The between-session variance, as a multiple of the launch variance, assumed when the check's
/// data hold no session-to-session replication: as large as one launch's own noise. It keeps
/// the stored test from claiming precision that more launches of one session cannot give
/// (docs/gate.md, "Method": a session offset of half a launch sd already gave 30 % false alarms at
/// 10 × 10 without it); `perfgate ab` cancels it, and a baseline recorded over sessions
/// measures it. Real sittings hours apart measure 1.3–3.4, but the quiet suite (nothing to
/// measure it from) meets its criteria at 1 on all 13 seeds its test draws, and of seeds 1 … 12
/// at 1.5 on 10, at 2 on 8 (docs/gate.md, "Why the assumption cannot follow"). Where both sides
/// timed the calibration loop; [`UNWATCHED_SESSION_RATIO_PRIOR`] where they did not.
pub const SESSION_RATIO_PRIOR: f64 = 1.0;
/// λ assumed where nothing measures it and nothing watches the machine (a side without
/// calibration loop times, or `machine_slope = 0`): no machine term widens such a check when
/// the sittings' machines differed, and sittings hours apart measure λ 1.3–3.4. Of 1, 2, 4
/// and 8, 4 is the least that kept a row worse by δ passing ≤ 5 % and confirmed false alarms
/// ≤ 1 % on the session splits of every corpus replayed without its loop; it costs the quiet
/// suite its passes and its 25 % latency rise when imported (docs/gate.md, "Where nothing
/// watches the machine").
pub const UNWATCHED_SESSION_RATIO_PRIOR: f64 = 4.0;
/// The weight of [`SESSION_RATIO_PRIOR`] against a measured λ that reads above it, in session
/// comparisons: one, as much as a baseline of two sessions shows. Two sessions alone cannot tell
/// a session effect of zero from a large one, so a large λ measured on one df is halfway to the
/// prior; ten sessions (9 df) outweigh it nine to one.
pub const SESSION_PRIOR_DF: f64 = 1.0;
/// The weight of [`SESSION_RATIO_PRIOR`] against a measured λ that reads below it: four session
/// comparisons. A λ measured on one comparison is a χ²₁ draw around the truth, which reads below
/// 0.455 × the truth half the time and below a tenth of it a quarter of the time (χ²₁'s median
/// 0.4549, its cdf at 0.1 0.2482): sittings that happen to agree are weak evidence that the next
/// one will, while sittings that differ have shown an effect the check must not dilute. Measured
/// on the CPU corpora's new-session splits (docs/gate.md, "One host, several sittings"): with one
/// comparison's weight a row worse by δ passed 6.6 % of llama.cpp's calibrated 5 × 3 checks; with
/// four, 4.2 %, for at most 2.3 points of passes and 2 of power on every corpus.
pub const SESSION_PRIOR_DF_BELOW: f64 = 4.0;

/// The between-session term of a row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SessionTerm {
    /// λ: the between-session variance as a multiple of the launch variance.
    pub ratio: f64,
    /// Whether λ was measured (launches of one engine over ≥ 2 sessions) or assumed
    /// ([`SESSION_RATIO_PRIOR`]).
    pub measured: bool,
    /// Σₛ (baseline share − candidate share)² ([`session_factor`]): the se² gains
    /// λ · sd² · factor.
    pub factor: f64,
    /// The degrees of freedom behind a measured λ: its session comparisons plus the prior's
    /// ([`SESSION_PRIOR_DF`] or [`SESSION_PRIOR_DF_BELOW`]); `None` when λ is assumed (a
    /// constant, no sampling error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// The machine term, when the settings ask for one and both sides timed the loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<loops::MachineTerm>,
    /// Whether nothing watched the machine (a side without calibration loop times, or the
    /// settings' `machine_slope` 0): then an assumed λ is the settings' `unwatched_session_ratio`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unwatched: bool,
}

/// The noise priors of one check, per metric class: learnt from the rows in front of the gate
/// ([`super::moderate`]), or a `noise_pct` the settings name. Also the between-session ratio,
/// per metric.
///
/// Why per class and not per metric: a one-model suite has a handful of rows per metric, too
/// few for their spread to show how much the rows differ; pooling a class's metrics (the medians
/// and means of TTFT, TPOT, ITL and E2E latency together, say) gives the estimate of d₀ rows
/// enough to see it. Measured on the GPU corpus's replay (docs/gate.md, "Method"): per metric, false
/// alarms reached 2.5 % at 3 × 1; per class, 0.5 %.
#[derive(Debug, Clone, Default)]
pub struct Priors {
    learnt: BTreeMap<MetricClass, Prior>,
    /// Per metric: (Σ between-session variance × df, Σ within-session variance × df, the most
    /// between-session df of one row: the session comparisons behind it).
    sessions: BTreeMap<String, (f64, f64, f64)>,
}

impl Priors {
    /// Learn from the rows: per metric, each row's (sum of squares, df) of its launches, and
    /// its sides' session analyses.
    pub fn learn<'a>(
        rows: impl IntoIterator<Item = (&'a str, (f64, f64), Vec<SessionAnova>)>,
    ) -> Priors {
        let mut vars: BTreeMap<MetricClass, Vec<(f64, f64)>> = BTreeMap::new();
        let mut sessions: BTreeMap<String, (f64, f64, f64)> = BTreeMap::new();
        for (metric, (ss, nu), anovas) in rows {
            let e = vars.entry(MetricClass::of(metric)).or_default();
            if nu > 0.0 {
                e.push((ss / nu, nu));
            }
            for a in anovas {
                let s = sessions.entry(metric.to_string()).or_default();
                s.0 += a.between_var() * a.df_between;
                s.1 += a.ms_within * a.df_between;
                s.2 = s.2.max(a.df_between);
            }
        }
        let learnt = vars
            .into_iter()
            .filter_map(|(m, v)| moderate::fit(&v).map(|p| (m, p)))
            .collect();
        Priors { learnt, sessions }
    }

    /// The prior of `metric`'s rows as (sd of a launch's log value, degrees of freedom): the
    /// settings' `noise_pct` (worth `prior_df`, default [`DEFAULT_PRIOR_DF`]) when given, else
    /// the learnt one of its class (worth [`Prior::weight`], or `prior_df` when set). `None`:
    /// nothing to learn from.
    pub fn prior(&self, metric: &str, rule: &MetricRule, cfg: &GateConfig) -> Option<(f64, f64)> {
        if let Some(p) = rule.noise_pct {
            return Some((p / 100.0, cfg.prior_df().unwrap_or(DEFAULT_PRIOR_DF)));
        }
        let p = self.learnt.get(&MetricClass::of(metric))?;
        Some((p.var.sqrt(), cfg.prior_df().unwrap_or(p.weight())))
    }

    /// λ for `metric`: measured from its rows' sessions (else from every metric's), combined
    /// with the assumed λ `prior` (the settings' [`GateConfig::assumed_session_ratio`]) by their
    /// degrees of freedom (the session comparisons behind the measurement: 1 for two sessions),
    /// the prior worth [`SESSION_PRIOR_DF`] against a λ above it and [`SESSION_PRIOR_DF_BELOW`]
    /// against one below; the prior alone, with `measured` false, when no side spans two
    /// sessions.
    pub fn session_ratio(&self, metric: &str, prior: f64) -> (f64, bool) {
        let (ratio, df) = self.session_ratio_df(metric, prior);
        (ratio, df.is_some())
    }

    /// [`Self::session_ratio`] with the degrees of freedom behind a measured λ (its session
    /// comparisons plus the prior's), `None` when λ is assumed.
    pub fn session_ratio_df(&self, metric: &str, prior: f64) -> (f64, Option<f64>) {
        let measured = |(b, w, df): (f64, f64, f64)| (w > 0.0).then(|| (b / w, df));
        let all = self.sessions.values().fold((0.0, 0.0, 0.0f64), |a, s| {
            (a.0 + s.0, a.1 + s.1, a.2.max(s.2))
        });
        let got = self
            .sessions
            .get(metric)
            .copied()
            .and_then(measured)
            .or_else(|| measured(all));
        match got {
            Some((r, df)) => {
                let d0 = if r < prior {
                    SESSION_PRIOR_DF_BELOW
                } else {
                    SESSION_PRIOR_DF
                };
                ((d0 * prior + df * r) / (d0 + df), Some(d0 + df))
            }
            None => (prior, None),
        }
    }

    /// The session term of a stored comparison of `b` with `c` for `metric`, λ assumed as the
    /// settings say where nothing measures it ([`GateConfig::assumed_session_ratio`]: `watched`,
    /// whether the machine term can run).
    pub fn session_term(
        &self,
        metric: &str,
        (b, c): (&Launches, &Launches),
        cfg: &GateConfig,
        watched: bool,
    ) -> SessionTerm {
        let (ratio, df) = self.session_ratio_df(metric, cfg.assumed_session_ratio(watched));
        SessionTerm {
            ratio,
            measured: df.is_some(),
            factor: session_factor(b, c),
            df,
            machine: None,
            unwatched: !watched,
        }
    }
}

/// Where a row's noise came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// The row's own repeated launches (both sides), shrunk toward the prior.
    Launches,
    /// The row's own repeated runs, but without launch ids: runs stand in for launches, which
    /// understates the noise if they shared a launch.
    Runs,
    /// No repeated launches on either side: the prior alone, learnt from the check's other
    /// rows of the metric (or the settings' `noise_pct`).
    Prior,
    /// `perfgate ab`: the spread of the candidate − base differences of the row's own pairs of
    /// launches, shrunk toward the prior (`sd_pct` is then the sd of one pair's difference).
    Pairs,
}

/// The noise a row was judged with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// Standard deviation of one launch's log value, in percent (≈ relative sd).
    pub sd_pct: f64,
    /// Degrees of freedom behind it (prior + data).
    pub df: f64,
    /// Degrees of freedom that came from the row's own launches.
    pub own_df: f64,
    pub source: NoiseSource,
    /// Launches flagged as outliers (kept in the mean and the spread).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outliers: usize,
    /// The between-session term of a stored comparison (absent in paired tests, where each
    /// pair's launches share their session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionTerm>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Noise {
    /// The sd on the log scale.
    pub fn sd(&self) -> f64 {
        self.sd_pct / 100.0
    }

    /// Precision, 1/sd²: the row's weight in an engine-wide test.
    pub fn weight(&self) -> f64 {
        1.0 / (self.sd() * self.sd()).max(1e-12)
    }

    /// Words for a report row, e.g. `noise 4.1 % (own 7 launches, 11 df)` or
    /// `noise 8 % (prior: no repeated launches)`.
    pub fn describe(&self) -> String {
        let what = match self.source {
            NoiseSource::Launches => format!("own launches, {:.0} df", self.df),
            NoiseSource::Runs => format!("own runs without launch ids, {:.0} df", self.df),
            NoiseSource::Prior => format!(
                "no repeated launches: the check's other rows, {:.0} df",
                self.df
            ),
            NoiseSource::Pairs => format!("own pairs, {:.0} df", self.df),
        };
        let out = if self.outliers > 0 {
            format!("; {} launch(es) far from the rest, kept", self.outliers)
        } else {
            String::new()
        };
        let session = match self.session {
            Some(t) if t.factor > 0.0 && t.measured => {
                format!("; sessions differ by {:.1} %", self.sd_pct * t.ratio.sqrt())
            }
            Some(t) if t.factor > 0.0 => {
                let size = if (t.ratio - 1.0).abs() < 1e-9 {
                    "as large as a launch's noise".to_string()
                } else {
                    format!("{:.1} × a launch's noise", t.ratio.sqrt())
                };
                let why = match t.unwatched {
                    true => " (no calibration loop watched the machine)",
                    false => "",
                };
                format!("; session offset not measured, assumed {size}{why}")
            }
            _ => String::new(),
        };
        let machine = match self.session.and_then(|t| t.machine).filter(|m| m.var > 0.0) {
            Some(m) => format!(
                "; {} {:+.1} %, machine term {:.1} %",
                m.probe.label(),
                m.loop_shift_pct,
                100.0 * m.var.sqrt()
            ),
            None => String::new(),
        };
        format!("noise {:.1} % ({what}{out}{session}{machine})", self.sd_pct)
    }
}

/// The noise of a row from the launches of its sides, shrunk toward `prior` (sd of the log
/// value, degrees of freedom). `None` when neither data nor prior give any.
pub fn estimate(sides: &[&Launches], prior: Option<(f64, f64)>) -> Option<Noise> {
    let (mut ss, mut nu, mut outliers) = (0.0, 0.0, 0);
    for s in sides {
        let (a, b, o) = s.spread();
        ss += a;
        nu += b;
        outliers += o;
    }
    let (prior_sd, prior_df) = prior.unwrap_or((0.0, 0.0));
    let (var, df) = stats::shrunk_variance(ss, nu, prior_sd, prior_df)?;
    let source = if nu == 0.0 {
        NoiseSource::Prior
    } else if sides.iter().all(|s| s.has_ids || s.n() < 2) {
        NoiseSource::Launches
    } else {
        NoiseSource::Runs
    };
    Some(Noise {
        sd_pct: var.sqrt() * 100.0,
        df,
        own_df: nu,
        source,
        outliers,
        session: None,
    })
}

#[cfg(test)]
mod tests;
