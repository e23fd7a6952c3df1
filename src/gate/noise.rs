//! Noise per row, with the engine launch as the unit: runs are grouped by launch (a launch's
//! value is the median of its runs' logs, so one odd run inside a launch does not move it), the
//! spread between launches is learnt from the row's own history, an outlying launch is set aside
//! when there are enough to tell, and the estimate is shrunk toward a weak prior when history is
//! short. The same numbers, split into their two levels (between launches, within a launch), are
//! what `perfgate baseline noise` prints.

use serde::{Deserialize, Serialize};

use super::stats::{self, StatsError};
use crate::record::ScenarioResult;

/// The scenario name of an engine-wide test's row.
pub const ENGINE_WIDE: &str = "(engine-wide)";

/// A launch's identity for grouping: its `launch_id`, else the run's own index (records
/// without launch ids — imports, older live runs — count each run as its own launch).
pub fn launch_key(r: &ScenarioResult) -> String {
    match &r.launch_id {
        Some(id) => format!("L:{id}"),
        None => format!("run{}", r.run_index),
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
    /// Whether every record carried a launch id.
    pub has_ids: bool,
}

impl Launches {
    /// Group the values of `metric` in `recs` by launch. Records without the metric are skipped.
    pub fn of(recs: &[&ScenarioResult], metric: &str) -> Result<Launches, StatsError> {
        let mut keys: Vec<String> = Vec::new();
        let mut runs: Vec<Vec<f64>> = Vec::new();
        let mut has_ids = true;
        for r in recs {
            let Some(v) = r.metric(metric) else { continue };
            if !(v.is_finite() && v > 0.0) {
                return Err(StatsError::NonPositive(v));
            }
            has_ids &= r.launch_id.is_some();
            let k = launch_key(r);
            match keys.iter().position(|x| *x == k) {
                Some(i) => runs[i].push(v.ln()),
                None => {
                    keys.push(k);
                    runs.push(vec![v.ln()]);
                }
            }
        }
        if keys.is_empty() {
            return Err(StatsError::Empty);
        }
        let values = runs
            .iter()
            .map(|r| stats::median(r).expect("a launch has a run"))
            .collect();
        Ok(Launches {
            keys,
            values,
            runs,
            has_ids,
        })
    }

    /// A series of one value per launch (an engine-wide series), as launches of one run each,
    /// keyed by position.
    pub fn single(values: Vec<f64>, has_ids: bool) -> Launches {
        let keys = (0..values.len()).map(|i| i.to_string()).collect();
        Launches::keyed(keys, values, has_ids)
    }

    /// One value per launch under the given keys, as launches of one run each.
    pub fn keyed(keys: Vec<String>, values: Vec<f64>, has_ids: bool) -> Launches {
        Launches {
            keys,
            runs: values.iter().map(|v| vec![*v]).collect(),
            values,
            has_ids,
        }
    }

    pub fn n(&self) -> usize {
        self.values.len()
    }

    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    pub fn n_runs(&self) -> usize {
        self.runs.iter().map(Vec::len).sum()
    }

    /// The launches kept for the spread: all of them, less outliers (more than
    /// [`OUTLIER_K`] robust sd from the median, with ≥ 5 launches).
    fn kept(&self) -> (Vec<f64>, usize) {
        let out = stats::outliers(&self.values, OUTLIER_K);
        let kept = (0..self.n())
            .filter(|i| !out.contains(i))
            .map(|i| self.values[i])
            .collect();
        (kept, out.len())
    }

    /// Sum of squared deviations of the kept launch values from their mean, its degrees of
    /// freedom, and how many launches were set aside as outliers.
    pub fn spread(&self) -> (f64, f64, usize) {
        let (kept, dropped) = self.kept();
        let n = kept.len();
        if n < 2 {
            return (0.0, 0.0, dropped);
        }
        let m = kept.iter().sum::<f64>() / n as f64;
        let ss = kept.iter().map(|x| (x - m).powi(2)).sum();
        (ss, (n - 1) as f64, dropped)
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

/// The engine-wide series of one side: for each launch (in the first row's order) that ran
/// every row, the weighted mean of its values minus the row's `centre`. `rows` pairs each row's
/// launches with its weight (1/sd² in the gate) and centre (the baseline's mean). Used by the
/// engine-wide test and by `perfgate baseline noise`.
pub fn pooled(rows: &[(&Launches, f64, f64)]) -> Vec<f64> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let wsum: f64 = rows.iter().map(|r| r.1).sum();
    let mut out = Vec::new();
    for key in &first.0.keys {
        let mut z = 0.0;
        let mut complete = true;
        for (l, w, centre) in rows {
            match l.keys.iter().position(|k| k == key) {
                Some(i) => z += w * (l.values[i] - centre),
                None => complete = false,
            }
        }
        if complete {
            out.push(z / wsum);
        }
    }
    out
}

/// The correlation between two scenarios' values of one launch that the engine-wide tests'
/// prior assumes: the GPU corpus's mean over its 3 scenario pairs and the 5 engine-wide metrics
/// (0.42; `cargo run --release --example replay` prints each). Launches are slow or fast in every
/// scenario at once, so pooling scenarios removes less noise than independent rows would.
pub const SCENARIO_CORR_PRIOR: f64 = 0.42;

/// The prior sd of an engine-wide series: the sd of the weighted mean of rows whose own sd is
/// 1/√wᵢ, correlated [`SCENARIO_CORR_PRIOR`] between any two:
/// √(Σᵢ wᵢ + ρ Σᵢ≠ⱼ √(wᵢ wⱼ)) / Σ w.
pub fn pooled_prior_sd(weights: &[f64]) -> f64 {
    let wsum: f64 = weights.iter().sum();
    let roots: f64 = weights.iter().map(|w| w.sqrt()).sum();
    // Σᵢ≠ⱼ √(wᵢ wⱼ) = (Σ √wᵢ)² − Σ wᵢ
    let cross = roots * roots - wsum;
    (wsum + SCENARIO_CORR_PRIOR * cross).sqrt() / wsum
}

/// A launch further than this many robust standard deviations from the median of its side is
/// an outlier (set aside from the noise estimate; with 5 or more launches only).
pub const OUTLIER_K: f64 = 4.0;

/// Where a row's noise came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// The row's own repeated launches (both sides), shrunk toward the prior.
    Launches,
    /// The row's own repeated runs, but without launch ids: runs stand in for launches, which
    /// understates the noise if they shared a launch.
    Runs,
    /// No repeated launches on either side: the prior alone (conservative).
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
    /// Launches set aside as outliers.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outliers: usize,
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
            NoiseSource::Prior => "prior: no repeated launches".to_string(),
            NoiseSource::Pairs => format!("own pairs, {:.0} df", self.df),
        };
        let out = if self.outliers > 0 {
            format!("; {} outlier launch(es) set aside", self.outliers)
        } else {
            String::new()
        };
        format!("noise {:.1} % ({what}{out})", self.sd_pct)
    }
}

/// The noise of a row from the launches of its sides, shrunk toward `prior_sd` (sd of the log
/// value) worth `prior_df` degrees of freedom. `None` when neither data nor prior give any.
pub fn estimate(sides: &[&Launches], prior_sd: f64, prior_df: f64) -> Option<Noise> {
    let (mut ss, mut nu, mut outliers) = (0.0, 0.0, 0);
    for s in sides {
        let (a, b, o) = s.spread();
        ss += a;
        nu += b;
        outliers += o;
    }
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
    })
}

/// Both levels of one row's noise, for `perfgate baseline noise`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwoLevel {
    pub launches: usize,
    pub runs: usize,
    /// sd of launch values (%), and its degrees of freedom; `None` with fewer than 2 launches.
    pub between_sd_pct: Option<f64>,
    pub between_df: f64,
    /// sd of runs around their launch's mean (%), and its df; `None` without repeated runs.
    pub within_sd_pct: Option<f64>,
    pub within_df: f64,
    /// The sd the gate would use for one launch, shrunk toward the prior (%), and its df.
    pub gate_sd_pct: f64,
    pub gate_df: f64,
    pub source: NoiseSource,
    pub outliers: usize,
}

/// Both levels of noise of one row's history.
pub fn two_level(l: &Launches, prior_sd: f64, prior_df: f64) -> Option<TwoLevel> {
    let (ss, df, _) = l.spread();
    let (wss, wdf) = l.within();
    let gate = estimate(&[l], prior_sd, prior_df)?;
    Some(TwoLevel {
        launches: l.n(),
        runs: l.n_runs(),
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
    /// Candidate launches an unchanged engine would likely need to PASS against this baseline
    /// (`None`: the baseline needs more launches first, or more than 50).
    pub launches_to_pass: Option<u32>,
}

/// Candidate launches an unchanged engine would likely need to pass a row of this noise.
fn to_pass(
    levels: &TwoLevel,
    rule: &super::config::MetricRule,
    n: usize,
    cfg: &super::GateConfig,
) -> Option<u32> {
    let lim = match rule.direction {
        crate::record::Direction::Higher => -(-rule.tolerance_pct / 100.0).ln_1p(),
        crate::record::Direction::Lower => (rule.tolerance_pct / 100.0).ln_1p(),
    };
    stats::launches_needed(
        0.0,
        lim,
        levels.gate_sd_pct / 100.0,
        n,
        levels.gate_df,
        cfg.equivalence_alpha(),
        50,
    )
    .ok()
}

/// The engine-wide rows of one model: per engine-wide metric, the noise of each launch's
/// precision-weighted mean over the model's scenarios (weights 1/sd² of each row's gate noise,
/// launches that ran every scenario), as the engine-wide test sees it. Needs ≥ 2 scenarios.
fn engine_wide_rows(
    model: &str,
    recs: &[Vec<&ScenarioResult>],
    cfg: &super::GateConfig,
) -> Vec<NoiseRow> {
    let mut out = Vec::new();
    for metric in cfg.engine_wide_list() {
        let rule = cfg.rule(&metric);
        let mut rows: Vec<(Launches, f64)> = Vec::new();
        for r in recs {
            let Ok(l) = Launches::of(r, &metric) else {
                continue;
            };
            let Some(n) = estimate(&[&l], rule.noise_pct / 100.0, cfg.prior_df()) else {
                continue;
            };
            rows.push((l, n.weight()));
        }
        if rows.len() < 2 {
            continue;
        }
        let weighted: Vec<(&Launches, f64, f64)> =
            rows.iter().map(|(l, w)| (l, *w, l.mean())).collect();
        let z = pooled(&weighted);
        let ids = rows.iter().all(|r| r.0.has_ids);
        let series = Launches::single(z, ids);
        if series.n() == 0 {
            continue;
        }
        let w: Vec<f64> = rows.iter().map(|r| r.1).collect();
        let Some(mut levels) = two_level(&series, pooled_prior_sd(&w), cfg.prior_df()) else {
            continue;
        };
        // A launch's runs are the scenarios' runs: count them, not the series' one per launch.
        levels.runs = rows.iter().map(|r| r.0.n_runs()).max().unwrap_or(0);
        let launches_to_pass = to_pass(&levels, &rule, series.n(), cfg);
        out.push(NoiseRow {
            model: model.to_string(),
            scenario: ENGINE_WIDE.to_string(),
            metric,
            gated: true,
            levels,
            tolerance_pct: rule.tolerance_pct,
            launches_to_pass,
        });
    }
    out
}

/// The noise of every gated and shown metric of every row of a baseline's records, then each
/// model's engine-wide rows.
pub fn table(records: &[ScenarioResult], cfg: &super::GateConfig) -> Vec<NoiseRow> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in records {
        let k = (r.model.clone(), r.scenario_id());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    let mut by_model: Vec<(String, Vec<Vec<&ScenarioResult>>)> = Vec::new();
    for (model, scenario) in keys {
        let recs: Vec<&ScenarioResult> = records
            .iter()
            .filter(|r| r.model == model && r.scenario_id() == scenario)
            .collect();
        match by_model.iter_mut().find(|m| m.0 == model) {
            Some(m) => m.1.push(recs.clone()),
            None => by_model.push((model.clone(), vec![recs.clone()])),
        }
        for metric in cfg.metric_list() {
            if metric == "success_rate" {
                continue;
            }
            let rule = cfg.rule(&metric);
            let Ok(l) = Launches::of(&recs, &metric) else {
                continue;
            };
            let Some(levels) = two_level(&l, rule.noise_pct / 100.0, cfg.prior_df()) else {
                continue;
            };
            let launches_to_pass = to_pass(&levels, &rule, l.n(), cfg);
            out.push(NoiseRow {
                model: model.clone(),
                scenario: scenario.clone(),
                metric,
                gated: rule.gated,
                levels,
                tolerance_pct: rule.tolerance_pct,
                launches_to_pass,
            });
        }
    }
    for (model, scenarios) in &by_model {
        out.extend(engine_wide_rows(model, scenarios, cfg));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample::record;

    fn rec(v: f64, launch: Option<&str>, run: u32) -> ScenarioResult {
        let mut r = record("m", 100, 1.0, 1.0);
        r.output_throughput = v;
        r.launch_id = launch.map(str::to_string);
        r.run_index = run;
        r
    }

    #[test]
    fn runs_of_one_launch_are_one_unit() {
        let recs = [
            rec(100.0, Some("a"), 0),
            rec(110.0, Some("a"), 1),
            rec(300.0, Some("a"), 2), // one odd run: the median ignores it
            rec(104.0, Some("b"), 3),
        ];
        let refs: Vec<&ScenarioResult> = recs.iter().collect();
        let l = Launches::of(&refs, "output_throughput").unwrap();
        assert_eq!(l.n(), 2);
        assert_eq!(l.n_runs(), 4);
        assert!((l.values[0] - 110f64.ln()).abs() < 1e-12);
        assert!((l.values[1] - 104f64.ln()).abs() < 1e-12);
        assert!(l.has_ids);
        let (ss, df, out) = l.spread();
        assert_eq!((df, out), (1.0, 0));
        let d = 110f64.ln() - 104f64.ln();
        assert!((ss - d * d / 2.0).abs() < 1e-12);
    }

    #[test]
    fn records_without_ids_count_runs_as_launches() {
        let recs = [rec(100.0, None, 0), rec(102.0, None, 1)];
        let refs: Vec<&ScenarioResult> = recs.iter().collect();
        let l = Launches::of(&refs, "output_throughput").unwrap();
        assert_eq!(l.n(), 2);
        assert!(!l.has_ids);
        let n = estimate(&[&l], 0.05, 2.0).unwrap();
        assert_eq!(n.source, NoiseSource::Runs);
        let one = Launches::of(&refs[..1], "output_throughput").unwrap();
        let n = estimate(&[&one, &one], 0.05, 2.0).unwrap();
        assert_eq!(n.source, NoiseSource::Prior);
        assert!((n.sd_pct - 5.0).abs() < 1e-12);
        assert_eq!(n.df, 2.0);
        assert!(n.describe().contains("prior"), "{}", n.describe());
    }

    #[test]
    fn an_outlier_launch_is_set_aside() {
        let vals = [100.0, 101.0, 99.0, 100.5, 99.5, 160.0];
        let recs: Vec<_> = vals
            .iter()
            .enumerate()
            .map(|(i, v)| rec(*v, Some(&format!("l{i}")), i as u32))
            .collect();
        let refs: Vec<&ScenarioResult> = recs.iter().collect();
        let l = Launches::of(&refs, "output_throughput").unwrap();
        let n = estimate(&[&l], 0.05, 0.0).unwrap();
        assert_eq!(n.outliers, 1);
        assert_eq!(n.own_df, 4.0);
        // numpy: np.std(np.log([100, 101, 99, 100.5, 99.5]), ddof=1) * 100
        assert!(
            (n.sd_pct - 0.790_595_274_851_748_3).abs() < 1e-9,
            "{}",
            n.sd_pct
        );
    }

    #[test]
    fn the_table_covers_every_metric_and_says_what_passes() {
        let recs: Vec<ScenarioResult> = (0..6)
            .map(|i| rec(100.0 + i as f64, Some(&format!("l{i}")), i))
            .collect();
        let t = table(&recs, &crate::gate::GateConfig::default());
        let thr = t.iter().find(|r| r.metric == "output_throughput").unwrap();
        assert!(thr.gated);
        assert_eq!((thr.levels.launches, thr.levels.between_df), (6, 5.0));
        assert_eq!(thr.levels.source, NoiseSource::Launches);
        assert!(thr.launches_to_pass.is_some(), "{thr:?}");
        assert!(t.iter().all(|r| r.metric != "success_rate"));
    }

    #[test]
    fn the_pooled_prior_counts_the_scenarios_correlation() {
        // Two rows of sd 5 % and 10 % (weights 400 and 100), correlated 0.42:
        // numpy: np.sqrt(500 + 0.42 * 2 * np.sqrt(400 * 100)) / 500 = 0.051691391933280345
        let got = pooled_prior_sd(&[400.0, 100.0]);
        assert!((got - 0.051_691_391_933_280_345).abs() < 1e-12, "{got}");
        // More than independent rows would give (1/√Σw), less than the weighted mean of sds.
        assert!(got > (1.0f64 / 500.0).sqrt());
        assert!(got < (400.0 * 0.05 + 100.0 * 0.1) / 500.0);
        // One row: its own sd.
        assert!((pooled_prior_sd(&[400.0]) - 0.05).abs() < 1e-15);
    }

    #[test]
    fn the_table_ends_with_each_models_engine_wide_rows() {
        // Two scenarios, four launches each; with no prior the weights are 1/sd² of each
        // scenario's own launches.
        let mut recs = Vec::new();
        for (i, (a, b)) in [(100.0, 50.0), (103.0, 50.5), (98.0, 49.0), (101.0, 51.5)]
            .iter()
            .enumerate()
        {
            for (n, v) in [(100, a), (200, b)] {
                let mut r = record("m", n, 1.0, 1.0);
                r.output_throughput = *v;
                r.launch_id = Some(format!("l{i}"));
                r.run_index = i as u32;
                recs.push(r);
            }
        }
        let cfg = crate::gate::GateConfig::parse("prior_df = 0\n", "g").unwrap();
        let t = table(&recs, &cfg);
        let ew: Vec<&NoiseRow> = t.iter().filter(|r| r.scenario == ENGINE_WIDE).collect();
        assert!(t
            .iter()
            .rev()
            .take(ew.len())
            .all(|r| r.scenario == ENGINE_WIDE));
        let thr = ew
            .iter()
            .find(|r| r.metric == "output_throughput")
            .expect("an engine-wide throughput row");
        assert!(thr.gated);
        assert_eq!((thr.levels.launches, thr.levels.between_df), (4, 3.0));
        // numpy: a, b = log of the two scenarios' values; w = 1/var(ddof=1) each;
        // z = (wa (a − ā) + wb (b − b̄)) / (wa + wb); z.std(ddof=1) * 100
        let sd = thr.levels.between_sd_pct.unwrap();
        assert!((sd - 1.910_890_423_190_752_4).abs() < 1e-9, "{sd}");
        // One scenario alone has no engine-wide row.
        let one: Vec<ScenarioResult> = recs
            .iter()
            .filter(|r| r.params.num_prompts == 100)
            .cloned()
            .collect();
        assert!(table(&one, &cfg).iter().all(|r| r.scenario != ENGINE_WIDE));
    }

    #[test]
    fn two_levels_split_between_and_within() {
        let recs = [
            rec(100.0, Some("a"), 0),
            rec(102.0, Some("a"), 1),
            rec(110.0, Some("b"), 2),
            rec(112.0, Some("b"), 3),
        ];
        let refs: Vec<&ScenarioResult> = recs.iter().collect();
        let l = Launches::of(&refs, "output_throughput").unwrap();
        let t = two_level(&l, 0.05, 0.0).unwrap();
        assert_eq!((t.launches, t.runs), (2, 4));
        assert_eq!((t.between_df, t.within_df), (1.0, 2.0));
        // within: each pair differs by ln(102/100) and ln(112/110); ss = Σ d²/2.
        let (d1, d2) = ((102f64 / 100.0).ln(), (112f64 / 110.0).ln());
        let within = ((d1 * d1 + d2 * d2) / 2.0 / 2.0).sqrt() * 100.0;
        assert!((t.within_sd_pct.unwrap() - within).abs() < 1e-9);
        assert!(t.between_sd_pct.unwrap() > t.within_sd_pct.unwrap());
    }
}
