//! From records to a [`Report`]: match baseline and current runs by model and scenario id,
//! group them by engine launch, compare every listed metric per row (launch values on the log
//! scale, the row's own noise from [`super::noise`]), add one engine-wide test per metric and
//! model, test "worse than the tolerance" with weighted Holm across the gated tests at this look's share of
//! α, pass what is shown within the tolerance, apply the success-rate rule, and derive the top
//! verdict. Deterministic: the same inputs give the same rows in the same order.
//!
//! Here [`evaluate`] and what a test covers ([`Scope`]); `row` starts rows (grouping, blank,
//! missing and error rows, the success rule), `stored` makes the stored check's tests (per row,
//! engine-wide, over all models), `decide` decides every test at once, `summary` counts and
//! words the report.

use std::collections::BTreeMap;

use super::config::{GateConfig, MetricRule};
use super::look::Look;
use super::noise::loops::LaunchLoops;
use super::noise::Priors;
use super::{Report, Row, Side, Verdict};
use crate::record::ScenarioResult;

mod confirm;
mod decide;
mod row;
mod stored;
mod summary;

pub use confirm::{confirm, confirm_held_out, UNCONFIRMED};
pub use decide::Test;
pub(super) use decide::{decide, Rows, Tested};
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

/// What a test covers. A row shows it in its model and scenario fields ([`ENGINE_WIDE`],
/// [`ALL_MODELS`]); the gate itself carries it typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One scenario of one model.
    Scenario,
    /// One model's scenarios pooled launch by launch (or pair by pair).
    EngineWide,
    /// Every model's engine-wide tests combined.
    AllModels,
}

impl Scope {
    /// The tolerance in percent of a test of this scope under a metric's `rule`.
    pub fn tolerance_pct(self, rule: &MetricRule) -> f64 {
        match self {
            Scope::Scenario => rule.tolerance_pct,
            Scope::EngineWide | Scope::AllModels => rule.engine_tolerance_pct,
        }
    }
}

impl Row {
    /// What the row's test covers, read back from the names it shows (a report read from its
    /// JSON, as `perfgate merge` and the re-run loop do).
    pub fn scope(&self) -> Scope {
        match (self.model.as_str(), self.scenario.as_str()) {
            (ALL_MODELS, ENGINE_WIDE) => Scope::AllModels,
            (_, ENGINE_WIDE) => Scope::EngineWide,
            _ => Scope::Scenario,
        }
    }
}

/// A metric and its rule, resolved from the settings once per check.
#[derive(Debug, Clone)]
pub(super) struct Metric {
    pub(super) name: String,
    pub(super) rule: MetricRule,
}

impl Metric {
    /// The rules of `names` under `cfg`.
    pub(super) fn resolve(cfg: &GateConfig, names: &[String]) -> Vec<Metric> {
        names
            .iter()
            .map(|n| Metric {
                name: n.clone(),
                rule: cfg.rule(n),
            })
            .collect()
    }
}

/// What a stored check judges: both sides' records, the scenarios that failed, the settings and
/// the look they are judged at, and how the report names itself and its sides.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    pub baseline: &'a [ScenarioResult],
    pub current: &'a [ScenarioResult],
    /// Scenarios of the current side that produced no measurement.
    pub errors: &'a [ScenarioError],
    pub cfg: &'a GateConfig,
    /// The look of a sequential check (`--rerun`); `None` for a single look.
    pub look: Option<Look>,
    /// Which kind of report, e.g. `check`.
    pub kind: &'a str,
    pub base_side: Side,
    pub cur_side: Side,
    /// Models whose regressions nothing can confirm (records already measured, with no launch
    /// to hold back: [`confirm_held_out`]). Their tests regress only when the row's own launch
    /// noise shows it too, as a pass must ([`Test::own_launches`]); empty for every other check.
    pub unconfirmable: &'a [String],
}

impl<'a> Inputs<'a> {
    /// A single look at `current` against `baseline` under `cfg`: no errors, a `check` report,
    /// sides named by their records only.
    pub fn new(
        baseline: &'a [ScenarioResult],
        current: &'a [ScenarioResult],
        cfg: &'a GateConfig,
    ) -> Inputs<'a> {
        Inputs {
            baseline,
            current,
            errors: &[],
            cfg,
            look: None,
            kind: "check",
            base_side: Side::default(),
            cur_side: Side::default(),
            unconfirmable: &[],
        }
    }
}

/// Compare the current records with the baseline's.
pub fn evaluate(input: Inputs<'_>) -> Report {
    let cfg = input.cfg;
    let g = Grouped::new(input.baseline, input.current, input.errors);
    let names = cfg.metric_list();
    let priors = learn_priors(&g, input.errors, &names);
    let loops = [
        LaunchLoops::of(input.baseline),
        LaunchLoops::of(input.current),
    ];
    let mut out = Rows::default();
    let metrics = Metric::resolve(cfg, &names);
    let compared = scenario_rows(
        &g,
        input.errors,
        (&metrics, cfg),
        (&priors, &loops),
        &mut out,
    );
    let wide = Metric::resolve(cfg, &cfg.engine_wide_list());
    let mut per_metric: Vec<Vec<(Row, Test)>> = vec![Vec::new(); wide.len()];
    for (model, keys) in &compared {
        let scen: Vec<(&[&ScenarioResult], &[&ScenarioResult])> = keys
            .iter()
            .map(|k| (g.base[*k].as_slice(), g.cur[*k].as_slice()))
            .collect();
        for (m, mine) in wide.iter().zip(&mut per_metric) {
            if let Some((row, test)) = engine_wide_row(model, m, &scen, (&priors, &loops), cfg) {
                mine.push((row.clone(), test));
                out.push(row, Some(test), Scope::EngineWide, &m.rule);
            }
        }
    }
    // The all-models test is guarded when any of its models is.
    let guarded = !input.unconfirmable.is_empty();
    for (m, mine) in wide.iter().zip(&per_metric) {
        if let Some((row, test)) = all_models_row(mine, guarded) {
            out.push(row, Some(test), Scope::AllModels, &m.rule);
        }
    }
    for t in &mut out.tested {
        t.regress_on_own = match t.scope {
            Scope::AllModels => guarded,
            _ => input.unconfirmable.contains(&out.rows[t.row].model),
        };
    }
    let levels = cfg.levels(input.look);
    decide(&mut out.rows, &out.tested, cfg, levels);
    let n_gated = out.rows.iter().filter(|r| r.gated).count();
    let method = method_sentence(cfg, levels, n_gated);
    let (baseline, current) = (input.baseline, input.current);
    report(input, out.rows, [baseline, current], method)
}

/// Every scenario's rows, in report order: a gated `error` or `missing` row for a scenario
/// that could not be compared, else one row per metric. Returns, per model, the scenarios both
/// sides measured (for the engine-wide tests).
fn scenario_rows<'g>(
    g: &'g Grouped<'_>,
    errors: &[ScenarioError],
    (metrics, cfg): (&[Metric], &GateConfig),
    (priors, loops): (&Priors, &[LaunchLoops; 2]),
    out: &mut Rows,
) -> BTreeMap<&'g str, Vec<&'g Key>> {
    let empty = Vec::new();
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
            let row = unmeasured_row((model, scenario), Verdict::Error, msg, [b.len(), 0]);
            out.shown(row);
            continue;
        }
        if b.is_empty() || c.is_empty() {
            let why = if b.is_empty() {
                "scenario not in the baseline"
            } else {
                "scenario not in the results"
            };
            let n = [b.len(), c.len()];
            out.shown(unmeasured_row(
                (model, scenario),
                Verdict::Missing,
                why.into(),
                n,
            ));
            continue;
        }
        compared.entry(model.as_str()).or_default().push(key);
        for m in metrics {
            if let Some((row, test)) = metric_row(key, m, [b, c], (priors, loops), cfg) {
                out.push(row, test, Scope::Scenario, &m.rule);
            }
        }
    }
    compared
}

/// The report of decided `rows`: counts, top verdict, the sides (filled from `records`, base
/// then current, where the input leaves them blank) and the method sentence.
pub(super) fn report(
    input: Inputs<'_>,
    rows: Vec<Row>,
    records: [&[ScenarioResult]; 2],
    method: String,
) -> Report {
    let (mut base_side, mut cur_side) = (input.base_side, input.cur_side);
    fill_side(&mut base_side, records[0]);
    fill_side(&mut cur_side, records[1]);
    Report {
        kind: input.kind.into(),
        verdict: top_verdict(&rows),
        counts: count(&rows),
        rows,
        baseline: base_side,
        current: cur_side,
        method,
        perfgate_version: env!("CARGO_PKG_VERSION").into(),
        ab: None,
        settings: Some(input.cfg.clone()),
        look: input.look,
    }
}

#[cfg(test)]
mod tests;
