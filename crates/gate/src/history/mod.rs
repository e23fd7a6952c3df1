//! Baseline history: the same numbers across several baselines (releases), per model × scenario
//! × metric, in release order, with change points flagged by the two-window test of
//! [`changepoint`] and the gate's noise for the metric as the band. Pure: baselines in, a
//! [`History`] out; it is rendered by `report::history` (terminal) and `report::html`.

use crate::baseline::Baseline;
use crate::gate::config::{MetricClass, MetricRule};
use crate::gate::{GateConfig, Machine};
use crate::record::Direction;

pub mod changepoint;

pub use changepoint::{ChangePoint, Detection, Settings};

/// The metrics a history shows when none are asked for.
pub const DEFAULT_METRICS: [&str; 6] = [
    "output_throughput",
    "median_ttft_ms",
    "p99_ttft_ms",
    "median_tpot_ms",
    "median_itl_ms",
    "median_e2el_ms",
];

/// The geometric mean of positive runs (the arithmetic mean otherwise), like every table shows.
fn central(v: &[f64]) -> Option<f64> {
    match v {
        [] => None,
        [one] => Some(*one),
        _ if v.iter().all(|x| *x > 0.0) => {
            Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
        }
        _ => Some(v.iter().sum::<f64>() / v.len() as f64),
    }
}

/// One baseline of the history (an x position).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `vllm v0.10.1`.
    pub label: String,
    pub path: String,
    pub engine: String,
    pub version: Option<String>,
    pub date: Option<String>,
}

/// One baseline's value of a series: the geometric mean of its runs, and the runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub value: f64,
    pub runs: Vec<f64>,
}

/// A model × scenario × metric across the baselines.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub model: String,
    pub scenario: String,
    pub metric: String,
    pub direction: Direction,
    /// One per [`History::entries`], `None` where that baseline lacks it.
    pub points: Vec<Option<Point>>,
    /// The gate's noise for this metric (sd of one run's log value, in percent).
    pub noise_pct: f64,
    /// The gate's tolerance δ for this metric, in percent (the smallest step flagged).
    pub tolerance_pct: f64,
    /// The test's outcome; change-point indices are entry indices.
    pub detection: Detection,
}

impl Series {
    /// Is a flagged step a regression (worse in the metric's direction)?
    pub fn is_worse(&self, c: &ChangePoint) -> bool {
        match self.direction {
            Direction::Higher => c.change_pct < 0.0,
            Direction::Lower => c.change_pct > 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub entries: Vec<Entry>,
    pub series: Vec<Series>,
    /// The test's window (points on each side of a boundary).
    pub window: usize,
    /// Where a baseline's runs measured on another machine than the one before it (by the
    /// platforms and calibration loops the runs recorded): the entry index and why. A step
    /// there can be the machine's.
    pub machine_changes: Vec<(usize, String)>,
}

impl History {
    /// Why entry `index`'s machine differs from the one before it, if it does.
    pub fn machine_change(&self, index: usize) -> Option<&str> {
        self.machine_changes
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, why)| why.as_str())
    }
}

/// The machine a baseline's runs recorded.
fn machine_of(b: &Baseline) -> Machine {
    let runs = || {
        b.models
            .iter()
            .flat_map(|m| &m.scenarios)
            .flat_map(|s| &s.runs)
    };
    Machine::of(
        runs().filter_map(|r| r.platform.as_ref()),
        runs().filter_map(|r| r.calibration_ms),
        runs().filter_map(|r| r.calibration_all_ms),
    )
}

/// Each baseline whose machine differs from the previous one's, with why.
fn machine_changes(ordered: &[&Baseline]) -> Vec<(usize, String)> {
    let machines: Vec<Machine> = ordered.iter().map(|b| machine_of(b)).collect();
    (1..machines.len())
        .filter_map(|i| {
            let why = machines[i].differences(
                &format!("#{}'s", i + 1),
                &machines[i - 1],
                &format!("#{}'s", i),
            );
            (!why.is_empty()).then(|| (i, why.join("; and ")))
        })
        .collect()
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HistoryError {
    #[error("a history needs at least one baseline")]
    Empty,
    #[error("metric `{0}` is in none of the baselines")]
    UnknownMetric(String),
}

/// `v0.10.1` → [0, 10, 1]; `0.5.1rc2` → [0, 5, 1, 2]: the numbers in a version, for ordering.
pub fn version_key(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or(u64::MAX))
        .collect()
}

/// Release order: by provenance date when every baseline has one (then version), otherwise
/// by engine version; ties keep the order given. Returns indices into `entries`.
pub fn release_order(entries: &[Entry]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    let all_dated = entries.iter().all(|e| e.date.is_some());
    idx.sort_by(|&a, &b| {
        let (ea, eb) = (&entries[a], &entries[b]);
        let by_version = || {
            version_key(ea.version.as_deref().unwrap_or(""))
                .cmp(&version_key(eb.version.as_deref().unwrap_or("")))
        };
        if all_dated {
            ea.date.cmp(&eb.date).then_with(by_version)
        } else {
            by_version()
        }
    });
    idx
}

/// The baselines in release order, each with its entry.
fn in_release_order(baselines: &[(String, Baseline)]) -> (Vec<Entry>, Vec<&Baseline>) {
    let raw: Vec<Entry> = baselines
        .iter()
        .map(|(path, b)| Entry {
            label: match &b.engine.version {
                Some(v) => format!("{} {v}", b.engine.name),
                None => b.engine.name.clone(),
            },
            path: path.clone(),
            engine: b.engine.name.clone(),
            version: b.engine.version.clone(),
            date: b.provenance.date.clone(),
        })
        .collect();
    let order = release_order(&raw);
    let entries: Vec<Entry> = order.iter().map(|&i| raw[i].clone()).collect();
    let ordered: Vec<&Baseline> = order.iter().map(|&i| &baselines[i].1).collect();
    (entries, ordered)
}

/// The metrics to show: the asked-for ones (an error names the first that no baseline has),
/// or the defaults the baselines have.
fn chosen_metrics(ordered: &[&Baseline], metrics: &[String]) -> Result<Vec<String>, HistoryError> {
    let known = |m: &str| {
        ordered.iter().any(|b| {
            b.models
                .iter()
                .flat_map(|mb| &mb.scenarios)
                .any(|s| s.metrics.contains_key(m))
        })
    };
    if metrics.is_empty() {
        return Ok(DEFAULT_METRICS
            .iter()
            .filter(|m| known(m))
            .map(|s| s.to_string())
            .collect());
    }
    if let Some(m) = metrics.iter().find(|m| !known(m)) {
        return Err(HistoryError::UnknownMetric(m.clone()));
    }
    Ok(metrics.to_vec())
}

/// Every (model, scenario), grouped by model: models in first-seen order over the release
/// order, and a model's scenarios in first-seen order.
fn model_scenarios(ordered: &[&Baseline]) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for b in ordered {
        for m in &b.models {
            for s in &m.scenarios {
                let k = (m.name.clone(), s.id.clone());
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
    }
    let mut models: Vec<&str> = Vec::new();
    for (m, _) in &keys {
        if !models.contains(&m.as_str()) {
            models.push(m);
        }
    }
    models
        .iter()
        .flat_map(|model| keys.iter().filter(move |(m, _)| m == model))
        .cloned()
        .collect()
}

/// A baseline's point of a model × scenario × metric, `None` where it lacks one of them.
fn point(b: &Baseline, model: &str, scenario: &str, metric: &str) -> Option<Point> {
    let runs = b
        .models
        .iter()
        .find(|m| m.name == model)?
        .scenarios
        .iter()
        .find(|s| s.id == scenario)?
        .metrics
        .get(metric)?
        .values
        .clone();
    Some(Point {
        value: central(&runs)?,
        runs,
    })
}

/// The change points of `points` (one per entry) under the gate's noise and tolerance for
/// `metric` (its `rule`), with change-point indices as entry indices; also the noise in percent.
fn detect(
    points: &[Option<Point>],
    metric: &str,
    rule: &MetricRule,
    window: usize,
) -> (Detection, f64) {
    let present: Vec<(usize, &Point)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.as_ref().map(|p| (i, p)))
        .collect();
    // A point is the geometric mean of its runs: its noise shrinks with √runs.
    let min_runs = present.iter().map(|(_, p)| p.runs.len()).min().unwrap_or(1);
    let noise_pct = rule
        .noise_pct
        .unwrap_or_else(|| MetricClass::of(metric).typical_noise_pct());
    let sigma = (1.0 + noise_pct / 100.0).ln() / (min_runs.max(1) as f64).sqrt();
    let values: Vec<f64> = present.iter().map(|(_, p)| p.value).collect();
    let mut detection = changepoint::detect(
        &values,
        &Settings {
            window,
            // Its own family (the boundaries of one series), not the gate's rows.
            alpha: Settings::default().alpha,
            min_change_pct: rule.tolerance_pct,
            noise_sigma: Some(sigma),
        },
    );
    for c in &mut detection.changes {
        c.index = present[c.index].0;
    }
    (detection, noise_pct)
}

/// Build the history of `baselines` (path, baseline) for `metrics` (default
/// [`DEFAULT_METRICS`]) under the gate settings `cfg` (noise and tolerance per metric).
pub fn build(
    baselines: &[(String, Baseline)],
    metrics: &[String],
    cfg: &GateConfig,
    window: usize,
) -> Result<History, HistoryError> {
    if baselines.is_empty() {
        return Err(HistoryError::Empty);
    }
    let (entries, ordered) = in_release_order(baselines);
    let metrics = chosen_metrics(&ordered, metrics)?;
    let mut series = Vec::new();
    for (model, scenario) in model_scenarios(&ordered) {
        for metric in &metrics {
            let points: Vec<Option<Point>> = ordered
                .iter()
                .map(|b| point(b, &model, &scenario, metric))
                .collect();
            if points.iter().all(Option::is_none) {
                continue;
            }
            let rule = cfg.rule(metric);
            let (detection, noise_pct) = detect(&points, metric, &rule, window);
            series.push(Series {
                model: model.clone(),
                scenario: scenario.clone(),
                metric: metric.clone(),
                direction: rule.direction,
                points,
                noise_pct,
                tolerance_pct: rule.tolerance_pct,
                detection,
            });
        }
    }
    Ok(History {
        entries,
        series,
        window,
        machine_changes: machine_changes(&ordered),
    })
}

/// The noise band of a series: per segment between change points, the segment's geometric
/// mean × e^(±2τ). (first entry, last entry, low, high).
pub fn bands(s: &Series) -> Vec<(usize, usize, f64, f64)> {
    let Some(sigma) = s.detection.sigma else {
        return Vec::new();
    };
    let mut cuts: Vec<usize> = s.detection.changes.iter().map(|c| c.index).collect();
    cuts.push(s.points.len());
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts {
        let seg: Vec<(usize, f64)> = (start..cut)
            .filter_map(|i| s.points[i].as_ref().map(|p| (i, p.value)))
            .collect();
        if let (Some(first), Some(last)) = (seg.first(), seg.last()) {
            let logs: Vec<f64> = seg.iter().map(|(_, v)| v.ln()).collect();
            let m = logs.iter().sum::<f64>() / logs.len() as f64;
            out.push((
                first.0,
                last.0,
                (m - 2.0 * sigma).exp(),
                (m + 2.0 * sigma).exp(),
            ));
        }
        start = cut;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{baseline as synthetic, release_series as series_of};

    #[test]
    fn planted_step_across_baselines_is_flagged() {
        let h = build(
            &series_of(|i| if i >= 6 { 0.8 } else { 1.0 }),
            &[],
            &GateConfig::default(),
            3,
        )
        .unwrap();
        assert_eq!(h.entries[0].label, "vllm v0.1.0");
        assert_eq!(h.entries[9].label, "vllm v0.10.0");
        let thr = h
            .series
            .iter()
            .find(|s| s.metric == "output_throughput")
            .unwrap();
        let idx: Vec<usize> = thr.detection.changes.iter().map(|c| c.index).collect();
        assert_eq!(idx, [6]);
        assert!(thr.is_worse(&thr.detection.changes[0]));
        let ttft = h
            .series
            .iter()
            .find(|s| s.metric == "median_ttft_ms")
            .unwrap();
        assert_eq!(ttft.detection.changes.len(), 1);
        assert!(ttft.is_worse(&ttft.detection.changes[0]), "TTFT went up");
        // The bands: one per segment, around each level.
        let b = bands(thr);
        assert_eq!(b.len(), 2);
        assert!(b[0].2 < 2000.0 && 2000.0 < b[0].3);
        assert!(b[1].2 < 1600.0 && 1600.0 < b[1].3);
    }

    #[test]
    fn flat_noisy_history_is_not_flagged() {
        let h = build(&series_of(|_| 1.0), &[], &GateConfig::default(), 3).unwrap();
        for s in &h.series {
            assert!(s.detection.changes.is_empty(), "{s:?}");
        }
    }

    #[test]
    fn ordering_and_errors() {
        assert_eq!(version_key("v0.10.1"), [0, 10, 1]);
        assert!(version_key("v0.9.2") < version_key("v0.10.0"));
        let e = |v: &str, d: Option<&str>| Entry {
            label: v.into(),
            path: String::new(),
            engine: "vllm".into(),
            version: Some(v.into()),
            date: d.map(str::to_string),
        };
        // All dated: by date.
        let es = [e("v2", Some("2025-01-02")), e("v1", Some("2025-03-01"))];
        assert_eq!(release_order(&es), [0, 1]);
        // Not all dated: by version.
        let es = [e("v2", Some("2025-01-02")), e("v1", None)];
        assert_eq!(release_order(&es), [1, 0]);
        assert_eq!(
            build(&[], &[], &GateConfig::default(), 3).unwrap_err(),
            HistoryError::Empty
        );
        let one = vec![("a.toml".to_string(), synthetic("v1", None, &[1.0]))];
        assert_eq!(
            build(&one, &["p99_itl_ms".into()], &GateConfig::default(), 3).unwrap_err(),
            HistoryError::UnknownMetric("p99_itl_ms".into())
        );
    }
}
