//! `perfgate baseline promote --from …/results.jsonl --to baselines/X.toml`: read the results,
//! the check's report next to them and the file they replace, let
//! [`vet`](crate::baseline::promote::vet) and [`Promotion`] decide and build, write the new file
//! and print the change from the old one.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::Exit;
use crate::baseline::promote::{vet, Promotion, ResultsFile};
use crate::baseline::{Baseline, BaselineError};
use crate::cli::baseline::PromoteArgs;
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

pub(crate) fn exec(a: PromoteArgs) -> anyhow::Result<Exit> {
    let read = super::read_records(&a.from)?;
    let records = read.records;
    if records.is_empty() {
        anyhow::bail!("{}: no records to promote", a.from.display());
    }
    let report_path: PathBuf = a.report.clone().unwrap_or_else(|| {
        a.from
            .parent()
            .unwrap_or(Path::new("."))
            .join("report.json")
    });
    let report = match report_path.is_file() {
        true => Some(super::inputs::read_report(&report_path)?),
        false => None,
    };
    let (from, shown_report) = (
        a.from.display().to_string(),
        report_path.display().to_string(),
    );
    let file = ResultsFile {
        path: &from,
        sha256: &read.sha256,
    };
    for line in vet(report.as_ref(), file, &shown_report, a.force).map_err(anyhow::Error::msg)? {
        eprintln!("perfgate: {line}");
    }

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
    let checked_base = report
        .as_ref()
        .and_then(|r| r.baseline.sources.first())
        .filter(|p| p.ends_with(".toml"))
        .and_then(|p| Baseline::load(Path::new(p)).ok());
    let promotion = Promotion {
        records: &records,
        old: old.as_ref(),
        append: a.append,
        report: report.as_ref().map(|r| (r, shown_report.clone())),
        checked_base: checked_base.as_ref(),
        from: from.clone(),
        date: a
            .date
            .clone()
            .unwrap_or_else(|| chrono::Utc::now().format("%Y-%m-%d").to_string()),
        commit: git_commit(),
    };
    let promoted = match promotion.build() {
        Err(BaselineError::Promote(why)) => anyhow::bail!(why),
        built => built.with_context(|| format!("promoting {from}"))?,
    };
    for n in &promoted.notes {
        eprintln!("perfgate: note: {n}");
    }
    let new = promoted.baseline;
    let text = new.to_checked_toml(&a.to.display().to_string())?;
    // An interrupted promote never leaves half a baseline.
    crate::atomic::write(&a.to, &text)?;
    let runs = new.run_count();
    let verb = match (&old, a.append) {
        (None, _) => "created",
        (Some(_), true) => "appended to",
        (Some(_), false) => "replaced runs in",
    };
    println!(
        "perfgate: {verb} {} from {from} ({} records; now {} models, {runs} runs)",
        a.to.display(),
        records.len(),
        new.models.len()
    );
    for k in &promoted.kept {
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
