//! The noise of a baseline split into its levels (between sessions, between launches of a
//! session, within a launch) for `perfgate baseline noise`, engine-wide series included.

use serde::Serialize;

use super::{
    estimate, pooled, pooled_prior_sd, scenario_corr, stats, GateConfig, Launches, MetricRule,
    NoiseSource, Priors, ScenarioResult, ENGINE_WIDE,
};

/// The levels of one row's noise, for `perfgate baseline noise`: between sessions, between
/// launches of a session, within a launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwoLevel {
    pub launches: usize,
    pub runs: usize,
    /// Sessions the launches were recorded in.
    pub sessions: usize,
    /// sd of session offsets (%), and its degrees of freedom; `None` with one session or no
    /// session with ≥ 2 launches.
    pub session_sd_pct: Option<f64>,
    pub session_df: f64,
    /// sd of launch values around their session's mean (%), and its degrees of freedom; `None`
    /// with fewer than 2 launches in any session.
    pub between_sd_pct: Option<f64>,
    pub between_df: f64,
    /// sd of runs around their launch's mean (%), and its df; `None` without repeated runs.
    pub within_sd_pct: Option<f64>,
    pub within_df: f64,
    /// The sd the gate would use for one launch, moderated toward the learnt prior (%), and
    /// its df.
    pub gate_sd_pct: f64,
    pub gate_df: f64,
    pub source: NoiseSource,
    pub outliers: usize,
}

/// The levels of noise of one row's history.
pub fn two_level(l: &Launches, prior: Option<(f64, f64)>) -> Option<TwoLevel> {
    let (ss, df, _) = l.spread();
    let (wss, wdf) = l.within();
    let gate = estimate(&[l], prior)?;
    let anova = l.session_anova();
    Some(TwoLevel {
        launches: l.n(),
        runs: l.n_runs(),
        sessions: l.by_session().len(),
        session_sd_pct: anova.map(|a| a.between_var().sqrt() * 100.0),
        session_df: anova.map_or(0.0, |a| a.df_between),
        between_sd_pct: (df > 0.0).then(|| (ss / df).sqrt() * 100.0),
        between_df: df,
        within_sd_pct: (wdf > 0.0).then(|| (wss / wdf).sqrt() * 100.0),
        within_df: wdf,
        gate_sd_pct: gate.sd_pct,
        gate_df: gate.df,
        source: gate.source,
        outliers: gate.outliers,
    })
}

/// One row of `perfgate baseline noise`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoiseRow {
    pub model: String,
    pub scenario: String,
    pub metric: String,
    pub gated: bool,
    #[serde(flatten)]
    pub levels: TwoLevel,
    /// The row's tolerance δ in percent.
    pub tolerance_pct: f64,
    /// Candidate launches of one new session that an unchanged engine would likely need to
    /// PASS against this baseline (`None`: the baseline needs more launches or sessions first,
    /// or more than 50).
    pub launches_to_pass: Option<u32>,
    /// The variance a new session's offset adds to a stored comparison of this row
    /// ([`new_session_var`]), on the log scale; not printed.
    #[serde(skip)]
    pub session_var: f64,
}

/// The part of a stored comparison's se² that a candidate recorded in one new session cannot
/// shrink: λ · `var` · (Σ baseline session shares² + 1), `var` the variance of one launch.
pub fn new_session_var(l: &Launches, ratio: f64, var: f64) -> f64 {
    let shares: f64 = l
        .by_session()
        .iter()
        .map(|(_, idx)| (idx.len() as f64 / l.n() as f64).powi(2))
        .sum();
    ratio * var * (shares + 1.0)
}

/// Candidate launches (one new session) an unchanged engine would likely need to pass a row
/// of this noise against a baseline of `l`'s launches, and the new session's variance.
fn to_pass(
    levels: &TwoLevel,
    rule: &MetricRule,
    tolerance_pct: f64,
    l: &Launches,
    priors: &Priors,
    metric: &str,
    cfg: &GateConfig,
) -> (Option<u32>, f64) {
    let lim = stats::limits(rule.direction, tolerance_pct).0.abs();
    // The candidate's launches all come from one new session, recorded live (with loop
    // times): the machine is watched when the baseline's launches timed the loop too.
    let watched = cfg.machine_slope() > 0.0 && super::loops::watched(l);
    let (ratio, _) = priors.session_ratio(metric, cfg.assumed_session_ratio(watched));
    let sd = levels.gate_sd_pct / 100.0;
    let fixed_var = new_session_var(l, ratio, sd * sd);
    let design = stats::Design {
        worse: 0.0,
        lim,
        sd,
        df: levels.gate_df,
        n_base: l.n(),
        n_now: 1,
        fixed_var,
    };
    let n = stats::launches_needed(&design, cfg.equivalence_alpha(), 50).ok();
    (n, fixed_var)
}

/// An engine-wide series, its rows' weights, and the rows with their sd.
type EngineWideSeries<'a> = (Launches, Vec<f64>, Vec<(&'a Launches, f64)>);

/// The engine-wide series of one model for `metric` on one side: the rows' launches with their
/// weights (1/sd² of each row's noise), pooled launch by launch. Also the rows with their sd,
/// for the scenario correlation. `None` with fewer than 2 scenarios.
fn engine_wide_series<'a>(
    rows: &'a [Launches],
    priors: &Priors,
    metric: &str,
    cfg: &GateConfig,
) -> Option<EngineWideSeries<'a>> {
    let prior = priors.prior(metric, &cfg.rule(metric), cfg);
    let mut kept: Vec<(&Launches, f64)> = Vec::new();
    for l in rows {
        if let Some(n) = estimate(&[l], prior) {
            kept.push((l, n.weight()));
        }
    }
    if kept.len() < 2 {
        return None;
    }
    let weighted: Vec<(&Launches, f64, f64)> =
        kept.iter().map(|(l, w)| (*l, *w, l.mean())).collect();
    let series = pooled(&weighted);
    let w: Vec<f64> = kept.iter().map(|r| r.1).collect();
    let with_sd = kept.iter().map(|(l, w)| (*l, 1.0 / w.sqrt())).collect();
    Some((series, w, with_sd))
}

/// The prior of an engine-wide series from its rows' weights: the sd their weighted mean has
/// when the scenarios of a launch are correlated as the data show (ρ = 1 when they cannot
/// tell), worth the metric's prior degrees of freedom.
pub fn engine_wide_prior(
    weights: &[f64],
    rho: Option<f64>,
    row_prior: Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let (_, df) = row_prior?;
    Some((pooled_prior_sd(weights, rho.unwrap_or(1.0)), df))
}

/// The engine-wide rows of one model: per engine-wide metric, the noise of each launch's
/// precision-weighted mean over the model's scenarios (weights 1/sd² of each row's gate noise,
/// launches that ran every scenario), as the engine-wide test sees it. Needs ≥ 2 scenarios.
fn engine_wide_rows(
    model: &str,
    recs: &[Vec<&ScenarioResult>],
    priors: &Priors,
    cfg: &GateConfig,
) -> Vec<NoiseRow> {
    let mut out = Vec::new();
    for metric in cfg.engine_wide_list() {
        let rule = cfg.rule(&metric);
        let rows: Vec<Launches> = recs
            .iter()
            .filter_map(|r| Launches::of(r, &metric).ok())
            .collect();
        let Some((series, w, with_sd)) = engine_wide_series(&rows, priors, &metric, cfg) else {
            continue;
        };
        if series.n() == 0 {
            continue;
        }
        let rho = scenario_corr(&[with_sd]);
        let prior = engine_wide_prior(&w, rho, priors.prior(&metric, &rule, cfg));
        let Some(mut levels) = two_level(&series, prior) else {
            continue;
        };
        // A launch's runs are the scenarios' runs: count them, not the series' one per launch.
        levels.runs = rows.iter().map(|r| r.n_runs()).max().unwrap_or(0);
        let (launches_to_pass, session_var) = to_pass(
            &levels,
            &rule,
            rule.engine_tolerance_pct,
            &series,
            priors,
            &metric,
            cfg,
        );
        out.push(NoiseRow {
            model: model.to_string(),
            scenario: ENGINE_WIDE.to_string(),
            metric,
            gated: true,
            levels,
            tolerance_pct: rule.engine_tolerance_pct,
            launches_to_pass,
            session_var,
        });
    }
    out
}

/// The noise of every gated and shown metric of every row of a baseline's records (moderated
/// toward what the baseline's other rows of the metric show), then each model's engine-wide
/// rows.
pub fn table(records: &[ScenarioResult], cfg: &GateConfig) -> Vec<NoiseRow> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in records {
        let k = (r.model.clone(), r.scenario_id());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let metrics: Vec<String> = cfg
        .metric_list()
        .into_iter()
        .filter(|m| m != "success_rate")
        .collect();
    let mut by_model: Vec<(String, Vec<Vec<&ScenarioResult>>)> = Vec::new();
    let mut rows: Vec<(String, String, String, Launches)> = Vec::new();
    for (model, scenario) in keys {
        let recs: Vec<&ScenarioResult> = records
            .iter()
            .filter(|r| r.model == model && r.scenario_id() == scenario)
            .collect();
        for metric in &metrics {
            if let Ok(l) = Launches::of(&recs, metric) {
                rows.push((model.clone(), scenario.clone(), metric.clone(), l));
            }
        }
        match by_model.iter_mut().find(|m| m.0 == model) {
            Some(m) => m.1.push(recs),
            None => by_model.push((model, vec![recs])),
        }
    }
    let priors = Priors::learn(rows.iter().map(|(_, _, metric, l)| {
        let (ss, df, _) = l.spread();
        (
            metric.as_str(),
            (ss, df),
            l.session_anova().into_iter().collect(),
        )
    }));
    let mut out = Vec::new();
    for (model, scenario, metric, l) in rows {
        let rule = cfg.rule(&metric);
        let Some(levels) = two_level(&l, priors.prior(&metric, &rule, cfg)) else {
            continue;
        };
        let (launches_to_pass, session_var) = to_pass(
            &levels,
            &rule,
            rule.tolerance_pct,
            &l,
            &priors,
            &metric,
            cfg,
        );
        out.push(NoiseRow {
            model,
            scenario,
            metric,
            gated: rule.gated,
            levels,
            tolerance_pct: rule.tolerance_pct,
            launches_to_pass,
            session_var,
        });
    }
    for (model, scenarios) in &by_model {
        out.extend(engine_wide_rows(model, scenarios, &priors, cfg));
    }
    out
}
