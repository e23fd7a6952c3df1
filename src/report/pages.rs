//! What the HTML sign-off pages show, gathered from files: a check's two sides (the records, their
//! provenance from the baseline file or the records, the engine metrics next to the results), the
//! baseline files of a comparison. Each function returns the rendered page; the caller writes it.

use std::path::{Path, PathBuf};

use super::html::{self, Dataset, EngineRun, HtmlError, Page};
use super::sidebyside::ModelMap;
use crate::baseline::{Baseline, BaselineError};
use crate::gate::{Report, Side};
use crate::record::ScenarioResult;

#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    #[error(transparent)]
    Html(#[from] HtmlError),
    #[error("cannot read the engine metrics {path}: {source}")]
    EngineMetrics {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// When the page was made.
fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string()
}

/// `vllm v0.10.1`, or `None` when the side names no engine.
fn engine_label(engine: Option<&str>, version: Option<&str>) -> Option<String> {
    match (engine, version) {
        (Some(e), Some(v)) => Some(format!("{e} {v}")),
        (Some(e), None) => Some(e.to_string()),
        (None, Some(v)) => Some(v.to_string()),
        (None, None) => None,
    }
}

/// A baseline file as one side of the page.
pub fn baseline_dataset(path: &Path, label: Option<&str>) -> Result<Dataset, PageError> {
    let b = Baseline::load(path)?;
    let name = engine_label(Some(&b.engine.name), b.engine.version.as_deref()).unwrap_or_default();
    Ok(Dataset {
        label: match label {
            Some(l) => format!("{l}: {name}"),
            None => name,
        },
        provenance: html::baseline_provenance(&b, &path.display().to_string()),
        records: b.to_records(),
        engine_runs: Vec::new(),
    })
}

/// `engine-metrics.jsonl` next to the first results file, if there is one (a live run writes
/// it), or the `explicit` file.
pub fn engine_runs_near(
    results: &[String],
    explicit: Option<&Path>,
) -> Result<Vec<EngineRun>, PageError> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => match results.first() {
            Some(r) => Path::new(r)
                .parent()
                .unwrap_or(Path::new("."))
                .join("engine-metrics.jsonl"),
            None => return Ok(Vec::new()),
        },
    };
    if explicit.is_none() && !path.is_file() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path).map_err(|source| PageError::EngineMetrics {
        path: path.display().to_string(),
        source,
    })?;
    Ok(html::parse_engine_metrics(
        &text,
        &path.display().to_string(),
    )?)
}

/// The two sides of a check page. The baseline's provenance comes from its file when it is a
/// readable baseline TOML; the current side's from its records.
pub fn check_sides(
    base: Vec<ScenarioResult>,
    base_side: &Side,
    cur: Vec<ScenarioResult>,
    cur_side: &Side,
    engine_runs: Vec<EngineRun>,
) -> Vec<Dataset> {
    let base_file = base_side
        .sources
        .first()
        .filter(|p| p.ends_with(".toml"))
        .and_then(|p| Baseline::load(Path::new(p)).ok().map(|b| (p, b)));
    let mut base_prov = match &base_file {
        Some((p, b)) => html::baseline_provenance(b, p),
        None => html::records_provenance(&base, &base_side.sources),
    };
    if base_file.is_some() {
        // The baseline file is also the suite the check ran.
        base_prov[0].0 = "suite (baseline file)".into();
    }
    let base_name = engine_label(
        base_side.engine.as_deref(),
        base_side.engine_version.as_deref(),
    );
    let cur_name = engine_label(
        cur_side
            .engine
            .as_deref()
            .or_else(|| cur.iter().find_map(|r| r.engine.as_deref())),
        cur_side
            .engine_version
            .as_deref()
            .or_else(|| cur.iter().find_map(|r| r.engine_version.as_deref())),
    );
    let cur_prov = html::records_provenance(&cur, &cur_side.sources);
    vec![
        Dataset {
            label: base_name.map_or("baseline".into(), |n| format!("baseline: {n}")),
            records: base,
            provenance: base_prov,
            engine_runs: Vec::new(),
        },
        Dataset {
            label: cur_name.map_or("current".into(), |n| format!("current: {n}")),
            records: cur,
            provenance: cur_prov,
            engine_runs,
        },
    ]
}

/// The page of a check's `report` with these sides (the check's two first), titled `title` or
/// after the report.
pub fn report_page(
    report: &Report,
    sides: Vec<Dataset>,
    title: Option<&str>,
) -> Result<String, PageError> {
    let page = Page {
        title: title.map_or_else(
            || {
                format!(
                    "perfgate {}: {}",
                    report.kind,
                    format!("{:?}", report.verdict).to_lowercase()
                )
            },
            str::to_string,
        ),
        report: Some(report),
        sides,
        generated: now(),
    };
    Ok(html::render(&page)?)
}

/// The check page of `report` (the `--html` of `perfgate check`).
pub fn check_page(
    report: &Report,
    base: &[ScenarioResult],
    cur: &[ScenarioResult],
) -> Result<String, PageError> {
    let engine_runs = engine_runs_near(&report.current.sources, None)?;
    let sides = check_sides(
        base.to_vec(),
        &report.baseline,
        cur.to_vec(),
        &report.current,
        engine_runs,
    );
    report_page(report, sides, None)
}

/// A comparison page of baseline files (the `--html` of `perfgate compare`). `map` pairs a
/// model of the first file with a differently named model of the others.
pub fn compare_page(
    files: &[PathBuf],
    map: &ModelMap,
    title: Option<&str>,
) -> Result<String, PageError> {
    let mut sides = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut d = baseline_dataset(f, None)?;
        if i > 0 {
            for r in &mut d.records {
                if let Some((a, _)) = map.0.iter().find(|(_, b)| **b == r.model) {
                    r.model = a.clone();
                }
            }
            let pairs: Vec<String> = map.0.iter().map(|(a, b)| format!("{a} = {b}")).collect();
            if !pairs.is_empty() {
                d.provenance
                    .push(("paired models".into(), pairs.join(", ")));
            }
        }
        sides.push(d);
    }
    let labels: Vec<&str> = sides.iter().map(|s| s.label.as_str()).collect();
    let title = title.map_or_else(
        || format!("perfgate compare: {}", labels.join(" vs ")),
        str::to_string,
    );
    let page = Page {
        title,
        report: None,
        sides,
        generated: now(),
    };
    Ok(html::render(&page)?)
}
