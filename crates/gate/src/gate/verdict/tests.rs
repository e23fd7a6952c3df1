use super::*;
use crate::gate::{machine_note, TopVerdict};
use crate::sample::record;
use proptest::prelude::*;

fn eval(base: &[ScenarioResult], cur: &[ScenarioResult]) -> Report {
    evaluate(Inputs::new(base, cur, &GateConfig::default()))
}

/// Multiply every timing-derived value of a record: throughputs by `thr`, latencies by `lat`.
fn scaled(r: &ScenarioResult, thr: f64, lat: f64) -> ScenarioResult {
    let mut r = r.clone();
    r.output_throughput *= thr;
    r.request_throughput *= thr;
    r.duration /= thr;
    for v in r.stats.values_mut() {
        *v *= lat;
    }
    r
}

fn suite(runs: usize) -> Vec<ScenarioResult> {
    let mut out = Vec::new();
    for m in ["m/a", "m/b", "m/c"] {
        for n in [100, 200] {
            for i in 0..runs {
                let wiggle = 1.0 + 0.01 * (i as f64 - 1.0);
                let mut r = scaled(&record(m, n, 1.0, 1.0), wiggle, 1.0 / wiggle);
                r.run_index = i as u32;
                r.session_id = Some("s".into());
                out.push(r);
            }
        }
    }
    out
}

fn verdict_of<'a>(r: &'a Report, model: &str, n: u64, metric: &str) -> &'a Row {
    let scen = format!("random-in1024-out128-n{n}");
    r.rows
        .iter()
        .find(|x| x.model == model && x.scenario == scen && x.metric == metric)
        .unwrap_or_else(|| panic!("no row {model} {scen} {metric}"))
}

/// Records of `suite(runs)`, each run its own launch, with run-to-run spread `spread`.
fn quiet_suite(runs: usize, spread: f64) -> Vec<ScenarioResult> {
    let mut out = Vec::new();
    for m in ["m/a", "m/b", "m/c"] {
        for n in [100, 200] {
            for i in 0..runs {
                let wiggle = 1.0 + spread * (i as f64 - 1.0);
                let mut r = scaled(&record(m, n, 1.0, 1.0), wiggle, 1.0 / wiggle);
                r.run_index = i as u32;
                r.launch_id = Some(format!("L{i}"));
                r.session_id = Some("s".into());
                out.push(r);
            }
        }
    }
    out
}

#[test]
fn a_latency_tolerance_means_plus_delta() {
    // Tolerance 15 %: a latency 16.5 % higher is beyond it (as the tables print it), though
    // it is within 1/(1 − 15 %) − 1 = 17.6 %. Quiet launches and a tight prior make the
    // distance to the tolerance the only question.
    let cfg = GateConfig::parse(
        "[metrics.median_ttft_ms]\ntolerance_pct = 15\nnoise_pct = 0.1\n",
        "g",
    )
    .unwrap();
    let base = quiet_suite(3, 0.0005);
    let cur: Vec<_> = base
        .iter()
        .map(|r| {
            if r.model == "m/a" && r.params.num_prompts == 100 {
                scaled(r, 1.0, 1.165)
            } else {
                r.clone()
            }
        })
        .collect();
    let rep = evaluate(Inputs {
        kind: "c",
        ..Inputs::new(&base, &cur, &cfg)
    });
    let row = verdict_of(&rep, "m/a", 100, "median_ttft_ms");
    assert_eq!(row.tolerance_pct, Some(15.0));
    assert_eq!(row.verdict, Verdict::Regressed, "{row:?}");
    assert_eq!(
        verdict_of(&rep, "m/b", 100, "median_ttft_ms").verdict,
        Verdict::Pass
    );
    // 14 % higher is within the tolerance: not a regression, however quiet the data.
    let cur: Vec<_> = base.iter().map(|r| scaled(r, 1.0, 1.14)).collect();
    let rep = evaluate(Inputs {
        kind: "c",
        ..Inputs::new(&base, &cur, &cfg)
    });
    let row = verdict_of(&rep, "m/a", 100, "median_ttft_ms");
    assert_eq!(row.verdict, Verdict::Pass, "{row:?}");
}

#[test]
fn one_launch_a_side_learns_no_noise_and_says_what_it_needs() {
    let base = quiet_suite(1, 0.0);
    let cur: Vec<_> = base.iter().map(|r| scaled(r, 0.8, 1.25)).collect();
    let rep = eval(&base, &cur);
    let row = verdict_of(&rep, "m/a", 100, "output_throughput");
    // No row of the check has a repeated launch: no noise can be learnt, and none is made
    // up. Inconclusive, saying how many launches would let the gate learn it.
    assert_eq!(row.noise, None);
    assert_eq!(row.verdict, Verdict::Inconclusive, "{row:?}");
    assert_eq!(row.launches_needed, Some(2), "{row:?}");
    let note = row.note.as_deref().unwrap();
    assert!(note.contains("no repeated launches"), "{note}");
    // A prior the settings name is used as it is.
    let cfg = GateConfig::parse("[metrics.output_throughput]\nnoise_pct = 1\n", "g").unwrap();
    let rep = evaluate(Inputs::new(&base, &cur, &cfg));
    let row = verdict_of(&rep, "m/a", 100, "output_throughput");
    assert_eq!(row.noise.unwrap().source, crate::gate::NoiseSource::Prior);
    assert_eq!(row.verdict, Verdict::Regressed, "{row:?}");
}

#[test]
fn same_records_do_not_fail() {
    for runs in [1, 3] {
        let s = suite(runs);
        let r = eval(&s, &s);
        assert_ne!(r.verdict, TopVerdict::Fail);
        assert_eq!(r.counts.regressed, 0);
        assert_eq!(r.counts.improved, 0);
    }
    // Three runs a side with 1 % spread: every gated row is shown equivalent.
    let s = suite(3);
    assert_eq!(eval(&s, &s).verdict, TopVerdict::Pass);
}

#[test]
fn one_scenario_twenty_percent_slower_fails_only_there() {
    let base = quiet_suite(3, 0.01);
    let cur: Vec<_> = base
        .iter()
        .map(|r| {
            if r.model == "m/b" && r.params.num_prompts == 200 {
                scaled(r, 0.8, 1.25)
            } else {
                r.clone()
            }
        })
        .collect();
    let rep = eval(&base, &cur);
    assert_eq!(rep.verdict, TopVerdict::Fail);
    assert_eq!(
        verdict_of(&rep, "m/b", 200, "output_throughput").verdict,
        Verdict::Regressed
    );
    for row in rep.rows.iter().filter(|r| r.verdict == Verdict::Regressed) {
        // On 1 % noise a 20 % drop in one of 6 scenarios also moves the average over all
        // models by more than its 2 % tolerance.
        if row.model == ALL_MODELS {
            continue;
        }
        assert_eq!(row.model, "m/b", "{row:?}");
        assert!(
            ["random-in1024-out128-n200", ENGINE_WIDE].contains(&row.scenario.as_str()),
            "{row:?}"
        );
    }
    let better: Vec<_> = base.iter().map(|r| scaled(r, 1.25, 0.8)).collect();
    let rep = eval(&base, &better);
    assert_ne!(rep.verdict, TopVerdict::Fail);
    assert!(rep.counts.improved > 0);
}

#[test]
fn a_p99_of_fewer_than_100_requests_enters_no_engine_wide_test() {
    // Scenarios of 8 and 16 requests: their "p99" is nearly their largest value.
    let small = |runs: usize| -> Vec<ScenarioResult> {
        let mut out = Vec::new();
        for n in [8, 16] {
            for i in 0..runs {
                let wiggle = 1.0 + 0.01 * (i as f64 - 1.0);
                let mut r = scaled(&record("m/a", n, 1.0, 1.0), wiggle, 1.0 / wiggle);
                r.run_index = i as u32;
                r.launch_id = Some(format!("L{i}"));
                r.session_id = Some("s".into());
                out.push(r);
            }
        }
        out
    };
    let wide = |rep: &Report, metric: &str| {
        rep.rows
            .iter()
            .any(|r| r.scenario == ENGINE_WIDE && r.metric == metric)
    };
    let rep = eval(&small(3), &small(3));
    assert!(wide(&rep, "median_ttft_ms"), "{:?}", rep.rows);
    assert!(!wide(&rep, "p99_ttft_ms"));
    assert!(!wide(&rep, "p99_tpot_ms"));
    // 100 and 200 requests: a request lies beyond the p99, and the test is there.
    let rep = eval(&quiet_suite(3, 0.01), &quiet_suite(3, 0.01));
    assert!(wide(&rep, "p99_ttft_ms"));
}

#[test]
fn missing_scenarios_are_rows_not_crashes() {
    let base = suite(3);
    let cur: Vec<_> = base.iter().filter(|r| r.model != "m/c").cloned().collect();
    let rep = eval(&base, &cur);
    assert_eq!(rep.counts.missing, 2);
    assert_eq!(rep.verdict, TopVerdict::Inconclusive);
    assert_eq!(rep.counts.inconclusive, 0);
    let row = verdict_of(&rep, "m/c", 100, SCENARIO_ROW);
    assert_eq!(row.note.as_deref(), Some("scenario not in the results"));
    // A new scenario (not in the baseline) is shown but does not hold the gate up.
    let rep = eval(&cur, &base);
    assert_eq!(rep.counts.missing, 2);
    assert_eq!(rep.verdict, TopVerdict::Pass);
}

#[test]
fn failures_regress_by_themselves() {
    let base = suite(1);
    let mut cur = base.clone();
    cur[0].failed = 3;
    cur[0].completed -= 3;
    let rep = eval(&base, &cur);
    let row = verdict_of(&rep, "m/a", 100, "success_rate");
    assert_eq!(row.verdict, Verdict::Regressed);
    assert_eq!(row.note.as_deref(), Some("3 failed requests (baseline 0)"));
    assert_eq!(rep.verdict, TopVerdict::Fail);
    let mut short = base.clone();
    short[1].completed -= 1;
    let rep = eval(&base, &short);
    assert_eq!(
        verdict_of(&rep, "m/a", 200, "success_rate").verdict,
        Verdict::Regressed
    );
}

#[test]
fn engine_errors_make_an_error_verdict() {
    let base = suite(1);
    let errors = [ScenarioError {
        model: "m/a".into(),
        scenario: "random-in1024-out128-n100".into(),
        message: "engine exited with status 137".into(),
    }];
    let rep = evaluate(Inputs {
        errors: &errors,
        ..Inputs::new(&base, &base, &GateConfig::default())
    });
    assert_eq!(rep.verdict, TopVerdict::Error);
    assert_eq!(rep.counts.error, 1);
}

#[test]
fn throughput_dropping_to_zero_regresses() {
    let base = suite(1);
    let mut cur = base.clone();
    cur[0].output_throughput = 0.0;
    let rep = eval(&base, &cur);
    let row = verdict_of(&rep, "m/a", 100, "output_throughput");
    assert_eq!(row.verdict, Verdict::Regressed);
}

#[test]
fn noise_is_pooled_from_repeated_runs() {
    // Throughput that really varies ±8 % run to run, 6 % lower on the current side everywhere:
    // with the 2 % prior this would look significant; the pooled noise says it is not.
    let spread = [0.92, 1.0, 1.08];
    let make = |shift: f64| -> Vec<ScenarioResult> {
        let mut out = Vec::new();
        for m in ["m/a", "m/b", "m/c"] {
            for n in [100, 200] {
                for (i, f) in spread.iter().enumerate() {
                    let mut r = scaled(&record(m, n, 1.0, 1.0), f * shift, 1.0);
                    r.run_index = i as u32;
                    out.push(r);
                }
            }
        }
        out
    };
    let (base, cur) = (make(1.0), make(0.94));
    let rep = eval(&base, &cur);
    let row = verdict_of(&rep, "m/a", 100, "output_throughput");
    assert_eq!(row.verdict, Verdict::Inconclusive, "{row:?}");
    // With the pool disabled (one run of one side is not a pool) the prior would decide.
    let loud = GateConfig::parse("[metrics.output_throughput]\nnoise_pct = 1\n", "g").unwrap();
    let rep = evaluate(Inputs::new(&base, &cur, &loud));
    assert_eq!(
        verdict_of(&rep, "m/a", 100, "output_throughput").verdict,
        Verdict::Inconclusive,
        "the pool, not the configured prior, sets the noise"
    );
}

#[test]
fn duplicates_and_empty_comparisons_are_found() {
    let s = quiet_suite(2, 0.01);
    assert_eq!(duplicate(&s), None);
    let mut twice = s.clone();
    twice.extend(s.iter().cloned());
    let msg = duplicate(&twice).unwrap();
    assert!(
        msg.contains("appears twice") && msg.contains("launch `L0`"),
        "{msg}"
    );
    let rep = eval(&s, &s);
    assert!(compared(&rep.rows) > 0);
    // Results for another model only: every row is missing, nothing was compared.
    let other: Vec<_> = s
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.model = "other".into();
            r
        })
        .collect();
    assert_eq!(compared(&eval(&s, &other).rows), 0);
    // No gated metric: nothing compared either.
    let none = GateConfig::parse("gated = []\n", "g").unwrap();
    let rep = evaluate(Inputs {
        kind: "c",
        ..Inputs::new(&s, &s, &none)
    });
    assert_eq!(compared(&rep.rows), 0);
}

#[test]
fn a_uniform_slowdown_too_small_for_any_model_is_seen_over_all_models() {
    // Three models, three launches a side with ±1 % launch noise; every scenario 4 %
    // slower: the all-models test pools six scenarios' worth of launches.
    let base = quiet_suite(3, 0.01);
    let cur: Vec<_> = base
        .iter()
        .map(|r| {
            let mut r = scaled(r, 0.96, 1.0 / 0.96);
            r.launch_id = r.launch_id.map(|l| format!("c{l}"));
            r
        })
        .collect();
    let rep = eval(&base, &cur);
    let all = rep
        .rows
        .iter()
        .find(|r| r.model == ALL_MODELS && r.metric == "output_throughput")
        .expect("an all-models row");
    assert!(all.gated);
    assert_eq!(all.launches, Some([9, 9]));
    assert!((all.change_pct.unwrap() + 4.0).abs() < 1e-9, "{all:?}");
    let one = rep
        .rows
        .iter()
        .find(|r| r.model == "m/a" && r.scenario == ENGINE_WIDE && r.metric == "output_throughput")
        .unwrap();
    let (sa, so) = (all.interval.unwrap(), one.interval.unwrap());
    assert!(
        sa[1] - sa[0] < so[1] - so[0],
        "pooling narrows the interval"
    );
}

#[test]
fn the_all_models_tests_hold_their_share_of_alpha() {
    // 3 models × 2 scenarios, ±1 % launch noise, throughput 5.3 % lower everywhere: 38
    // gated tests (18 rows, 15 per-model engine-wide, 5 over all models). Equal weights
    // (a share below 5/38 falls back to them) test the all-models throughput first at
    // α/38; the default gives the 5 tests a quarter of α, α/20 each.
    let base = quiet_suite(3, 0.01);
    let cur: Vec<_> = base
        .iter()
        .map(|r| {
            let mut r = scaled(r, 0.947, 1.0);
            r.launch_id = r.launch_id.map(|l| format!("c{l}"));
            r
        })
        .collect();
    let all = |cfg: &GateConfig| {
        let rep = evaluate(Inputs::new(&base, &cur, cfg));
        let row = rep
            .rows
            .iter()
            .find(|r| r.model == ALL_MODELS && r.metric == "output_throughput")
            .expect("an all-models row")
            .clone();
        (row, rep.verdict)
    };
    let equal = GateConfig::parse("engine_wide_share = 0.01\n", "g").unwrap();
    let (w, top_w) = all(&GateConfig::default());
    let (e, top_e) = all(&equal);
    assert_eq!((w.verdict, top_w), (Verdict::Regressed, TopVerdict::Fail));
    assert!(e.p_value.unwrap() > w.p_value.unwrap(), "{e:?}");
    assert_ne!(top_e, TopVerdict::Pass);
    let ratio = w.p_value.unwrap() / e.p_value.unwrap();
    assert!((ratio - 20.0 / 38.0).abs() < 1e-9, "{ratio}");
}

#[test]
fn deterministic() {
    let base = suite(3);
    let cur: Vec<_> = base.iter().map(|r| scaled(r, 0.97, 1.02)).collect();
    assert_eq!(eval(&base, &cur), eval(&base, &cur));
}

/// Records for `n` scenarios of one model with `runs` runs, from multipliers.
fn from_mults(mults: &[(f64, f64)], runs: usize) -> Vec<ScenarioResult> {
    let mut out = Vec::new();
    for (i, chunk) in mults.chunks(runs).enumerate() {
        for (k, (t, l)) in chunk.iter().enumerate() {
            let mut r = scaled(&record("m/x", 10 + i as u64, 1.0, 1.0), *t, *l);
            r.run_index = k as u32;
            out.push(r);
        }
    }
    out
}

fn mults(n: usize) -> impl Strategy<Value = Vec<(f64, f64)>> {
    prop::collection::vec((0.7f64..1.3, 0.7f64..1.3), n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_run_compared_with_itself_never_regresses(runs in 1usize..4, m in mults(12)) {
        let recs = from_mults(&m[..(12 / runs) * runs], runs);
        let rep = eval(&recs, &recs);
        prop_assert_eq!(rep.counts.regressed, 0);
        prop_assert!(rep.rows.iter().all(|r| r.verdict != Verdict::Regressed));
    }

    #[test]
    fn scaling_every_value_changes_no_verdict(
        runs in 1usize..4, b in mults(9), c in mults(9), k in 0.001f64..1000.0
    ) {
        let (base, cur) = (from_mults(&b[..(9 / runs) * runs], runs), from_mults(&c[..(9 / runs) * runs], runs));
        let rep = eval(&base, &cur);
        let sb: Vec<_> = base.iter().map(|r| scaled(r, k, k)).collect();
        let sc: Vec<_> = cur.iter().map(|r| scaled(r, k, k)).collect();
        let rep2 = eval(&sb, &sc);
        let v1: Vec<_> = rep.rows.iter().map(|r| r.verdict).collect();
        let v2: Vec<_> = rep2.rows.iter().map(|r| r.verdict).collect();
        prop_assert_eq!(v1, v2);
    }

    #[test]
    fn worsening_one_row_only_moves_it_towards_regressed(
        runs in 1usize..4, b in mults(9), c in mults(9), which in 0usize..3, f in 0.5f64..1.0
    ) {
        let (base, cur) = (from_mults(&b[..(9 / runs) * runs], runs), from_mults(&c[..(9 / runs) * runs], runs));
        let target = 10 + which as u64;
        let worse: Vec<_> = cur
            .iter()
            .map(|r| {
                let mut r = r.clone();
                if r.params.num_prompts == target {
                    r.output_throughput *= f;
                }
                r
            })
            .collect();
        let (before, after) = (eval(&base, &cur), eval(&base, &worse));
        prop_assert_eq!(before.rows.len(), after.rows.len());
        for (x, y) in before.rows.iter().zip(&after.rows) {
            let is_target = x.metric == "output_throughput"
                && (x.scenario == format!("random-in1024-out128-n{target}")
                    || x.scenario == ENGINE_WIDE);
            if is_target {
                // The worsened row moves towards `regressed`, never away.
                prop_assert!(y.verdict.severity() >= x.verdict.severity(), "{:?} -> {:?}", x.verdict, y.verdict);
            } else {
                // Every other row keeps its numbers; its verdict can only move if Holm's
                // step-down lets it cross the line too, and never towards better.
                let near = |a: Option<f64>, b: Option<f64>| match (a, b) {
                    (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
                    (a, b) => a == b,
                };
                prop_assert!(near(x.change_pct, y.change_pct));
                prop_assert!(near(x.interval.map(|i| i[0]), y.interval.map(|i| i[0])));
                prop_assert!(near(x.interval.map(|i| i[1]), y.interval.map(|i| i[1])));
                prop_assert!(y.verdict.severity() >= x.verdict.severity());
            }
        }
    }
}

#[test]
fn a_fail_stands_only_when_confirmed_and_a_regressed_row_is_never_passed() {
    let base = quiet_suite(3, 0.01);
    let slow = |r: &ScenarioResult| {
        if r.model == "m/b" && r.params.num_prompts == 200 {
            scaled(r, 0.8, 1.25)
        } else {
            r.clone()
        }
    };
    let first = eval(&base, &base.iter().map(slow).collect::<Vec<_>>());
    assert_eq!(first.verdict, TopVerdict::Fail);
    let regressed: Vec<(String, String, String)> = first
        .rows
        .iter()
        .filter(|r| r.gated && r.verdict == Verdict::Regressed)
        .map(|r| (r.model.clone(), r.scenario.clone(), r.metric.clone()))
        .collect();
    // Confirmed: the same slowdown again; FAIL stands and the rows say so.
    let again = eval(&base, &base.iter().map(slow).collect::<Vec<_>>());
    let c = confirm(&first, again.clone(), 1);
    assert_eq!(c.verdict, TopVerdict::Fail);
    let row = verdict_of(&c, "m/b", 200, "output_throughput");
    assert_eq!(row.verdict, Verdict::Regressed);
    assert!(
        row.note
            .as_deref()
            .unwrap()
            .contains("confirmed: regressed on the first launches (-20.0 %)"),
        "{row:?}"
    );
    // Not confirmed: the second decision sees the unchanged engine (every row passes there),
    // yet each row that regressed at first is inconclusive, not pass, so the check is not PASS.
    let clean = eval(&base, &base);
    assert_eq!(clean.verdict, TopVerdict::Pass);
    let c = confirm(&first, clean.clone(), 2);
    assert_eq!(c.verdict, TopVerdict::Inconclusive);
    for r in c.rows.iter().filter(|r| r.gated) {
        let key = (r.model.clone(), r.scenario.clone(), r.metric.clone());
        if regressed.contains(&key) {
            assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
            assert!(
                r.note.as_deref().unwrap().contains("not confirmed"),
                "{r:?}"
            );
            assert!(r.note.as_deref().unwrap().contains("with 2 more"), "{r:?}");
        } else {
            let was = clean
                .rows
                .iter()
                .find(|x| (x.model.clone(), x.scenario.clone(), x.metric.clone()) == key)
                .unwrap();
            assert_eq!(r.verdict, was.verdict, "{r:?}");
        }
    }
    assert_eq!(c.counts.inconclusive, regressed.len());
    assert_eq!(c.counts.regressed, 0);
    // A first decision that did not FAIL leaves the second as it is.
    assert_eq!(confirm(&clean, again.clone(), 1), again);
}

/// The row is inconclusive and says its own launches held it back.
fn assert_held_on_its_own_launches(row: &Row) {
    assert_eq!(row.verdict, Verdict::Inconclusive, "{row:?}");
    assert!(
        row.note
            .as_deref()
            .unwrap()
            .contains("not yet on its own launches'"),
        "{row:?}"
    );
}

#[test]
fn a_row_noisier_than_its_class_passes_only_on_its_own_launches() {
    // Every row's launches wiggle by 0.2 %, except one row's median TTFT, which wiggles by 7.5 %
    // (the same launches on both sides: no change at all). Moderated toward its quiet class, that
    // row's bound sits within its 10 % tolerance; on its own 4 df it does not.
    let mut base = quiet_suite(3, 0.002);
    for (i, r) in base
        .iter_mut()
        .filter(|r| r.model == "m/b" && r.params.num_prompts == 200)
        .enumerate()
    {
        *r.stats.get_mut("median_ttft_ms").unwrap() *= 1.0 + 0.075 * (i as f64 - 1.0);
    }
    let rep = eval(&base, &base);
    let row = verdict_of(&rep, "m/b", 200, "median_ttft_ms");
    let t = row.test.unwrap();
    let lim = row.tolerance_pct.unwrap() / 100.0;
    let eq = 0.05;
    assert!(t.shift.upper(eq) < (1.0 + lim).ln(), "{row:?}");
    let own = t.own.unwrap();
    assert_eq!(own.df, 4.0);
    assert!(own.upper(eq) > (1.0 + lim).ln(), "{row:?}");
    assert_held_on_its_own_launches(row);
    // What it says it needs is what its own bound needs, not what the moderated bound alone
    // would: moderated, a few more candidate launches; on its own 7.5 % noise the three
    // baseline launches are too few whatever the candidate adds.
    let noise = row.noise.unwrap();
    let design = |sd: f64, df: f64, fixed_var: f64| crate::gate::stats::Design {
        worse: t.shift.worse,
        lim: (1.0 + lim).ln(),
        sd,
        df,
        n_base: t.n_base,
        n_now: t.n_now,
        fixed_var,
    };
    let needed = |d| crate::gate::stats::launches_needed(&d, eq, 50);
    assert!(needed(design(noise.sd(), noise.df, t.fixed_var)).is_ok());
    let own_sd = ((own.se.powi(2) - t.own_fixed_var) / (2.0 / 3.0)).sqrt();
    assert!(matches!(
        needed(design(own_sd, own.df, t.own_fixed_var)),
        Err(crate::gate::stats::NotDecidable::BaselineTooShort)
    ));
    assert_eq!(row.launches_needed, None, "{row:?}");
    assert!(
        row.note
            .as_deref()
            .unwrap()
            .contains("needs more baseline launches to decide"),
        "{row:?}"
    );
    // The quiet rows pass, as before.
    assert_eq!(
        verdict_of(&rep, "m/a", 200, "median_ttft_ms").verdict,
        Verdict::Pass
    );
}

/// `launches` launches of [`quiet_suite`] (0.2 % wiggle) in session `name`, model `m/b`'s
/// 200-prompt median TTFT × `loud`.
fn loud_session(name: &str, launches: usize, loud: f64) -> Vec<ScenarioResult> {
    let mut recs = quiet_suite(launches, 0.002);
    for r in &mut recs {
        r.session_id = Some(name.into());
        if r.model == "m/b" && r.params.num_prompts == 200 {
            *r.stats.get_mut("median_ttft_ms").unwrap() *= loud;
        }
    }
    recs
}

/// The row's bound at the equivalence level (5 %) is within its tolerance on the metric's λ
/// but not on its own sessions, whose part dominates (its df fall to about one session
/// comparison), so the row is held on its own launches.
fn assert_passes_on_lambda_not_on_its_sessions(row: &Row) {
    let t = row.test.unwrap();
    let lim = (1.0 + row.tolerance_pct.unwrap() / 100.0).ln();
    assert!(t.shift.upper(0.05) < lim, "{row:?}");
    let own = t.own.unwrap();
    assert!(own.df < 1.5, "{own:?}");
    assert!(own.upper(0.05) > lim, "{own:?}");
    assert_held_on_its_own_launches(row);
}

#[test]
fn a_row_whose_sessions_differ_more_than_its_metrics_passes_only_on_its_own() {
    // A baseline over two sessions: every row's launches wiggle by 0.2 % and its sessions agree,
    // except one row's median TTFT, whose sessions sit 3 % either side of its mean. The
    // candidate, a third session, is at every row's baseline mean: no change. The metric's λ,
    // pooled over its six rows, is a sixth of that row's own; on the metric's λ its bound is
    // within the 10 % tolerance, on its own sessions (one comparison) it is not.
    let mut base = loud_session("s1", 3, 0.97);
    base.extend(loud_session("s2", 3, 1.03));
    let cur = loud_session("s3", 3, 1.0);
    let rep = eval(&base, &cur);
    assert_passes_on_lambda_not_on_its_sessions(verdict_of(&rep, "m/b", 200, "median_ttft_ms"));
    // The same row in the other model, whose sessions agree, passes.
    assert_eq!(
        verdict_of(&rep, "m/a", 200, "median_ttft_ms").verdict,
        Verdict::Pass
    );
}

#[test]
fn a_baseline_of_one_launch_per_session_shows_its_session_offset() {
    // The same row as above, but the baseline holds one launch from each of two sessions (its
    // sessions measure no launch noise of their own) and the candidate three launches of the
    // second: the candidate's launches give the launch noise, and the baseline's two sessions,
    // 6 % apart where launches wiggle by 0.2 %, show a session offset. On the metric's λ the row
    // would pass; on its own sessions it may not.
    let mut base = loud_session("s1", 1, 0.97);
    base.extend(loud_session("s2", 1, 1.03));
    let cur = loud_session("s2", 3, 1.03);
    let rep = eval(&base, &cur);
    assert_passes_on_lambda_not_on_its_sessions(verdict_of(&rep, "m/b", 200, "median_ttft_ms"));
    // Its sides' launches as the gate holds them: the session part is the baseline's between
    // mean square less the pooled launch variance (python: d = log(1.03 / 0.97);
    // d * d / 2 - w, w the candidate's launch variance, on one df).
    let of = |recs: &[ScenarioResult]| {
        let mine: Vec<&ScenarioResult> = recs
            .iter()
            .filter(|r| r.model == "m/b" && r.params.num_prompts == 200)
            .collect();
        crate::gate::noise::Launches::of(&mine, "median_ttft_ms").unwrap()
    };
    let (bl, cl) = (of(&base), of(&cur));
    let (ss, df, _) = cl.spread();
    let w = ss / df;
    let (var, sdf) = stored::own_session_var(&bl, &cl, w).unwrap();
    let d = (1.03f64 / 0.97).ln();
    assert!((var - (d * d / 2.0 - w)).abs() < 1e-15, "{var}");
    assert_eq!(sdf, 1.0);
    // The other model's same row, whose sessions agree, passes.
    assert_eq!(
        verdict_of(&rep, "m/a", 200, "median_ttft_ms").verdict,
        Verdict::Pass
    );
}

/// `perfgate check --results --confirm 1`: each model's last launch is held back as the
/// confirmation of a FAIL.
#[test]
fn offline_a_fail_stands_only_if_it_holds_without_the_last_launches() {
    let base = quiet_suite(3, 0.01);
    let cfg = GateConfig::default();
    let held =
        |cur: &[ScenarioResult], hold: u32| confirm_held_out(Inputs::new(&base, cur, &cfg), hold);
    let slow_where = |launches: &[&str], factor: f64| {
        let launches: Vec<String> = launches.iter().map(|s| s.to_string()).collect();
        move |r: &ScenarioResult| {
            let hit = r.model == "m/b"
                && r.params.num_prompts == 200
                && launches.contains(r.launch_id.as_ref().unwrap());
            match hit {
                true => scaled(r, 1.0 / factor, factor),
                false => r.clone(),
            }
        }
    };
    // Slower on every launch: the first two FAIL as all three do, and the FAIL stands.
    let every: Vec<_> = base
        .iter()
        .map(slow_where(&["L0", "L1", "L2"], 1.25))
        .collect();
    let once = eval(&base, &every);
    assert_eq!(once.verdict, TopVerdict::Fail);
    let c = held(&every, 1);
    assert_eq!(c.verdict, TopVerdict::Fail);
    let row = verdict_of(&c, "m/b", 200, "median_ttft_ms");
    assert_eq!(row.verdict, Verdict::Regressed);
    assert!(
        row.note
            .as_deref()
            .unwrap()
            .contains("confirmed: regressed"),
        "{row:?}"
    );
    // Held at 0 it is the decision on everything.
    assert_eq!(held(&every, 0), once);

    // A slowdown near the edge of detection (10, 11, 12 % on the three launches): all three
    // FAIL, the first two do not, so the check is not a FAIL, and no row that regressed passes.
    let edge = [1.10, 1.11, 1.12];
    let last: Vec<_> = base
        .iter()
        .map(|r| match r.model == "m/b" && r.params.num_prompts == 200 {
            true => {
                let f = edge[r.run_index as usize];
                scaled(r, 1.0 / f, f)
            }
            false => r.clone(),
        })
        .collect();
    let once = eval(&base, &last);
    assert_eq!(once.verdict, TopVerdict::Fail, "{once:#?}");
    let c = held(&last, 1);
    assert_eq!(c.verdict, TopVerdict::Inconclusive);
    for (x, y) in once.rows.iter().zip(&c.rows) {
        assert_eq!(
            (&x.model, &x.scenario, &x.metric),
            (&y.model, &y.scenario, &y.metric)
        );
        match x.verdict {
            Verdict::Regressed if x.gated => {
                assert_eq!(y.verdict, Verdict::Inconclusive, "{y:?}");
                let note = y.note.as_deref().unwrap();
                assert!(
                    note.contains("regressed on all 3 launches, but the first 2"),
                    "{y:?}"
                );
            }
            _ => assert_eq!(x.verdict, y.verdict, "{y:?}"),
        }
    }

    // One candidate launch: nothing to hold back. A regression nothing can confirm must stand
    // on the row's own launches too, and 3 baseline launches (2 df) cannot show a 25 %
    // slowdown beyond δ at the check's level: not a FAIL, and the rows say why. Decided once
    // (`--confirm 0`) it FAILs.
    let only_l0 = |recs: &[ScenarioResult]| -> Vec<ScenarioResult> {
        recs.iter()
            .filter(|r| r.launch_id.as_deref() == Some("L0"))
            .cloned()
            .collect()
    };
    let one = only_l0(&every);
    let once = eval(&base, &one);
    assert_eq!(once.verdict, TopVerdict::Fail);
    assert_eq!(held(&one, 0), once);
    let c = held(&one, 1);
    assert_eq!(c.verdict, TopVerdict::Inconclusive, "{c:#?}");
    let row = verdict_of(&c, "m/b", 200, "median_ttft_ms");
    assert_eq!(row.verdict, Verdict::Inconclusive);
    assert!(
        row.note
            .as_deref()
            .unwrap()
            .contains("not on its own launches' (a regression that nothing can confirm"),
        "{row:?}"
    );
    // Its one launch did not decide it, so what would is more than one.
    assert!(row.launches_needed.is_some_and(|n| n >= 2), "{row:?}");
    // Against 8 baseline launches (7 df) a doubled latency stands on them alone, and each
    // regressed row says it is unconfirmed.
    let base8 = quiet_suite(8, 0.01);
    let doubled: Vec<_> = only_l0(&base8)
        .iter()
        .map(|r| match r.model == "m/b" && r.params.num_prompts == 200 {
            true => scaled(r, 0.5, 2.0),
            false => r.clone(),
        })
        .collect();
    let c = confirm_held_out(Inputs::new(&base8, &doubled, &cfg), 1);
    assert_eq!(c.verdict, TopVerdict::Fail, "{c:#?}");
    let row = verdict_of(&c, "m/b", 200, "median_ttft_ms");
    assert_eq!(row.verdict, Verdict::Regressed);
    assert!(
        row.note
            .as_deref()
            .unwrap()
            .contains("unconfirmed: decided on its 1 launch(es)"),
        "{row:?}"
    );
}

/// Each record with perfgate's calibration loop timed at `ms` before it.
fn calibrated(recs: &[ScenarioResult], ms: f64) -> Vec<ScenarioResult> {
    recs.iter()
        .map(|r| {
            let mut r = r.clone();
            r.telemetry = Some(perfgate_record::telemetry::Telemetry {
                calibration_ms: Some(ms),
                ..Default::default()
            });
            r
        })
        .collect()
}

#[test]
fn a_candidate_on_a_machine_of_another_speed_is_told_so() {
    let s = suite(3);
    // The vLLM 20 s corpus: 9.93 ms before the baseline's runs, 4.63 ms on s3's host.
    let r = eval(&calibrated(&s, 9.93), &calibrated(&s, 4.63));
    assert!((r.baseline.calibration_ms.unwrap() - 9.93).abs() < 1e-9);
    let note = machine_note(&r).expect("2.1× apart");
    assert!(note.starts_with("the machines differ: "), "{note}");
    assert!(
        note.contains("2.1× faster before the candidate's runs (4.63 ms)"),
        "{note}"
    );
    assert!(note.contains("`perfgate ab`"), "{note}");
    // Slower the other way round; within 1.25× (the llama.cpp corpus's s3 and s4, 4.77 and
    // 4.62 ms, are one host) nothing is said; nor without a calibration on both sides.
    let r = eval(&calibrated(&s, 4.63), &calibrated(&s, 9.93));
    assert!(machine_note(&r).unwrap().contains("2.1× slower"));
    let r = eval(&calibrated(&s, 4.77), &calibrated(&s, 4.62));
    assert_eq!(machine_note(&r), None);
    let r = eval(&calibrated(&s, 10.0), &calibrated(&s, 12.4));
    assert_eq!(machine_note(&r), None, "1.24× is within the limit");
    let r = eval(&calibrated(&s, 10.0), &calibrated(&s, 12.6));
    assert!(machine_note(&r).is_some(), "1.26× is beyond it");
    let r = eval(&s, &calibrated(&s, 4.63));
    assert_eq!((r.baseline.calibration_ms, machine_note(&r)), (None, None));
    // An A/B report's arms take turns on one machine by design: nothing to say there.
    let mut ab = eval(&calibrated(&s, 9.93), &calibrated(&s, 4.63));
    ab.ab = Some(crate::gate::AbSummary {
        base: "main".into(),
        candidate: "pr".into(),
        order: "abba".into(),
        max_launches: 10,
        max_minutes: None,
        wall_minutes: 1.0,
        gpu_minutes: 1.0,
        minutes_left: None,
        models: Vec::new(),
    });
    assert_eq!(machine_note(&ab), None);
    // The side's value is the geometric mean of its runs' loops.
    let mut mixed = calibrated(&s[..1], 4.0);
    mixed.extend(calibrated(&s[1..2], 9.0));
    let r = eval(&mixed, &mixed);
    assert!((r.baseline.calibration_ms.unwrap() - 6.0).abs() < 1e-9);
}

/// `recs` in session `session`, each launch's loop timed at `ms` × (1 + 0.005 × its index).
fn sitting(recs: &[ScenarioResult], session: &str, ms: f64) -> Vec<ScenarioResult> {
    recs.iter()
        .map(|r| {
            let i = r.run_index as f64;
            let mut r = calibrated(std::slice::from_ref(r), ms * (1.0 + 0.005 * i)).remove(0);
            r.session_id = Some(session.into());
            r
        })
        .collect()
}

#[test]
fn a_machine_slope_widens_a_check_whose_loops_moved() {
    let base = sitting(&quiet_suite(5, 0.01), "a", 10.0);
    let slow = |ms: f64| -> Vec<ScenarioResult> {
        let recs: Vec<_> = quiet_suite(3, 0.01)
            .iter()
            .map(|r| scaled(r, 1.0 / 1.2, 1.2))
            .collect();
        sitting(&recs, "b", ms)
    };
    let with = GateConfig::parse("machine_slope = 1\n", "g").unwrap();
    let off = GateConfig::parse("machine_slope = 0\n", "g").unwrap();
    let judge = |cur: &[ScenarioResult], cfg: &GateConfig| evaluate(Inputs::new(&base, cur, cfg));
    // 20 % slower on a machine whose loop ran 20 % slower too: without the term a regression,
    // with it the machine could explain the change, and the rows say so in their session term.
    let moved = slow(12.0);
    assert_eq!(judge(&moved, &off).verdict, TopVerdict::Fail);
    let r = judge(&moved, &with);
    assert_eq!(r.verdict, TopVerdict::Inconclusive, "{r:#?}");
    // The default (slope 2) widens it too, by twice the sd.
    let two = judge(&moved, &GateConfig::default());
    assert_eq!(two.verdict, TopVerdict::Inconclusive);
    let m2 = verdict_of(&two, "m/a", 100, "output_throughput")
        .noise
        .unwrap();
    let m2 = m2.session.unwrap().machine.unwrap();
    let row = verdict_of(&r, "m/a", 100, "output_throughput");
    let m = row.noise.unwrap().session.unwrap().machine.unwrap();
    // 12 ms against 10 ms, less the launches' own drift (0.5 % a launch: the baseline's five
    // average 1 %, the candidate's three 0.5 %): geometric means 1.2 × 1.00499 / 1.00995.
    let lg = |n: usize| (0..n).map(|i| (1.0 + 0.005 * i as f64).ln()).sum::<f64>() / n as f64;
    let d = 1.2f64.ln() + lg(3) - lg(5);
    assert!(
        (m.loop_shift_pct - 100.0 * d.exp_m1()).abs() < 1e-9,
        "{m:?}"
    );
    let note = row.note.as_deref().unwrap();
    assert!(
        note.contains("the machines' speed bounds it (perfgate's calibration loop +19.4 % from"),
        "{note}"
    );
    assert!(
        note.contains("; calibration loop +19.4 %, machine term 17.7 %)"),
        "{note}"
    );
    // Of d², the loops' launch-to-launch noise is taken out (a few hundredths of a percent).
    assert!(m.var < d * d && m.var > 0.999 * d * d, "{m:?}");
    assert!((m2.var - 4.0 * m.var).abs() < 1e-12, "{m2:?}");
    // Loops that agree leave the same slowdown a regression, row for row as without the term
    // (and the same λ assumed: without the term nothing watches the machine).
    let same = slow(10.0);
    let off = GateConfig::parse("machine_slope = 0\nunwatched_session_ratio = 1\n", "g").unwrap();
    let (on, off) = (judge(&same, &GateConfig::default()), judge(&same, &off));
    assert_eq!(on.verdict, TopVerdict::Fail);
    for (x, y) in on.rows.iter().zip(&off.rows) {
        assert_eq!(
            (x.verdict, x.interval, x.p_value),
            (y.verdict, y.interval, y.p_value)
        );
        let machine = x.noise.and_then(|n| n.session?.machine);
        assert!(machine.is_none_or(|m| m.var == 0.0), "{x:?}");
    }
    let bad = GateConfig::parse("machine_slope = -1\n", "g.toml").unwrap_err();
    assert_eq!(
        bad.to_string(),
        "gate setting `machine_slope`: must be in [0, 10], got -1"
    );
}

/// `recs` with perfgate's loop on every CPU timed at `factor` × their one-CPU loop.
fn every_cpu(recs: Vec<ScenarioResult>, factor: f64) -> Vec<ScenarioResult> {
    recs.into_iter()
        .map(|mut r| {
            let t = r.telemetry.as_mut().expect("calibrated");
            t.calibration_all_ms = t.calibration_ms.map(|ms| ms * factor);
            r
        })
        .collect()
}

/// Another job holding a CPU: the one-CPU loop finds a free CPU and reads as before, the loop
/// on every CPU reads 1.5× slower, and the engine (a thread on every CPU) runs 20 % slower, as
/// `tests/data/cpu-vllm-neighbour/` recorded. The every-CPU loop's shift widens the check as
/// the one-CPU loop's would and "the machines differ" names it; without that reading the
/// slowdown is a regression.
#[test]
fn a_job_on_the_other_cpus_widens_the_check_through_the_every_cpu_loop() {
    let base = every_cpu(sitting(&quiet_suite(5, 0.01), "a", 10.0), 1.0);
    let slowed: Vec<_> = quiet_suite(3, 0.01)
        .iter()
        .map(|r| scaled(r, 1.0 / 1.2, 1.2))
        .collect();
    let loaded = every_cpu(sitting(&slowed, "b", 10.0), 1.5);
    let r = evaluate(Inputs::new(&base, &loaded, &GateConfig::default()));
    assert_eq!(r.verdict, TopVerdict::Inconclusive, "{r:#?}");
    let row = verdict_of(&r, "m/a", 100, "output_throughput");
    let m = row.noise.unwrap().session.unwrap().machine.unwrap();
    assert_eq!(m.probe, crate::gate::noise::loops::Probe::AllCpus);
    // 1.5 × the one-CPU loop's own shift (the launches' drift: 1.00499 / 1.00995).
    let lg = |n: usize| (0..n).map(|i| (1.0 + 0.005 * i as f64).ln()).sum::<f64>() / n as f64;
    let d = 1.5f64.ln() + lg(3) - lg(5);
    assert!(
        (m.loop_shift_pct - 100.0 * d.exp_m1()).abs() < 1e-9,
        "{m:?}"
    );
    let note = row.note.as_deref().unwrap();
    assert!(
        note.contains("; calibration loop on every CPU +49.3 %, machine term"),
        "{note}"
    );
    let machines = machine_note(&r).unwrap();
    assert!(
        machines.contains(
            "perfgate's calibration loop on every CPU ran 1.5× slower before the candidate's runs"
        ),
        "{machines}"
    );
    assert!(!machines.contains("calibration loop ran"), "{machines}");
    // The same records without the every-CPU reading: nothing saw the job, a regression.
    let blind = |recs: &[ScenarioResult]| -> Vec<ScenarioResult> {
        let mut recs = recs.to_vec();
        for r in &mut recs {
            r.telemetry.as_mut().unwrap().calibration_all_ms = None;
        }
        recs
    };
    let r = evaluate(Inputs::new(
        &blind(&base),
        &blind(&loaded),
        &GateConfig::default(),
    ));
    assert_eq!(r.verdict, TopVerdict::Fail);
    assert_eq!(machine_note(&r), None);
}

/// A launch's machine speed is the median of all its loop readings, every scenario of the
/// model's launch: a reading off in one scenario moves that row's term no more than its
/// launch's median moves, and the rows of one launch share the shift.
#[test]
fn the_machine_term_reads_the_launchs_loops_together() {
    let base = sitting(&quiet_suite(5, 0.01), "a", 10.0);
    // The candidate's machine unmoved, but the loop before scenario 100 of model m/a read 30 %
    // slow in every launch (one reading of the launch's two).
    let cur: Vec<ScenarioResult> = sitting(&quiet_suite(3, 0.01), "b", 10.0)
        .into_iter()
        .map(|mut r| {
            if r.model == "m/a" && r.params.num_prompts == 100 {
                let t = r.telemetry.as_mut().unwrap();
                t.calibration_ms = t.calibration_ms.map(|ms| ms * 1.3);
            }
            r
        })
        .collect();
    let rep = evaluate(Inputs::new(&base, &cur, &GateConfig::default()));
    let shift = |model: &str, n: u64| {
        let row = verdict_of(&rep, model, n, "output_throughput");
        row.noise
            .unwrap()
            .session
            .unwrap()
            .machine
            .unwrap()
            .loop_shift_pct
    };
    // Each launch of m/a: readings 10 (1 + 0.005 i) × 1.3 and × 1: median of two, the mean of
    // their logs, so the shift is √1.3 − 1 (less the launches' drift, as in the test above).
    let lg = |n: usize| (0..n).map(|i| (1.0 + 0.005 * i as f64).ln()).sum::<f64>() / n as f64;
    let d = 0.5 * 1.3f64.ln() + lg(3) - lg(5);
    for n in [100, 200] {
        assert!(
            (shift("m/a", n) - 100.0 * d.exp_m1()).abs() < 1e-9,
            "{}",
            shift("m/a", n)
        );
    }
    // The other models' launches read 10 ms throughout: only the drift.
    assert!((shift("m/b", 100) - 100.0 * (lg(3) - lg(5)).exp_m1()).abs() < 1e-9);
    // A launch with a run that timed no loop has no machine speed: no term for its rows.
    let mut cur = cur;
    cur[0].telemetry = None;
    let rep = evaluate(Inputs::new(&base, &cur, &GateConfig::default()));
    let model = cur[0].model.clone();
    let n = cur[0].params.num_prompts;
    let other = if n == 100 { 200 } else { 100 };
    let row = verdict_of(&rep, &model, other, "output_throughput");
    assert_eq!(row.noise.unwrap().session.unwrap().machine, None, "{row:?}");
}

/// Each record measured on `platform`.
fn on_platform(
    recs: &[ScenarioResult],
    platform: &perfgate_record::telemetry::Platform,
) -> Vec<ScenarioResult> {
    recs.iter()
        .map(|r| {
            let mut r = r.clone();
            r.telemetry.get_or_insert_with(Default::default).platform = Some(platform.clone());
            r
        })
        .collect()
}

#[test]
fn a_candidate_on_another_platform_is_told_what_differs() {
    use perfgate_record::telemetry::Platform;
    let s = suite(3);
    let h100 = {
        let mut p = Platform::from_cpuinfo(
            "model name\t: AMD EPYC 9454\nflags\t: avx2 avx512f avx512_bf16\n",
            Some(96),
        );
        assert!(p.add_gpus("NVIDIA H100 80GB HBM3, 550.54.15\n"));
        p
    };
    let mut h200 = h100.clone();
    assert!(h200.add_gpus("NVIDIA H200, 550.54.15\n"));
    // Same loop speed, another GPU: the loop cannot see it, the platform does.
    let r = eval(
        &on_platform(&calibrated(&s, 3.5), &h100),
        &on_platform(&calibrated(&s, 3.6), &h200),
    );
    assert_eq!(r.current.platforms, [h200.clone()]);
    let note = machine_note(&r).expect("another GPU");
    assert!(
        note.starts_with(
            "the machines differ: the candidate's runs measured on another platform than the \
             baseline's (GPUs 1 × NVIDIA H100 80GB HBM3 → 1 × NVIDIA H200), so a change"
        ),
        "{note}"
    );
    // Both reasons at once.
    let r = eval(
        &on_platform(&calibrated(&s, 9.93), &h100),
        &on_platform(&calibrated(&s, 4.63), &h200),
    );
    let note = machine_note(&r).unwrap();
    assert!(
        note.contains("H200); and perfgate's calibration loop ran 2.1× faster"),
        "{note}"
    );
    // A baseline over two machines covers a candidate on either; one on a third is compared
    // with the closest.
    let mut both = on_platform(&s, &h100);
    both.extend(on_platform(&s, &h200));
    let r = eval(&both, &on_platform(&s, &h200));
    assert_eq!(r.baseline.platforms.len(), 2);
    assert_eq!(machine_note(&r), None);
    let mut driver = h200.clone();
    driver.gpu_driver = Some("560.35.03".into());
    let r = eval(&both, &on_platform(&s, &driver));
    let note = machine_note(&r).unwrap();
    assert!(
        note.contains("(GPU driver 550.54.15 → 560.35.03)"),
        "{note}"
    );
    // The same platform, or none on a side: nothing to say.
    assert_eq!(
        machine_note(&eval(&on_platform(&s, &h100), &on_platform(&s, &h100))),
        None
    );
    assert_eq!(machine_note(&eval(&s, &on_platform(&s, &h200))), None);
}

#[test]
fn an_unwatched_machine_assumes_sittings_differ_more() {
    // One sitting a side, so nothing measures λ: it is assumed, 1 where both sides timed the
    // calibration loop (the machine term watches the machine) and `unwatched_session_ratio`
    // (4) where a side did not or the term is off.
    let (b, c) = (quiet_suite(5, 0.01), quiet_suite(3, 0.01));
    let c: Vec<_> = c
        .into_iter()
        .map(|mut r| {
            r.session_id = Some("t".into());
            r
        })
        .collect();
    let term = |base: &[ScenarioResult], cur: &[ScenarioResult], cfg: &GateConfig| {
        let r = evaluate(Inputs::new(base, cur, cfg));
        let row = verdict_of(&r, "m/a", 100, "output_throughput").clone();
        let t = row.noise.unwrap().session.unwrap();
        let [lo, hi] = row.interval.unwrap();
        (t.ratio, !t.unwatched, hi - lo, row.note.unwrap_or_default())
    };
    let dflt = GateConfig::default();
    let (bw, cw) = (sitting(&b, "s", 10.0), sitting(&c, "t", 10.0));
    let (r, watched, width, note) = term(&bw, &cw, &dflt);
    assert_eq!((r, watched), (1.0, true), "{note}");
    assert!(note.contains("session offset not measured, assumed as large as a launch's noise)"));
    let (r, watched, wider, note) = term(&b, &c, &dflt);
    assert_eq!((r, watched), (4.0, false));
    assert!(
        note.contains(
            "session offset not measured, assumed 2.0 × a launch's noise (no calibration loop \
             watched the machine)"
        ),
        "{note}"
    );
    // se² = sd² (1/5 + 1/3 + 2λ): the interval is √((8/15 + 8) / (8/15 + 2)) = 1.84 × as wide
    // on the same noise (its df move a little too).
    assert!(
        wider / width > 1.7 && wider / width < 2.0,
        "{wider} {width}"
    );
    // Loop times on one side only, or the term off: not watched either.
    assert_eq!(term(&bw, &c, &dflt).0, 4.0);
    let off = GateConfig::parse("machine_slope = 0\n", "g").unwrap();
    assert_eq!(term(&bw, &cw, &off).0, 4.0);
    // The settings name either assumption.
    let set = GateConfig::parse("unwatched_session_ratio = 1.5\nsession_ratio = 2\n", "g");
    let set = set.unwrap();
    assert_eq!(term(&b, &c, &set).0, 1.5);
    let (r, _, _, note) = term(&bw, &cw, &set);
    assert_eq!(r, 2.0);
    assert!(note.contains("assumed 1.4 × a launch's noise)"), "{note}");
    for (text, why) in [
        (
            "unwatched_session_ratio = -1\n",
            "`unwatched_session_ratio`: must be in [0, 100], got -1",
        ),
        (
            "session_ratio = 101\n",
            "`session_ratio`: must be in [0, 100], got 101",
        ),
    ] {
        let e = GateConfig::parse(text, "g.toml").unwrap_err().to_string();
        assert_eq!(e, format!("gate setting {why}"));
    }
}
