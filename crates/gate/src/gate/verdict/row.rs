//! The rows every comparison starts from: records grouped by model and scenario, blank and
//! unmeasured rows, the success-rate rule, and the start a compared metric row shares between
//! the stored check and `perfgate ab`.

use std::collections::BTreeMap;

use super::{Metric, ScenarioError, SCENARIO_ROW};
use crate::gate::config::MetricRule;
use crate::gate::{Row, Verdict};
use crate::record::{Direction, ScenarioResult};

pub(crate) type Key = (String, String);

/// Records grouped by (model, scenario id), keys in first-seen order.
pub(crate) fn group<'a>(
    recs: &'a [ScenarioResult],
    order: &mut Vec<Key>,
    map: &mut BTreeMap<Key, Vec<&'a ScenarioResult>>,
) {
    // Keys already in `order` (it may hold keys of an earlier call whose map is another).
    let mut listed: std::collections::HashSet<Key> = order.iter().cloned().collect();
    for r in recs {
        let key = (r.model.clone(), r.scenario_id());
        if listed.insert(key.clone()) {
            order.push(key.clone());
        }
        map.entry(key).or_default().push(r);
    }
}

/// A row of `metric` under its `rule`, nothing measured yet.
pub(crate) fn blank(model: &str, scenario: &str, metric: &str, rule: &MetricRule) -> Row {
    Row {
        model: model.into(),
        scenario: scenario.into(),
        metric: metric.into(),
        gated: rule.gated,
        direction: rule.direction,
        baseline: None,
        current: None,
        change_pct: None,
        interval: None,
        tolerance_pct: Some(rule.tolerance_pct),
        p_value: None,
        n_baseline: 0,
        n_current: 0,
        launches: None,
        noise: None,
        launches_needed: None,
        verdict: Verdict::Inconclusive,
        note: None,
        test: None,
    }
}

/// A row without a metric: the whole scenario errored or is missing on one side.
pub(crate) fn scenario_row(model: &str, scenario: &str, note: String) -> Row {
    let rule = MetricRule {
        gated: true,
        direction: Direction::of(SCENARIO_ROW),
        tolerance_pct: 0.0,
        engine_tolerance_pct: 0.0,
        noise_pct: None,
    };
    let mut row = blank(model, scenario, SCENARIO_ROW, &rule);
    row.tolerance_pct = None;
    row.note = Some(note);
    row
}

/// The one gated row of a scenario that could not be compared: `verdict` (error or missing), why,
/// and how many records each side had (`n`: baseline or base arm, then current or candidate).
pub(crate) fn unmeasured_row(
    (model, scenario): (&str, &str),
    verdict: Verdict,
    note: String,
    n: [usize; 2],
) -> Row {
    let mut row = scenario_row(model, scenario, note);
    (row.n_baseline, row.n_current, row.verdict) = (n[0], n[1], verdict);
    row
}

pub(crate) fn values(recs: &[&ScenarioResult], metric: &str) -> Vec<f64> {
    recs.iter().filter_map(|r| r.metric(metric)).collect()
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// `failed` above the baseline's, or fewer completions than asked for (and than the baseline
/// managed), is a regression by itself; otherwise the success rate passes.
pub(crate) fn success_rule(
    row: &mut Row,
    base: &[&ScenarioResult],
    cur: &[&ScenarioResult],
) -> Verdict {
    let rate =
        |rs: &[&ScenarioResult]| mean(&rs.iter().map(|r| r.success_rate()).collect::<Vec<_>>());
    row.baseline = rate(base);
    row.current = rate(cur);
    row.change_pct = match (row.baseline, row.current) {
        (Some(b), Some(c)) if b > 0.0 => Some((c / b - 1.0) * 100.0),
        _ => None,
    };
    row.tolerance_pct = None;
    let base_failed = base.iter().map(|r| r.failed).max().unwrap_or(0);
    let base_completed = base.iter().map(|r| r.completed).min().unwrap_or(0);
    for r in cur {
        if r.failed > base_failed {
            row.note = Some(format!(
                "{} failed requests (baseline {base_failed})",
                r.failed
            ));
            return Verdict::Regressed;
        }
        let wanted = r.params.num_prompts;
        if r.completed < wanted && r.completed < base_completed {
            row.note = Some(format!(
                "{} of {wanted} requests completed (baseline {base_completed})",
                r.completed
            ));
            return Verdict::Regressed;
        }
    }
    row.note = Some("rule: no more failures than the baseline".into());
    Verdict::Pass
}

/// Everything a check compares, grouped: (model, scenario) keys in report order (models
/// together, first-seen order) and each side's records per key.
pub(crate) struct Grouped<'a> {
    pub(crate) order: Vec<Key>,
    pub(crate) base: BTreeMap<Key, Vec<&'a ScenarioResult>>,
    pub(crate) cur: BTreeMap<Key, Vec<&'a ScenarioResult>>,
}

impl<'a> Grouped<'a> {
    pub(crate) fn new(
        baseline: &'a [ScenarioResult],
        current: &'a [ScenarioResult],
        errors: &[ScenarioError],
    ) -> Grouped<'a> {
        let mut order = Vec::new();
        let (mut base, mut cur) = (BTreeMap::new(), BTreeMap::new());
        group(baseline, &mut order, &mut base);
        group(current, &mut order, &mut cur);
        let mut listed: std::collections::HashSet<Key> = order.iter().cloned().collect();
        for e in errors {
            let key = (e.model.clone(), e.scenario.clone());
            if listed.insert(key.clone()) {
                order.push(key);
            }
        }
        // Each model's keys together, the models in first-seen order (a stable sort by the
        // model's rank keeps each model's keys in their own order).
        let mut rank: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for (m, _) in &order {
            let next = rank.len();
            rank.entry(m.clone()).or_insert(next);
        }
        order.sort_by_key(|(m, _)| rank[m]);
        Grouped { order, base, cur }
    }

    /// The keys both sides measured and no error touched, with each side's records: the rows
    /// a check learns its noise from.
    pub(crate) fn both<'s>(
        &'s self,
        errors: &'s [ScenarioError],
    ) -> impl Iterator<Item = (&'s [&'a ScenarioResult], &'s [&'a ScenarioResult])> + 's {
        self.order.iter().filter_map(move |key| {
            let touched = errors
                .iter()
                .any(|e| e.model == key.0 && e.scenario == key.1);
            match (touched, self.base.get(key), self.cur.get(key)) {
                (false, Some(b), Some(c)) => Some((b.as_slice(), c.as_slice())),
                _ => None,
            }
        })
    }
}

/// How a compared metric row starts, stored or paired.
pub(crate) enum Start {
    /// A test can be tried: the row with its counts, and both sides' values.
    Test(Row, [Vec<f64>; 2]),
    /// Decided without a test: the success rule, or a side without the metric (`missing`).
    Done(Row),
}

/// The start every compared metric row shares: `None` when neither side measured the metric
/// (nothing to show); the success rule; `missing` with `missing[0]` / `missing[1]` as the note
/// when the baseline (base arm) or the results (candidate arm) lack it.
pub(crate) fn start_row(
    key: &Key,
    metric: &Metric,
    [b, c]: [&[&ScenarioResult]; 2],
    missing: [&str; 2],
) -> Option<Start> {
    let (rule, metric) = (&metric.rule, metric.name.as_str());
    let mut row = blank(&key.0, &key.1, metric, rule);
    let (bv, cv) = (values(b, metric), values(c, metric));
    row.n_baseline = bv.len();
    row.n_current = cv.len();
    if bv.is_empty() && cv.is_empty() {
        return None;
    }
    if metric == "success_rate" {
        row.verdict = success_rule(&mut row, b, c);
        return Some(Start::Done(row));
    }
    for (side, why) in [&bv, &cv].into_iter().zip(missing) {
        if side.is_empty() {
            return Some(Start::Done(fixed(row, Verdict::Missing, why.into())));
        }
    }
    Some(Start::Test(row, [bv, cv]))
}

/// A row decided without a test: its verdict and why.
pub(crate) fn fixed(mut row: Row, verdict: Verdict, note: String) -> Row {
    row.verdict = verdict;
    row.note = Some(note);
    row
}

/// A metric whose values cannot be tested (`why`): regressed when a higher-is-better metric
/// dropped to zero on every candidate launch, inconclusive otherwise.
pub(crate) fn unusable(
    mut row: Row,
    rule: &MetricRule,
    [bv, cv]: [&[f64]; 2],
    why: impl std::fmt::Display,
) -> Row {
    let dropped = rule.direction == Direction::Higher
        && bv.iter().all(|v| *v > 0.0)
        && cv.iter().all(|v| *v == 0.0);
    if dropped {
        row.change_pct = Some(-100.0);
        return fixed(row, Verdict::Regressed, "dropped to zero".into());
    }
    fixed(row, Verdict::Inconclusive, why.to_string())
}
