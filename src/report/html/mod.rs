//! The sign-off page: one self-contained HTML file (inline SVG charts, inline CSS and a few
//! lines of JS, nothing fetched at view time) rendered with a minijinja template. Three views
//! share it: a check (baseline vs current, with the gate's verdicts), a comparison of several
//! baselines, and the history of baselines with change points. Pure: the caller reads the files
//! and hands over records, the report and provenance; this module never computes statistics
//! beyond the geometric mean of runs that every table shows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::gate::{Report, Row, Verdict};
use crate::record::{format_percentile, ScenarioResult, LATENCY_METRICS};
use crate::report::sidebyside::central;

mod history_page;
pub mod plot;
mod provenance;

pub use history_page::render_history;
pub use provenance::{baseline_provenance, records_provenance};
mod telemetry;

const TEMPLATE: &str = include_str!("page.html");

#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
    #[error("rendering the HTML template: {0}")]
    Template(#[from] minijinja::Error),
    #[error("{path}:{line}: not an engine-metrics line: {message}")]
    EngineMetrics {
        path: String,
        line: usize,
        message: String,
    },
}

/// The engine's own view of one scenario run (a line of `engine-metrics.jsonl`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EngineRun {
    pub model: String,
    pub scenario: String,
    #[serde(default)]
    pub run_index: Option<u32>,
    /// The summary's numbers by name (`kv_cache_usage_max`, `preemptions`, …); other fields
    /// are ignored, so new ones never break an old report.
    #[serde(default, deserialize_with = "numbers_only")]
    pub engine: BTreeMap<String, f64>,
}

fn numbers_only<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    let v = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
    Ok(v.into_iter()
        .filter_map(|(k, v)| v.as_f64().map(|f| (k, f)))
        .collect())
}

/// Parse `engine-metrics.jsonl` (blank lines skipped).
pub fn parse_engine_metrics(text: &str, path: &str) -> Result<Vec<EngineRun>, HtmlError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(line).map_err(|e| HtmlError::EngineMetrics {
                path: path.into(),
                line: i + 1,
                message: e.to_string(),
            })?,
        );
    }
    Ok(out)
}

/// One side of the page: a baseline, a set of results, with what is known about them.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// `baseline: vllm v0.10.1`, `current`, …
    pub label: String,
    pub records: Vec<ScenarioResult>,
    /// Provenance rows (key, value) shown in the page's header.
    pub provenance: Vec<(String, String)>,
    pub engine_runs: Vec<EngineRun>,
}

/// What to render.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    pub title: String,
    /// A check's report: the verdict table; sides 0 and 1 are its baseline and current.
    pub report: Option<&'a Report>,
    pub sides: Vec<Dataset>,
    /// When the page was made (volatile: snapshot tests fix it).
    pub generated: String,
}

// ---- the view handed to the template -------------------------------------------------------

#[derive(Debug, Serialize)]
struct View {
    title: String,
    kind: &'static str,
    generated: String,
    perfgate_version: &'static str,
    verdict: Option<VerdictView>,
    method: Option<String>,
    sides: Vec<SideView>,
    models: Vec<ModelView>,
    table: Option<TableView>,
    notes: Vec<String>,
    /// Said above everything else: the sides' machines differ.
    warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
struct VerdictView {
    word: String,
    counts: String,
}

#[derive(Debug, Serialize)]
struct SideView {
    label: String,
    color: String,
    provenance: Vec<(String, String)>,
}

#[derive(Debug, Serialize)]
struct ChartView {
    title: String,
    svg: String,
}

#[derive(Debug, Serialize)]
struct ModelView {
    name: String,
    anchor: String,
    charts: Vec<ChartView>,
    engine: Option<SimpleTable>,
    /// Telemetry beside the runs (`telemetry.rs`).
    telemetry: Option<SimpleTable>,
    /// Series legend (label, colour) when the charts' colours are not the sides'.
    legend: Vec<(String, String)>,
}

#[derive(Debug, Serialize)]
struct SimpleTable {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

#[derive(Debug, Serialize)]
struct TableView {
    title: String,
    headers: Vec<String>,
    rows: Vec<TableRow>,
    /// (filter value, label with count)
    filters: Vec<(String, String)>,
}

#[derive(Debug, Serialize)]
struct TableRow {
    /// The verdict word (filter key), or a class such as `changed`.
    tag: String,
    anchor: String,
    cells: Vec<String>,
    note: String,
}

/// `org/Model-8B` → `m-org-model-8b`, an HTML id.
fn anchor(model: &str) -> String {
    let mut s = String::from("m-");
    for c in model.chars() {
        s.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '-'
        });
    }
    s
}

/// A side's summary of one model × scenario × metric: geometric mean and range of its runs.
fn summarize(recs: &[&ScenarioResult], metric: &str) -> Option<(f64, Option<(f64, f64)>)> {
    let v: Vec<f64> = recs.iter().filter_map(|r| r.metric(metric)).collect();
    let c = central(&v)?;
    let range = (v.len() > 1).then(|| {
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    });
    Some((c, range))
}

struct Grid<'a> {
    page: &'a Page<'a>,
    /// Per side: (model, scenario) → records.
    by_key: Vec<BTreeMap<(String, String), Vec<&'a ScenarioResult>>>,
    /// Models in order, each with its scenarios in order.
    models: Vec<(String, Vec<String>)>,
}

impl<'a> Grid<'a> {
    fn new(page: &'a Page<'a>) -> Grid<'a> {
        let mut models: Vec<(String, Vec<String>)> = Vec::new();
        let mut add = |m: &str, s: &str| match models.iter_mut().find(|(x, _)| x == m) {
            Some((_, ss)) => {
                if !ss.iter().any(|x| x == s) && s != crate::gate::verdict::SCENARIO_ROW {
                    ss.push(s.to_string())
                }
            }
            None => models.push((m.to_string(), vec![s.to_string()])),
        };
        if let Some(r) = page.report {
            for row in &r.rows {
                add(&row.model, &row.scenario);
            }
        }
        let mut by_key = Vec::new();
        for side in &page.sides {
            let mut map: BTreeMap<(String, String), Vec<&ScenarioResult>> = BTreeMap::new();
            for r in &side.records {
                let id = r.scenario_id();
                add(&r.model, &id);
                map.entry((r.model.clone(), id)).or_default().push(r);
            }
            by_key.push(map);
        }
        Grid {
            page,
            by_key,
            models,
        }
    }

    fn row(&self, model: &str, scenario: &str, metric: &str) -> Option<&'a Row> {
        self.page
            .report?
            .rows
            .iter()
            .find(|r| r.model == model && r.scenario == scenario && r.metric == metric)
    }

    /// Side `i`'s value: from its records, else (check pages) from the report's row.
    fn value(
        &self,
        i: usize,
        model: &str,
        scenario: &str,
        metric: &str,
    ) -> Option<(f64, Option<(f64, f64)>)> {
        let recs = self.by_key[i].get(&(model.to_string(), scenario.to_string()));
        if let Some(recs) = recs.filter(|r| !r.is_empty()) {
            return summarize(recs, metric);
        }
        if self.page.sides[i].records.is_empty() {
            let row = self.row(model, scenario, metric)?;
            return match i {
                0 => row.baseline.map(|v| (v, None)),
                1 => row.current.map(|v| (v, None)),
                _ => None,
            };
        }
        None
    }

    /// The percentile keys of a latency metric present on any side: (p, key), p ascending.
    fn percentiles(&self, model: &str, scenarios: &[String], m: &str) -> Vec<(f64, String)> {
        let mut out = Vec::new();
        for (p, key) in [
            (50.0, format!("median_{m}_ms")),
            (90.0, format!("p90_{m}_ms")),
            (99.0, format!("p99_{m}_ms")),
        ] {
            let alt = format!("p{}_{m}_ms", format_percentile(p));
            let present = |k: &str| {
                (0..self.page.sides.len()).any(|i| {
                    scenarios
                        .iter()
                        .any(|s| self.value(i, model, s, k).is_some())
                })
            };
            if present(&key) {
                out.push((p, key));
            } else if alt != key && present(&alt) {
                out.push((p, alt));
            }
        }
        out
    }
}

fn latency_title(m: &str) -> &'static str {
    match m {
        "ttft" => "Time to first token (TTFT)",
        "tpot" => "Time per output token (TPOT)",
        "itl" => "Inter-token latency (ITL)",
        "e2el" => "End-to-end latency (E2E)",
        _ => "Latency",
    }
}

fn pct_change(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| (b / a - 1.0) * 100.0)
}

fn throughput_chart(
    g: &Grid<'_>,
    model: &str,
    scenarios: &[String],
) -> Result<Option<ChartView>, HtmlError> {
    let metric = "output_throughput";
    let n = g.page.sides.len();
    let mut groups = Vec::new();
    for s in scenarios {
        let mut bars = Vec::new();
        for i in 0..n {
            let bar = g.value(i, model, s, metric).map(|(v, range)| {
                let note = if i == 0 {
                    None
                } else if let Some(row) = g.row(model, s, metric).filter(|_| i == 1) {
                    Some(format!(
                        "{} {}",
                        super::fmt_change(row.change_pct),
                        super::fmt_interval(row.interval)
                    ))
                } else {
                    g.value(0, model, s, metric)
                        .and_then(|(a, _)| pct_change(a, v))
                        .map(|c| super::fmt_change(Some(c)))
                };
                plot::Bar {
                    value: v,
                    interval: range,
                    note,
                }
            });
            bars.push(bar);
        }
        groups.push(plot::BarGroup {
            label: s.clone(),
            bars,
        });
    }
    if groups.iter().all(|g| g.bars.iter().all(Option::is_none)) {
        return Ok(None);
    }
    let title = "Output throughput (tok/s)";
    let svg = plot::bars(
        title,
        "tok/s — bar: geometric mean of runs, whisker: range of runs",
        &groups,
    )?;
    Ok(Some(ChartView {
        title: title.into(),
        svg,
    }))
}

fn latency_charts(
    g: &Grid<'_>,
    model: &str,
    scenarios: &[String],
) -> Result<Vec<ChartView>, HtmlError> {
    let mut out = Vec::new();
    for m in LATENCY_METRICS {
        let keys = g.percentiles(model, scenarios, m);
        if keys.is_empty() {
            continue;
        }
        let groups: Vec<plot::LadderGroup> = scenarios
            .iter()
            .map(|s| plot::LadderGroup {
                label: s.clone(),
                ladders: (0..g.page.sides.len())
                    .map(|i| {
                        let points: Vec<(f64, f64)> = keys
                            .iter()
                            .filter_map(|(p, k)| g.value(i, model, s, k).map(|(v, _)| (*p, v)))
                            .collect();
                        (!points.is_empty()).then_some(plot::Ladder { points })
                    })
                    .collect(),
            })
            .collect();
        let names: Vec<String> = keys
            .iter()
            .map(|(p, _)| format!("p{}", format_percentile(*p)))
            .collect();
        let title = format!("{} — {}", latency_title(m), names.join(" / "));
        let svg = plot::ladders(&title, "ms", &groups)?;
        out.push(ChartView { title, svg });
    }
    Ok(out)
}

/// (header, field of the engine summary, how runs combine, shown as a percentage).
type EngineColumn = (&'static str, &'static str, fn(&[f64]) -> f64, bool);

/// The engine metrics of one model, per side and scenario, over the runs.
fn engine_table(page: &Page<'_>, model: &str, scenarios: &[String]) -> Option<SimpleTable> {
    let cols: [EngineColumn; 7] = [
        ("KV cache max", "kv_cache_usage_max", max, true),
        ("KV cache mean", "kv_cache_usage_mean", mean, true),
        ("running max", "running_max", max, false),
        ("running mean", "running_mean", mean, false),
        ("waiting max", "waiting_max", max, false),
        ("preemptions", "preemptions", sum, false),
        ("prefix cache hits", "prefix_cache_hit_rate", mean, true),
    ];
    let mut rows = Vec::new();
    for side in &page.sides {
        for s in scenarios {
            let runs: Vec<&EngineRun> = side
                .engine_runs
                .iter()
                .filter(|r| r.model == model && &r.scenario == s)
                .collect();
            if runs.is_empty() {
                continue;
            }
            let mut row = vec![side.label.clone(), s.clone(), runs.len().to_string()];
            for (_, key, agg, pct) in &cols {
                let v: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.engine.get(*key).copied())
                    .collect();
                row.push(if v.is_empty() {
                    "–".into()
                } else if *pct {
                    format!("{:.1}%", agg(&v) * 100.0)
                } else if agg(&v).fract() == 0.0 {
                    format!("{:.0}", agg(&v))
                } else {
                    plot::fmt_num(agg(&v))
                });
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["side".to_string(), "scenario".into(), "runs".into()];
    headers.extend(cols.iter().map(|c| c.0.to_string()));
    Some(SimpleTable { headers, rows })
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}
fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}
fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

fn verdict_table(report: &Report) -> TableView {
    let headers = [
        "model", "scenario", "metric", "baseline", "current", "change", "interval", "δ", "p",
        "noise", "runs b/c", "verdict",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<TableRow> = report
        .rows
        .iter()
        .map(|r| TableRow {
            tag: r.verdict.as_str().to_string(),
            anchor: anchor(&r.model),
            cells: vec![
                r.model.clone(),
                r.scenario.clone(),
                r.metric.clone(),
                super::fmt_value(&r.metric, r.baseline),
                super::fmt_value(&r.metric, r.current),
                super::fmt_change(r.change_pct),
                super::fmt_interval(r.interval),
                r.tolerance_pct.map_or("–".into(), |t| format!("±{t}%")),
                r.p_value.map_or("–".into(), |p| format!("{p:.3}")),
                super::fmt_noise(r),
                format!("{}/{}", r.n_baseline, r.n_current),
                super::fmt_verdict(r),
            ],
            // What would decide the row, unless the gate's note says it already.
            note: match (super::fmt_needed(r), r.note.as_deref().unwrap_or_default()) {
                (Some(n), note) if !note.contains(&n) => format!("{note}; {n}"),
                (_, note) => note.to_string(),
            },
        })
        .collect();
    let count = |v: Verdict| report.rows.iter().filter(|r| r.verdict == v).count();
    TableView {
        title: "Verdicts".into(),
        headers,
        filters: vec![
            ("all".into(), format!("all ({})", report.rows.len())),
            (
                "regressed".into(),
                format!("regressed ({})", count(Verdict::Regressed)),
            ),
            (
                "inconclusive".into(),
                format!("inconclusive ({})", count(Verdict::Inconclusive)),
            ),
        ],
        rows,
    }
}

/// A comparison table of several sides: headline metrics, each side's value and its change
/// from the first side.
fn values_table(g: &Grid<'_>) -> TableView {
    let labels: Vec<&str> = g.page.sides.iter().map(|s| s.label.as_str()).collect();
    let mut headers = vec!["model".to_string(), "scenario".into(), "metric".into()];
    headers.push(labels[0].to_string());
    for l in &labels[1..] {
        headers.push(l.to_string());
        headers.push(format!("Δ vs {}", labels[0]));
    }
    let mut rows = Vec::new();
    for (model, scenarios) in &g.models {
        for s in scenarios {
            for metric in crate::report::sidebyside::HEADLINE {
                let vals: Vec<Option<f64>> = (0..labels.len())
                    .map(|i| g.value(i, model, s, metric).map(|(v, _)| v))
                    .collect();
                if vals.iter().all(Option::is_none) {
                    continue;
                }
                let mut cells = vec![model.clone(), s.clone(), metric.to_string()];
                cells.push(super::fmt_value(metric, vals[0]));
                for v in &vals[1..] {
                    cells.push(super::fmt_value(metric, *v));
                    let ch = match (vals[0], v) {
                        (Some(a), Some(b)) => pct_change(a, *b),
                        _ => None,
                    };
                    cells.push(super::fmt_change(ch));
                }
                rows.push(TableRow {
                    tag: "value".into(),
                    anchor: anchor(model),
                    cells,
                    note: String::new(),
                });
            }
        }
    }
    TableView {
        title: "Headline metrics".into(),
        headers,
        rows,
        filters: Vec::new(),
    }
}

fn env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.add_template("page.html", TEMPLATE)
        .expect("the page template parses");
    env
}

fn side_views(page: &Page<'_>) -> Vec<SideView> {
    page.sides
        .iter()
        .enumerate()
        .map(|(i, s)| SideView {
            label: s.label.clone(),
            color: plot::css_color(i),
            provenance: s.provenance.clone(),
        })
        .collect()
}

/// Render a check page (with a report) or a comparison page (without).
pub fn render(page: &Page<'_>) -> Result<String, HtmlError> {
    let g = Grid::new(page);
    let mut models = Vec::new();
    for (model, scenarios) in &g.models {
        let mut charts = Vec::new();
        charts.extend(throughput_chart(&g, model, scenarios)?);
        charts.extend(latency_charts(&g, model, scenarios)?);
        models.push(ModelView {
            name: model.clone(),
            anchor: anchor(model),
            charts,
            engine: engine_table(page, model, scenarios),
            telemetry: telemetry::table(page, model, scenarios),
            legend: Vec::new(),
        });
    }
    // A `perfgate ab` report: its design and cost, above the sides.
    let notes = page
        .report
        .and_then(|r| r.ab.as_ref())
        .map(super::fmt_ab)
        .unwrap_or_default();
    let (verdict, method, table, kind) = match page.report {
        Some(r) => (
            Some(VerdictView {
                word: format!("{:?}", r.verdict).to_lowercase(),
                counts: super::fmt_counts(&r.counts, ", "),
            }),
            Some(r.method.clone()),
            Some(verdict_table(r)),
            "check",
        ),
        None => (
            None,
            None,
            (!page.sides.is_empty()).then(|| values_table(&g)),
            "compare",
        ),
    };
    let view = View {
        title: page.title.clone(),
        kind,
        generated: page.generated.clone(),
        perfgate_version: env!("CARGO_PKG_VERSION"),
        verdict,
        method,
        sides: side_views(page),
        models,
        table,
        notes,
        warnings: page
            .report
            .and_then(crate::gate::machine_note)
            .into_iter()
            .collect(),
    };
    page_html(&view)
}

/// The page's HTML: the template filled with `view`.
fn page_html(view: &View) -> Result<String, HtmlError> {
    Ok(env().get_template("page.html")?.render(
        minijinja::context! { page => minijinja::Value::from(minijinja::value::Serde(view)) },
    )?)
}

#[cfg(test)]
mod tests;
