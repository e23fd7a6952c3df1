//! `perfgate report --html`, and the `--html` of `check` and `compare`: gather what the
//! sign-off page shows (the report, the records of each side, their provenance, the engine
//! metrics next to the results) and write the page.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::Exit;
use crate::baseline::Baseline;
use crate::cli::report::ReportArgs;
use crate::gate::{Report, Side};
use crate::record::ScenarioResult;
use crate::report::html::{self, Dataset, EngineRun, Page};
use crate::report::sidebyside::ModelMap;

/// When the page was made.
fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string()
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    crate::atomic::write(path, text)?;
    eprintln!("perfgate: wrote {}", path.display());
    Ok(())
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
pub(crate) fn baseline_dataset(path: &Path, label: Option<&str>) -> anyhow::Result<Dataset> {
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

/// `engine-metrics.jsonl` next to the first results file, if there is one (a live run writes it).
fn engine_runs_near(results: &[String], explicit: Option<&Path>) -> anyhow::Result<Vec<EngineRun>> {
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
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the engine metrics {}", path.display()))?;
    Ok(html::parse_engine_metrics(
        &text,
        &path.display().to_string(),
    )?)
}

/// The two sides of a check page. The baseline's provenance comes from its file when it is a
/// readable baseline TOML; the current side's from its records.
fn check_sides(
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

/// Write the check page of `report` (the `--html` of `perfgate check`).
pub(crate) fn write_check_page(
    report: &Report,
    base: &[ScenarioResult],
    cur: &[ScenarioResult],
    out: &Path,
) -> anyhow::Result<()> {
    let engine_runs = engine_runs_near(&report.current.sources, None)?;
    let sides = check_sides(
        base.to_vec(),
        &report.baseline,
        cur.to_vec(),
        &report.current,
        engine_runs,
    );
    let page = Page {
        title: format!("perfgate {}: {}", report.kind, verdict_word(report)),
        report: Some(report),
        sides,
        generated: now(),
    };
    write(out, &html::render(&page)?)
}

fn verdict_word(r: &Report) -> String {
    format!("{:?}", r.verdict).to_lowercase()
}

/// Write a comparison page of baseline files (the `--html` of `perfgate compare`). `map` pairs
/// a model of the first file with a differently named model of the others.
pub(crate) fn write_compare_page(
    files: &[PathBuf],
    map: &ModelMap,
    title: Option<&str>,
    out: &Path,
) -> anyhow::Result<()> {
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
    write(out, &html::render(&page)?)
}

/// The files of `names` that exist, as paths; notes the others.
fn existing(names: &[String], what: &str) -> Vec<PathBuf> {
    names
        .iter()
        .filter(|n| {
            let ok = Path::new(n).is_file();
            if !ok {
                eprintln!("perfgate: note: the report's {what} `{n}` is not readable here; plotting the report's own values");
            }
            ok
        })
        .map(PathBuf::from)
        .collect()
}

pub(crate) fn exec(args: ReportArgs) -> anyhow::Result<Exit> {
    let Some(report_path) = &args.report else {
        if args.baselines.is_empty() {
            anyhow::bail!("nothing to show: pass `--report REPORT.json` and/or baseline files");
        }
        write_compare_page(
            &args.baselines,
            &ModelMap::default(),
            args.title.as_deref(),
            &args.html,
        )?;
        return Ok(Exit::Pass);
    };
    let report = super::comment::read_report(report_path)?;
    let base_path = match &args.baseline {
        Some(p) => Some(p.clone()),
        None => existing(&report.baseline.sources, "baseline")
            .into_iter()
            .next(),
    };
    let base = match &base_path {
        Some(p) => super::inputs::load_baseline(p)?.0,
        None => Vec::new(),
    };
    let result_paths = if args.results.is_empty() {
        existing(&report.current.sources, "results")
    } else {
        args.results.clone()
    };
    let mut cur = Vec::new();
    for p in &result_paths {
        cur.extend(super::read_records(p)?);
    }
    let mut base_side = report.baseline.clone();
    if let Some(p) = &base_path {
        base_side.sources = vec![p.display().to_string()];
    }
    let mut cur_side = report.current.clone();
    if !result_paths.is_empty() {
        cur_side.sources = result_paths
            .iter()
            .map(|p| p.display().to_string())
            .collect();
    }
    let engine_runs = engine_runs_near(&cur_side.sources, args.engine_metrics.as_deref())?;
    let mut sides = check_sides(base, &base_side, cur, &cur_side, engine_runs);
    for b in &args.baselines {
        sides.push(baseline_dataset(b, None)?);
    }
    let page = Page {
        title: args
            .title
            .clone()
            .unwrap_or_else(|| format!("perfgate {}: {}", report.kind, verdict_word(&report))),
        report: Some(&report),
        sides,
        generated: now(),
    };
    write(&args.html, &html::render(&page)?)?;
    Ok(Exit::Pass)
}
