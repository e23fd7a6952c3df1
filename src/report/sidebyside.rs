//! Side-by-side tables of baselines (pure): two baselines → per model and scenario, the
//! headline metrics of each side and the ratio B/A (`perfgate compare`), and one baseline →
//! a summary (`perfgate baseline show`). Models pair by identical name, or only through an
//! explicit `--map A=B` (Qwen3-8B and Qwen3-8B-FP8 are different models). Renderers return
//! strings; nothing here prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::baseline::{Baseline, ModelBaseline, ScenarioBaseline};
use crate::record::Direction;

/// The metrics a side-by-side table shows, in order.
pub const HEADLINE: [&str; 8] = [
    "output_throughput",
    "request_throughput",
    "median_ttft_ms",
    "p99_ttft_ms",
    "median_tpot_ms",
    "median_itl_ms",
    "p99_itl_ms",
    "median_e2el_ms",
];

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SideBySideError {
    #[error("--map `{0}`: expected `A_MODEL=B_MODEL`")]
    BadMap(String),
    #[error("--map: model `{0}` is not in {1}")]
    UnknownModel(String, String),
}

/// Explicit pairings of differently named models: A's name → B's name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelMap(pub BTreeMap<String, String>);

impl ModelMap {
    pub fn parse(items: &[String]) -> Result<ModelMap, SideBySideError> {
        let mut m = BTreeMap::new();
        for it in items {
            let (a, b) = it
                .split_once('=')
                .filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty())
                .ok_or_else(|| SideBySideError::BadMap(it.clone()))?;
            m.insert(a.trim().to_string(), b.trim().to_string());
        }
        Ok(ModelMap(m))
    }
}

/// One row: a metric of a scenario of a model pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub model_a: String,
    pub model_b: String,
    pub scenario: String,
    pub metric: String,
    pub direction: Direction,
    /// Geometric mean of A's runs.
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// b / a.
    pub ratio: Option<f64>,
}

impl Row {
    /// Which side is better, if both are known and differ.
    pub fn better(&self) -> Option<char> {
        let r = self.ratio?;
        if r == 1.0 {
            return None;
        }
        let b_better = match self.direction {
            Direction::Higher => r > 1.0,
            Direction::Lower => r < 1.0,
        };
        Some(if b_better { 'B' } else { 'A' })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub a_label: String,
    pub b_label: String,
    pub rows: Vec<Row>,
    /// Models and scenarios present on one side only.
    pub unpaired: Vec<String>,
}

fn label(b: &Baseline) -> String {
    match &b.engine.version {
        Some(v) => format!("{} {v}", b.engine.name),
        None => b.engine.name.clone(),
    }
}

/// Geometric mean of positive values (the arithmetic mean if any value is ≤ 0).
pub fn central(values: &[f64]) -> Option<f64> {
    match values {
        [] => return None,
        [one] => return Some(*one),
        _ => {}
    }
    if values.iter().all(|v| *v > 0.0) {
        Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

fn value(s: &ScenarioBaseline, metric: &str) -> Option<f64> {
    s.metrics.get(metric).and_then(|m| central(&m.values))
}

/// Pair the models and scenarios of two baselines and compute the headline ratios.
pub fn compare(a: &Baseline, b: &Baseline, map: &ModelMap) -> Result<Table, SideBySideError> {
    for (ma, mb) in &map.0 {
        if !a.models.iter().any(|m| &m.name == ma) {
            return Err(SideBySideError::UnknownModel(ma.clone(), "A".into()));
        }
        if !b.models.iter().any(|m| &m.name == mb) {
            return Err(SideBySideError::UnknownModel(mb.clone(), "B".into()));
        }
    }
    let mut rows = Vec::new();
    let mut unpaired = Vec::new();
    let mut used_b: Vec<&str> = Vec::new();
    for ma in &a.models {
        let want = map.0.get(&ma.name).unwrap_or(&ma.name);
        let Some(mb) = b.models.iter().find(|m| &m.name == want) else {
            unpaired.push(format!("model `{}` is only in A ({})", ma.name, label(a)));
            continue;
        };
        used_b.push(&mb.name);
        pair_model(ma, mb, &mut rows, &mut unpaired);
    }
    for mb in &b.models {
        if !used_b.contains(&mb.name.as_str()) {
            unpaired.push(format!("model `{}` is only in B ({})", mb.name, label(b)));
        }
    }
    Ok(Table {
        a_label: label(a),
        b_label: label(b),
        rows,
        unpaired,
    })
}

fn pair_model(
    ma: &ModelBaseline,
    mb: &ModelBaseline,
    rows: &mut Vec<Row>,
    unpaired: &mut Vec<String>,
) {
    for sa in &ma.scenarios {
        let Some(sb) = mb.scenarios.iter().find(|s| s.id == sa.id) else {
            unpaired.push(format!(
                "model `{}`: scenario `{}` is only in A",
                ma.name, sa.id
            ));
            continue;
        };
        for metric in HEADLINE {
            let (a, b) = (value(sa, metric), value(sb, metric));
            if a.is_none() && b.is_none() {
                continue;
            }
            let ratio = match (a, b) {
                (Some(x), Some(y)) if x != 0.0 => Some(y / x),
                _ => None,
            };
            rows.push(Row {
                model_a: ma.name.clone(),
                model_b: mb.name.clone(),
                scenario: sa.id.clone(),
                metric: metric.to_string(),
                direction: Direction::of(metric),
                a,
                b,
                ratio,
            });
        }
    }
    for sb in &mb.scenarios {
        if !ma.scenarios.iter().any(|s| s.id == sb.id) {
            unpaired.push(format!(
                "model `{}`: scenario `{}` is only in B",
                mb.name, sb.id
            ));
        }
    }
}

fn fmt_value(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), |v| format!("{v:.2}"))
}

fn fmt_ratio(r: &Row) -> String {
    match r.ratio {
        Some(x) => match r.better() {
            Some(side) => format!("{x:.3}× ({side} better)"),
            None => format!("{x:.3}×"),
        },
        None => "—".into(),
    }
}

fn model_cell(r: &Row) -> String {
    if r.model_a == r.model_b {
        r.model_a.clone()
    } else {
        format!("{} ↔ {}", r.model_a, r.model_b)
    }
}

/// A plain aligned table (no colour).
pub fn render_terminal(t: &Table) -> String {
    let header = [
        "model".to_string(),
        "scenario".into(),
        "metric".into(),
        format!("A: {}", t.a_label),
        format!("B: {}", t.b_label),
        "B/A".into(),
    ];
    let mut cells: Vec<[String; 6]> = vec![header];
    for r in &t.rows {
        cells.push([
            model_cell(r),
            r.scenario.clone(),
            r.metric.clone(),
            fmt_value(r.a),
            fmt_value(r.b),
            fmt_ratio(r),
        ]);
    }
    aligned(&cells)
}

fn aligned<const N: usize>(cells: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in cells {
        for (i, c) in row.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for (ri, row) in cells.iter().enumerate() {
        let mut line = String::new();
        for (i, c) in row.iter().enumerate() {
            let pad = widths[i] - c.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            // numbers right-aligned, text left-aligned
            if i >= 3 && ri > 0 {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            } else {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if ri == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * (N - 1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
    out
}

/// A GitHub-flavoured markdown table.
pub fn render_markdown(t: &Table) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### {} (A) vs {} (B)\n", t.a_label, t.b_label);
    let _ = writeln!(
        s,
        "| model | scenario | metric | A: {} | B: {} | B/A |",
        t.a_label, t.b_label
    );
    s.push_str("|---|---|---|---:|---:|---:|\n");
    for r in &t.rows {
        let _ = writeln!(
            s,
            "| {} | `{}` | `{}` | {} | {} | {} |",
            model_cell(r),
            r.scenario,
            r.metric,
            fmt_value(r.a),
            fmt_value(r.b),
            fmt_ratio(r)
        );
    }
    if !t.unpaired.is_empty() {
        s.push_str("\nNot compared:\n");
        for u in &t.unpaired {
            let _ = writeln!(s, "- {u}");
        }
    }
    s
}

/// One baseline as a table: per model and scenario, the run count and a few headline values.
pub fn summary(b: &Baseline) -> String {
    let mut cells: Vec<[String; 7]> = vec![[
        "model".into(),
        "scenario".into(),
        "runs".into(),
        "output tok/s".into(),
        "median TTFT ms".into(),
        "median TPOT ms".into(),
        "p99 ITL ms".into(),
    ]];
    for m in &b.models {
        for s in &m.scenarios {
            cells.push([
                m.name.clone(),
                s.id.clone(),
                s.runs.len().to_string(),
                fmt_value(value(s, "output_throughput")),
                fmt_value(value(s, "median_ttft_ms")),
                fmt_value(value(s, "median_tpot_ms")),
                fmt_value(value(s, "p99_itl_ms")),
            ]);
        }
    }
    let mut out = format!("{} — {} models\n\n", label(b), b.models.len());
    out.push_str(&aligned(&cells));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::{EngineInfo, MetricSeries};
    use crate::record::ScenarioParams;

    fn baseline(engine: &str, model: &str, tput: f64, ttft: f64) -> Baseline {
        let params = ScenarioParams {
            dataset_name: "sharegpt".into(),
            num_prompts: 100,
            ..Default::default()
        };
        let mut metrics = BTreeMap::new();
        metrics.insert(
            "output_throughput".to_string(),
            MetricSeries {
                direction: Direction::Higher,
                values: vec![tput],
            },
        );
        metrics.insert(
            "median_ttft_ms".to_string(),
            MetricSeries {
                direction: Direction::Lower,
                values: vec![ttft],
            },
        );
        Baseline {
            schema_version: 1,
            engine: EngineInfo {
                name: engine.into(),
                version: Some("v1".into()),
                ..Default::default()
            },
            provenance: Default::default(),
            gate: None,
            models: vec![ModelBaseline {
                name: model.into(),
                scenarios: vec![ScenarioBaseline {
                    id: params.id(),
                    params,
                    runs: vec![Default::default()],
                    metrics,
                }],
                ..Default::default()
            }],
        }
    }

    #[test]
    fn pairs_by_name_and_computes_ratios() {
        let a = baseline("vllm", "Qwen/Qwen3-8B", 100.0, 50.0);
        let b = baseline("sglang", "Qwen/Qwen3-8B", 125.0, 40.0);
        let t = compare(&a, &b, &ModelMap::default()).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].metric, "output_throughput");
        assert_eq!(t.rows[0].ratio, Some(1.25));
        assert_eq!(t.rows[0].better(), Some('B'));
        assert_eq!(t.rows[1].ratio, Some(0.8));
        assert_eq!(t.rows[1].better(), Some('B'));
        assert!(t.unpaired.is_empty());
        let md = render_markdown(&t);
        assert!(md.contains("| Qwen/Qwen3-8B | `sharegpt-n100` | `output_throughput` | 100.00 | 125.00 | 1.250× (B better) |"), "{md}");
        let term = render_terminal(&t);
        assert!(term.lines().next().unwrap().starts_with("model"), "{term}");
    }

    #[test]
    fn different_names_pair_only_through_a_map() {
        let a = baseline("vllm", "Qwen/Qwen3-8B", 100.0, 50.0);
        let b = baseline("lmdeploy", "Qwen/Qwen3-8B-FP8", 150.0, 50.0);
        let t = compare(&a, &b, &ModelMap::default()).unwrap();
        assert!(t.rows.is_empty());
        assert_eq!(t.unpaired.len(), 2);
        let map = ModelMap::parse(&["Qwen/Qwen3-8B=Qwen/Qwen3-8B-FP8".to_string()]).unwrap();
        let t = compare(&a, &b, &map).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].ratio, Some(1.5));
        assert!(render_terminal(&t).contains("Qwen/Qwen3-8B ↔ Qwen/Qwen3-8B-FP8"));
        assert_eq!(
            ModelMap::parse(&["nope".to_string()])
                .unwrap_err()
                .to_string(),
            "--map `nope`: expected `A_MODEL=B_MODEL`"
        );
        let bad = ModelMap::parse(&["x=Qwen/Qwen3-8B-FP8".to_string()]).unwrap();
        assert_eq!(
            compare(&a, &b, &bad).unwrap_err().to_string(),
            "--map: model `x` is not in A"
        );
    }

    #[test]
    fn central_is_the_geometric_mean() {
        assert_eq!(central(&[]), None);
        assert!((central(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    }
}
