use super::*;
use crate::sample::record;

fn rec(v: f64, launch: Option<&str>, run: u32) -> ScenarioResult {
    let mut r = record("m", 100, 1.0, 1.0);
    r.output_throughput = v;
    r.launch_id = launch.map(str::to_string);
    r.run_index = run;
    r
}

#[test]
fn runs_of_one_launch_are_one_unit() {
    let recs = [
        rec(100.0, Some("a"), 0),
        rec(110.0, Some("a"), 1),
        rec(300.0, Some("a"), 2), // one odd run: the median ignores it
        rec(104.0, Some("b"), 3),
    ];
    let refs: Vec<&ScenarioResult> = recs.iter().collect();
    let l = Launches::of(&refs, "output_throughput").unwrap();
    assert_eq!(l.n(), 2);
    assert_eq!(l.n_runs(), 4);
    assert!((l.values[0] - 110f64.ln()).abs() < 1e-12);
    assert!((l.values[1] - 104f64.ln()).abs() < 1e-12);
    assert!(l.has_ids);
    let (ss, df, out) = l.spread();
    assert_eq!((df, out), (1.0, 0));
    let d = 110f64.ln() - 104f64.ln();
    assert!((ss - d * d / 2.0).abs() < 1e-12);
}

#[test]
fn records_without_ids_count_runs_as_launches() {
    let recs = [rec(100.0, None, 0), rec(102.0, None, 1)];
    let refs: Vec<&ScenarioResult> = recs.iter().collect();
    let l = Launches::of(&refs, "output_throughput").unwrap();
    assert_eq!(l.n(), 2);
    assert!(!l.has_ids);
    let n = estimate(&[&l], Some((0.05, 2.0))).unwrap();
    assert_eq!(n.source, NoiseSource::Runs);
    let one = Launches::of(&refs[..1], "output_throughput").unwrap();
    let n = estimate(&[&one, &one], Some((0.05, 2.0))).unwrap();
    assert_eq!(n.source, NoiseSource::Prior);
    assert!((n.sd_pct - 5.0).abs() < 1e-12);
    assert_eq!(n.df, 2.0);
    assert!(n.describe().contains("other rows"), "{}", n.describe());
    // No repeated launch and nothing learnt: no noise at all, never a made-up one.
    assert_eq!(estimate(&[&one, &one], None), None);
}

#[test]
fn an_outlier_launch_is_flagged_and_kept_in_mean_and_spread() {
    let vals = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 160.0];
    let recs: Vec<_> = vals
        .iter()
        .enumerate()
        .map(|(i, v)| rec(*v, Some(&format!("l{i}")), i as u32))
        .collect();
    let refs: Vec<&ScenarioResult> = recs.iter().collect();
    let l = Launches::of(&refs, "output_throughput").unwrap();
    let n = estimate(&[&l], None).unwrap();
    assert_eq!(n.outliers, 1);
    assert_eq!(n.own_df, 7.0);
    // numpy: np.std(np.log(vals), ddof=1) * 100; np.log(vals).mean()
    assert!(
        (n.sd_pct - 16.628_875_949_389_897).abs() < 1e-9,
        "{}",
        n.sd_pct
    );
    assert!(
        (l.mean() - 4.663_904_513_978_704).abs() < 1e-12,
        "{}",
        l.mean()
    );
    // Seven launches are too few to flag anything.
    let seven = Launches::of(&refs[1..], "output_throughput").unwrap();
    assert_eq!(seven.outliers(), 0);
}

#[test]
fn sessions_split_the_spread_and_measure_their_offset() {
    // Session a: 100, 102, 101; session b: 110, 111 (+9 %).
    let mut recs = Vec::new();
    for (i, (v, s)) in [
        (100.0, "a"),
        (102.0, "a"),
        (101.0, "a"),
        (110.0, "b"),
        (111.0, "b"),
    ]
    .iter()
    .enumerate()
    {
        let mut r = rec(*v, Some(&format!("L{}", i % 3 + 1)), i as u32);
        r.session_id = Some(s.to_string());
        recs.push(r);
    }
    let refs: Vec<&ScenarioResult> = recs.iter().collect();
    let l = Launches::of(&refs, "output_throughput").unwrap();
    // The same launch id in two sessions is two launches.
    assert_eq!(l.n(), 5);
    let (ss, df, _) = l.spread();
    assert_eq!(df, 3.0);
    let (a, b) = (
        [100f64.ln(), 102f64.ln(), 101f64.ln()],
        [110f64.ln(), 111f64.ln()],
    );
    let dev = |x: &[f64]| {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        x.iter().map(|v| (v - m).powi(2)).sum::<f64>()
    };
    assert!((ss - dev(&a) - dev(&b)).abs() < 1e-15);
    // R: x <- log(c(100, 102, 101, 110, 111)); g <- factor(c(1,1,1,2,2));
    //    a <- anova(lm(x ~ g)); n0 <- (5 - (9 + 4) / 5) / 1
    //    (a$`Mean Sq`[1] - a$`Mean Sq`[2]) / n0  = 0.0040096535290962479
    let an = l.session_anova().unwrap();
    assert_eq!((an.df_between, an.df_within), (1.0, 3.0));
    assert!((an.n0 - 2.4).abs() < 1e-12);
    assert!(
        (an.between_var() - 0.004_009_653_529_096_248).abs() < 1e-12,
        "{}",
        an.between_var()
    );
    // A side of one session against a side of another: factor 2; the same sessions
    // shared alike: 0.
    let (sa, sb) = (
        Launches::of(&refs[..3], "output_throughput").unwrap(),
        Launches::of(&refs[3..], "output_throughput").unwrap(),
    );
    assert!((session_factor(&sa, &sb) - 2.0).abs() < 1e-15);
    assert!(session_factor(&l, &l).abs() < 1e-15);
    // Unrecorded sessions are never shared between the sides.
    let bare = Launches::single(vec![0.0, 0.1], true);
    assert!((session_factor(&bare, &bare) - 2.0).abs() < 1e-15);
}

#[test]
fn the_table_covers_every_metric_and_says_what_passes() {
    let recs: Vec<ScenarioResult> = (0..6)
        .map(|i| rec(100.0 + 0.2 * i as f64, Some(&format!("l{i}")), i))
        .collect();
    let t = table(&recs, &GateConfig::default());
    let thr = t.iter().find(|r| r.metric == "output_throughput").unwrap();
    assert!(thr.gated);
    assert_eq!((thr.levels.launches, thr.levels.between_df), (6, 5.0));
    assert_eq!((thr.levels.sessions, thr.levels.session_sd_pct), (1, None));
    assert_eq!(thr.levels.source, NoiseSource::Launches);
    assert!(thr.launches_to_pass.is_some(), "{thr:?}");
    assert!(t.iter().all(|r| r.metric != "success_rate"));
    // 1.9 % launch noise in one session: a new session's offset, assumed as large as a
    // launch's noise, keeps a 5 % tolerance out of reach however many launches it runs.
    let loud: Vec<ScenarioResult> = (0..6)
        .map(|i| rec(100.0 + i as f64, Some(&format!("l{i}")), i))
        .collect();
    let t = table(&loud, &GateConfig::default());
    let thr = t.iter().find(|r| r.metric == "output_throughput").unwrap();
    assert_eq!(thr.launches_to_pass, None, "{thr:?}");
}

#[test]
fn the_pooled_prior_counts_the_scenarios_correlation() {
    // Two rows of sd 5 % and 10 % (weights 400 and 100), correlated 0.42:
    // numpy: np.sqrt(500 + 0.42 * 2 * np.sqrt(400 * 100)) / 500 = 0.051691391933280345
    let got = pooled_prior_sd(&[400.0, 100.0], 0.42);
    assert!((got - 0.051_691_391_933_280_345).abs() < 1e-12, "{got}");
    // More than independent rows would give (1/√Σw), less than the weighted mean of sds.
    assert!(got > (1.0f64 / 500.0).sqrt());
    assert!(got < (400.0 * 0.05 + 100.0 * 0.1) / 500.0);
    // One row: its own sd.
    assert!((pooled_prior_sd(&[400.0], 0.42) - 0.05).abs() < 1e-15);
    // ρ = 1: the weighted mean of the sds.
    let full = pooled_prior_sd(&[400.0, 100.0], 1.0);
    assert!((full - (400.0 * 0.05 + 100.0 * 0.1) / 500.0).abs() < 1e-15);
}

#[test]
fn the_table_ends_with_each_models_engine_wide_rows() {
    // Two scenarios, four launches each; with no prior the weights are 1/sd² of each
    // scenario's own launches.
    let mut recs = Vec::new();
    for (i, (a, b)) in [(100.0, 50.0), (103.0, 50.5), (98.0, 49.0), (101.0, 51.5)]
        .iter()
        .enumerate()
    {
        for (n, v) in [(100, a), (200, b)] {
            let mut r = record("m", n, 1.0, 1.0);
            r.output_throughput = *v;
            r.launch_id = Some(format!("l{i}"));
            r.run_index = i as u32;
            recs.push(r);
        }
    }
    let cfg = GateConfig::parse("prior_df = 0\n", "g").unwrap();
    let t = table(&recs, &cfg);
    let ew: Vec<&NoiseRow> = t.iter().filter(|r| r.scenario == ENGINE_WIDE).collect();
    assert!(t
        .iter()
        .rev()
        .take(ew.len())
        .all(|r| r.scenario == ENGINE_WIDE));
    let thr = ew
        .iter()
        .find(|r| r.metric == "output_throughput")
        .expect("an engine-wide throughput row");
    assert!(thr.gated);
    assert_eq!((thr.levels.launches, thr.levels.between_df), (4, 3.0));
    // numpy: a, b = log of the two scenarios' values; w = 1/var(ddof=1) each;
    // z = (wa (a − ā) + wb (b − b̄)) / (wa + wb); z.std(ddof=1) * 100
    let sd = thr.levels.between_sd_pct.unwrap();
    assert!((sd - 1.910_890_423_190_752_4).abs() < 1e-9, "{sd}");
    // One scenario alone has no engine-wide row.
    let one: Vec<ScenarioResult> = recs
        .iter()
        .filter(|r| r.params.num_prompts == 100)
        .cloned()
        .collect();
    assert!(table(&one, &cfg).iter().all(|r| r.scenario != ENGINE_WIDE));
}

#[test]
fn two_levels_split_between_and_within() {
    let recs = [
        rec(100.0, Some("a"), 0),
        rec(102.0, Some("a"), 1),
        rec(110.0, Some("b"), 2),
        rec(112.0, Some("b"), 3),
    ];
    let refs: Vec<&ScenarioResult> = recs.iter().collect();
    let l = Launches::of(&refs, "output_throughput").unwrap();
    let t = two_level(&l, Some((0.05, 0.0))).unwrap();
    assert_eq!((t.launches, t.runs), (2, 4));
    assert_eq!((t.between_df, t.within_df), (1.0, 2.0));
    // within: each pair differs by ln(102/100) and ln(112/110); ss = Σ d²/2.
    let (d1, d2) = ((102f64 / 100.0).ln(), (112f64 / 110.0).ln());
    let within = ((d1 * d1 + d2 * d2) / 2.0 / 2.0).sqrt() * 100.0;
    assert!((t.within_sd_pct.unwrap() - within).abs() < 1e-9);
    assert!(t.between_sd_pct.unwrap() > t.within_sd_pct.unwrap());
}

#[test]
fn one_launch_per_session_has_a_between_part_but_no_anova() {
    // Three sessions, one launch each: 100, 120, 110.
    let recs: Vec<ScenarioResult> = [(100.0, "a"), (120.0, "b"), (110.0, "c")]
        .iter()
        .enumerate()
        .map(|(i, (v, s))| {
            let mut r = rec(*v, Some("L1"), i as u32);
            r.session_id = Some(s.to_string());
            r
        })
        .collect();
    let refs: Vec<&ScenarioResult> = recs.iter().collect();
    let l = Launches::of(&refs, "output_throughput").unwrap();
    assert_eq!(l.n(), 3);
    // No session repeats a launch: no within-session variance, so no analysis of its own.
    assert_eq!(l.session_anova(), None);
    // numpy: y = np.log([100, 120, 110]); ((y - y.mean())**2).sum() / 2 = 0.008316026695289181
    let (ms_b, df_b, n0) = l.between_sessions().unwrap();
    assert!((ms_b - 0.008_316_026_695_289_181).abs() < 1e-15, "{ms_b}");
    assert_eq!((df_b, n0), (2.0, 1.0));
    // One session: nothing between.
    let one = Launches::of(&refs[..1], "output_throughput").unwrap();
    assert_eq!(one.between_sessions(), None);
}

#[test]
fn a_measured_session_ratio_below_the_prior_needs_more_evidence_than_one_above() {
    // One row of one metric, launch variance 1, sessions seen by one comparison (two sessions,
    // n₀ = 2): MS_between = 1 + 2λ̂.
    let priors = |lambda: f64, df_between: f64| {
        let a = SessionAnova {
            ms_between: 1.0 + 2.0 * lambda,
            df_between,
            ms_within: 1.0,
            df_within: 4.0,
            n0: 2.0,
        };
        Priors::learn([("output_throughput", (4.0, 4.0), vec![a])])
    };
    // Sittings that differ (λ̂ = 9 on one df): halfway to the prior, on 1 + 1 df.
    let (r, df) = priors(9.0, 1.0).session_ratio_df("output_throughput", 1.0);
    assert!((r - 5.0).abs() < 1e-12 && df == Some(2.0), "{r} {df:?}");
    // Sittings that agree (λ̂ = 0 on one df): the prior keeps four fifths, on 4 + 1 df.
    let (r, df) = priors(0.0, 1.0).session_ratio_df("output_throughput", 1.0);
    assert!((r - 0.8).abs() < 1e-12 && df == Some(5.0), "{r} {df:?}");
    // Ten sittings that agree closely (λ̂ = 0.2 on 9 df) outweigh it: (4 + 1.8) / 13.
    let (r, _) = priors(0.2, 9.0).session_ratio_df("output_throughput", 1.0);
    assert!((r - 5.8 / 13.0).abs() < 1e-12, "{r}");
    // Nothing measured: the prior, assumed.
    let none = Priors::learn([("output_throughput", (4.0, 4.0), Vec::new())]);
    assert_eq!(none.session_ratio_df("output_throughput", 1.0), (1.0, None));
    // Where the machine is not watched the assumption is another (4 here), on the same rule:
    // λ̂ = 9 on one df is halfway to it, λ̂ = 0 takes four fifths of it.
    assert_eq!(none.session_ratio_df("output_throughput", 4.0), (4.0, None));
    let (r, df) = priors(9.0, 1.0).session_ratio_df("output_throughput", 4.0);
    assert!((r - 6.5).abs() < 1e-12 && df == Some(2.0), "{r} {df:?}");
    let (r, _) = priors(0.0, 1.0).session_ratio_df("output_throughput", 4.0);
    assert!((r - 3.2).abs() < 1e-12, "{r}");
}
