use super::*;

fn launches(sessions: &[&str], runs: Vec<Vec<f64>>) -> Launches {
    let keys = (0..runs.len()).map(|i| format!("L{i}")).collect();
    let values = runs.iter().map(|r| stats::median(r).unwrap()).collect();
    Launches {
        loops: [vec![None; runs.len()], vec![None; runs.len()]],
        keys,
        values,
        runs,
        sessions: sessions.iter().map(|s| Some(s.to_string())).collect(),
        has_ids: true,
    }
}

#[test]
fn components_match_the_nested_anova_of_r() {
    // 2 sessions × 3 launches × 2 runs. R 4.2:
    //   y <- c(1.00,1.04, 1.10,1.08, 0.97,1.01,  1.20,1.18, 1.25,1.31, 1.16,1.22)
    //   session <- factor(rep(c("s1","s2"), each = 6)); launch <- factor(rep(1:6, each = 2))
    //   ms <- anova(lm(y ~ session/launch))[["Mean Sq"]]
    //   c((ms[1] - ms[2]) / 6, (ms[2] - ms[3]) / 2, ms[3])
    //   # 0.0165333333 0.0022000000 0.0009333333
    let y = [
        1.00, 1.04, 1.10, 1.08, 0.97, 1.01, 1.20, 1.18, 1.25, 1.31, 1.16, 1.22,
    ];
    let runs: Vec<Vec<f64>> = y.chunks(2).map(<[f64]>::to_vec).collect();
    let l = launches(&["s1", "s1", "s1", "s2", "s2", "s2"], runs);
    let c = Components::of(&l);
    assert!(
        (c.session_var.unwrap() - 0.016_533_333_3).abs() < 1e-9,
        "{c:?}"
    );
    assert!((c.launch_var.unwrap() - 0.002_2).abs() < 1e-9, "{c:?}");
    assert!((c.run_var.unwrap() - 0.000_933_333_3).abs() < 1e-9, "{c:?}");
    assert_eq!((c.session_df, c.launch_df, c.run_df), (1.0, 4.0, 6.0));
    assert!(c.clamped.is_empty());
}

#[test]
fn a_negative_component_is_set_to_zero_and_named() {
    // Launch means 1, 1, 1 (no spread beyond the runs'), runs ±0.1 around them: the launch
    // component is 0 − 0.5 · 0.02 < 0 → 0; one session, so no session component.
    let l = launches(
        &["s", "s", "s"],
        vec![vec![0.9, 1.1], vec![0.9, 1.1], vec![0.9, 1.1]],
    );
    let c = Components::of(&l);
    assert_eq!(c.launch_var, Some(0.0));
    assert_eq!(c.clamped, vec!["launch".to_string()]);
    assert_eq!(c.session_var, None);
    // By hand: runs deviate 0.1 from their launch's mean, 3 × 2 × 0.01 / 3 df.
    assert!((c.run_var.unwrap() - 0.02).abs() < 1e-12);
}

#[test]
fn the_medians_efficiency_matches_its_known_values() {
    // n · Var(median of n N(0,1)): 3 → 1.346, 4 → 1.193 (R integration, see MEDIAN_EFFICIENCY);
    // the limit π/2 beyond the table.
    assert_eq!(run_share(1), 1.0);
    assert_eq!(run_share(2), 0.5);
    assert!((run_share(3) - 1.346_013 / 3.0).abs() < 1e-12);
    assert!((run_share(4) - 1.192_798 / 4.0).abs() < 1e-12);
    assert!((run_share(20) * 20.0 - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
}

fn test(var: f64, run_var: f64, session_var: f64) -> Test {
    Test {
        gap: 0.03,
        level: 0.0025,
        var,
        df: 30.0,
        prior_df: 4.0,
        run_var,
        base_share: 1.0,
        n_base: 16,
        session_var,
    }
}

fn question() -> Question {
    Question {
        delta_pct: 5.0,
        alpha: 0.01,
        power: 0.95,
        max_runs: 10,
        max_launches: 50,
    }
}

#[test]
fn without_launch_variance_the_plan_stays_in_one_launch() {
    // All the noise is between runs (var = run_var = 0.0001, base_share 1): runs are cheap next
    // to a launch's start-up, so the plan adds runs to one launch. By hand (scipy): se² =
    // 0.0001/16 + 0.0001·e(r)/r with e the median's efficiency, df 30, level 0.0025, power 95 %:
    // (t + z)·se = 0.0334 at r = 3 and 0.0281 at r = 4 ≤ 0.03; two launches cost 130 s or more.
    let t = test(0.0001, 0.0001, 0.0);
    let costs = Costs {
        startup_s: 60.0,
        run_s: 5.0,
    };
    let c = cheapest(&t, Kind::Check, &question(), &costs).unwrap();
    assert_eq!((c.launches, c.runs_per_launch), (1, 4), "{c:?}");
    assert!(c.power >= 0.95, "{c:?}");
    // One run fewer would not do.
    assert!(t.check_power(1, c.runs_per_launch - 1) < 0.95);
}

#[test]
fn with_launch_variance_alone_the_plan_adds_launches_not_runs() {
    // No run variance: more runs per launch cost and buy nothing.
    let t = test(0.0004, 0.0, 0.0);
    let costs = Costs {
        startup_s: 10.0,
        run_s: 10.0,
    };
    let c = cheapest(&t, Kind::Check, &question(), &costs).unwrap();
    assert_eq!(c.runs_per_launch, 1, "{c:?}");
    // By hand: se² = 0.0004 (1/16 + 1/n), df = 29 + n, level 0.0025, power 95 %:
    // n = 4: se = 0.01118, (t(0.9975, 33) = 3.0082 + 1.6449) · 0.01118 = 0.0520 > 0.03;
    // the first n that meets the rule is 23 (scipy's t.ppf, the same loop).
    assert_eq!(c.launches, 23, "{c:?}");
    assert!((c.minutes - 23.0 * 20.0 / 60.0).abs() < 1e-9);
}

#[test]
fn a_session_offset_bounds_the_stored_comparison_but_not_pairs() {
    let t = test(0.0004, 0.0, 0.0004);
    let costs = Costs {
        startup_s: 10.0,
        run_s: 10.0,
    };
    assert_eq!(cheapest(&t, Kind::Check, &question(), &costs), None);
    let ab = cheapest(&t, Kind::Ab, &question(), &costs).unwrap();
    assert!(ab.launches >= 2 && ab.power >= 0.95, "{ab:?}");
}

#[test]
fn a_change_within_the_tolerance_has_no_design() {
    let mut t = test(0.0004, 0.0, 0.0);
    t.gap = -0.001;
    let costs = Costs {
        startup_s: 10.0,
        run_s: 10.0,
    };
    assert_eq!(cheapest(&t, Kind::Check, &question(), &costs), None);
}

#[test]
fn the_plan_file_reads_back_and_names_bad_input() {
    let f = PlanFile {
        check: Some(PlannedDesign {
            launches: 3,
            runs_per_launch: 2,
        }),
        ab: None,
    };
    let text = f.to_toml("made by a test");
    assert_eq!(PlanFile::parse(&text, "p.toml").unwrap(), f);
    let e = PlanFile::parse("[check]\nlaunches = 3\nruns = 2\n", "p.toml").unwrap_err();
    assert!(e.to_string().starts_with("p.toml:"), "{e}");
    let e = PlanFile::parse("[ab]\nlaunches = 0\nruns_per_launch = 1\n", "p.toml").unwrap_err();
    assert!(e.to_string().contains("1 to 100"), "{e}");
}

#[test]
fn launch_seconds_read_the_corpus_table() {
    let text = "file\tengine\tseconds\nl1.jsonl\tx\t22\nl2.jsonl\tx\t24\n";
    let got = launch_seconds(text, "launches.tsv").unwrap();
    assert_eq!(
        got,
        vec![("l1".to_string(), 22.0), ("l2".to_string(), 24.0)]
    );
    let e = launch_seconds("file\tseconds\nl1\tlong\n", "t.tsv").unwrap_err();
    assert!(e.to_string().starts_with("t.tsv:2:"), "{e}");
}
