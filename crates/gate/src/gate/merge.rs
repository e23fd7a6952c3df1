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
        if let Some((row, test)) = all_models_row(per_model) {
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
mod tests {
    use super::*;
    use crate::gate::{Counts, Verdict};
    use crate::record::Direction;

    fn row(model: &str, metric: &str, verdict: Verdict, gated: bool) -> Row {
        Row {
            model: model.into(),
            scenario: "random-1024-1024".into(),
            metric: metric.into(),
            gated,
            direction: Direction::Higher,
            baseline: Some(100.0),
            current: Some(90.0),
            change_pct: Some(-10.0),
            interval: None,
            tolerance_pct: Some(5.0),
            p_value: None,
            n_baseline: 2,
            n_current: 2,
            launches: None,
            noise: None,
            launches_needed: None,
            verdict,
            note: None,
            test: None,
        }
    }

    fn report(model: &str, verdict: TopVerdict, rows: Vec<Row>) -> Report {
        Report {
            kind: "check".into(),
            verdict,
            counts: count(&rows),
            rows,
            baseline: Side {
                sources: vec!["baselines/v0.10.1.toml".into()],
                engine: Some("vllm".into()),
                engine_version: Some("0.10.1".into()),
                date: None,
                ..Default::default()
            },
            current: Side {
                sources: vec![format!("{model}.jsonl")],
                engine: Some("vllm".into()),
                engine_version: Some("0.11.0".into()),
                date: None,
                ..Default::default()
            },
            method: "Welch's t on log values, Holm-corrected.".into(),
            perfgate_version: "0.1.0".into(),
            ab: None,
            settings: None,
            look: None,
        }
    }

    #[test]
    fn merge_recomputes_counts_and_takes_the_worst_verdict() {
        let a = report(
            "a",
            TopVerdict::Pass,
            vec![row("a", "output_throughput", Verdict::Pass, true)],
        );
        let b = report(
            "b",
            TopVerdict::Fail,
            vec![
                row("b", "output_throughput", Verdict::Regressed, true),
                row("b", "mean_ttft_ms", Verdict::Regressed, false),
            ],
        );
        let c = report(
            "c",
            TopVerdict::Inconclusive,
            vec![row("c", "output_throughput", Verdict::Inconclusive, true)],
        );
        let m = merge_reports(vec![
            ("a.json".into(), a),
            ("b.json".into(), b),
            ("c.json".into(), c),
        ])
        .unwrap();
        assert_eq!(m.verdict, TopVerdict::Fail);
        assert_eq!(m.rows.len(), 4);
        assert_eq!(
            m.counts,
            Counts {
                pass: 1,
                regressed: 1,
                inconclusive: 1,
                ..Counts::default()
            }
        );
        assert_eq!(m.current.sources, vec!["a.jsonl", "b.jsonl", "c.jsonl"]);
        assert_eq!(m.baseline.sources, vec!["baselines/v0.10.1.toml"]);
        assert_eq!(m.current.engine_version.as_deref(), Some("0.11.0"));
        assert!(m.method.contains("Merged from 3 reports"), "{}", m.method);
    }

    #[test]
    fn per_model_ab_reports_merge_their_cost() {
        let ab = |model: &str, gpu: f64, wall: f64| AbSummary {
            base: "main".into(),
            candidate: "pr-9".into(),
            order: "abba".into(),
            max_launches: 10,
            max_minutes: Some(60.0),
            wall_minutes: wall,
            gpu_minutes: gpu,
            minutes_left: Some(60.0 - wall),
            models: vec![crate::gate::AbModel {
                model: model.into(),
                pairs: 3,
                launches: 6,
                tensor_parallel_size: 2,
                wall_minutes: wall,
                gpu_minutes: gpu,
                verdict: TopVerdict::Pass,
                stopped: "passed after 3 pair(s)".into(),
            }],
        };
        let mut a = report("a", TopVerdict::Pass, vec![]);
        a.ab = Some(ab("a", 20.0, 10.0));
        let mut b = report("b", TopVerdict::Pass, vec![]);
        b.ab = Some(ab("b", 30.0, 15.0));
        let m = merge_reports(vec![("a.json".into(), a.clone()), ("b.json".into(), b)]).unwrap();
        let s = m.ab.unwrap();
        assert_eq!(s.models.len(), 2);
        assert_eq!(s.gpu_minutes, 50.0);
        assert_eq!(s.wall_minutes, 15.0);
        assert_eq!(s.minutes_left, Some(45.0));
        assert_eq!(s.base, "main");
        // A check report among them: the merge is not an A/B report.
        let c = report("c", TopVerdict::Pass, vec![]);
        let m = merge_reports(vec![("a.json".into(), a), ("c.json".into(), c)]).unwrap();
        assert!(m.ab.is_none());
    }

    #[test]
    fn a_report_that_gated_nothing_never_passes_and_rows_outrank_the_stated_verdict() {
        let empty = report("a", TopVerdict::Pass, vec![]);
        assert_eq!(supported_verdict(&empty), TopVerdict::Error);
        let ok = report(
            "b",
            TopVerdict::Pass,
            vec![row("b", "output_throughput", Verdict::Pass, true)],
        );
        let m = merge_reports(vec![("a.json".into(), empty), ("b.json".into(), ok)]).unwrap();
        assert_eq!(m.verdict, TopVerdict::Error);
        // A report saying pass over a regressed gated row is a fail.
        let lying = report(
            "c",
            TopVerdict::Pass,
            vec![row("c", "output_throughput", Verdict::Regressed, true)],
        );
        assert_eq!(supported_verdict(&lying), TopVerdict::Fail);
    }

    #[test]
    fn error_outranks_inconclusive_and_fail_outranks_error() {
        let e = report(
            "e",
            TopVerdict::Error,
            vec![row("e", "x", Verdict::Error, true)],
        );
        let i = report("i", TopVerdict::Inconclusive, vec![]);
        let m = merge_reports(vec![("i".into(), i), ("e".into(), e.clone())]).unwrap();
        assert_eq!(m.verdict, TopVerdict::Error);
        let f = report("f", TopVerdict::Fail, vec![]);
        let m = merge_reports(vec![("e".into(), e), ("f".into(), f)]).unwrap();
        assert_eq!(m.verdict, TopVerdict::Fail);
    }

    #[test]
    fn duplicates_and_mixed_kinds_are_refused_with_file_names() {
        let a = report(
            "a",
            TopVerdict::Pass,
            vec![row("a", "x", Verdict::Pass, true)],
        );
        let err = merge_reports(vec![
            ("one.json".into(), a.clone()),
            ("two.json".into(), a.clone()),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("one.json") && err.contains("two.json"),
            "{err}"
        );
        let mut other = report("b", TopVerdict::Pass, vec![]);
        other.kind = "compare".into();
        let err = merge_reports(vec![("one.json".into(), a), ("two.json".into(), other)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("compare"), "{err}");
        assert!(matches!(merge_reports(vec![]), Err(MergeError::Empty)));
    }
}

#[cfg(test)]
mod one_family {
    use super::*;
    use crate::gate::{evaluate, GateConfig, Inputs, Verdict, ALL_MODELS};
    use crate::record::ScenarioResult;
    use crate::sample::record;

    /// One model's records: 2 scenarios × 3 launches (±1 %), one session; throughput × `thr`.
    fn model(m: &str, tag: &str, thr: f64) -> Vec<ScenarioResult> {
        let mut out = Vec::new();
        for n in [100, 200] {
            for i in 0..3 {
                let w = 1.0 + 0.01 * (i as f64 - 1.0);
                let mut r = record(m, n, w * thr, 1.0 / w);
                r.launch_id = Some(format!("{tag}{i}"));
                r.session_id = Some("s".into());
                r.run_index = i;
                out.push(r);
            }
        }
        out
    }

    #[test]
    fn a_matrix_is_decided_again_as_one_check() {
        let cfg = GateConfig::default();
        let models = ["m/a", "m/b", "m/c"];
        let job = |m: &str| {
            let rep = evaluate(Inputs::new(&model(m, "B", 1.0), &model(m, "C", 0.97), &cfg));
            (format!("{m}.json"), rep)
        };
        let inputs: Vec<(String, Report)> = models.iter().map(|m| job(m)).collect();
        assert!(inputs
            .iter()
            .all(|(_, r)| r.rows.iter().all(|x| x.model != ALL_MODELS)));
        let merged = merge_reports(inputs.clone()).unwrap();
        assert_eq!(merged.settings.as_ref(), Some(&cfg));
        assert!(
            merged.method.contains("decided again as one check"),
            "{}",
            merged.method
        );
        // The all-models tests exist again: the merged check has the rows and the family of
        // one process over every model (whose noise each job learnt from its own model's rows,
        // so the numbers differ a little).
        let all: Vec<ScenarioResult> = models.iter().flat_map(|m| model(m, "B", 1.0)).collect();
        let cur: Vec<ScenarioResult> = models.iter().flat_map(|m| model(m, "C", 0.97)).collect();
        let one = evaluate(Inputs::new(&all, &cur, &cfg));
        let key = |r: &Row| (r.model.clone(), r.scenario.clone(), r.metric.clone());
        let keys = |rows: &[Row]| {
            let mut k: Vec<_> = rows.iter().filter(|r| r.gated).map(key).collect();
            k.sort();
            k
        };
        assert_eq!(keys(&merged.rows), keys(&one.rows));
        assert!(merged
            .rows
            .iter()
            .any(|x| x.model == ALL_MODELS && x.test.is_some()));
        // The rebuilt all-models rows are decided by the merge itself, as in one process: on an
        // unchanged matrix they pass (no job had them to hold back).
        // Even when every job held every row back (here: set by hand), the merge's own rows
        // are decided on their tests, while the jobs' rows stay held.
        let same: Vec<(String, Report)> = models
            .iter()
            .map(|m| {
                let mut rep = evaluate(Inputs::new(&model(m, "B", 1.0), &model(m, "C", 1.0), &cfg));
                for r in &mut rep.rows {
                    r.verdict = Verdict::Inconclusive;
                }
                (format!("{m}.json"), rep)
            })
            .collect();
        let same = merge_reports(same).unwrap();
        let wide: Vec<&Row> = same.rows.iter().filter(|r| r.model == ALL_MODELS).collect();
        assert!(!wide.is_empty());
        assert!(wide.iter().any(|r| r.verdict == Verdict::Pass), "{wide:?}");
        assert!(same
            .rows
            .iter()
            .filter(|r| r.model != ALL_MODELS)
            .all(|r| r.verdict != Verdict::Pass));
        // Each job alone tested fewer rows at α: a merged row's Holm p is never smaller.
        for (_, rep) in &inputs {
            for r in rep.rows.iter().filter(|r| r.gated && r.p_value.is_some()) {
                let m = merged.rows.iter().find(|x| key(x) == key(r)).unwrap();
                assert!(
                    m.p_value.unwrap() >= r.p_value.unwrap() - 1e-15,
                    "{:?}",
                    key(r)
                );
            }
        }
        // A row its job did not pass (here: a FAIL that one more launch did not confirm, so
        // the job held its regressed rows at inconclusive) is not passed by the merge either.
        let slow = evaluate(Inputs::new(
            &model("m/a", "B", 1.0),
            &model("m/a", "S", 0.7),
            &cfg,
        ));
        assert_eq!(slow.verdict, TopVerdict::Fail);
        let again = evaluate(Inputs::new(
            &model("m/a", "B", 1.0),
            &model("m/a", "C", 1.0),
            &cfg,
        ));
        let held = crate::gate::confirm(&slow, again.clone(), 1);
        assert_eq!(held.verdict, TopVerdict::Inconclusive);
        let mut matrix = inputs.clone();
        matrix[0] = ("m/a.json".into(), held.clone());
        let merged = merge_reports(matrix).unwrap();
        let mut checked = 0;
        for r in held
            .rows
            .iter()
            .filter(|r| r.gated && r.scope() != Scope::AllModels)
        {
            let m = merged.rows.iter().find(|x| key(x) == key(r)).unwrap();
            let passed_alone = again
                .rows
                .iter()
                .find(|x| key(x) == key(r))
                .unwrap()
                .verdict
                == Verdict::Pass;
            if r.verdict != Verdict::Pass && passed_alone {
                assert_ne!(m.verdict, Verdict::Pass, "{m:?}");
                assert!(
                    m.note.as_deref().unwrap().contains("not passed here"),
                    "{m:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 0, "no held row in the test");
        assert_ne!(merged.verdict, TopVerdict::Pass);
        // Reports without their tests (older perfgate) merge as before.
        let bare: Vec<(String, Report)> = inputs
            .into_iter()
            .map(|(f, mut r)| {
                r.settings = None;
                (f, r)
            })
            .collect();
        let old = merge_reports(bare).unwrap();
        assert!(old.rows.iter().all(|x| x.model != ALL_MODELS));
        assert!(old.method.contains("not across them"), "{}", old.method);
    }

    #[test]
    fn a_matrix_is_decided_at_the_strictest_look_of_its_jobs() {
        // Job m/a re-ran twice (`--rerun inconclusive --max-reruns 2`): its rows were decided at
        // look 3 of 3, at 0.39 of α. A slowdown that the job did not fail at that look, but that
        // the two-job matrix decided at the full α would, does not fail the merge; the other
        // job looked once. (With more jobs the merge's larger Holm family is often the stricter
        // of the two already; the level is what makes it so always.)
        let cfg = GateConfig::default();
        let late = Some(Look { k: 3, of: 3 });
        let job = |m: &str, thr: f64, look: Option<Look>| {
            let (b, c) = (model(m, "B", 1.0), model(m, "C", thr));
            let rep = evaluate(Inputs {
                look,
                ..Inputs::new(&b, &c, &cfg)
            });
            (format!("{m}.json"), rep)
        };
        let matrix =
            |thr: f64, look: Option<Look>| vec![job("m/a", thr, look), job("m/b", 1.0, None)];
        // The slowdown between the two levels, found on the merged matrix at each look.
        let between = (1..200)
            .map(|i| 1.0 - 0.0005 * f64::from(i))
            .find(|&thr| {
                let at = |l: Option<Look>| {
                    let mut m = matrix(thr, l);
                    for (_, r) in &mut m {
                        r.look = l;
                    }
                    merge_reports(m).unwrap().verdict
                };
                at(None) == TopVerdict::Fail && job("m/a", thr, late).1.verdict != TopVerdict::Fail
            })
            .expect("a slowdown that regresses at α but not at look 3 of 3");
        let inputs = matrix(between, late);
        assert_eq!(inputs[0].1.look, late);
        assert_ne!(inputs[0].1.verdict, TopVerdict::Fail);
        let merged = merge_reports(inputs).unwrap();
        assert_ne!(merged.verdict, TopVerdict::Fail, "{:#?}", merged.rows);
        assert_eq!(merged.look, late);
        assert!(merged.method.contains("look 3 of 3"), "{}", merged.method);
        // The strictest of several looks is the one with the smallest level.
        let (l1, l3) = (Look { k: 1, of: 3 }, Look { k: 3, of: 3 });
        let pick = strictest_look(&cfg, [None, Some(l1), Some(l3)].into_iter()).unwrap();
        let level = |l: Look| cfg.levels(Some(l)).look_alpha();
        assert!(level(pick) <= level(l1).min(level(l3)));
        assert_eq!(strictest_look(&cfg, [None, None].into_iter()), None);
    }
}
