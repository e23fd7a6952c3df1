//! From records to a [`Report`]: match baseline and current runs by model and scenario id,
//! group them by engine launch, compare every listed metric per row (launch values on the log
//! scale, the row's own noise from [`super::noise`]), add one engine-wide test per metric and
//! model, test "worse than the tolerance" with weighted Holm across the gated tests at this look's share of
//! α, pass what is shown within the tolerance, apply the success-rate rule, and derive the top
//! verdict. Deterministic: the same inputs give the same rows in the same order.

use std::collections::BTreeMap;

use super::config::{percentile_supported, GateConfig, MetricRule};
use super::noise::{self, Launches, Priors};
use super::stats::{self, limits, orientation, NotDecidable, Shift, StatsError};
use super::{Counts, Report, Row, Side, TopVerdict, Verdict};
use crate::record::{Direction, ScenarioResult};

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

pub(super) type Key = (String, String);

/// Records grouped by (model, scenario id), keys in first-seen order.
pub(super) fn group<'a>(
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

/// A row's test, kept until the multiple-comparison step decides every tested row at once.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tested {
    /// Index of the row in the report.
    pub(super) row: usize,
    pub(super) shift: Shift,
    /// The tolerance as an oriented log distance: worse beyond `lim_worse` regresses, better
    /// beyond `lim_better` improves; a `pass` needs the bound of "worse" below `lim_worse`
    /// (an engine-wide test passes within its own, smaller tolerance).
    pub(super) lim_worse: f64,
    pub(super) lim_better: f64,
    /// Baseline launches (for the launches-needed estimate).
    pub(super) n_base: usize,
    /// Candidate launches (or pairs) so far.
    pub(super) n_now: usize,
    /// The part of se² that more candidate launches cannot shrink (the session term).
    pub(super) fixed_var: f64,
    /// A paired test (`perfgate ab`): what would decide it is counted in pairs.
    pub(super) paired: bool,
}

impl Tested {
    /// Row `index`'s test, at the row's tolerance.
    pub(super) fn new(index: usize, row: &Row, t: Test) -> Tested {
        let (lim_worse, lim_better) = limits(row.direction, row.tolerance_pct.unwrap_or(0.0));
        Tested {
            row: index,
            shift: t.shift,
            lim_worse,
            lim_better,
            n_base: t.n_base,
            n_now: t.n_now,
            fixed_var: t.fixed_var,
            paired: t.paired,
        }
    }
}

pub(super) fn blank(model: &str, scenario: &str, metric: &str, cfg: &GateConfig) -> Row {
    let rule = cfg.rule(metric);
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
pub(super) fn scenario_row(model: &str, scenario: &str, cfg: &GateConfig, note: String) -> Row {
    let mut row = blank(model, scenario, SCENARIO_ROW, cfg);
    row.gated = true;
    row.tolerance_pct = None;
    row.note = Some(note);
    row
}

/// The one gated row of a scenario that could not be compared: `verdict` (error or missing), why,
/// and how many records each side had (`n`: baseline or base arm, then current or candidate).
pub(super) fn unmeasured_row(
    (model, scenario): (&str, &str),
    cfg: &GateConfig,
    verdict: Verdict,
    note: String,
    n: [usize; 2],
) -> Row {
    let mut row = scenario_row(model, scenario, cfg, note);
    (row.n_baseline, row.n_current, row.verdict) = (n[0], n[1], verdict);
    row
}

pub(super) fn values(recs: &[&ScenarioResult], metric: &str) -> Vec<f64> {
    recs.iter().filter_map(|r| r.metric(metric)).collect()
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// `failed` above the baseline's, or fewer completions than asked for (and than the baseline
/// managed), is a regression by itself; otherwise the success rate passes.
pub(super) fn success_rule(
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
pub(super) struct Grouped<'a> {
    pub(super) order: Vec<Key>,
    pub(super) base: BTreeMap<Key, Vec<&'a ScenarioResult>>,
    pub(super) cur: BTreeMap<Key, Vec<&'a ScenarioResult>>,
}

impl<'a> Grouped<'a> {
    pub(super) fn new(
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
    pub(super) fn both<'s>(
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
pub(super) enum Start {
    /// A test can be tried: the row with its counts, and both sides' values.
    Test(Row, [Vec<f64>; 2]),
    /// Decided without a test: the success rule, or a side without the metric (`missing`).
    Done(Row),
}

/// The start every compared metric row shares: `None` when neither side measured the metric
/// (nothing to show); the success rule; `missing` with `missing[0]` / `missing[1]` as the note
/// when the baseline (base arm) or the results (candidate arm) lack it.
pub(super) fn start_row(
    key: &Key,
    metric: &str,
    b: &[&ScenarioResult],
    c: &[&ScenarioResult],
    cfg: &GateConfig,
    missing: [&str; 2],
) -> Option<Start> {
    let mut row = blank(&key.0, &key.1, metric, cfg);
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
pub(super) fn fixed(mut row: Row, verdict: Verdict, note: String) -> Row {
    row.verdict = verdict;
    row.note = Some(note);
    row
}

/// A metric whose values cannot be tested (`why`): regressed when a higher-is-better metric
/// dropped to zero on every candidate launch, inconclusive otherwise.
pub(super) fn unusable(
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

/// One metric of one scenario: the row, and its test when one can be made.
fn metric_row(
    key: &Key,
    metric: &str,
    b: &[&ScenarioResult],
    c: &[&ScenarioResult],
    priors: &Priors,
    cfg: &GateConfig,
) -> Option<(Row, Option<Test>)> {
    let missing = ["metric not in the baseline", "metric not in the results"];
    let (mut row, [bv, cv]) = match start_row(key, metric, b, c, cfg, missing)? {
        Start::Test(row, values) => (row, values),
        Start::Done(row) => return Some((row, None)),
    };
    let rule = cfg.rule(metric);
    let (bl, cl) = match (Launches::of(b, metric), Launches::of(c, metric)) {
        (Ok(bl), Ok(cl)) => (bl, cl),
        (Err(e), _) | (_, Err(e)) => return Some((unusable(row, &rule, [&bv, &cv], e), None)),
    };
    row.baseline = Some(bl.mean().exp());
    row.current = Some(cl.mean().exp());
    row.launches = Some([bl.n(), cl.n()]);
    row.change_pct = Some(stats::pct(cl.mean() - bl.mean()));
    let Some(noise) = noise::estimate(&[&bl, &cl], priors.prior(metric, cfg)) else {
        let why = StatsError::NoVariance.to_string();
        let mut row = fixed(row, Verdict::Inconclusive, why);
        row.launches_needed = Some(2);
        return Some((row, None));
    };
    let test = stored_test(&bl, &cl, noise, rule.direction, priors, metric);
    row.noise = Some(test.1);
    Some((row, Some(test.0)))
}

/// A stored comparison's test of two sides' launches: the oriented difference of their means,
/// its se² = sd² (1/n_b + 1/n_c) + λ sd² · (session factor), on the noise's df. Returns the
/// test and the noise with its session term.
fn stored_test(
    bl: &Launches,
    cl: &Launches,
    mut noise: noise::Noise,
    direction: Direction,
    priors: &Priors,
    metric: &str,
) -> (Test, noise::Noise) {
    let term = priors.session_term(metric, bl, cl);
    noise.session = Some(term);
    let var = noise.sd() * noise.sd();
    let fixed_var = term.ratio * var * term.factor;
    let launch_var = var * (1.0 / bl.n() as f64 + 1.0 / cl.n() as f64);
    // A measured λ carries its own sampling error (two sessions: one comparison): the se²'s df
    // by Welch–Satterthwaite over its launch part and its session part. An assumed λ is a
    // constant and adds none.
    let df = match term.df {
        Some(df_l) if fixed_var > 0.0 && noise.df > 0.0 => {
            let total = launch_var + fixed_var;
            total * total / (launch_var * launch_var / noise.df + fixed_var * fixed_var / df_l)
        }
        _ => noise.df,
    };
    let shift = Shift {
        worse: orientation(direction) * (cl.mean() - bl.mean()),
        se: (launch_var + fixed_var).sqrt(),
        df: df.min(noise.df),
    };
    let test = Test {
        shift,
        n_base: bl.n(),
        n_now: cl.n(),
        fixed_var,
        paired: false,
    };
    (test, noise)
}

/// A row's test before the multiple-comparison step.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Test {
    pub shift: Shift,
    /// Baseline launches (pairs, when paired), and the candidate's so far.
    pub n_base: usize,
    pub n_now: usize,
    /// The part of se² that more candidate launches cannot shrink (the session term).
    pub fixed_var: f64,
    /// A paired test (`perfgate ab`).
    #[serde(default)]
    pub paired: bool,
}

/// The engine-wide test of one metric over one model's scenarios: each launch's
/// precision-weighted mean log value over the scenarios (centred on the baseline), compared
/// between the sides like a row. Launches are matched across scenarios by their key, so a launch
/// effect shared by every scenario counts once, as it should. The series' prior is what the
/// rows' noise implies for the weighted mean at the scenario correlation the data show. Needs
/// ≥ 2 scenarios and a launch on each side that ran all of them.
fn engine_wide_row(
    model: &str,
    metric: &str,
    scenarios: &[(&[&ScenarioResult], &[&ScenarioResult])],
    priors: &Priors,
    cfg: &GateConfig,
) -> Option<(Row, Test)> {
    let rule = cfg.rule(metric);
    let prior = priors.prior(metric, cfg);
    let mut sides: Vec<(Launches, Launches, f64)> = Vec::new();
    for (b, c) in scenarios {
        // A "p99" of fewer than 100 requests is an extreme value: not pooled.
        if !(percentile_supported(metric, b) && percentile_supported(metric, c)) {
            continue;
        }
        let (Ok(bl), Ok(cl)) = (Launches::of(b, metric), Launches::of(c, metric)) else {
            continue;
        };
        let noise = noise::estimate(&[&bl, &cl], prior)?;
        sides.push((bl, cl, noise.weight()));
    }
    if sides.len() < 2 {
        return None;
    }
    // One side's launches that ran every scenario, as weighted means of (value − baseline mean).
    let pool = |pick: fn(&(Launches, Launches, f64)) -> &Launches| {
        let rows: Vec<(&Launches, f64, f64)> =
            sides.iter().map(|s| (pick(s), s.2, s.0.mean())).collect();
        noise::pooled(&rows)
    };
    let (bl, cl) = (pool(|s| &s.0), pool(|s| &s.1));
    if bl.n() == 0 || cl.n() == 0 {
        return None;
    }
    let w: Vec<f64> = sides.iter().map(|s| s.2).collect();
    let with_sd = |pick: fn(&(Launches, Launches, f64)) -> &Launches| {
        sides
            .iter()
            .map(|s| (pick(s), 1.0 / s.2.sqrt()))
            .collect::<Vec<_>>()
    };
    let rho = noise::scenario_corr(&[with_sd(|s| &s.0), with_sd(|s| &s.1)]);
    let noise = noise::estimate(&[&bl, &cl], noise::engine_wide_prior(&w, rho, prior))?;
    let (test, noise) = stored_test(&bl, &cl, noise, rule.direction, priors, metric);
    let mut row = blank(model, ENGINE_WIDE, metric, cfg);
    row.gated = true;
    row.tolerance_pct = Some(rule.engine_tolerance_pct);
    row.change_pct = Some(stats::pct(cl.mean() - bl.mean()));
    row.launches = Some([bl.n(), cl.n()]);
    row.n_baseline = scenarios.iter().map(|s| values(s.0, metric).len()).sum();
    row.n_current = scenarios.iter().map(|s| values(s.1, metric).len()).sum();
    row.noise = Some(noise);
    Some((row, test))
}

/// The model name of the engine-wide test over every model.
pub const ALL_MODELS: &str = "(all models)";

/// The engine-wide test over every model: the models' engine-wide changes combined with
/// inverse-variance weights. Models run on launches of their own, so their tests are
/// independent; the degrees of freedom follow Welch–Satterthwaite. Needs ≥ 2 models.
pub(super) fn all_models_row(per_model: &[(Row, Test)]) -> Option<(Row, Test)> {
    if per_model.len() < 2 || per_model.iter().any(|m| m.1.shift.se <= 0.0) {
        return None;
    }
    let w: Vec<f64> = per_model
        .iter()
        .map(|m| 1.0 / (m.1.shift.se * m.1.shift.se))
        .collect();
    let wsum: f64 = w.iter().sum();
    let worse = per_model
        .iter()
        .zip(&w)
        .map(|(m, w)| w * m.1.shift.worse)
        .sum::<f64>()
        / wsum;
    // The launch parts are independent between models: Σ wᵢ² (seᵢ² − fᵢ) / (Σw)², each term
    // vᵢ with its model's df (Welch–Satterthwaite). The session parts fᵢ are one offset that
    // every model of a session shares: (Σ wᵢ √fᵢ)² / (Σw)², added whole.
    let v: Vec<f64> = per_model
        .iter()
        .zip(&w)
        .map(|(m, w)| w * w * (m.1.shift.se.powi(2) - m.1.fixed_var) / (wsum * wsum))
        .collect();
    let shared = (per_model
        .iter()
        .zip(&w)
        .map(|(m, w)| w * m.1.fixed_var.sqrt())
        .sum::<f64>()
        / wsum)
        .powi(2);
    let vsum: f64 = v.iter().sum();
    let df = if vsum > 0.0 {
        vsum.powi(2)
            / v.iter()
                .zip(per_model)
                .map(|(v, m)| v * v / m.1.shift.df)
                .sum::<f64>()
    } else {
        1e9 // no launch variance: the normal reference (finite, so the report's JSON keeps it)
    };
    let shift = Shift {
        worse,
        se: (vsum + shared).sqrt(),
        df,
    };
    let first = &per_model[0].0;
    let mut row = first.clone();
    row.model = ALL_MODELS.into();
    row.change_pct = Some(stats::pct(worse * orientation(first.direction)));
    row.n_baseline = per_model.iter().map(|m| m.0.n_baseline).sum();
    row.n_current = per_model.iter().map(|m| m.0.n_current).sum();
    let launches = |i: usize| {
        per_model
            .iter()
            .map(|m| m.0.launches.map_or(0, |l| l[i]))
            .sum()
    };
    row.launches = Some([launches(0), launches(1)]);
    let n_base = per_model.iter().map(|m| m.1.n_base).sum();
    let n_now = per_model.iter().map(|m| m.1.n_now).sum();
    if let Some(n) = row.noise.as_mut() {
        // The sd of one launch's value is not defined across models: show the combined
        // standard error's equivalent for one launch a side.
        n.sd_pct = shift.se / (2.0f64).sqrt() * 100.0;
        n.df = df;
        n.own_df = per_model
            .iter()
            .map(|m| m.0.noise.map_or(0.0, |n| n.own_df))
            .sum();
        n.outliers = 0;
    }
    let test = Test {
        shift,
        n_base,
        n_now,
        fixed_var: shared,
        paired: false,
    };
    Some((row, test))
}

/// The noise priors of a stored check, learnt from every row that both sides measured: per
/// metric, each row's launch spread (both sides) and its sides' session analyses.
fn learn_priors(g: &Grouped<'_>, errors: &[ScenarioError], metrics: &[String]) -> Priors {
    let mut rows = Vec::new();
    for (b, c) in g.both(errors) {
        for metric in metrics.iter().filter(|m| *m != "success_rate") {
            let (Ok(bl), Ok(cl)) = (Launches::of(b, metric), Launches::of(c, metric)) else {
                continue;
            };
            let (sb, db, _) = bl.spread();
            let (sc, dc, _) = cl.spread();
            let anovas = [bl.session_anova(), cl.session_anova()]
                .into_iter()
                .flatten()
                .collect();
            rows.push((metric.as_str(), (sb + sc, db + dc), anovas));
        }
    }
    Priors::learn(rows)
}

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

/// The first record that appears twice in `recs` (same model, scenario, launch, run, date and
/// numbers): a results file passed twice, or records appended twice, would silently double the
/// runs and narrow every interval. Returns a message naming it.
pub fn duplicate(recs: &[ScenarioResult]) -> Option<String> {
    let key = |r: &ScenarioResult| {
        (
            r.model.clone(),
            r.scenario_id(),
            noise::launch_key(r),
            r.run_index,
            r.run_in_launch,
            r.date.clone(),
            r.duration.to_bits(),
            r.output_throughput.to_bits(),
        )
    };
    let mut seen = std::collections::BTreeSet::new();
    for r in recs {
        if !seen.insert(key(r)) {
            return Some(format!(
                "model `{}`, scenario `{}`, run {}{}: the same record appears twice (a file passed twice?)",
                r.model,
                r.scenario_id(),
                r.run_index,
                r.launch_id
                    .as_deref()
                    .map(|l| format!(" of launch `{l}`"))
                    .unwrap_or_default()
            ));
        }
    }
    None
}

/// Gated rows whose verdict compared numbers of both sides (tested or ruled). A check where
/// this is zero compared nothing: it must never pass.
pub fn compared(rows: &[Row]) -> usize {
    rows.iter()
        .filter(|r| {
            r.gated
                && r.n_baseline > 0
                && r.n_current > 0
                && matches!(
                    r.verdict,
                    Verdict::Pass | Verdict::Regressed | Verdict::Improved | Verdict::Inconclusive
                )
        })
        .count()
}

/// A check that compared nothing (no model or scenario in common, or no gated metric) must never
/// pass: the message naming both sides' models and the gated metrics, or `None` when something
/// was compared (or a row is an error).
pub fn nothing_compared(
    report: &Report,
    cfg: &GateConfig,
    baseline: &[ScenarioResult],
    current: &[ScenarioResult],
) -> Option<String> {
    if compared(&report.rows) > 0 || report.counts.error > 0 {
        return None;
    }
    let models = |recs: &[ScenarioResult]| {
        let mut m: Vec<&str> = recs.iter().map(|r| r.model.as_str()).collect();
        m.sort_unstable();
        m.dedup();
        if m.is_empty() {
            "none".to_string()
        } else {
            m.join(", ")
        }
    };
    Some(format!(
        "nothing was compared: no gated metric of any model and scenario is on both sides \
         (baseline models: {}; results models: {}; gated metrics: {})",
        models(baseline),
        models(current),
        cfg.metric_list()
            .iter()
            .filter(|m| cfg.rule(m).gated)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Launches a side beyond which "likely decides" is not worth saying.
pub(super) const NEEDED_CAP: u32 = 50;

/// Which of `tests` are the widest engine-wide tests: over all models when the family has
/// them, else over each model's scenarios.
fn widest(rows: &[Row], tests: &[&Tested]) -> Vec<bool> {
    let engine_wide = |t: &Tested| rows[t.row].scenario == ENGINE_WIDE;
    let all = |t: &Tested| engine_wide(t) && rows[t.row].model == ALL_MODELS;
    let has_all = tests.iter().any(|t| all(t));
    tests
        .iter()
        .map(|t| if has_all { all(t) } else { engine_wide(t) })
        .collect()
}

/// Weighted Holm within the gated tests (the widest engine-wide tests share
/// [`GateConfig::engine_wide_share`] of α) and plain Holm within the shown ones; then every tested row's
/// verdict: regressed (worse than δ, significant after Holm at this look's α), improved (the
/// mirror image), pass (the one-sided bound of "worse" below δ), else inconclusive with the
/// launches that would likely decide it.
pub(super) fn decide(rows: &mut [Row], tested: &[Tested], cfg: &GateConfig) {
    for gated in [true, false] {
        let mine: Vec<&Tested> = tested
            .iter()
            .filter(|t| rows[t.row].gated == gated)
            .collect();
        // The shown family has no engine-wide tests: its weights are equal.
        let widest = if gated {
            widest(rows, &mine)
        } else {
            vec![false; mine.len()]
        };
        let weights = cfg.holm_weights(&widest);
        let w_min = weights.iter().copied().fold(1.0, f64::min);
        let alpha = cfg.look_alpha_at(w_min);
        // A t statistic with few df keeps only part of a look's level (`stats::df_share`):
        // dividing its p-value by that part judges it at its own level within Holm.
        let factor: Vec<f64> = mine
            .iter()
            .map(|t| cfg.look_df_factor(cfg.alpha() * w_min, t.shift.df))
            .collect();
        let worse: Vec<f64> = mine
            .iter()
            .zip(&factor)
            .map(|(t, f)| (t.shift.p_worse_than(t.lim_worse) / f).min(1.0))
            .collect();
        let better: Vec<f64> = mine
            .iter()
            .zip(&factor)
            .map(|(t, f)| (t.shift.p_better_than(t.lim_better) / f).min(1.0))
            .collect();
        let (worse, better) = (
            stats::holm_weighted(&worse, &weights),
            stats::holm_weighted(&better, &weights),
        );
        for (k, t) in mine.iter().enumerate() {
            let row = &mut rows[t.row];
            let s = t.shift;
            row.test = Some(Test {
                shift: s,
                n_base: t.n_base,
                n_now: t.n_now,
                fixed_var: t.fixed_var,
                paired: t.paired,
            });
            let sign = orientation(row.direction);
            let alpha_eq = cfg.look_equivalence_alpha_df(s.df);
            let (lo, hi) = (s.lower(alpha_eq), s.upper(alpha_eq));
            // The interval of the plain (unoriented) change.
            let (a, b) = if sign > 0.0 { (lo, hi) } else { (-hi, -lo) };
            row.interval = Some([stats::pct(a), stats::pct(b)]);
            row.p_value = Some(worse[k]);
            row.verdict = if worse[k] < alpha {
                Verdict::Regressed
            } else if better[k] < alpha {
                Verdict::Improved
            } else if hi < t.lim_worse {
                Verdict::Pass
            } else {
                Verdict::Inconclusive
            };
            let noise = row.noise.expect("a tested row has its noise");
            let mut note = noise.describe();
            if row.verdict == Verdict::Inconclusive {
                // The nearer question decides first: pass (the bound below δ, at the
                // equivalence level) or regress (at this row's first Holm level, α · wᵢ).
                let (lim, level) = if s.worse < t.lim_worse {
                    (t.lim_worse, alpha_eq)
                } else {
                    (t.lim_worse, alpha * weights[k] * factor[k])
                };
                let needed = if t.paired {
                    // At least one more pair than it has: these pairs did not decide it.
                    // The cap reaches past twice the planned pairs, so that "more than the cap"
                    // means out of reach for the futility stop (`paired::stop`).
                    let cap = cfg
                        .look
                        .map_or(NEEDED_CAP, |l| NEEDED_CAP.max(2 * l.of + 1));
                    let now = t.n_base as u32;
                    stats::pairs_needed(s.worse, lim, noise.sd(), noise.df, now, level, cap)
                        .map(|n| n.max(now + 1))
                } else {
                    stats::launches_needed(
                        &stats::Design {
                            worse: s.worse,
                            lim,
                            sd: noise.sd(),
                            n_base: t.n_base,
                            n_now: t.n_now,
                            fixed_var: t.fixed_var,
                            df: noise.df,
                        },
                        level,
                        NEEDED_CAP,
                    )
                };
                row.launches_needed = needed.ok();
                note.push_str(&match needed {
                    Ok(n) if t.paired => format!("; likely decided with {n} pair(s) in all"),
                    Ok(n) => format!("; likely decided with {n} candidate launch(es)"),
                    Err(NotDecidable::SessionBound) => "; the between-session offset bounds it: \
                        record the baseline over ≥ 2 sessions (`perfgate baseline calibrate`) or \
                        compare in pairs (`perfgate ab`)"
                        .to_string(),
                    Err(NotDecidable::BaselineTooShort) => {
                        "; needs more baseline launches to decide".to_string()
                    }
                    Err(NotDecidable::MoreThan(n)) if t.paired => {
                        format!("; would likely need more than {n} pairs")
                    }
                    Err(NotDecidable::MoreThan(n)) => {
                        format!("; would likely need more than {n} candidate launches")
                    }
                });
            }
            row.note = Some(note);
        }
    }
}

/// Counts of the gated rows' verdicts.
pub fn count(rows: &[Row]) -> Counts {
    let mut c = Counts::default();
    for r in rows.iter().filter(|r| r.gated) {
        match r.verdict {
            Verdict::Pass => c.pass += 1,
            Verdict::Regressed => c.regressed += 1,
            Verdict::Improved => c.improved += 1,
            Verdict::Inconclusive => c.inconclusive += 1,
            Verdict::Missing => c.missing += 1,
            Verdict::Error => c.error += 1,
        }
    }
    c
}

/// Any gated regression fails; else an engine error is an error; else anything unproven
/// (inconclusive, or a scenario missing from the results) is inconclusive; else pass.
pub fn top_verdict(rows: &[Row]) -> TopVerdict {
    let gated = || rows.iter().filter(|r| r.gated);
    if gated().any(|r| r.verdict == Verdict::Regressed) {
        TopVerdict::Fail
    } else if gated().any(|r| r.verdict == Verdict::Error) {
        TopVerdict::Error
    } else if gated().any(|r| {
        r.verdict == Verdict::Inconclusive || (r.verdict == Verdict::Missing && r.n_current == 0)
    }) {
        TopVerdict::Inconclusive
    } else {
        TopVerdict::Pass
    }
}

pub(super) fn fill_side(side: &mut Side, recs: &[ScenarioResult]) {
    let first = |f: fn(&ScenarioResult) -> Option<String>| recs.iter().find_map(f);
    if side.engine.is_none() {
        side.engine = first(|r| r.engine.clone().or(r.backend.clone()));
    }
    if side.engine_version.is_none() {
        side.engine_version = first(|r| r.engine_version.clone());
    }
    if side.date.is_none() {
        side.date = first(|r| r.date.clone());
    }
}

/// The method in one sentence.
pub fn method_sentence(cfg: &GateConfig, n_gated: usize) -> String {
    let look = match cfg.look {
        Some(l) if l.of > 1 => format!(" (look {} of {}: α-spending)", l.k, l.of),
        _ => String::new(),
    };
    format!(
        "Engine launches are the unit: per model, scenario and metric, each launch's runs give one \
         value (median of logs), the candidate's launches are compared with the baseline's on the log \
         scale with the row's own launch-to-launch noise moderated toward {} plus a \
         between-session term, and an \
         engine-wide test per metric pools each model's scenarios launch by launch; a row regresses \
         when it is shown worse than its tolerance δ (one-sided test against the shifted null, \
         weighted Holm across {n_gated} gated rows and tests with at least {}% of α on the widest \
         engine-wide tests, family-wise α = {}{look}) and passes when its {}% one-sided bound of \
         the change stays within δ.",
        prior_words(cfg),
        fmt_prob(100.0 * cfg.engine_wide_share()),
        fmt_prob(cfg.look_alpha_for(n_gated)),
        fmt_prob(100.0 * (1.0 - cfg.look_equivalence_alpha())),
    )
}

/// The noise prior in words: learnt from the check's rows (empirical Bayes), or its fixed
/// weight when the settings give one.
pub(super) fn prior_words(cfg: &GateConfig) -> String {
    match cfg.prior_df() {
        Some(df) => format!(
            "the noise its metric shows over the check's other rows (that prior worth {} df)",
            fmt_prob(df)
        ),
        None => "the noise its metric shows over the check's other rows (empirical Bayes)".into(),
    }
}

pub(super) fn fmt_prob(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Verdict {
    /// Order from best to worst for a measured row: improved < pass < inconclusive < regressed.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Improved => 0,
            Verdict::Pass => 1,
            Verdict::Inconclusive | Verdict::Missing => 2,
            Verdict::Regressed | Verdict::Error => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Missing => "missing",
            Verdict::Error => "error",
        }
    }
}

impl TopVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            TopVerdict::Pass => "pass",
            TopVerdict::Fail => "fail",
            TopVerdict::Inconclusive => "inconclusive",
            TopVerdict::Error => "error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample::record;
    use proptest::prelude::*;

    fn eval(base: &[ScenarioResult], cur: &[ScenarioResult]) -> Report {
        evaluate(
            base,
            cur,
            &[],
            &GateConfig::default(),
            "check",
            Side::default(),
            Side::default(),
        )
    }

    /// Multiply every timing-derived value of a record: throughputs by `thr`, latencies by `lat`.
    fn scaled(r: &ScenarioResult, thr: f64, lat: f64) -> ScenarioResult {
        let mut r = r.clone();
        r.output_throughput *= thr;
        r.request_throughput *= thr;
        r.duration /= thr;
        for v in r.stats.values_mut() {
            *v *= lat;
        }
        r
    }

    fn suite(runs: usize) -> Vec<ScenarioResult> {
        let mut out = Vec::new();
        for m in ["m/a", "m/b", "m/c"] {
            for n in [100, 200] {
                for i in 0..runs {
                    let wiggle = 1.0 + 0.01 * (i as f64 - 1.0);
                    let mut r = scaled(&record(m, n, 1.0, 1.0), wiggle, 1.0 / wiggle);
                    r.run_index = i as u32;
                    r.session_id = Some("s".into());
                    out.push(r);
                }
            }
        }
        out
    }

    fn verdict_of<'a>(r: &'a Report, model: &str, n: u64, metric: &str) -> &'a Row {
        let scen = format!("random-in1024-out128-n{n}");
        r.rows
            .iter()
            .find(|x| x.model == model && x.scenario == scen && x.metric == metric)
            .unwrap_or_else(|| panic!("no row {model} {scen} {metric}"))
    }

    /// Records of `suite(runs)`, each run its own launch, with run-to-run spread `spread`.
    fn quiet_suite(runs: usize, spread: f64) -> Vec<ScenarioResult> {
        let mut out = Vec::new();
        for m in ["m/a", "m/b", "m/c"] {
            for n in [100, 200] {
                for i in 0..runs {
                    let wiggle = 1.0 + spread * (i as f64 - 1.0);
                    let mut r = scaled(&record(m, n, 1.0, 1.0), wiggle, 1.0 / wiggle);
                    r.run_index = i as u32;
                    r.launch_id = Some(format!("L{i}"));
                    r.session_id = Some("s".into());
                    out.push(r);
                }
            }
        }
        out
    }

    #[test]
    fn a_latency_tolerance_means_plus_delta() {
        // Tolerance 15 %: a latency 16.5 % higher is beyond it (as the tables print it), though
        // it is within 1/(1 − 15 %) − 1 = 17.6 %. Quiet launches and a tight prior make the
        // distance to the tolerance the only question.
        let cfg = GateConfig::parse(
            "[metrics.median_ttft_ms]\ntolerance_pct = 15\nnoise_pct = 0.1\n",
            "g",
        )
        .unwrap();
        let base = quiet_suite(3, 0.0005);
        let cur: Vec<_> = base
            .iter()
            .map(|r| {
                if r.model == "m/a" && r.params.num_prompts == 100 {
                    scaled(r, 1.0, 1.165)
                } else {
                    r.clone()
                }
            })
            .collect();
        let rep = evaluate(
            &base,
            &cur,
            &[],
            &cfg,
            "c",
            Side::default(),
            Side::default(),
        );
        let row = verdict_of(&rep, "m/a", 100, "median_ttft_ms");
        assert_eq!(row.tolerance_pct, Some(15.0));
        assert_eq!(row.verdict, Verdict::Regressed, "{row:?}");
        assert_eq!(
            verdict_of(&rep, "m/b", 100, "median_ttft_ms").verdict,
            Verdict::Pass
        );
        // 14 % higher is within the tolerance: not a regression, however quiet the data.
        let cur: Vec<_> = base.iter().map(|r| scaled(r, 1.0, 1.14)).collect();
        let rep = evaluate(
            &base,
            &cur,
            &[],
            &cfg,
            "c",
            Side::default(),
            Side::default(),
        );
        let row = verdict_of(&rep, "m/a", 100, "median_ttft_ms");
        assert_eq!(row.verdict, Verdict::Pass, "{row:?}");
    }

    #[test]
    fn one_launch_a_side_learns_no_noise_and_says_what_it_needs() {
        let base = quiet_suite(1, 0.0);
        let cur: Vec<_> = base.iter().map(|r| scaled(r, 0.8, 1.25)).collect();
        let rep = eval(&base, &cur);
        let row = verdict_of(&rep, "m/a", 100, "output_throughput");
        // No row of the check has a repeated launch: no noise can be learnt, and none is made
        // up. Inconclusive, saying how many launches would let the gate learn it.
        assert_eq!(row.noise, None);
        assert_eq!(row.verdict, Verdict::Inconclusive, "{row:?}");
        assert_eq!(row.launches_needed, Some(2), "{row:?}");
        let note = row.note.as_deref().unwrap();
        assert!(note.contains("no repeated launches"), "{note}");
        // A prior the settings name is used as it is.
        let cfg = GateConfig::parse("[metrics.output_throughput]\nnoise_pct = 1\n", "g").unwrap();
        let rep = evaluate(
            &base,
            &cur,
            &[],
            &cfg,
            "check",
            Side::default(),
            Side::default(),
        );
        let row = verdict_of(&rep, "m/a", 100, "output_throughput");
        assert_eq!(row.noise.unwrap().source, crate::gate::NoiseSource::Prior);
        assert_eq!(row.verdict, Verdict::Regressed, "{row:?}");
    }

    #[test]
    fn same_records_do_not_fail() {
        for runs in [1, 3] {
            let s = suite(runs);
            let r = eval(&s, &s);
            assert_ne!(r.verdict, TopVerdict::Fail);
            assert_eq!(r.counts.regressed, 0);
            assert_eq!(r.counts.improved, 0);
        }
        // Three runs a side with 1 % spread: every gated row is shown equivalent.
        let s = suite(3);
        assert_eq!(eval(&s, &s).verdict, TopVerdict::Pass);
    }

    #[test]
    fn one_scenario_twenty_percent_slower_fails_only_there() {
        let base = quiet_suite(3, 0.01);
        let cur: Vec<_> = base
            .iter()
            .map(|r| {
                if r.model == "m/b" && r.params.num_prompts == 200 {
                    scaled(r, 0.8, 1.25)
                } else {
                    r.clone()
                }
            })
            .collect();
        let rep = eval(&base, &cur);
        assert_eq!(rep.verdict, TopVerdict::Fail);
        assert_eq!(
            verdict_of(&rep, "m/b", 200, "output_throughput").verdict,
            Verdict::Regressed
        );
        for row in rep.rows.iter().filter(|r| r.verdict == Verdict::Regressed) {
            // On 1 % noise a 20 % drop in one of 6 scenarios also moves the average over all
            // models by more than its 2 % tolerance.
            if row.model == ALL_MODELS {
                continue;
            }
            assert_eq!(row.model, "m/b", "{row:?}");
            assert!(
                ["random-in1024-out128-n200", ENGINE_WIDE].contains(&row.scenario.as_str()),
                "{row:?}"
            );
        }
        let better: Vec<_> = base.iter().map(|r| scaled(r, 1.25, 0.8)).collect();
        let rep = eval(&base, &better);
        assert_ne!(rep.verdict, TopVerdict::Fail);
        assert!(rep.counts.improved > 0);
    }

    #[test]
    fn a_p99_of_fewer_than_100_requests_enters_no_engine_wide_test() {
        // Scenarios of 8 and 16 requests: their "p99" is nearly their largest value.
        let small = |runs: usize| -> Vec<ScenarioResult> {
            let mut out = Vec::new();
            for n in [8, 16] {
                for i in 0..runs {
                    let wiggle = 1.0 + 0.01 * (i as f64 - 1.0);
                    let mut r = scaled(&record("m/a", n, 1.0, 1.0), wiggle, 1.0 / wiggle);
                    r.run_index = i as u32;
                    r.launch_id = Some(format!("L{i}"));
                    r.session_id = Some("s".into());
                    out.push(r);
                }
            }
            out
        };
        let wide = |rep: &Report, metric: &str| {
            rep.rows
                .iter()
                .any(|r| r.scenario == ENGINE_WIDE && r.metric == metric)
        };
        let rep = eval(&small(3), &small(3));
        assert!(wide(&rep, "median_ttft_ms"), "{:?}", rep.rows);
        assert!(!wide(&rep, "p99_ttft_ms"));
        assert!(!wide(&rep, "p99_tpot_ms"));
        // 100 and 200 requests: a request lies beyond the p99, and the test is there.
        let rep = eval(&quiet_suite(3, 0.01), &quiet_suite(3, 0.01));
        assert!(wide(&rep, "p99_ttft_ms"));
    }

    #[test]
    fn missing_scenarios_are_rows_not_crashes() {
        let base = suite(3);
        let cur: Vec<_> = base.iter().filter(|r| r.model != "m/c").cloned().collect();
        let rep = eval(&base, &cur);
        assert_eq!(rep.counts.missing, 2);
        assert_eq!(rep.verdict, TopVerdict::Inconclusive);
        assert_eq!(rep.counts.inconclusive, 0);
        let row = verdict_of(&rep, "m/c", 100, SCENARIO_ROW);
        assert_eq!(row.note.as_deref(), Some("scenario not in the results"));
        // A new scenario (not in the baseline) is shown but does not hold the gate up.
        let rep = eval(&cur, &base);
        assert_eq!(rep.counts.missing, 2);
        assert_eq!(rep.verdict, TopVerdict::Pass);
    }

    #[test]
    fn failures_regress_by_themselves() {
        let base = suite(1);
        let mut cur = base.clone();
        cur[0].failed = 3;
        cur[0].completed -= 3;
        let rep = eval(&base, &cur);
        let row = verdict_of(&rep, "m/a", 100, "success_rate");
        assert_eq!(row.verdict, Verdict::Regressed);
        assert_eq!(row.note.as_deref(), Some("3 failed requests (baseline 0)"));
        assert_eq!(rep.verdict, TopVerdict::Fail);
        let mut short = base.clone();
        short[1].completed -= 1;
        let rep = eval(&base, &short);
        assert_eq!(
            verdict_of(&rep, "m/a", 200, "success_rate").verdict,
            Verdict::Regressed
        );
    }

    #[test]
    fn engine_errors_make_an_error_verdict() {
        let base = suite(1);
        let errors = [ScenarioError {
            model: "m/a".into(),
            scenario: "random-in1024-out128-n100".into(),
            message: "engine exited with status 137".into(),
        }];
        let rep = evaluate(
            &base,
            &base,
            &errors,
            &GateConfig::default(),
            "check",
            Side::default(),
            Side::default(),
        );
        assert_eq!(rep.verdict, TopVerdict::Error);
        assert_eq!(rep.counts.error, 1);
    }

    #[test]
    fn throughput_dropping_to_zero_regresses() {
        let base = suite(1);
        let mut cur = base.clone();
        cur[0].output_throughput = 0.0;
        let rep = eval(&base, &cur);
        let row = verdict_of(&rep, "m/a", 100, "output_throughput");
        assert_eq!(row.verdict, Verdict::Regressed);
    }

    #[test]
    fn noise_is_pooled_from_repeated_runs() {
        // Throughput that really varies ±8 % run to run, 6 % lower on the current side everywhere:
        // with the 2 % prior this would look significant; the pooled noise says it is not.
        let spread = [0.92, 1.0, 1.08];
        let make = |shift: f64| -> Vec<ScenarioResult> {
            let mut out = Vec::new();
            for m in ["m/a", "m/b", "m/c"] {
                for n in [100, 200] {
                    for (i, f) in spread.iter().enumerate() {
                        let mut r = scaled(&record(m, n, 1.0, 1.0), f * shift, 1.0);
                        r.run_index = i as u32;
                        out.push(r);
                    }
                }
            }
            out
        };
        let (base, cur) = (make(1.0), make(0.94));
        let rep = eval(&base, &cur);
        let row = verdict_of(&rep, "m/a", 100, "output_throughput");
        assert_eq!(row.verdict, Verdict::Inconclusive, "{row:?}");
        // With the pool disabled (one run of one side is not a pool) the prior would decide.
        let loud = GateConfig::parse("[metrics.output_throughput]\nnoise_pct = 1\n", "g").unwrap();
        let rep = evaluate(
            &base,
            &cur,
            &[],
            &loud,
            "check",
            Side::default(),
            Side::default(),
        );
        assert_eq!(
            verdict_of(&rep, "m/a", 100, "output_throughput").verdict,
            Verdict::Inconclusive,
            "the pool, not the configured prior, sets the noise"
        );
    }

    #[test]
    fn duplicates_and_empty_comparisons_are_found() {
        let s = quiet_suite(2, 0.01);
        assert_eq!(duplicate(&s), None);
        let mut twice = s.clone();
        twice.extend(s.iter().cloned());
        let msg = duplicate(&twice).unwrap();
        assert!(
            msg.contains("appears twice") && msg.contains("launch `L0`"),
            "{msg}"
        );
        let rep = eval(&s, &s);
        assert!(compared(&rep.rows) > 0);
        // Results for another model only: every row is missing, nothing was compared.
        let other: Vec<_> = s
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.model = "other".into();
                r
            })
            .collect();
        assert_eq!(compared(&eval(&s, &other).rows), 0);
        // No gated metric: nothing compared either.
        let none = GateConfig::parse("gated = []\n", "g").unwrap();
        let rep = evaluate(&s, &s, &[], &none, "c", Side::default(), Side::default());
        assert_eq!(compared(&rep.rows), 0);
    }

    #[test]
    fn a_uniform_slowdown_too_small_for_any_model_is_seen_over_all_models() {
        // Three models, three launches a side with ±1 % launch noise; every scenario 4 %
        // slower: the all-models test pools six scenarios' worth of launches.
        let base = quiet_suite(3, 0.01);
        let cur: Vec<_> = base
            .iter()
            .map(|r| {
                let mut r = scaled(r, 0.96, 1.0 / 0.96);
                r.launch_id = r.launch_id.map(|l| format!("c{l}"));
                r
            })
            .collect();
        let rep = eval(&base, &cur);
        let all = rep
            .rows
            .iter()
            .find(|r| r.model == ALL_MODELS && r.metric == "output_throughput")
            .expect("an all-models row");
        assert!(all.gated);
        assert_eq!(all.launches, Some([9, 9]));
        assert!((all.change_pct.unwrap() + 4.0).abs() < 1e-9, "{all:?}");
        let one = rep
            .rows
            .iter()
            .find(|r| {
                r.model == "m/a" && r.scenario == ENGINE_WIDE && r.metric == "output_throughput"
            })
            .unwrap();
        let (sa, so) = (all.interval.unwrap(), one.interval.unwrap());
        assert!(
            sa[1] - sa[0] < so[1] - so[0],
            "pooling narrows the interval"
        );
    }

    #[test]
    fn the_all_models_tests_hold_their_share_of_alpha() {
        // 3 models × 2 scenarios, ±1 % launch noise, throughput 5.3 % lower everywhere: 38
        // gated tests (18 rows, 15 per-model engine-wide, 5 over all models). Equal weights
        // (a share below 5/38 falls back to them) test the all-models throughput first at
        // α/38; the default gives the 5 tests a quarter of α, α/20 each.
        let base = quiet_suite(3, 0.01);
        let cur: Vec<_> = base
            .iter()
            .map(|r| {
                let mut r = scaled(r, 0.947, 1.0);
                r.launch_id = r.launch_id.map(|l| format!("c{l}"));
                r
            })
            .collect();
        let all = |cfg: &GateConfig| {
            let rep = evaluate(
                &base,
                &cur,
                &[],
                cfg,
                "check",
                Side::default(),
                Side::default(),
            );
            let row = rep
                .rows
                .iter()
                .find(|r| r.model == ALL_MODELS && r.metric == "output_throughput")
                .expect("an all-models row")
                .clone();
            (row, rep.verdict)
        };
        let equal = GateConfig::parse("engine_wide_share = 0.01\n", "g").unwrap();
        let (w, top_w) = all(&GateConfig::default());
        let (e, top_e) = all(&equal);
        assert_eq!((w.verdict, top_w), (Verdict::Regressed, TopVerdict::Fail));
        assert!(e.p_value.unwrap() > w.p_value.unwrap(), "{e:?}");
        assert_ne!(top_e, TopVerdict::Pass);
        let ratio = w.p_value.unwrap() / e.p_value.unwrap();
        assert!((ratio - 20.0 / 38.0).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn deterministic() {
        let base = suite(3);
        let cur: Vec<_> = base.iter().map(|r| scaled(r, 0.97, 1.02)).collect();
        assert_eq!(eval(&base, &cur), eval(&base, &cur));
    }

    /// Records for `n` scenarios of one model with `runs` runs, from multipliers.
    fn from_mults(mults: &[(f64, f64)], runs: usize) -> Vec<ScenarioResult> {
        let mut out = Vec::new();
        for (i, chunk) in mults.chunks(runs).enumerate() {
            for (k, (t, l)) in chunk.iter().enumerate() {
                let mut r = scaled(&record("m/x", 10 + i as u64, 1.0, 1.0), *t, *l);
                r.run_index = k as u32;
                out.push(r);
            }
        }
        out
    }

    fn mults(n: usize) -> impl Strategy<Value = Vec<(f64, f64)>> {
        prop::collection::vec((0.7f64..1.3, 0.7f64..1.3), n)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn a_run_compared_with_itself_never_regresses(runs in 1usize..4, m in mults(12)) {
            let recs = from_mults(&m[..(12 / runs) * runs], runs);
            let rep = eval(&recs, &recs);
            prop_assert_eq!(rep.counts.regressed, 0);
            prop_assert!(rep.rows.iter().all(|r| r.verdict != Verdict::Regressed));
        }

        #[test]
        fn scaling_every_value_changes_no_verdict(
            runs in 1usize..4, b in mults(9), c in mults(9), k in 0.001f64..1000.0
        ) {
            let (base, cur) = (from_mults(&b[..(9 / runs) * runs], runs), from_mults(&c[..(9 / runs) * runs], runs));
            let rep = eval(&base, &cur);
            let sb: Vec<_> = base.iter().map(|r| scaled(r, k, k)).collect();
            let sc: Vec<_> = cur.iter().map(|r| scaled(r, k, k)).collect();
            let rep2 = eval(&sb, &sc);
            let v1: Vec<_> = rep.rows.iter().map(|r| r.verdict).collect();
            let v2: Vec<_> = rep2.rows.iter().map(|r| r.verdict).collect();
            prop_assert_eq!(v1, v2);
        }

        #[test]
        fn worsening_one_row_only_moves_it_towards_regressed(
            runs in 1usize..4, b in mults(9), c in mults(9), which in 0usize..3, f in 0.5f64..1.0
        ) {
            let (base, cur) = (from_mults(&b[..(9 / runs) * runs], runs), from_mults(&c[..(9 / runs) * runs], runs));
            let target = 10 + which as u64;
            let worse: Vec<_> = cur
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    if r.params.num_prompts == target {
                        r.output_throughput *= f;
                    }
                    r
                })
                .collect();
            let (before, after) = (eval(&base, &cur), eval(&base, &worse));
            prop_assert_eq!(before.rows.len(), after.rows.len());
            for (x, y) in before.rows.iter().zip(&after.rows) {
                let is_target = x.metric == "output_throughput"
                    && (x.scenario == format!("random-in1024-out128-n{target}")
                        || x.scenario == ENGINE_WIDE);
                if is_target {
                    // The worsened row moves towards `regressed`, never away.
                    prop_assert!(y.verdict.severity() >= x.verdict.severity(), "{:?} -> {:?}", x.verdict, y.verdict);
                } else {
                    // Every other row keeps its numbers; its verdict can only move if Holm's
                    // step-down lets it cross the line too, and never towards better.
                    let near = |a: Option<f64>, b: Option<f64>| match (a, b) {
                        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
                        (a, b) => a == b,
                    };
                    prop_assert!(near(x.change_pct, y.change_pct));
                    prop_assert!(near(x.interval.map(|i| i[0]), y.interval.map(|i| i[0])));
                    prop_assert!(near(x.interval.map(|i| i[1]), y.interval.map(|i| i[1])));
                    prop_assert!(y.verdict.severity() >= x.verdict.severity());
                }
            }
        }
    }
}
