//! Merging the per-model reports of matrix jobs into one, so a single PR comment covers every
//! model (`perfgate merge`).
//!
//! What merging means for the statistics. Stored checks (`perfgate check`): every input keeps
//! each tested row's test (oriented change, standard error, df) and its gate settings, so the
//! merge decides the matrix as the one check it stands for: the all-models engine-wide tests are
//! built again from the models' engine-wide rows, and weighted Holm runs once over every gated
//! row of every report. The family-wise error is then α over the whole matrix, as if one process
//! had checked every model. A row passes in the merge only if it passed in its job (a pass is
//! each row's own bound; deciding again cannot see a FAIL that `--confirm` did not confirm, nor a
//! later `--rerun` look's stricter level), and the matrix is decided at the strictest look any job
//! reached (so a row a job judged at a later look's smaller level does not regress at the full α
//! here). Inputs without tests or with differing settings, and `perfgate ab`
//! reports (each model its own sequential test), are merged as they were decided: rows and
//! verdicts kept, counts recomputed, the top verdict the gate's rule over the merged rows and
//! never milder than any input's (fail > error > inconclusive > pass); the error is then
//! controlled per report only (at most M × α over M reports), and the `method` says so.

use std::collections::HashMap;

use super::config::GateConfig;
use super::verdict::{all_models_row, decide, method_sentence, top_verdict, Scope, Test, Tested};
use super::{count, AbSummary, Look, Report, Row, Side, TopVerdict};

/// Why reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: no reports given")]
    Empty,
    #[error("{file} is a `{kind}` report but {first} is a `{first_kind}` report: merge reports of one kind")]
    Kind {
        file: String,
        kind: String,
        first: String,
        first_kind: String,
    },
    #[error("{file} and {other} both hold model `{model}`, scenario `{scenario}`, metric `{metric}`: was one model's report given twice?")]
    Duplicate {
        file: String,
        other: String,
        model: String,
        scenario: String,
        metric: String,
    },
}

/// The top verdict a report's own rows support: never milder than the verdict it states, nor
/// than the gate's rule over its rows, and `error` when it gated no row at all (a job that
/// compared nothing must not pass). `perfgate comment` and `perfgate merge` post this, not the
/// report's word for it.
pub fn supported_verdict(r: &Report) -> TopVerdict {
    let nothing = !r.rows.iter().any(|row| row.gated);
    [
        r.verdict,
        top_verdict(&r.rows),
        if nothing {
            TopVerdict::Error
        } else {
            TopVerdict::Pass
        },
    ]
    .into_iter()
    .max_by_key(|v| severity(*v))
    .unwrap_or(TopVerdict::Error)
}

/// Give `r` the verdict its rows support ([`supported_verdict`]) and recount its rows; returns
/// the verdict it stated when that differed.
pub fn settle(r: &mut Report) -> Option<TopVerdict> {
    let stated = r.verdict;
    r.verdict = supported_verdict(r);
    r.counts = count(&r.rows);
    (r.verdict != stated).then_some(stated)
}

fn severity(v: TopVerdict) -> u8 {
    match v {
        TopVerdict::Pass => 0,
        TopVerdict::Inconclusive => 1,
        TopVerdict::Error => 2,
        TopVerdict::Fail => 3,
    }
}

/// Join distinct values in first-seen order.
fn join_distinct<'a>(values: impl Iterator<Item = &'a str>, sep: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(sep)
}

fn merge_sides<'a>(sides: impl Iterator<Item = &'a Side> + Clone) -> Side {
    let opt = |f: fn(&Side) -> &Option<String>| {
        let s = join_distinct(sides.clone().filter_map(|s| f(s).as_deref()), ", ");
        (!s.is_empty()).then_some(s)
    };
    let mut sources: Vec<String> = Vec::new();
    for s in sides.clone().flat_map(|s| s.sources.iter()) {
        if !sources.contains(s) {
            sources.push(s.clone());
        }
    }
    Side {
        sources,
        engine: opt(|s| &s.engine),
        engine_version: opt(|s| &s.engine_version),
        date: opt(|s| &s.date),
        sha256: sides.flat_map(|s| s.sha256.clone()).collect(),
        // Each job ran on its own runner: one speed for all of them would compare machines
        // that were never compared; each job's own report says whether its machines differed.
        calibration_ms: None,
        calibration_all_ms: None,
        platforms: Vec::new(),
    }
}

/// The A/B summaries of per-model `perfgate ab` reports (a matrix of jobs, each on its own
/// runner) as one: their models together, GPU-minutes summed, the wall time of the longest job,
/// the least budget left. `None` unless every input is an A/B report.
fn merge_ab<'a>(mut abs: impl Iterator<Item = Option<&'a AbSummary>>) -> Option<AbSummary> {
    let mut out = abs.next()??.clone();
    for ab in abs {
        let ab = ab?;
        out.models.extend(ab.models.iter().cloned());
        out.gpu_minutes += ab.gpu_minutes;
        out.wall_minutes = out.wall_minutes.max(ab.wall_minutes);
        out.minutes_left = match (out.minutes_left, ab.minutes_left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for (mine, theirs) in [
            (&mut out.base, &ab.base),
            (&mut out.candidate, &ab.candidate),
            (&mut out.order, &ab.order),
        ] {
            if !mine.split(", ").any(|x| x == theirs) {
                mine.push_str(", ");
                mine.push_str(theirs);
            }
        }
    }
    Some(out)
}

/// Merge `(file name, report)` pairs; see the module documentation for what is kept.
pub fn merge_reports(inputs: Vec<(String, Report)>) -> Result<Report, MergeError> {
    let (first_file, first) = inputs.first().ok_or(MergeError::Empty)?;
    for (file, r) in &inputs[1..] {
        if r.kind != first.kind {
            return Err(MergeError::Kind {
                file: file.clone(),
                kind: r.kind.clone(),
                first: first_file.clone(),
                first_kind: first.kind.clone(),
            });
        }
    }
    let mut owner: HashMap<(&str, &str, &str), &str> = HashMap::new();
    for (file, r) in &inputs {
        for row in &r.rows {
            let key = (
                row.model.as_str(),
                row.scenario.as_str(),
                row.metric.as_str(),
            );
            if let Some(other) = owner.insert(key, file) {
                return Err(MergeError::Duplicate {
                    file: file.clone(),
                    other: other.to_string(),
                    model: row.model.clone(),
                    scenario: row.scenario.clone(),
                    metric: row.metric.clone(),
                });
            }
        }
    }
    let rows: Vec<Row> = inputs.iter().flat_map(|(_, r)| r.rows.clone()).collect();
    if let Some(merged) = decide_as_one(&inputs, &rows) {
        return Ok(merged);
    }
    // The gate's own rule over the merged rows, and never milder than an input's verdict.
    // An input that gated nothing (a matrix job that compared nothing) makes it an error.
    let verdict = inputs
        .iter()
        .map(|(_, r)| supported_verdict(r))
        .chain([top_verdict(&rows)])
        .max_by_key(|v| severity(*v))
        .unwrap_or(TopVerdict::Pass);
    let mut method = join_distinct(inputs.iter().map(|(_, r)| r.method.as_str()), " ");
    if inputs.len() > 1 {
        method.push_str(&format!(
            " Merged from {} reports: the family-wise error rate is controlled within each report, not across them.",
            inputs.len()
        ));
    }
    Ok(Report {
        kind: first.kind.clone(),
        verdict,
        counts: count(&rows),
        baseline: merge_sides(inputs.iter().map(|(_, r)| &r.baseline)),
        current: merge_sides(inputs.iter().map(|(_, r)| &r.current)),
        method,
        perfgate_version: join_distinct(
            inputs.iter().map(|(_, r)| r.perfgate_version.as_str()),
            ", ",
        ),
        ab: merge_ab(inputs.iter().map(|(_, r)| r.ab.as_ref())),
        rows,
        settings: None,
        look: None,
    })
}

/// Stored checks whose rows kept their tests, under one gate setting: the rows decided again as
/// one family, with the all-models engine-wide tests rebuilt. `None` when that cannot be done.
fn decide_as_one(inputs: &[(String, Report)], rows: &[Row]) -> Option<Report> {
    let first = &inputs[0].1;
    let cfg = first.settings.clone()?;
    if inputs
        .iter()
        .any(|(_, r)| r.ab.is_some() || r.settings.as_ref() != Some(&cfg))
    {
        return None;
    }
    let tested_rows = |r: &Row| r.test.is_some();
    if !rows.iter().any(tested_rows) {
        return None;
    }
    // The per-report all-models rows give way to ones over every model of the matrix.
    let mut rows: Vec<Row> = rows
        .iter()
        .filter(|r| r.scope() != Scope::AllModels)
        .cloned()
        .collect();
    let mut wide: Vec<(String, Vec<(Row, Test)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.scope() == Scope::EngineWide) {
        let Some(t) = r.test else { continue };
        match wide.iter_mut().find(|(m, _)| *m == r.metric) {
            Some(w) => w.1.push((r.clone(), t)),
            None => wide.push((r.metric.clone(), vec![(r.clone(), t)])),
        }
    }
    for (_, per_model) in &wide {
        if let Some((row, test)) = all_models_row(per_model, false) {
            let mut row = row;
            row.test = Some(test);
            rows.push(row);
        }
    }
    let tested: Vec<Tested> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let t = r.test?;
            Some(Tested::new(i, r.scope(), &cfg.rule(&r.metric), t))
        })
        .collect();
    // Each job judged its rows at its look (`--rerun`: a later look is stricter, the price of
    // having looked before). Deciding the matrix at the first look's full α would let a row a
    // job held back at its last look regress here: the matrix is decided at the strictest look
    // any of its jobs reached.
    let look = strictest_look(&cfg, inputs.iter().map(|(_, r)| r.look));
    let levels = cfg.levels(look);
    // A pass does not depend on the family (it is each row's own bound at α_eq), so deciding
    // again can only lose a job's reasons for not passing: a row that regressed and was not
    // confirmed (`check --confirm`), or one judged at a later look's stricter level (`--rerun`).
    // A row passes in the merge only if it passed in its job.
    let held: Vec<Option<(super::Verdict, Option<String>)>> = rows
        .iter()
        .map(|r| {
            // The all-models rows are the merge's own (rebuilt above), not a job's.
            (r.scope() != Scope::AllModels && r.verdict != super::Verdict::Pass)
                .then(|| (r.verdict, r.note.clone()))
        })
        .collect();
    decide(&mut rows, &tested, &cfg, levels);
    for (row, held) in rows.iter_mut().zip(held) {
        if let Some((was, note)) = held.filter(|_| row.verdict == super::Verdict::Pass) {
            row.verdict = super::Verdict::Inconclusive;
            let why = format!("{} in its job, so not passed here", was.as_str());
            row.note = Some(match note {
                Some(n) => format!("{n}; {why}"),
                None => why,
            });
        }
    }
    let n_gated = rows.iter().filter(|r| r.gated).count();
    Some(Report {
        kind: first.kind.clone(),
        verdict: top_verdict(&rows),
        counts: count(&rows),
        baseline: merge_sides(inputs.iter().map(|(_, r)| &r.baseline)),
        current: merge_sides(inputs.iter().map(|(_, r)| &r.current)),
        method: format!(
            "{} Merged from {} reports and decided again as one check.",
            method_sentence(&cfg, levels, n_gated),
            inputs.len()
        ),
        perfgate_version: join_distinct(
            inputs.iter().map(|(_, r)| r.perfgate_version.as_str()),
            ", ",
        ),
        ab: None,
        rows,
        settings: Some(cfg),
        look,
    })
}

/// Of the looks the inputs were decided at, the one whose level is the smallest (`None`, a
/// single look at the full α, only when no input looked more than once).
fn strictest_look(cfg: &GateConfig, looks: impl Iterator<Item = Option<Look>>) -> Option<Look> {
    looks.flatten().min_by(|a, b| {
        let level = |l: &Look| cfg.levels(Some(*l)).look_alpha();
        level(a).total_cmp(&level(b))
    })
}

#[cfg(test)]
mod tests;
