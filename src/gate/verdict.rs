//! From records to a [`Report`]: match baseline and current runs by model and scenario id,
//! compare every listed metric with the statistics in [`super::stats`], control the family-wise
//! false-alarm rate with Holm across all gated rows, apply the success-rate rule, and derive
//! the top verdict. Deterministic: the same inputs give the same rows in the same order.

use std::collections::BTreeMap;

use super::config::GateConfig;
use super::stats::{self, Comparison, LogSummary};
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

type Key = (String, String);

/// Records grouped by (model, scenario id), keys in first-seen order.
fn group<'a>(
    recs: &'a [ScenarioResult],
    order: &mut Vec<Key>,
    map: &mut BTreeMap<Key, Vec<&'a ScenarioResult>>,
) {
    for r in recs {
        let key = (r.model.clone(), r.scenario_id());
        if !map.contains_key(&key) && !order.contains(&key) {
            order.push(key.clone());
        }
        map.entry(key).or_default().push(r);
    }
}

/// A row before the multiple-comparison step.
struct Pending {
    row: Row,
    cmp: Option<Comparison>,
    /// The comparison's interval of the log difference.
    interval: (f64, f64),
    /// A verdict fixed without a test (rules, missing, errors).
    fixed: Option<Verdict>,
}

fn blank(model: &str, scenario: &str, metric: &str, cfg: &GateConfig) -> Row {
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
        verdict: Verdict::Inconclusive,
        note: None,
    }
}

fn values(recs: &[&ScenarioResult], metric: &str) -> Vec<f64> {
    recs.iter().filter_map(|r| r.metric(metric)).collect()
}

/// The central value shown: the run itself, or the geometric mean of several runs (the
/// arithmetic mean when a value is not positive).
fn center(v: &[f64]) -> Option<f64> {
    match v {
        [] => None,
        [one] => Some(*one),
        _ => LogSummary::of(v).ok().map(|s| s.center()).or(mean(v)),
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// `failed` above the baseline's, or fewer completions than asked for (and than the baseline
/// managed), is a regression by itself; otherwise the success rate passes.
fn success_rule(row: &mut Row, base: &[&ScenarioResult], cur: &[&ScenarioResult]) -> Verdict {
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
    let mut order = Vec::new();
    let (mut bmap, mut cmap) = (BTreeMap::new(), BTreeMap::new());
    group(baseline, &mut order, &mut bmap);
    group(current, &mut order, &mut cmap);
    for e in errors {
        let key = (e.model.clone(), e.scenario.clone());
        if !order.contains(&key) {
            order.push(key);
        }
    }
    // Keep models together, in first-seen order.
    let mut models: Vec<&str> = Vec::new();
    for (m, _) in &order {
        if !models.contains(&m.as_str()) {
            models.push(m);
        }
    }
    let order: Vec<Key> = models
        .iter()
        .flat_map(|m| order.iter().filter(move |(om, _)| om == m).cloned())
        .collect();

    let metrics = cfg.metric_list();
    let empty = Vec::new();
    let pooled = pooled_noise(&bmap, &cmap, &metrics);
    let mut pending: Vec<Pending> = Vec::new();
    for key in &order {
        let (model, scenario) = key;
        let b = bmap.get(key).unwrap_or(&empty);
        let c = cmap.get(key).unwrap_or(&empty);
        if let Some(e) = errors
            .iter()
            .find(|e| &e.model == model && &e.scenario == scenario)
        {
            let mut row = blank(model, scenario, SCENARIO_ROW, cfg);
            row.gated = true;
            row.tolerance_pct = None;
            row.n_baseline = b.len();
            row.note = Some(e.message.clone());
            pending.push(Pending {
                row,
                cmp: None,
                interval: (0.0, 0.0),
                fixed: Some(Verdict::Error),
            });
            continue;
        }
        if b.is_empty() || c.is_empty() {
            let mut row = blank(model, scenario, SCENARIO_ROW, cfg);
            row.gated = true;
            row.tolerance_pct = None;
            row.n_baseline = b.len();
            row.n_current = c.len();
            row.note = Some(if b.is_empty() {
                "scenario not in the baseline".into()
            } else {
                "scenario not in the results".into()
            });
            pending.push(Pending {
                row,
                cmp: None,
                interval: (0.0, 0.0),
                fixed: Some(Verdict::Missing),
            });
            continue;
        }
        for metric in &metrics {
            let mut row = blank(model, scenario, metric, cfg);
            let (bv, cv) = (values(b, metric), values(c, metric));
            row.n_baseline = bv.len();
            row.n_current = cv.len();
            if bv.is_empty() && cv.is_empty() {
                continue; // never measured on either side: nothing to show
            }
            row.baseline = center(&bv);
            row.current = center(&cv);
            let missing = |row: &mut Row, note: &str| {
                row.note = Some(note.into());
                Some(Verdict::Missing)
            };
            let fixed = if metric == "success_rate" {
                Some(success_rule(&mut row, b, c))
            } else if bv.is_empty() {
                missing(&mut row, "metric not in the baseline")
            } else if cv.is_empty() {
                missing(&mut row, "metric not in the results")
            } else {
                None
            };
            if fixed.is_some() {
                pending.push(Pending {
                    row,
                    cmp: None,
                    interval: (0.0, 0.0),
                    fixed,
                });
                continue;
            }
            let rule = cfg.rule(metric);
            let sides = (LogSummary::of(&bv), LogSummary::of(&cv));
            let (bs, cs) = match sides {
                (Ok(bs), Ok(cs)) => (bs, cs),
                (Err(e), _) | (_, Err(e)) => {
                    let dropped = rule.direction == Direction::Higher
                        && bv.iter().all(|v| *v > 0.0)
                        && cv.iter().all(|v| *v == 0.0);
                    row.note = Some(if dropped {
                        "dropped to zero".into()
                    } else {
                        e.to_string()
                    });
                    if dropped {
                        row.change_pct = Some(-100.0);
                    }
                    let v = if dropped {
                        Verdict::Regressed
                    } else {
                        Verdict::Inconclusive
                    };
                    pending.push(Pending {
                        row,
                        cmp: None,
                        interval: (0.0, 0.0),
                        fixed: Some(v),
                    });
                    continue;
                }
            };
            // The noise prior: pooled from this check's own repeated runs when they give
            // enough degrees of freedom, else the configured prior.
            // Both sides lean on the same pool, so each gets half its degrees of freedom: the
            // combined t reference then has about the pool's, not twice as many.
            let (sigma, sigma_df) = match pooled.get(metric.as_str()) {
                Some(&(var, df)) if df >= MIN_POOLED_DF => (var.sqrt(), df / 2.0),
                _ => (rule.noise_pct / 100.0, cfg.prior_df()),
            };
            match stats::compare(&bs, &cs, sigma, sigma_df) {
                Ok(cmp) => {
                    row.change_pct = Some(stats::pct(cmp.diff));
                    let (lo, hi) = cmp.interval(cfg.equivalence_alpha());
                    row.interval = Some([stats::pct(lo), stats::pct(hi)]);
                    row.note = Some(cmp.method.describe().into());
                    pending.push(Pending {
                        row,
                        cmp: Some(cmp),
                        interval: (lo, hi),
                        fixed: None,
                    });
                }
                Err(e) => {
                    row.note = Some(e.to_string());
                    pending.push(Pending {
                        row,
                        cmp: None,
                        interval: (0.0, 0.0),
                        fixed: Some(Verdict::Inconclusive),
                    });
                }
            }
        }
    }

    decide(&mut pending, cfg);
    let rows: Vec<Row> = pending.into_iter().map(|p| p.row).collect();
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
    }
}

/// Pooled run-to-run variances need at least this many degrees of freedom to replace the
/// configured noise prior.
pub const MIN_POOLED_DF: f64 = 10.0;

/// Per metric: the run-to-run variance of the log value pooled over every side of every
/// scenario with ≥ 2 runs, and its degrees of freedom (Σ (n − 1)).
fn pooled_noise<'a>(
    bmap: &BTreeMap<Key, Vec<&ScenarioResult>>,
    cmap: &BTreeMap<Key, Vec<&ScenarioResult>>,
    metrics: &'a [String],
) -> BTreeMap<&'a str, (f64, f64)> {
    let mut out = BTreeMap::new();
    for metric in metrics {
        let (mut ss, mut df) = (0.0, 0.0);
        for recs in bmap.values().chain(cmap.values()) {
            let v = values(recs, metric);
            if v.len() < 2 {
                continue;
            }
            if let Ok(s) = LogSummary::of(&v) {
                ss += s.var * (s.n as f64 - 1.0);
                df += s.n as f64 - 1.0;
            }
        }
        if df > 0.0 {
            out.insert(metric.as_str(), (ss / df, df));
        }
    }
    out
}

/// Holm within the gated rows and, separately, within the shown rows; then the verdicts.
fn decide(pending: &mut [Pending], cfg: &GateConfig) {
    let alpha = cfg.alpha();
    for gated in [true, false] {
        let idx: Vec<usize> = (0..pending.len())
            .filter(|&i| pending[i].row.gated == gated && pending[i].cmp.is_some())
            .collect();
        let badness = |p: &Pending| {
            let c = p.cmp.expect("tested rows carry a comparison");
            match p.row.direction {
                Direction::Lower => (c.p_larger(), c.p_smaller()),
                Direction::Higher => (c.p_smaller(), c.p_larger()),
            }
        };
        let (worse, better): (Vec<f64>, Vec<f64>) =
            idx.iter().map(|&i| badness(&pending[i])).unzip();
        let (worse, better) = (stats::holm(&worse), stats::holm(&better));
        for (k, &i) in idx.iter().enumerate() {
            let p = &mut pending[i];
            let cmp = p.cmp.expect("tested");
            let tol = p.row.tolerance_pct.unwrap_or(0.0) / 100.0;
            // Express everything as "higher is better" on the log scale. The tolerance keeps the
            // meaning the tables show: a throughput is worse beyond −δ, a latency beyond +δ.
            let (sign, worse_lim, better_lim) = match p.row.direction {
                Direction::Higher => (1.0, (-tol).ln_1p(), tol.ln_1p()),
                Direction::Lower => (-1.0, -tol.ln_1p(), -(-tol).ln_1p()),
            };
            let est = sign * cmp.diff;
            let (lo, hi) = p.interval;
            let worst_end = if sign > 0.0 { lo } else { -hi };
            p.row.p_value = Some(worse[k]);
            p.row.verdict = if worse[k] < alpha && est < worse_lim {
                Verdict::Regressed
            } else if better[k] < alpha && est > better_lim {
                Verdict::Improved
            } else if worst_end > worse_lim {
                Verdict::Pass
            } else {
                Verdict::Inconclusive
            };
        }
    }
    for p in pending.iter_mut() {
        if let Some(v) = p.fixed {
            p.row.verdict = v;
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

fn fill_side(side: &mut Side, recs: &[ScenarioResult]) {
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
    format!(
        "Each metric is compared on the log scale per model and scenario (Welch's t with ≥2 runs a \
         side, noise pooled across the check's scenarios; a prediction interval for one new run, a stated noise prior for one run a side); \
         a row regresses when it is significantly worse after Holm's correction across all \
         {n_gated} gated rows (family-wise α = {}) and worse than its tolerance δ, and passes when \
         its {}% interval stays within δ.",
        fmt_prob(cfg.alpha()),
        fmt_prob(100.0 * (1.0 - 2.0 * cfg.equivalence_alpha())),
    )
}

fn fmt_prob(v: f64) -> String {
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

    #[test]
    fn a_latency_tolerance_means_plus_delta() {
        // p99 tolerance 15 %: a p99 latency 16.5 % higher is beyond it (as the tables print it),
        // though it is within 1/(1 − 15 %) − 1 = 17.6 %.
        let base = suite(3);
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
        let rep = eval(&base, &cur);
        let row = verdict_of(&rep, "m/a", 100, "p99_ttft_ms");
        assert_eq!(row.tolerance_pct, Some(15.0));
        assert_eq!(row.verdict, Verdict::Regressed, "{row:?}");
        assert_eq!(
            verdict_of(&rep, "m/b", 100, "p99_ttft_ms").verdict,
            Verdict::Pass
        );
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
        let base = suite(1);
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
            assert_eq!(
                (row.model.as_str(), row.scenario.as_str()),
                ("m/b", "random-in1024-out128-n200")
            );
        }
        let better: Vec<_> = base.iter().map(|r| scaled(r, 1.25, 0.8)).collect();
        let rep = eval(&base, &better);
        assert_ne!(rep.verdict, TopVerdict::Fail);
        assert!(rep.counts.improved > 0);
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
                    && x.scenario == format!("random-in1024-out128-n{target}");
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
