//! Promotion (`perfgate baseline promote`): checked results become the baseline. [`vet`] decides
//! from the check's report whether the results may be promoted; [`Promotion::build`] makes the new
//! file, keeping the engine, launch and model settings and the `[gate]` table of the file it
//! replaces or extends (or of the baseline the check used), and recording where the numbers came
//! from.

use std::collections::BTreeSet;
use std::path::Path;

use super::{Baseline, BaselineError, EngineInfo};
use crate::gate::{Report, TopVerdict};
use crate::record::ScenarioResult;

fn file_name(p: &str) -> Option<&std::ffi::OsStr> {
    Path::new(p).file_name()
}

/// The results file being promoted: its name as given and the SHA-256 (hex) of its bytes.
pub struct ResultsFile<'a> {
    pub path: &'a str,
    pub sha256: &'a str,
}

/// Whether the results `from` may be promoted after the check `report` (at `report_path`;
/// `None`: no report there). The report must have gated exactly these bytes (its current side
/// holds the SHA-256 of each results file it read) and not failed or errored. Returns the
/// warnings and notes to show (`warning: …`, `note: …`), or why promoting is refused; `--force`
/// turns every refusal into a warning.
pub fn vet(
    report: Option<&Report>,
    from: ResultsFile<'_>,
    report_path: &str,
    force: bool,
) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    let mut refuse = |msg: String| {
        if force {
            said.push(format!("warning: {msg} (--force)"));
            Ok(())
        } else {
            Err(format!("{msg}; pass --force to promote anyway"))
        }
    };
    let Some(report) = report else {
        refuse(format!(
            "no check report at {report_path}: gate these results first (`perfgate check … --json {report_path}`) or name the report with --report"
        ))?;
        return Ok(said);
    };
    let cur = &report.current;
    let named = cur
        .sources
        .iter()
        .any(|s| file_name(s) == file_name(from.path));
    if cur.sha256.is_empty() {
        refuse(format!(
            "{report_path} holds no digest of the results it gated (a report of an older perfgate?): check {} again",
            from.path
        ))?;
    } else if !cur.sha256.values().any(|d| d == from.sha256) {
        let msg = match named {
            true => format!(
                "{} is not the file {report_path} gated: its SHA-256 is {}, the report's is {} (rewritten or edited since the check): check it again",
                from.path,
                short(from.sha256),
                cur.sha256.values().map(|d| short(d)).collect::<Vec<_>>().join(", "),
            ),
            false => format!("{report_path} gated {}, not {}", cur.sources.join(", "), from.path),
        };
        refuse(msg)?;
    }
    let counts = report.counts.describe(", ");
    match report.verdict {
        TopVerdict::Fail | TopVerdict::Error => refuse(format!(
            "the check of {} did not pass (verdict {}: {counts}; {report_path}): refusing to promote them",
            from.path,
            format!("{:?}", report.verdict).to_lowercase(),
        ))?,
        // The usual outcome of a check with few launches: no evidence either way, nothing failed.
        TopVerdict::Inconclusive => said.push(format!(
            "note: the check was inconclusive ({counts}); promoting"
        )),
        TopVerdict::Pass => {}
    }
    Ok(said)
}

/// The first 12 hex digits of a digest (enough to tell two apart in a message).
fn short(d: &str) -> &str {
    d.get(..12).unwrap_or(d)
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

/// One promotion: the checked records and what they replace or extend.
pub struct Promotion<'a> {
    pub records: &'a [ScenarioResult],
    /// The file being replaced (or appended to, with `append`); `None`: a new file.
    pub old: Option<&'a Baseline>,
    pub append: bool,
    /// The check's report (`None` under `--force` without one) and where it was.
    pub report: Option<(&'a Report, String)>,
    /// The baseline the check used: the settings of a new file come from it.
    pub checked_base: Option<&'a Baseline>,
    /// The results file promoted.
    pub from: String,
    pub date: String,
    /// The git commit of the checkout, if known.
    pub commit: Option<String>,
}

/// The promoted baseline, the scenarios of the old file kept as they were, and notes.
pub struct Promoted {
    pub baseline: Baseline,
    pub kept: Vec<String>,
    pub notes: Vec<String>,
}

impl Promotion<'_> {
    pub fn build(&self) -> Result<Promoted, BaselineError> {
        let records = self.records;
        let (base, kept) = match (self.old, self.append) {
            (Some(o), true) => (Some(o.clone()), Vec::new()),
            (Some(o), false) => {
                let (b, kept) = strip(o, records, true);
                (Some(b), kept)
            }
            (None, _) => (
                self.checked_base.map(|t| strip(t, records, false).0),
                Vec::new(),
            ),
        };
        let mut engine: EngineInfo = base.as_ref().map(|b| b.engine.clone()).unwrap_or_default();
        if let Some(e) = records.iter().find_map(|r| r.engine.clone()) {
            if engine.name.is_empty() || !self.append {
                engine.name = e;
            }
        }
        if engine.name.is_empty() {
            return Err(BaselineError::Promote(
                "the records do not name their engine and there is no baseline to take it from"
                    .into(),
            ));
        }
        if !self.append {
            if let Some(v) = records.iter().find_map(|r| r.engine_version.clone()) {
                engine.version = Some(v);
            }
        }
        let mut prov = match (self.old, self.append) {
            (Some(o), true) => o.provenance.clone(),
            _ => base
                .as_ref()
                .map(|b| b.provenance.clone())
                .unwrap_or_default(),
        };
        if !self.append {
            prov.sources.clear();
            prov.notes = None;
        }
        let report_path = self.report.as_ref().map(|(_, p)| p.clone());
        for s in std::iter::once(self.from.clone()).chain(report_path) {
            if !prov.sources.contains(&s) {
                prov.sources.push(s);
            }
        }
        prov.date = Some(self.date.clone());
        prov.commit = self.commit.clone().or(prov.commit);
        prov.perfgate_version = Some(env!("CARGO_PKG_VERSION").to_string());
        prov.notes = Some(match &self.report {
            Some((r, _)) => format!(
                "Promoted with `perfgate baseline promote` after a check with verdict {} ({}).",
                format!("{:?}", r.verdict).to_lowercase(),
                r.counts.describe(", ")
            ),
            None => {
                "Promoted with `perfgate baseline promote --force` without a check report.".into()
            }
        });
        let (baseline, notes) = Baseline::from_records(records, engine, prov, base.as_ref())?;
        Ok(Promoted {
            baseline,
            kept,
            notes,
        })
    }
}
