//! `perfgate ab`: the paired statistics of a same-runner A/B comparison. The base and the
//! candidate engine are launched in pairs, back to back (ABBA or seeded random order within a
//! pair), so slow drift of the machine (clocks, thermals, other tenants) hits both arms of a pair
//! alike and cancels in their difference.
//!
//! Per model, scenario and metric, each launch gives one value (the median of its runs' logs, as
//! in the stored-baseline check); a pair gives the difference candidate − base; the row's test is
//! a one-sample t on those differences against the shifted null (worse than δ), with their spread
//! moderated toward what the other rows' pair differences of the metric's class show (empirical
//! Bayes, [`super::moderate`]; no session term: a pair's launches share their session). The
//! engine-wide test pools a model's scenarios pair by pair (precision-weighted).
//!
//! Each model is its own sequential test: after each pair it is judged at its look's share of
//! α (group-sequential boundary, [`super::stats::look_alpha`]); models share α by Bonferroni (α / models) and
//! rows within a model by weighted Holm. There is no test over all models: each model stops on its own.

use std::collections::BTreeMap;

use super::config::{percentile_supported, GateConfig};
use super::look::Look;
use super::noise::{self, Launches, Noise, NoiseSource, Priors, OUTLIER_K, OUTLIER_MIN_LAUNCHES};
use super::stats::{self, orientation, Shift, StatsError};
use super::verdict::{
    blank, count, decide, fixed, fmt_prob, prior_words, report, scenario_row, start_row,
    top_verdict, unmeasured_row, unusable, Grouped, Inputs, Key, Metric, Rows, Scope, Start, Test,
    Tested, ENGINE_WIDE,
};
use super::{Report, Row, ScenarioError, Side, TopVerdict, Verdict};
use crate::record::{Arm, ScenarioResult};

/// One row's complete pairs: per pair, each arm's launch value (median of its runs' logs).
#[derive(Debug, Clone, PartialEq)]
pub struct Pairs {
    /// Pair indices present on both arms, ascending.
    pub ids: Vec<u32>,
    pub base: Vec<f64>,
    pub cand: Vec<f64>,
}

impl Pairs {
    /// Group the values of `metric` by pair on each arm and keep the pairs both arms measured.
    /// Records without a pair index are skipped.
    pub fn of(
        base: &[&ScenarioResult],
        cand: &[&ScenarioResult],
        metric: &str,
    ) -> Result<Pairs, StatsError> {
        let side = |recs: &[&ScenarioResult]| -> Result<BTreeMap<u32, Vec<f64>>, StatsError> {
            let mut m: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            for r in recs {
                let (Some(p), Some(v)) = (r.pair, r.metric(metric)) else {
                    continue;
                };
                if !(v.is_finite() && v > 0.0) {
                    return Err(StatsError::NonPositive(v));
                }
                m.entry(p).or_default().push(v.ln());
            }
            Ok(m)
        };
        let (b, c) = (side(base)?, side(cand)?);
        let mut out = Pairs {
            ids: Vec::new(),
            base: Vec::new(),
            cand: Vec::new(),
        };
        for (id, bv) in &b {
            if let Some(cv) = c.get(id) {
                out.ids.push(*id);
                out.base
                    .push(stats::median(bv).expect("a launch has a run"));
                out.cand
                    .push(stats::median(cv).expect("a launch has a run"));
            }
        }
        Ok(out)
    }

    pub fn n(&self) -> usize {
        self.ids.len()
    }

    /// Candidate − base per pair (log scale).
    pub fn diffs(&self) -> Vec<f64> {
        self.cand
            .iter()
            .zip(&self.base)
            .map(|(c, b)| c - b)
            .collect()
    }
}

/// The spread of pair differences `d`: Σ squared deviations from their mean and its df.
fn pair_spread(d: &[f64]) -> (f64, f64) {
    if d.len() < 2 {
        return (0.0, 0.0);
    }
    let m = mean(d);
    (
        d.iter().map(|x| (x - m).powi(2)).sum::<f64>(),
        (d.len() - 1) as f64,
    )
}

/// The noise of a pair's difference from `d`, moderated toward `prior` (sd, df). Every pair
/// counts in the mean and the spread; pairs far from the rest are flagged (with ≥
/// [`OUTLIER_MIN_LAUNCHES`] pairs).
pub fn pair_noise(d: &[f64], prior: Option<(f64, f64)>) -> Option<Noise> {
    let out = if d.len() >= OUTLIER_MIN_LAUNCHES {
        stats::outliers(d, OUTLIER_K)
    } else {
        Vec::new()
    };
    let (ss, nu) = pair_spread(d);
    let (prior_sd, prior_df) = prior.unwrap_or((0.0, 0.0));
    let (var, df) = stats::shrunk_variance(ss, nu, prior_sd, prior_df)?;
    Some(Noise {
        sd_pct: var.sqrt() * 100.0,
        df,
        own_df: nu,
        source: if nu == 0.0 {
            NoiseSource::Prior
        } else {
            NoiseSource::Pairs
        },
        outliers: out.len(),
        session: None,
    })
}

/// The noise priors of an A/B comparison, learnt from every row's pair differences (per
/// metric), as the stored check learns them from launches.
fn learn_priors(g: &Grouped<'_>, errors: &[ScenarioError], metrics: &[String]) -> Priors {
    let mut rows = Vec::new();
    for (b, c) in g.both(errors) {
        for metric in metrics.iter().filter(|m| *m != "success_rate") {
            if let Ok(p) = Pairs::of(b, c, metric) {
                rows.push((metric.as_str(), pair_spread(&p.diffs()), Vec::new()));
            }
        }
    }
    Priors::learn(rows)
}

/// The paired test of differences `d` with noise `noise`: oriented mean difference and its
/// standard error sd/√n.
fn test_of(d: &[f64], noise: &Noise, sign: f64) -> Test {
    let n = d.len() as f64;
    Test {
        shift: Shift {
            worse: sign * d.iter().sum::<f64>() / n,
            se: noise.sd() / n.sqrt(),
            df: noise.df,
        },
        n_base: d.len(),
        n_now: d.len(),
        fixed_var: 0.0,
        paired: true,
        own: None,
        own_fixed_var: 0.0,
        own_launches: None,
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// One metric of one scenario, paired; with its test and its per-pair differences when one can
/// be made.
fn paired_row(
    key: &Key,
    m: &Metric,
    [b, c]: [&[&ScenarioResult]; 2],
    priors: &Priors,
    cfg: &GateConfig,
) -> Option<(Row, Option<(Test, Pairs)>)> {
    let missing = [
        "metric not measured on the base arm",
        "metric not measured on the candidate arm",
    ];
    let (mut row, [bv, cv]) = match start_row(key, m, [b, c], missing)? {
        Start::Test(row, values) => (row, values),
        Start::Done(row) => return Some((row, None)),
    };
    let done = |row: Row, v: Verdict, note: String| Some((fixed(row, v, note), None));
    let (rule, metric) = (&m.rule, m.name.as_str());
    let pairs = match Pairs::of(b, c, metric) {
        Ok(p) => p,
        Err(e) => return Some((unusable(row, rule, [&bv, &cv], e), None)),
    };
    if pairs.n() == 0 {
        return done(
            row,
            Verdict::Inconclusive,
            "no complete pair of launches (one of each arm) yet".into(),
        );
    }
    let d = pairs.diffs();
    let Some(noise) = pair_noise(&d, priors.prior(metric, rule, cfg)) else {
        return done(
            row,
            Verdict::Inconclusive,
            StatsError::NoVariance.to_string(),
        );
    };
    let test = test_of(&d, &noise, orientation(rule.direction));
    row.baseline = Some(mean(&pairs.base).exp());
    row.current = Some(mean(&pairs.cand).exp());
    row.change_pct = Some(stats::pct(mean(&d)));
    row.launches = Some([pairs.n(), pairs.n()]);
    row.noise = Some(noise);
    Some((row, Some((test, pairs))))
}

/// One scenario's share of an engine-wide test: its pairs, its weight (1 / the variance of a
/// pair's difference) and its runs on each arm.
struct Pooled {
    pairs: Pairs,
    weight: f64,
    runs: [usize; 2],
}

/// The paired engine-wide test of one metric over one model's scenarios: per pair, the
/// precision-weighted mean of the scenarios' differences (pairs complete in every scenario),
/// tested like a row. Needs ≥ 2 scenarios.
fn engine_wide_row(
    model: &str,
    m: &Metric,
    scenarios: &[Pooled],
    priors: &Priors,
    cfg: &GateConfig,
) -> Option<(Row, Test)> {
    if scenarios.len() < 2 {
        return None;
    }
    let (rule, metric) = (&m.rule, m.name.as_str());
    // Each scenario's differences keyed by pair, pooled like the stored check's launches.
    let diffs: Vec<Launches> = scenarios
        .iter()
        .map(|s| {
            let p = &s.pairs;
            let d = p.cand.iter().zip(&p.base).map(|(c, b)| c - b).collect();
            let keys = p.ids.iter().map(|i| i.to_string()).collect();
            Launches::keyed(keys, d, vec![None; p.n()], true)
        })
        .collect();
    let rows: Vec<(&Launches, f64, f64)> = diffs
        .iter()
        .zip(scenarios)
        .map(|(d, s)| (d, s.weight, 0.0))
        .collect();
    let series = noise::pooled(&rows);
    if series.n() == 0 {
        return None;
    }
    let z = series.values;
    let w: Vec<f64> = scenarios.iter().map(|s| s.weight).collect();
    let with_sd: Vec<(&Launches, f64)> = diffs
        .iter()
        .zip(&w)
        .map(|(d, w)| (d, 1.0 / w.sqrt()))
        .collect();
    let rho = noise::scenario_corr(&[with_sd]);
    let prior = noise::engine_wide_prior(&w, rho, priors.prior(metric, rule, cfg));
    let noise = pair_noise(&z, prior)?;
    let test = test_of(&z, &noise, orientation(rule.direction));
    let mut row = blank(model, ENGINE_WIDE, metric, rule);
    row.gated = true;
    row.tolerance_pct = Some(Scope::EngineWide.tolerance_pct(rule));
    row.change_pct = Some(stats::pct(mean(&z)));
    row.launches = Some([z.len(), z.len()]);
    row.n_baseline = scenarios.iter().map(|s| s.runs[0]).sum();
    row.n_current = scenarios.iter().map(|s| s.runs[1]).sum();
    row.noise = Some(noise);
    Some((row, test))
}

/// What an A/B comparison judges: the records of both arms (`arm` and `pair` set), the
/// scenarios that failed, the settings, the look each model is judged at, and how the report
/// names itself and its arms.
pub struct AbInputs<'a> {
    pub records: &'a [ScenarioResult],
    pub errors: &'a [ScenarioError],
    pub cfg: &'a GateConfig,
    /// The look at which each model is judged (its sequential test), `None` for a single look.
    pub look_of: &'a dyn Fn(&str) -> Option<Look>,
    /// Which kind of report, e.g. `ab`.
    pub kind: &'a str,
    pub base_side: Side,
    pub cur_side: Side,
}

/// Per model and metric: the scenarios' pairs, weights and run counts for the engine-wide test.
type PooledByModel = BTreeMap<(String, String), Vec<Pooled>>;

/// Judge the records of an A/B comparison.
pub fn evaluate(input: AbInputs<'_>) -> Report {
    let cfg = input.cfg;
    let (base, cand): (Vec<ScenarioResult>, Vec<ScenarioResult>) = input
        .records
        .iter()
        .filter(|r| r.arm.is_some())
        .cloned()
        .partition(|r| r.arm == Some(Arm::Base));
    let g = Grouped::new(&base, &cand, input.errors);
    let mut models: Vec<String> = Vec::new();
    for (m, _) in &g.order {
        if !models.contains(m) {
            models.push(m.clone());
        }
    }
    let names = cfg.metric_list();
    let priors = learn_priors(&g, input.errors, &names);
    let metrics = Metric::resolve(cfg, &names);
    let mut out = Rows::default();
    let pooled = scenario_rows(&g, input.errors, (&metrics, cfg), &priors, &mut out);
    let wide = Metric::resolve(cfg, &cfg.engine_wide_list());
    for model in &models {
        for m in &wide {
            let Some(scen) = pooled.get(&(model.clone(), m.name.clone())) else {
                continue;
            };
            if let Some((row, test)) = engine_wide_row(model, m, scen, &priors, cfg) {
                out.push(row, Some(test), Scope::EngineWide, &m.rule);
            }
        }
    }
    let mut out = by_model(out, &models);
    // Each model is its own family at α / models, judged at its own look.
    let share = models.len().max(1) as f64;
    let mut alphas = Vec::new();
    for model in &models {
        let mine: Vec<Tested> = out
            .tested
            .iter()
            .filter(|t| out.rows[t.row].model == *model)
            .copied()
            .collect();
        let levels = cfg.levels((input.look_of)(model)).shared(share);
        alphas.push((levels.look_alpha(), levels.look));
        decide(&mut out.rows, &mine, cfg, levels);
    }
    let method = method_sentence(cfg, models.len(), &alphas);
    let stored = Inputs {
        baseline: &[],
        current: &[],
        errors: input.errors,
        cfg,
        look: None,
        kind: input.kind,
        base_side: input.base_side,
        cur_side: input.cur_side,
        unconfirmable: &[],
    };
    report(stored, out.rows, [&base, &cand], method)
}

/// Every scenario's paired rows, in the records' order: a gated `error` or `missing` row for a
/// scenario that could not be compared, else one row per metric. Returns what the engine-wide
/// tests pool.
fn scenario_rows(
    g: &Grouped<'_>,
    errors: &[ScenarioError],
    (metrics, cfg): (&[Metric], &GateConfig),
    priors: &Priors,
    out: &mut Rows,
) -> PooledByModel {
    let empty = Vec::new();
    let wide = cfg.engine_wide_list();
    let mut pooled = PooledByModel::new();
    for key in &g.order {
        let (model, scenario) = key;
        let b = g.base.get(key).unwrap_or(&empty);
        let c = g.cur.get(key).unwrap_or(&empty);
        let n = [b.len(), c.len()];
        if let Some(e) = errors
            .iter()
            .find(|e| &e.model == model && &e.scenario == scenario)
        {
            let msg = e.message.clone();
            out.shown(unmeasured_row((model, scenario), Verdict::Error, msg, n));
            continue;
        }
        if b.is_empty() || c.is_empty() {
            let arm = if b.is_empty() { "base" } else { "candidate" };
            let why = format!("scenario not measured on the {arm} arm");
            out.shown(unmeasured_row((model, scenario), Verdict::Missing, why, n));
            continue;
        }
        for m in metrics {
            let Some((row, test)) = paired_row(key, m, [b, c], priors, cfg) else {
                continue;
            };
            let metric = &m.name;
            let test = test.map(|(test, pairs)| {
                // A "p99" of fewer than 100 requests is an extreme value: not pooled.
                let pooled_ok = percentile_supported(metric, b) && percentile_supported(metric, c);
                if pooled_ok && wide.contains(metric) {
                    pooled
                        .entry((model.clone(), metric.clone()))
                        .or_default()
                        .push(Pooled {
                            pairs,
                            weight: row.noise.map_or(1e12, |n| n.weight()),
                            runs: [row.n_baseline, row.n_current],
                        });
                }
                test
            });
            out.push(row, test, Scope::Scenario, &m.rule);
        }
    }
    pooled
}

/// The rows grouped by model (the engine-wide rows after each model's scenarios), their tests
/// following them.
fn by_model(out: Rows, models: &[String]) -> Rows {
    let Rows { rows, mut tested } = out;
    let order = |r: &Row| models.iter().position(|m| *m == r.model).unwrap_or(0);
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    idx.sort_by_key(|&i| (order(&rows[i]), i));
    let mut at = vec![0; rows.len()];
    for (new, &old) in idx.iter().enumerate() {
        at[old] = new;
    }
    let rows: Vec<Row> = idx.iter().map(|&i| rows[i].clone()).collect();
    for t in &mut tested {
        t.row = at[t.row];
    }
    Rows { rows, tested }
}

/// The stopping rule of `perfgate ab`, in one place for the runner and the replay: one model's
/// records judged at `look` (see [`stop`]).
pub fn at_look(
    records: &[ScenarioResult],
    errors: &[ScenarioError],
    cfg: &GateConfig,
    look: Look,
    kind: &str,
) -> Report {
    evaluate(AbInputs {
        records,
        errors,
        cfg,
        look_of: &|_| Some(look),
        kind,
        base_side: Side::default(),
        cur_side: Side::default(),
    })
}

/// Why a model's launches stop after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The look decided: pass, fail, or error.
    Decided(TopVerdict),
    /// Still open, but no open gated row would likely be decided within twice the planned
    /// pairs, by the rows' own pairs (futility): more pairs would only spend GPU time. Stopping early never raises the
    /// false-alarm rate; the verdict stays inconclusive.
    Futile,
}

/// Whether the model stops after this look (`report` from [`at_look`], `look.of` the planned
/// pairs).
pub fn stop(report: &Report, look: Look) -> Option<Stop> {
    if report.verdict != TopVerdict::Inconclusive {
        return Some(Stop::Decided(report.verdict));
    }
    if look.k >= look.of {
        return None;
    }
    let hopeless = report
        .rows
        .iter()
        .filter(|r| r.gated && r.verdict == Verdict::Inconclusive)
        .all(|r| {
            // Judged on the row's own pairs (≥ 3 df), not on the prior alone, and only when
            // clearly out of reach (the estimate is rough): more than twice the planned pairs.
            r.noise.is_some_and(|n| n.own_df >= 3.0)
                && r.launches_needed.is_none_or(|n| n > 2 * look.of)
        });
    hopeless.then_some(Stop::Futile)
}

/// A model that never got a complete pair (the time budget ran out first, or Ctrl-C): one gated
/// `missing` row saying why, so that the comparison cannot pass without it.
pub fn not_measured(report: &mut Report, model: &str, why: &str) {
    let mut row = scenario_row(model, "(all scenarios)", why.to_string());
    row.verdict = Verdict::Missing;
    report.rows.push(row);
    report.counts = count(&report.rows);
    report.verdict = top_verdict(&report.rows);
}

/// The paired method in one sentence.
fn method_sentence(cfg: &GateConfig, models: usize, alphas: &[(f64, Option<Look>)]) -> String {
    let levels = match alphas {
        [(a, Some(l))] if l.of > 1 => format!(
            "α = {} at look {} of {} (α-spending of {})",
            fmt_prob(*a),
            l.k,
            l.of,
            fmt_prob(cfg.alpha())
        ),
        [(a, _)] => format!("α = {}", fmt_prob(*a)),
        _ => format!(
            "α = {} per model (Bonferroni over {models} models), each at its own look (α-spending)",
            fmt_prob(cfg.alpha() / models.max(1) as f64)
        ),
    };
    format!(
        "Same-runner A/B: the base and candidate engines are launched in pairs, back to back; per \
         model, scenario and metric each launch gives one value (median of its runs' logs) and \
         each pair the difference candidate − base on the log scale; a row regresses when the \
         pairs show it worse than its tolerance δ (one-sided paired t against the shifted null, \
         the differences' spread moderated toward {}, weighted Holm across the model's \
         gated rows and tests with at least {}% of α on the engine-wide tests, {levels}) and \
         passes when its {}% one-sided bound stays within δ; an engine-wide test per metric pools \
         each model's scenarios pair by pair.",
        prior_words(cfg),
        fmt_prob(100.0 * cfg.engine_wide_share()),
        fmt_prob(100.0 * (1.0 - cfg.equivalence_alpha())),
    )
}

#[cfg(test)]
mod tests;
