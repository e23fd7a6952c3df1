//! From records to a [`Report`]: match baseline and current runs by model and scenario id,
//! group them by engine launch, compare every listed metric per row (launch values on the log
//! scale, the row's own noise from [`super::noise`]), add one engine-wide test per metric and
//! model, test "worse than the tolerance" with weighted Holm across the gated tests at this look's share of
//! α, pass what is shown within the tolerance, apply the success-rate rule, and derive the top
//! verdict. Deterministic: the same inputs give the same rows in the same order.

use std::collections::BTreeMap;

use super::config::GateConfig;
use super::{Report, Row, Side, Verdict};
use crate::record::ScenarioResult;

mod decide;
mod row;
mod stored;
mod summary;

pub use decide::Test;
pub(super) use decide::{decide, Tested};
pub(super) use row::{
    blank, fixed, scenario_row, start_row, unmeasured_row, unusable, Grouped, Key, Start,
};
pub(super) use stored::all_models_row;
use stored::{engine_wide_row, learn_priors, metric_row};
pub use summary::{compared, count, duplicate, method_sentence, nothing_compared, top_verdict};
pub(super) use summary::{fill_side, fmt_prob, prior_words};

/// A scenario that produced no measurement because the engine or infrastructure failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub model: String,
    /// The scenario id.
    pub scenario: String,
    /// What went wrong, e.g. the engine's exit status and the tail of its log.
    pub message: String,
}

/// The metric name used for a whole-scenario `error` row.
pub const SCENARIO_ROW: &str = "*";

pub use super::noise::ENGINE_WIDE;

/// The model name of the engine-wide test over every model.
pub const ALL_MODELS: &str = "(all models)";

/// Compare `current` records with `baseline` records under `cfg`.
pub fn evaluate(
    baseline: &[ScenarioResult],
    current: &[ScenarioResult],
    errors: &[ScenarioError],
    cfg: &GateConfig,
    kind: &str,
    mut base_side: Side,
    mut cur_side: Side,
) -> Report {
    let g = Grouped::new(baseline, current, errors);
    let metrics = cfg.metric_list();
    let empty = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut tested: Vec<Tested> = Vec::new();
    let mut push = |rows: &mut Vec<Row>, row: Row, test: Option<Test>| {
        if let Some(t) = test {
            tested.push(Tested::new(rows.len(), &row, t));
        }
        rows.push(row);
    };
    let priors = learn_priors(&g, errors, &metrics);
    // Scenarios of each model that both sides measured, for the engine-wide tests.
    let mut compared: BTreeMap<&str, Vec<&Key>> = BTreeMap::new();
    for key in &g.order {
        let (model, scenario) = key;
        let b = g.base.get(key).unwrap_or(&empty);
        let c = g.cur.get(key).unwrap_or(&empty);
        if let Some(e) = errors
            .iter()
            .find(|e| &e.model == model && &e.scenario == scenario)
        {
            let msg = e.message.clone();
            rows.push(unmeasured_row(
                (model, scenario),
                cfg,
                Verdict::Error,
                msg,
                [b.len(), 0],
            ));
            continue;
        }
        if b.is_empty() || c.is_empty() {
            let why = if b.is_empty() {
                "scenario not in the baseline"
            } else {
                "scenario not in the results"
            };
            rows.push(unmeasured_row(
                (model, scenario),
                cfg,
                Verdict::Missing,
                why.into(),
                [b.len(), c.len()],
            ));
            continue;
        }
        compared.entry(model.as_str()).or_default().push(key);
        for metric in &metrics {
            if let Some((row, test)) = metric_row(key, metric, b, c, &priors, cfg) {
                push(&mut rows, row, test);
            }
        }
    }
    let mut per_metric: BTreeMap<String, Vec<(Row, Test)>> = BTreeMap::new();
    for (model, keys) in &compared {
        let scen: Vec<(&[&ScenarioResult], &[&ScenarioResult])> = keys
            .iter()
            .map(|k| (g.base[*k].as_slice(), g.cur[*k].as_slice()))
            .collect();
        for metric in cfg.engine_wide_list() {
            if let Some((row, test)) = engine_wide_row(model, &metric, &scen, &priors, cfg) {
                per_metric
                    .entry(metric.clone())
                    .or_default()
                    .push((row.clone(), test));
                push(&mut rows, row, Some(test));
            }
        }
    }
    for metric in cfg.engine_wide_list() {
        if let Some((row, test)) = per_metric.get(&metric).and_then(|m| all_models_row(m)) {
            push(&mut rows, row, Some(test));
        }
    }

    decide(&mut rows, &tested, cfg);
    let counts = count(&rows);
    let verdict = top_verdict(&rows);
    fill_side(&mut base_side, baseline);
    fill_side(&mut cur_side, current);
    let n_gated = rows.iter().filter(|r| r.gated).count();
    Report {
        kind: kind.into(),
        verdict,
        counts,
        rows,
        baseline: base_side,
        current: cur_side,
        method: method_sentence(cfg, n_gated),
        perfgate_version: env!("CARGO_PKG_VERSION").into(),
        ab: None,
        settings: Some(cfg.clone()),
    }
}

#[cfg(test)]
mod tests;
