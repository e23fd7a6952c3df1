use super::*;
use crate::gate::ALL_MODELS;

fn close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} vs {b} (tol {tol})");
}

const D: [f64; 5] = [0.031, -0.012, 0.045, 0.008, 0.022];

#[test]
fn the_paired_test_matches_scipy() {
    // Without a prior it is the plain paired t-test:
    // scipy.stats.ttest_rel(c, b, alternative='greater') = ttest_1samp(D, 0, 'greater').
    let n = pair_noise(&D, None).unwrap();
    assert_eq!(n.df, 4.0);
    assert_eq!(n.source, NoiseSource::Pairs);
    let s = test_of(&D, &n, 1.0).shift;
    close(s.p_worse_than(0.0), 0.063_388_608_324_636_22, 1e-10);
    // Against the shifted null ln(1.05): ttest_1samp(D, log1p(0.05), alternative='greater').
    close(
        s.p_worse_than(0.05f64.ln_1p()),
        0.981_321_101_278_085_8,
        1e-10,
    );
    // ttest_1samp(D, -log1p(0.05), alternative='less'), as "better than δ".
    close(
        s.p_better_than(0.05f64.ln_1p()),
        0.998_852_612_571_911_2,
        1e-10,
    );

    // Shrunk toward a prior sd of 0.05 worth 4 df: var = (4·0.05² + SS) / (4 + 4), 8 df;
    // t.sf((mean − log1p(0.05)) / sqrt(var/5), 8) and the 95 % upper bound.
    let n = pair_noise(&D, Some((0.05, 4.0))).unwrap();
    close(n.sd(), 0.038_585_619_082_761_92, 1e-12);
    assert_eq!(n.df, 8.0);
    let s = test_of(&D, &n, 1.0).shift;
    close(
        s.p_worse_than(0.05f64.ln_1p()),
        0.939_790_927_960_718_5,
        1e-10,
    );
    close(s.upper(0.05), 0.050_888_385_936_501_08, 1e-10);
}

#[test]
fn one_pair_is_judged_on_the_prior_and_outlying_pairs_are_flagged_and_kept() {
    let n = pair_noise(&[0.1], Some((0.05, 4.0))).unwrap();
    assert_eq!(n.source, NoiseSource::Prior);
    close(n.sd(), 0.05, 1e-12);
    assert_eq!(pair_noise(&[0.1], None), None);
    // Seven close pairs and one far off: flagged, and counted in the spread as in the mean.
    let d = [0.01, 0.012, 0.009, 0.011, 0.010, 0.0105, 0.0095, 0.4];
    let n = pair_noise(&d, None).unwrap();
    assert_eq!(n.outliers, 1);
    // numpy: np.std(d, ddof=1)
    close(n.sd(), 0.137_787_880_453_979, 1e-12);
    // Five pairs are too few to flag anything.
    assert_eq!(pair_noise(&d[3..], None).unwrap().outliers, 0);
}

/// A record of `arm` in pair `p` with latencies × `lat` and throughputs ÷ `lat`.
fn rec(model: &str, scen_n: u64, arm: Arm, p: u32, lat: f64) -> ScenarioResult {
    let mut r = crate::sample::record(model, scen_n, 1.0 / lat, lat);
    r.arm = Some(arm);
    r.pair = Some(p);
    r.launch_id = Some(format!("L{}{}", p, arm.as_str()));
    r.run_index = p;
    r
}

/// Pairs of two scenarios: the machine drifts by `drift` per pair (both arms alike), the
/// arms differ by `wiggle[p]` (±) and the candidate is `change` slower.
fn pairs(n: u32, drift: f64, change: f64) -> Vec<ScenarioResult> {
    let wiggle = [0.004, -0.006, 0.002, 0.005, -0.003, -0.002, 0.006, -0.004];
    let mut out = Vec::new();
    for p in 0..n {
        let m = (1.0 + drift).powi(p as i32);
        let w = wiggle[p as usize % wiggle.len()];
        for scen in [100, 200] {
            out.push(rec("m", scen, Arm::Base, p, m));
            out.push(rec("m", scen, Arm::Candidate, p, m * (1.0 + w) * change));
        }
    }
    out
}

fn judge(recs: &[ScenarioResult], look: Option<Look>) -> Report {
    evaluate(AbInputs {
        records: recs,
        errors: &[],
        cfg: &GateConfig::default(),
        look_of: &|_| look,
        kind: "ab",
        base_side: Side::default(),
        cur_side: Side::default(),
    })
}

#[test]
fn drift_shared_by_the_arms_cancels_in_the_pairs() {
    // 6 pairs on a machine slowing 4 % per pair: the paired test passes every gated row...
    let recs = pairs(6, 0.04, 1.0);
    let r = judge(&recs, None);
    assert_eq!(r.verdict, TopVerdict::Pass, "{:#?}", r.rows);
    assert!(r.rows.iter().all(|r| r.model != ALL_MODELS));
    // ...while comparing the same launches unpaired (base arm as the baseline) cannot: the
    // drift is 20 % from first to last pair.
    let (b, c): (Vec<_>, Vec<_>) = recs.iter().cloned().partition(|r| r.arm == Some(Arm::Base));
    let unpaired = crate::gate::evaluate(Inputs::new(&b, &c, &GateConfig::default()));
    assert_ne!(unpaired.verdict, TopVerdict::Pass);
}

#[test]
fn a_slower_candidate_regresses_and_the_engine_wide_test_sees_it() {
    let r = judge(&pairs(5, 0.02, 1.15), None);
    assert_eq!(r.verdict, TopVerdict::Fail);
    let row = |scen: &str, metric: &str| {
        r.rows
            .iter()
            .find(|x| x.scenario == scen && x.metric == metric)
            .unwrap()
    };
    let ttft = row(ENGINE_WIDE, "median_ttft_ms");
    assert_eq!(ttft.verdict, Verdict::Regressed, "{ttft:#?}");
    assert_eq!(ttft.launches, Some([5, 5]));
    close(ttft.change_pct.unwrap(), 15.0, 1.0);
    let thr = row("random-in1024-out128-n100", "output_throughput");
    assert!(thr.change_pct.unwrap() < -12.0, "{thr:#?}");
    assert!(
        thr.note.as_deref().unwrap().contains("own pairs"),
        "{thr:#?}"
    );
}

#[test]
fn an_open_row_says_how_many_pairs_would_decide_it_and_later_looks_are_stricter() {
    // A 7 % slowdown on 2 pairs: not shown worse than the 10 % tolerance, nor within it.
    let recs = pairs(2, 0.0, 1.07);
    let r = judge(&recs, None);
    let open: Vec<&Row> = r
        .rows
        .iter()
        .filter(|x| x.gated && x.verdict == Verdict::Inconclusive)
        .collect();
    assert!(!open.is_empty(), "{:#?}", r.rows);
    for x in &open {
        if let Some(n) = x.launches_needed {
            assert!(n >= 3, "{x:#?}");
        }
    }
    // The same data at look 2 of 10 is judged at a smaller α than as a single look.
    let late = judge(&recs, Some(Look { k: 2, of: 10 }));
    assert!(late.method.contains("look 2 of 10"), "{}", late.method);
    let p = |rep: &Report| {
        rep.rows
            .iter()
            .filter(|x| x.gated && x.verdict == Verdict::Regressed)
            .count()
    };
    assert!(p(&late) <= p(&r));
}

#[test]
fn incomplete_pairs_and_records_without_an_arm_are_left_out() {
    let mut recs = pairs(3, 0.0, 1.0);
    // Pair 3 measured on the base arm only (the candidate's launch failed).
    recs.push(rec("m", 100, Arm::Base, 3, 1.5));
    let mut stray = rec("m", 100, Arm::Base, 0, 9.0);
    stray.arm = None;
    recs.push(stray);
    let r = judge(&recs, None);
    let thr = r
        .rows
        .iter()
        .find(|x| x.scenario == "random-in1024-out128-n100" && x.metric == "median_ttft_ms")
        .unwrap();
    assert_eq!(thr.launches, Some([3, 3]));
    close(thr.change_pct.unwrap(), 0.0, 1.0);
}

#[test]
fn models_share_alpha_and_an_unmeasured_model_keeps_the_check_from_passing() {
    let mut recs = pairs(4, 0.0, 1.0);
    recs.extend(pairs(4, 0.0, 1.0).into_iter().map(|mut r| {
        r.model = "m2".into();
        r
    }));
    let mut r = judge(&recs, None);
    assert!(
        r.method.contains("Bonferroni over 2 models"),
        "{}",
        r.method
    );
    assert_eq!(r.verdict, TopVerdict::Pass, "{:#?}", r.rows);
    not_measured(&mut r, "m3", "not run: the time budget was spent");
    assert_eq!(r.verdict, TopVerdict::Inconclusive);
    assert_eq!(r.counts.missing, 1);
}

#[test]
fn an_error_names_the_arm_and_fails_the_model() {
    let recs = pairs(2, 0.0, 1.0);
    let errors = [ScenarioError {
        model: "m".into(),
        scenario: "random-in1024-out128-n200".into(),
        message: "candidate engine (pair 3): the engine exited with status 1".into(),
    }];
    let r = evaluate(AbInputs {
        records: &recs,
        errors: &errors,
        cfg: &GateConfig::default(),
        look_of: &|_| None,
        kind: "ab",
        base_side: Side::default(),
        cur_side: Side::default(),
    });
    assert_eq!(r.verdict, TopVerdict::Error);
    let e = r.rows.iter().find(|x| x.verdict == Verdict::Error).unwrap();
    assert!(e.note.as_deref().unwrap().starts_with("candidate engine"));
}

#[test]
fn a_model_stops_when_decided_or_when_its_open_rows_cannot_be_decided_in_time() {
    let look = |k, of| Look { k, of };
    // Decided: a clear regression.
    let r = judge(&pairs(5, 0.0, 1.5), Some(look(5, 10)));
    assert_eq!(stop(&r, look(5, 10)), Some(Stop::Decided(TopVerdict::Fail)));
    // A 1.2 % slowdown on quiet pairs: the engine-wide throughput sits near its 2 % tolerance:
    // open, and would need far more pairs than planned: futile once the rows' own pairs
    // say so.
    let recs = pairs(4, 0.0, 1.012);
    let r = judge(&recs, Some(look(4, 20)));
    assert_eq!(r.verdict, TopVerdict::Inconclusive, "{:#?}", r.rows);
    let open: Vec<_> = r
        .rows
        .iter()
        .filter(|x| x.gated && x.verdict == Verdict::Inconclusive)
        .map(|x| {
            (
                &x.scenario,
                &x.metric,
                x.launches_needed,
                x.noise.map(|n| n.own_df),
            )
        })
        .collect();
    // The engine-wide throughput test would likely be decided with 5 pairs in all: with 6
    // planned it is worth going on; once no open row fits in 2 × 6, it is not.
    assert_eq!(stop(&r, look(4, 6)), None, "{open:?}");
    let mut hopeless = r.clone();
    for row in &mut hopeless.rows {
        if row.launches_needed.is_some_and(|n| n <= 12) {
            row.launches_needed = Some(13);
        }
    }
    assert_eq!(stop(&hopeless, look(4, 6)), Some(Stop::Futile), "{open:?}");
    // Rows judged on 2 own df are never given up: after 3 pairs, keep going.
    let mut early = judge(&pairs(3, 0.0, 1.012), Some(look(3, 6)));
    for row in &mut early.rows {
        row.launches_needed = row.launches_needed.map(|_| 40);
    }
    assert_eq!(stop(&early, look(2, 6)), None);
    // At the last look the loop ends anyway.
    assert_eq!(stop(&hopeless, look(6, 6)), None);
}
