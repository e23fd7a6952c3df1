//! The history page: per model and metric a chart with one line per scenario across the
//! baselines, its noise band and change points, and a table of the change points.

use super::{anchor, page_html, plot, ChartView, HtmlError, ModelView, SideView, TableRow};
use super::{TableView, View};
use crate::history::{self, History, Series};
use crate::report::{fmt_change, fmt_value};

/// The distinct strings of `it`, in first-seen order.
fn first_seen<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for s in it {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// One scenario's line in a chart: its values, noise bands and change-point markers; `scen`
/// (the model's scenarios in order) picks its colour.
fn trend(s: &Series, scen: &[&str]) -> plot::Trend {
    plot::Trend {
        label: s.scenario.clone(),
        color: scen.iter().position(|x| *x == s.scenario).unwrap_or(0),
        values: s
            .points
            .iter()
            .map(|p| p.as_ref().map(|p| p.value))
            .collect(),
        bands: history::bands(s),
        changes: s
            .detection
            .changes
            .iter()
            .map(|c| {
                (
                    c.index,
                    format!(
                        "{} {}",
                        if s.is_worse(c) { "▼" } else { "▲" },
                        fmt_change(Some(c.change_pct))
                    ),
                )
            })
            .collect(),
    }
}

/// A model's section: one chart per metric it has, the scenarios' colours as the legend.
fn model_view(
    h: &History,
    model: &str,
    metrics: &[&str],
    xlabels: &[String],
) -> Result<ModelView, HtmlError> {
    let scen = first_seen(
        h.series
            .iter()
            .filter(|s| s.model == model)
            .map(|s| s.scenario.as_str()),
    );
    let mut charts = Vec::new();
    for metric in metrics {
        let lines: Vec<plot::Trend> = h
            .series
            .iter()
            .filter(|s| s.model == model && s.metric == *metric)
            .map(|s| trend(s, &scen))
            .collect();
        if lines.is_empty() {
            continue;
        }
        let title = format!("{metric} — band: ±2σ noise around each level");
        let svg = plot::trends(&title, metric, xlabels, &lines)?;
        charts.push(ChartView { title, svg });
    }
    Ok(ModelView {
        name: model.to_string(),
        anchor: anchor(model),
        charts,
        engine: None,
        telemetry: None,
        legend: scen
            .iter()
            .enumerate()
            .map(|(i, s)| (s.to_string(), plot::css_color(i)))
            .collect(),
    })
}

/// The table of every change point, worse ones tagged `regressed` for the filter.
fn change_table(h: &History) -> TableView {
    let mut rows = Vec::new();
    for s in &h.series {
        for c in &s.detection.changes {
            let tag = if s.is_worse(c) {
                "regressed"
            } else {
                "improved"
            };
            rows.push(TableRow {
                tag: tag.into(),
                anchor: anchor(&s.model),
                cells: vec![
                    s.model.clone(),
                    s.scenario.clone(),
                    s.metric.clone(),
                    format!("#{} {}", c.index + 1, h.entries[c.index].label),
                    fmt_value(&s.metric, Some(c.before)),
                    fmt_value(&s.metric, Some(c.after)),
                    fmt_change(Some(c.change_pct)),
                    format!("{:.2}", c.z),
                    format!("{:.2e}", c.p),
                    format!(
                        "{}{}",
                        if s.is_worse(c) { "worse" } else { "better" },
                        if h.machine_change(c.index).is_some() {
                            "; the machines differ here"
                        } else {
                            ""
                        }
                    ),
                ],
                note: String::new(),
            });
        }
    }
    let worse = rows.iter().filter(|r| r.tag == "regressed").count();
    TableView {
        title: "Change points".into(),
        headers: [
            "model",
            "scenario",
            "metric",
            "from baseline",
            "before",
            "after",
            "change",
            "z",
            "p",
            "",
        ]
        .map(String::from)
        .to_vec(),
        filters: vec![
            ("all".into(), format!("all ({})", rows.len())),
            ("regressed".into(), format!("worse ({worse})")),
        ],
        rows,
    }
}

/// The baselines in the header, in release order, with their file and date.
fn entry_sides(h: &History) -> Vec<SideView> {
    h.entries
        .iter()
        .enumerate()
        .map(|(i, e)| SideView {
            label: format!("#{} {}", i + 1, e.label),
            color: "#888888".into(),
            provenance: vec![
                ("file".into(), e.path.clone()),
                ("date".into(), e.date.clone().unwrap_or_else(|| "–".into())),
            ],
        })
        .collect()
}

/// Render the history of baselines: per model and metric a chart with one line per scenario,
/// its noise band and change points; a table of the change points.
pub fn render_history(h: &History, title: &str, generated: &str) -> Result<String, HtmlError> {
    let xlabels: Vec<String> = h.entries.iter().map(|e| e.label.clone()).collect();
    let metrics = first_seen(h.series.iter().map(|s| s.metric.as_str()));
    let models = first_seen(h.series.iter().map(|s| s.model.as_str()))
        .into_iter()
        .map(|model| model_view(h, model, &metrics, &xlabels))
        .collect::<Result<Vec<_>, _>>()?;
    let view = View {
        title: title.to_string(),
        kind: "history",
        generated: generated.to_string(),
        perfgate_version: env!("CARGO_PKG_VERSION"),
        verdict: None,
        method: Some(format!(
            "Change points: two-window test on the log scale (window {} baselines each side), noise τ = max(the gate's run-to-run noise for the metric, median |first difference| / (√2·0.6745)), flagged when p < α/(n−1) and the step is at least the gate's tolerance δ. Lines connect the geometric means of each baseline's runs; baselines in release order (date, else version).",
            h.window
        )),
        sides: entry_sides(h),
        models,
        table: Some(change_table(h)),
        notes: Vec::new(),
        warnings: h
            .machine_changes
            .iter()
            .map(|(i, why)| {
                format!(
                    "the machines differ at #{} ({}): {why}; a step there can be the machine's",
                    i + 1,
                    h.entries[*i].label
                )
            })
            .collect(),
    };
    page_html(&view)
}
