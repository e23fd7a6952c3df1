//! `perfgate plan`: the design that reaches a verdict for the fewest engine-minutes. Per row, the
//! noise split into variance components (between sessions, between launches of a session,
//! between runs of a launch: method-of-moments estimates of a nested random-effects model on the
//! log scale, a negative one set to 0 and named), the cost of each level (seconds of start-up per
//! launch, seconds per run), and then, for a stored comparison (`check`) and for pairs (`ab`),
//! the launches and runs per launch that detect a change of δ at the test's level with the power
//! asked for, at the least cost (Kalibera and Jones, "Rigorous benchmarking in reasonable time",
//! ISMM 2013: repetitions per level from measured variances and costs). The power rule is the
//! gate's own ([`stats::detects`]).

use serde::{Deserialize, Serialize};

use super::noise::{Launches, NoiseRow, ENGINE_WIDE};
use super::stats;
use super::GateConfig;
use crate::record::ScenarioResult;

mod costs;
pub use costs::{costs_of, launch_seconds, Costs};

/// n × Var(median of n standard normal values), n = 1…10: how much noisier a launch's value
/// (the median of its runs) is than their mean would be. Computed with R 4.2 by numerical
/// integration of the order statistics' densities (`integrate`, rel.tol 1e-10; see
/// `tests.rs`); beyond 10 runs, the limit π/2.
pub const MEDIAN_EFFICIENCY: [f64; 10] = [
    1.0, 1.0, 1.346013, 1.192798, 1.434168, 1.288456, 1.473128, 1.345447, 1.494912, 1.383264,
];

/// The variance of a launch's value per unit of run variance when it is the median of `r`
/// runs: [`MEDIAN_EFFICIENCY`] / r.
pub fn run_share(r: u32) -> f64 {
    let r = r.max(1);
    let e = MEDIAN_EFFICIENCY
        .get(r as usize - 1)
        .copied()
        .unwrap_or(std::f64::consts::FRAC_PI_2);
    e / f64::from(r)
}

/// A row's noise as variance components of the log value, with their degrees of freedom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// Between sessions (`None`: one session, or no session with ≥ 2 launches).
    pub session_var: Option<f64>,
    pub session_df: f64,
    /// Between launches of a session, net of their runs' share.
    pub launch_var: Option<f64>,
    pub launch_df: f64,
    /// Between runs of a launch (`None`: one run per launch).
    pub run_var: Option<f64>,
    pub run_df: f64,
    /// The data's runs per launch (mean).
    pub runs_per_launch: f64,
    /// Components whose estimate came out negative and were set to 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clamped: Vec<String>,
}

impl Components {
    /// The components of one row's launches: runs around their launch's mean (within), launch
    /// values around their session's mean less the runs' share, and the one-way analysis of
    /// the launch values by session ([`Launches::session_anova`]). With balanced data these are
    /// the classical nested ANOVA estimates.
    pub fn of(l: &Launches) -> Components {
        let mut clamped = Vec::new();
        let (wss, wdf) = l.within();
        let run_var = (wdf > 0.0).then(|| wss / wdf);
        let (ss, df, _) = l.spread();
        let share = mean_run_share(l);
        let launch_var = (df > 0.0).then(|| {
            let v = ss / df - share * run_var.unwrap_or(0.0);
            if v < 0.0 {
                clamped.push("launch".to_string());
            }
            v.max(0.0)
        });
        let anova = l.session_anova();
        if anova.is_some_and(|a| a.ms_between < a.ms_within) {
            clamped.push("session".to_string());
        }
        Components {
            session_var: anova.map(|a| a.between_var()),
            session_df: anova.map_or(0.0, |a| a.df_between),
            launch_var,
            launch_df: df,
            run_var,
            run_df: wdf,
            runs_per_launch: l.n_runs() as f64 / l.n().max(1) as f64,
            clamped,
        }
    }
}

/// The mean over launches of [`run_share`] of their runs.
fn mean_run_share(l: &Launches) -> f64 {
    let n = l.runs.len().max(1) as f64;
    l.runs
        .iter()
        .map(|r| run_share(r.len() as u32))
        .sum::<f64>()
        / n
}

/// What to plan for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Question {
    /// The change to detect, in percent, the same way worse on every metric.
    pub delta_pct: f64,
    /// The check's family-wise level (each test gets its Holm weight of it).
    pub alpha: f64,
    /// The chance of detecting it.
    pub power: f64,
    /// Most runs per launch and most launches (pairs) to consider.
    pub max_runs: u32,
    pub max_launches: u32,
}

/// A design and what it costs and gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// Candidate launches (`check`) or pairs, i.e. launches of each arm (`ab`).
    pub launches: u32,
    pub runs_per_launch: u32,
    /// Engine-minutes of the candidate's launches (`check`) or of both arms (`ab`).
    pub minutes: f64,
    /// The power the gate's rule gives this design.
    pub power: f64,
}

/// One test of the check as the plan sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// The distance of the change from the test's limit (log scale): > 0 to be detectable.
    pub gap: f64,
    /// The test's one-sided level (α times its Holm weight).
    pub level: f64,
    /// The variance the gate gives one baseline launch, its df, and the df of its prior.
    pub var: f64,
    pub df: f64,
    pub prior_df: f64,
    /// The run variance (0 when not measured) and the baseline's mean [`run_share`].
    pub run_var: f64,
    pub base_share: f64,
    /// Baseline launches, and the variance a new session adds to a stored comparison.
    pub n_base: usize,
    pub session_var: f64,
}

impl Test {
    /// The variance of a launch's value with `r` runs: the launch part of the gate's variance
    /// plus the runs' share.
    pub fn var_at(&self, r: u32) -> f64 {
        (self.var - self.base_share * self.run_var).max(0.0) + run_share(r) * self.run_var
    }

    /// The power of a stored comparison with `n` candidate launches of `r` runs: se² =
    /// var/n_base + var(r)/n + the new session's variance, t with the df n launches give.
    pub fn check_power(&self, n: u32, r: u32) -> f64 {
        let (se, df) = self.check_se(n, r);
        stats::power_of(self.gap, se, self.level, df)
    }

    fn check_se(&self, n: u32, r: u32) -> (f64, f64) {
        let se2 =
            self.var / self.n_base.max(1) as f64 + self.var_at(r) / f64::from(n) + self.session_var;
        (se2.sqrt(), self.df + f64::from(n) - 1.0)
    }

    /// The level of the last of `k` looks (one per pair, as `ab` plans them).
    fn ab_level(&self, k: u32, df: f64) -> f64 {
        stats::look_alpha_df(self.level, k, k, df)
    }

    fn ab_se(&self, k: u32, r: u32) -> (f64, f64) {
        let se = (2.0 * self.var_at(r) / f64::from(k)).sqrt();
        (se, self.prior_df + f64::from(k) - 1.0)
    }

    /// The power of `k` pairs of launches of `r` runs each, judged at the last look.
    pub fn ab_power(&self, k: u32, r: u32) -> f64 {
        let (se, df) = self.ab_se(k, r);
        stats::power_of(self.gap, se, self.ab_level(k, df), df)
    }

    /// The fewest candidate launches of `r` runs that detect the change with the power whose
    /// quantile is `z`, up to `cap`.
    pub fn check_launches(&self, r: u32, z: f64, cap: u32) -> Option<u32> {
        (1..=cap).find(|&n| {
            let (se, df) = self.check_se(n, r);
            stats::detects(self.gap, se, self.level, df, z)
        })
    }

    /// The fewest pairs (≥ 2) of launches of `r` runs that detect the change, judged at the
    /// last of one look per pair, up to `cap`.
    pub fn ab_pairs(&self, r: u32, z: f64, cap: u32) -> Option<u32> {
        // The last look's level is at most the test's own: the pairs a single look at that
        // level needs are a lower bound, and only from there are the looks' levels computed
        // (each a numerical integration).
        let at = |k: u32, level: Option<f64>| {
            let (se, df) = self.ab_se(k, r);
            let level = level.unwrap_or_else(|| self.ab_level(k, df));
            stats::detects(self.gap, se, level, df, z)
        };
        let from = (2..=cap.max(2)).find(|&k| at(k, Some(self.level)))?;
        (from..=cap.max(2)).find(|&k| at(k, None))
    }
}

/// Which comparison a design is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Check,
    Ab,
}

/// The cheapest design of one test: over runs per launch 1…max_runs, the fewest launches (or
/// pairs) that detect the change, costed; ties go to fewer runs per launch.
pub fn cheapest(t: &Test, kind: Kind, q: &Question, costs: &Costs) -> Option<Choice> {
    if t.gap <= 0.0 {
        return None;
    }
    let z = stats::power_z(q.power);
    let mut best: Option<Choice> = None;
    // Without run variance, more runs per launch cost and buy nothing.
    let max_runs = if t.run_var > 0.0 {
        q.max_runs.max(1)
    } else {
        1
    };
    for r in 1..=max_runs {
        let found = match kind {
            Kind::Check => t.check_launches(r, z, q.max_launches),
            Kind::Ab => t.ab_pairs(r, z, q.max_launches),
        };
        let Some(n) = found else { continue };
        let c = choice(t, kind, n, r, costs);
        if best.is_none_or(|b| c.minutes < b.minutes - 1e-9) {
            best = Some(c);
        }
    }
    best
}

/// A design of `n` launches (pairs) of `r` runs, with its minutes and power.
pub fn choice(t: &Test, kind: Kind, n: u32, r: u32, costs: &Costs) -> Choice {
    let (arms, power) = match kind {
        Kind::Check => (1.0, t.check_power(n, r)),
        Kind::Ab => (2.0, t.ab_power(n, r)),
    };
    Choice {
        launches: n,
        runs_per_launch: r,
        minutes: arms * f64::from(n) * costs.launch_s(r) / 60.0,
        power,
    }
}

/// One row of the plan: its components and the cheapest designs of its test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowPlan {
    pub model: String,
    pub scenario: String,
    pub metric: String,
    pub gated: bool,
    pub tolerance_pct: f64,
    /// The sd the gate uses for one launch (%), and its df.
    pub gate_sd_pct: f64,
    pub gate_df: f64,
    #[serde(flatten)]
    pub components: Components,
    /// The test's one-sided level (α × its Holm weight); `None` for a shown row.
    pub level: Option<f64>,
    pub check: Option<Choice>,
    pub ab: Option<Choice>,
    /// Why a gated row has no design.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The suite's design: the cheapest of its tests' (a check fails when any test regresses), with
/// the test that carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pick {
    #[serde(flatten)]
    pub choice: Choice,
    /// `model / scenario / metric` of the test.
    pub by: String,
}

/// A design given by hand (today's), and the power of its strongest test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Given {
    #[serde(flatten)]
    pub choice: Choice,
    pub by: String,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub delta_pct: f64,
    pub alpha: f64,
    pub power: f64,
    /// Per model: its costs.
    pub costs: Vec<(String, Costs)>,
    pub rows: Vec<RowPlan>,
    pub check: Option<Pick>,
    pub ab: Option<Pick>,
    /// The designs to compare with (`--compare-launches`, `--compare-pairs`).
    pub given_check: Option<Given>,
    pub given_ab: Option<Given>,
}

/// Designs to compare the plan with: candidate launches and pairs, with runs per launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compare {
    pub launches: u32,
    pub pairs: u32,
    pub runs_per_launch: u32,
}

/// What [`plan`] needs beyond the records.
#[derive(Debug, Clone)]
pub struct PlanInputs<'a> {
    pub cfg: &'a GateConfig,
    pub question: Question,
    /// Per model: its costs.
    pub costs: Vec<(String, Costs)>,
    pub compare: Compare,
}

mod build;
pub use build::plan;

mod file;
pub use file::{PlanError, PlanFile, PlannedDesign};

#[cfg(test)]
mod tests;
