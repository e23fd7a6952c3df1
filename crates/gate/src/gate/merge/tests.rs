//! `perfgate merge`: reports merged as they were decided, and matrices decided again as one
//! check (`one_family`).

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

mod one_family {
    use super::super::*;
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
