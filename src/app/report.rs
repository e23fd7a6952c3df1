//! `perfgate report --html`, and the `--html` of `check` and `compare`: find the files the
//! sign-off page shows and write the page that [`crate::report::pages`] assembles.

use std::path::{Path, PathBuf};

use super::Exit;
use crate::cli::report::ReportArgs;
use crate::gate::Report;
use crate::record::ScenarioResult;
use crate::report::pages;
use crate::report::sidebyside::ModelMap;

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    crate::atomic::write(path, text)?;
    eprintln!("perfgate: wrote {}", path.display());
    Ok(())
}

/// Write the check page of `report` (the `--html` of `perfgate check`).
pub(crate) fn write_check_page(
    report: &Report,
    base: &[ScenarioResult],
    cur: &[ScenarioResult],
    out: &Path,
) -> anyhow::Result<()> {
    write(out, &pages::check_page(report, base, cur)?)
}

/// Write a comparison page of baseline files (the `--html` of `perfgate compare`).
pub(crate) fn write_compare_page(
    files: &[PathBuf],
    map: &ModelMap,
    title: Option<&str>,
    out: &Path,
) -> anyhow::Result<()> {
    write(out, &pages::compare_page(files, map, title)?)
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
        let map = ModelMap::default();
        write_compare_page(&args.baselines, &map, args.title.as_deref(), &args.html)?;
        return Ok(Exit::Pass);
    };
    let report = super::inputs::read_report(report_path)?;
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
        cur.extend(super::read_records(p)?.records);
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
    let engine_runs = pages::engine_runs_near(&cur_side.sources, args.engine_metrics.as_deref())?;
    let mut sides = pages::check_sides(base, &base_side, cur, &cur_side, engine_runs);
    for b in &args.baselines {
        sides.push(pages::baseline_dataset(b, None)?);
    }
    write(
        &args.html,
        &pages::report_page(&report, sides, args.title.as_deref())?,
    )?;
    Ok(Exit::Pass)
}
