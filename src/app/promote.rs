//! `perfgate baseline promote --from …/results.jsonl --to baselines/X.toml`: checked results
//! become the baseline. The check's verdict comes from the report next to the results; a failed
//! or errored check (or none found) is refused unless `--force`. The new file keeps the engine,
//! launch and model settings and the `[gate]` table of the file it replaces or extends (or of
//! the baseline the check used), records where the numbers came from (results, report, git
//! commit, date), and the change from the old file is printed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::Exit;
use crate::baseline::{Baseline, EngineInfo};
use crate::cli::baseline::PromoteArgs;
use crate::gate::{Report, TopVerdict};
use crate::record::ScenarioResult;
use crate::report::sidebyside::{self, ModelMap};

/// `git rev-parse HEAD` of the current directory, `-dirty` when tracked files changed; `None`
/// outside a git checkout or without git.
pub(crate) fn git_commit() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    if sha.is_empty() {
        return None;
    }
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
    Some(if dirty { format!("{sha}-dirty") } else { sha })
}

fn file_name(p: &str) -> Option<&std::ffi::OsStr> {
    Path::new(p).file_name()
}

/// The check's verdict on the results, or why promoting is refused.
fn verdict(a: &PromoteArgs, report_path: &Path) -> anyhow::Result<Option<Report>> {
    if !report_path.is_file() {
        if a.force {
            eprintln!(
                "perfgate: warning: no check report at {}; promoting unchecked results (--force)",
                report_path.display()
            );
            return Ok(None);
        }
        anyhow::bail!(
            "no check report at {}: gate these results first (`perfgate check … --json {}`), name the report with --report, or pass --force",
            report_path.display(),
            report_path.display()
        );
    }
    let report = super::comment::read_report(report_path)?;
    let from = a.from.display().to_string();
    if !report
        .current
        .sources
        .iter()
        .any(|s| file_name(s) == file_name(&from))
    {
        let msg = format!(
            "{} gated {}, not {from}",
            report_path.display(),
            report.current.sources.join(", ")
        );
        if !a.force {
            anyhow::bail!("{msg}; pass --force to promote anyway");
        }
        eprintln!("perfgate: warning: {msg} (--force)");
    }
    let counts = crate::report::fmt_counts(&report.counts, ", ");
    match report.verdict {
        TopVerdict::Fail | TopVerdict::Error if !a.force => anyhow::bail!(
            "the check of these results did not pass (verdict {:?}: {counts}; {}): refusing to promote them; pass --force to promote anyway",
            report.verdict,
            report_path.display()
        ),
        TopVerdict::Fail | TopVerdict::Error => eprintln!(
            "perfgate: warning: promoting results whose check verdict is {:?} ({counts}) (--force)",
            report.verdict
        ),
        TopVerdict::Inconclusive => eprintln!(
            "perfgate: note: the check was inconclusive ({counts}); promoting"
        ),
        TopVerdict::Pass => {}
    }
    Ok(Some(report))
}

/// `template` without the runs of the scenarios the records measured (those get the new runs);
/// with `keep_others` false, also without the models and scenarios the records lack.
fn strip(
    template: &Baseline,
    records: &[ScenarioResult],
    keep_others: bool,
) -> (Baseline, Vec<String>) {
    let measured: BTreeSet<(String, String)> = records
        .iter()
        .map(|r| (r.model.clone(), r.scenario_id()))
        .collect();
    let mut b = template.clone();
    let mut kept = Vec::new();
    for m in &mut b.models {
        m.scenarios.retain_mut(|s| {
            if measured.contains(&(m.name.clone(), s.id.clone())) {
                s.runs.clear();
                s.metrics.clear();
                true
            } else {
                if keep_others && !s.runs.is_empty() {
                    kept.push(format!("{} / {}", m.name, s.id));
                }
                keep_others
            }
        });
    }
    if !keep_others {
        b.models
            .retain(|m| records.iter().any(|r| r.model == m.name));
    }
    (b, kept)
}

/// An interrupted promote never leaves half a baseline: [`crate::atomic::write`].
fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    Ok(crate::atomic::write(path, text)?)
}

pub(crate) fn exec(a: PromoteArgs) -> anyhow::Result<Exit> {
    let records = super::read_records(&a.from)?;
    if records.is_empty() {
        anyhow::bail!("{}: no records to promote", a.from.display());
    }
    let report_path: PathBuf = a.report.clone().unwrap_or_else(|| {
        a.from
            .parent()
            .unwrap_or(Path::new("."))
            .join("report.json")
    });
    let report = verdict(&a, &report_path)?;

    let old = if a.to.exists() {
        if !a.replace && !a.append {
            anyhow::bail!(
                "{} exists: pass --replace (the new runs replace those of the scenarios measured) or --append (they are added as further runs)",
                a.to.display()
            );
        }
        Some(Baseline::load(&a.to)?)
    } else {
        if a.append {
            anyhow::bail!("{} does not exist: nothing to --append to", a.to.display());
        }
        None
    };
    // The engine, launch and model settings and [gate] come from the file being replaced, else
    // from the baseline the check used.
    let checked_base = report
        .as_ref()
        .and_then(|r| r.baseline.sources.first())
        .filter(|p| p.ends_with(".toml"))
        .and_then(|p| Baseline::load(Path::new(p)).ok());
    let (base, kept) = match (&old, a.append) {
        (Some(o), true) => (Some(o.clone()), Vec::new()),
        (Some(o), false) => {
            let (b, kept) = strip(o, &records, true);
            (Some(b), kept)
        }
        (None, _) => (
            checked_base.as_ref().map(|t| strip(t, &records, false).0),
            Vec::new(),
        ),
    };
    let mut engine: EngineInfo = base.as_ref().map(|b| b.engine.clone()).unwrap_or_default();
    if let Some(e) = records.iter().find_map(|r| r.engine.clone()) {
        if engine.name.is_empty() || !a.append {
            engine.name = e;
        }
    }
    if engine.name.is_empty() {
        anyhow::bail!(
            "the records do not name their engine and there is no baseline to take it from"
        );
    }
    if !a.append {
        if let Some(v) = records.iter().find_map(|r| r.engine_version.clone()) {
            engine.version = Some(v);
        }
    }
    let mut prov = match (&old, a.append) {
        (Some(o), true) => o.provenance.clone(),
        _ => base
            .as_ref()
            .map(|b| b.provenance.clone())
            .unwrap_or_default(),
    };
    if !a.append {
        prov.sources.clear();
        prov.notes = None;
    }
    for s in std::iter::once(a.from.display().to_string())
        .chain(report.is_some().then(|| report_path.display().to_string()))
    {
        if !prov.sources.contains(&s) {
            prov.sources.push(s);
        }
    }
    prov.date = Some(
        a.date
            .clone()
            .unwrap_or_else(|| chrono::Utc::now().format("%Y-%m-%d").to_string()),
    );
    prov.commit = git_commit().or(prov.commit);
    prov.perfgate_version = Some(env!("CARGO_PKG_VERSION").to_string());
    prov.notes = Some(match &report {
        Some(r) => format!(
            "Promoted with `perfgate baseline promote` after a check with verdict {} ({}).",
            format!("{:?}", r.verdict).to_lowercase(),
            crate::report::fmt_counts(&r.counts, ", ")
        ),
        None => "Promoted with `perfgate baseline promote --force` without a check report.".into(),
    });
    let (new, notes) = Baseline::from_records(&records, engine, prov, base.as_ref())
        .with_context(|| format!("promoting {}", a.from.display()))?;
    for n in notes {
        eprintln!("perfgate: note: {n}");
    }
    let text = new.to_toml();
    let again = Baseline::parse(&text, &a.to.display().to_string())?;
    anyhow::ensure!(
        again == new,
        "internal error: the baseline does not round-trip"
    );
    write_atomic(&a.to, &text)?;

    let runs: usize = new
        .models
        .iter()
        .flat_map(|m| &m.scenarios)
        .map(|s| s.runs.len())
        .sum();
    let verb = match (&old, a.append) {
        (None, _) => "created",
        (Some(_), true) => "appended to",
        (Some(_), false) => "replaced runs in",
    };
    println!(
        "perfgate: {verb} {} from {} ({} records; now {} models, {runs} runs)",
        a.to.display(),
        a.from.display(),
        records.len(),
        new.models.len()
    );
    for k in &kept {
        println!("  kept (not in the results): {k}");
    }
    match &old {
        Some(o) => {
            let table = sidebyside::compare(o, &new, &ModelMap::default())?;
            println!("Change from the previous baseline (A = before, B = after):");
            print!("{}", sidebyside::render_terminal(&table));
            for w in &table.unpaired {
                println!("  {w}");
            }
        }
        None => print!("{}", sidebyside::summary(&new)),
    }
    Ok(Exit::Pass)
}
