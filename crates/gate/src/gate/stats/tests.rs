use super::*;

fn close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} vs {b} (tol {tol})");
}

#[test]
fn t_quantiles_match_scipy() {
    // scipy.stats.t.ppf / t.sf / norm.ppf
    close(t_quantile(0.975, 10.0), 2.228_138_851_986_27, 1e-9);
    close(t_quantile(0.95, 1.0), 6.313_751_514_675_04, 1e-8);
    close(t_quantile(0.95, 4.0), 2.131_846_786_326_649_5, 1e-9);
    close(t_quantile(0.99, 7.5), 2.943_099_323_406_721, 1e-8);
    close(
        t_quantile(0.975, f64::INFINITY),
        1.959_963_984_540_054,
        1e-9,
    );
    close(t_sf(2.0, 6.0), 0.046_213_155_765_837_56, 1e-12);
    close(t_sf(2.228_138_851_986_27, 10.0), 0.025, 1e-10);
}

#[test]
fn holm_matches_r_p_adjust() {
    // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
    let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
    for (a, e) in adj.iter().zip([0.03, 0.06, 0.06, 0.02]) {
        close(*a, e, 1e-12);
    }
    assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
    assert_eq!(holm(&[0.2, 0.3]), vec![0.4, 0.4]);
    assert!(holm(&[]).is_empty());
}

#[test]
fn weighted_holm_matches_the_closure_of_weighted_bonferroni() {
    // Reference: brute-force closed testing in Python: H_i's adjusted p is the largest,
    // over index sets J ∋ i, of min_{j∈J} p_j · Σ_J w / w_j.
    let cases: [(&[f64], &[f64], &[f64]); 3] = [
        (
            &[0.01, 0.04, 0.03, 0.005],
            &[0.5, 0.5 / 3.0, 0.5 / 3.0, 0.5 / 3.0],
            &[0.02, 0.06, 0.06, 0.02],
        ),
        (
            &[0.002, 0.02, 0.0004, 0.3, 0.011],
            &[0.4, 0.1, 0.1, 0.2, 0.2],
            &[0.0045, 0.06, 0.004, 0.3, 0.0275],
        ),
        (&[0.9, 0.8, 0.001], &[0.1, 0.1, 0.8], &[1.0, 1.0, 0.00125]),
    ];
    for (p, w, want) in cases {
        let got = holm_weighted(p, w);
        for (g, e) in got.iter().zip(want) {
            assert!((g - e).abs() < 1e-12, "{p:?} {w:?}: {got:?} vs {want:?}");
        }
    }
    // Equal weights of any scale are plain Holm (R's p.adjust, above).
    let eq = holm_weighted(&[0.01, 0.04, 0.03, 0.005], &[0.25; 4]);
    for (g, e) in eq.iter().zip([0.03, 0.06, 0.06, 0.02]) {
        assert!((g - e).abs() < 1e-12, "{eq:?}");
    }
}

/// A worked example, every number from numpy/scipy:
/// baseline launches 100, 104, 98, 101, 99.5; candidate 90, 92, 91.5 (a throughput);
/// prior sd 0.03 worth 4 df; tolerance 5 % (lim = −ln 0.95).
#[test]
fn shifted_test_matches_scipy() {
    let b = LogSummary::of(&[100.0, 104.0, 98.0, 101.0, 99.5]).unwrap();
    let c = LogSummary::of(&[90.0, 92.0, 91.5]).unwrap();
    let ss = b.var * 4.0 + c.var * 2.0;
    let (var, df) = shrunk_variance(ss, 6.0, 0.03, 4.0).unwrap();
    close(var, 0.000_581_776_847_985_963_2, 1e-15);
    assert_eq!(df, 10.0);
    let se = (var * (1.0 / 5.0 + 1.0 / 3.0)).sqrt();
    close(se, 0.017_614_794_508_949_393, 1e-14);
    let s = Shift {
        worse: -(c.mean - b.mean),
        se,
        df,
    };
    close(s.worse, 0.097_315_605_074_242_3, 1e-14);
    let lim = -(0.95f64).ln();
    // scipy.stats.t.sf((w − lim)/se, 10)
    close(s.p_worse_than(lim), 0.012_960_034_812_410_755, 1e-10);
    // w + t.ppf(0.95, 10)·se
    close(s.upper(0.05), 0.129_241_735_308_029_65, 1e-10);
    close(s.lower(0.05), 2.0 * s.worse - s.upper(0.05), 1e-12);
    // Better-than is the mirror image.
    let m = Shift {
        worse: -s.worse,
        ..s
    };
    close(m.p_better_than(lim), s.p_worse_than(lim), 1e-15);
}

#[test]
fn shrinkage_weighs_prior_and_data() {
    assert_eq!(shrunk_variance(0.0, 0.0, 0.1, 0.0), None);
    let (v, df) = shrunk_variance(0.0, 0.0, 0.1, 3.0).unwrap();
    close(v, 0.01, 1e-15);
    assert_eq!(df, 3.0);
    // 8 df of data at variance 0.04 against 2 df of prior at 0.01: (0.02 + 0.32) / 10.
    let (v, df) = shrunk_variance(0.32, 8.0, 0.1, 2.0).unwrap();
    close(v, 0.034, 1e-15);
    assert_eq!(df, 10.0);
}

#[test]
fn pocock_spending_matches_closed_form() {
    // α·ln(1 + (e − 1)·t) for α = 0.05, from numpy.
    close(
        pocock_spent(0.05, 1.0 / 3.0),
        0.022_641_621_263_197_066,
        1e-15,
    );
    close(
        pocock_spent(0.05, 2.0 / 3.0),
        0.038_169_125_769_507_07,
        1e-15,
    );
    close(pocock_spent(0.05, 1.0), 0.05, 1e-15);
    // Look 1 is tested at the α spent by it, exactly.
    close(look_alpha(0.05, 1, 3), 0.022_641_621_263_197_066, 1e-15);
    // One planned look: the whole α.
    close(look_alpha(0.01, 1, 1), 0.01, 1e-15);
}

#[test]
fn group_sequential_boundaries_match_the_reference_values() {
    let z = |p: f64| statrs::distribution::Normal::standard().inverse_cdf(1.0 - p);
    // Lan–DeMets Pocock-type spending, 5 looks, one-sided α = 0.025: the bounds on the z scale
    // (numpy recursion on a 0.005 grid; gsDesign's sfLDPocock prints 2.44 2.43 2.41 2.40 2.39).
    let want = [2.437_977, 2.426_533, 2.410_008, 2.396_052, 2.385_523];
    for (k, w) in want.iter().enumerate() {
        close(z(look_alpha(0.025, k as u32 + 1, 5)), *w, 1e-3);
    }
    // 3 looks at α = 0.01: 2.609908 2.645254 2.658079; scipy's multivariate normal (corr
    // √(k/j)) gives P(some look crossed) = 0.01001 for these bounds: α is spent, not more.
    for (k, w) in [2.609_908, 2.645_254, 2.658_079].iter().enumerate() {
        close(z(look_alpha(0.01, k as u32 + 1, 3)), *w, 1e-3);
    }
    // 40 looks at α = 1e-4 (the size of one Holm level of `ab`): look 1 is its increment
    // 4.206e-6; looks 10 and 40 are 6.4355e-6 and 9.7589e-6 (numpy, 0.01 grid, within 1 %), 1.5 and 6.1
    // times what a bare increment would give (4.31e-6, 1.59e-6).
    close(look_alpha(1e-4, 1, 40) / 4.205_999e-6, 1.0, 1e-6);
    close(look_alpha(1e-4, 10, 40) / 6.435_507e-6, 1.0, 0.01);
    close(look_alpha(1e-4, 40, 40) / 9.758_938e-6, 1.0, 0.01);
    // The share of the level a look gets grows with the level: this is what makes one
    // boundary at a Holm family's smallest level valid for its larger levels
    // (`Levels::look_alpha_for`).
    let r = |a: f64| look_ratio(a, 40, 40);
    assert!(
        r(1e-6) < r(1e-4) && r(1e-4) < r(1e-2),
        "{} {} {}",
        r(1e-6),
        r(1e-4),
        r(1e-2)
    );
}

#[test]
fn a_t_statistic_with_few_df_keeps_part_of_the_boundary() {
    // The share is df / (df + 10): half at 10 df, all of it for a known variance, none at 0.
    close(df_share(10.0), 0.5, 1e-15);
    close(df_share(f64::INFINITY), 1.0, 1e-15);
    close(df_share(0.0), 0.0, 1e-15);
    // Look 40 of 40 at α = 1e-4: the bare increment is α (1 − ln(1 + (e − 1) · 39/40)) =
    // 1.592921e-6 (closed form); the boundary 9.758938e-6 (above); 10 df get halfway,
    // 5.675930e-6.
    let inc = look_alpha_df(1e-4, 40, 40, 0.0);
    close(inc / 1.592_921_291e-6, 1.0, 1e-9);
    close(look_alpha_df(1e-4, 40, 40, 10.0) / 5.675_930e-6, 1.0, 0.01);
    close(
        look_alpha_df(1e-4, 40, 40, f64::INFINITY),
        look_alpha(1e-4, 40, 40),
        1e-18,
    );
    // Look 1 is its increment whatever the df; one look is α itself.
    close(
        look_alpha_df(0.01, 1, 10, 2.0),
        look_alpha(0.01, 1, 10),
        1e-18,
    );
    close(look_alpha_df(0.01, 1, 1, 2.0), 0.01, 1e-18);
    // More df, a larger level, never past the boundary.
    let levels: Vec<f64> = [1.0, 3.0, 9.0, 30.0, 1e6]
        .iter()
        .map(|&df| look_alpha_df(0.01, 7, 20, df))
        .collect();
    assert!(levels.windows(2).all(|w| w[0] < w[1]), "{levels:?}");
    assert!(levels[4] <= look_alpha(0.01, 7, 20));
}

#[test]
fn robust_location_and_scale_match_scipy() {
    let x = [1.0, 1.1, 0.9, 1.05, 3.0];
    assert_eq!(median(&x), Some(1.05));
    // scipy.stats.median_abs_deviation(x, scale='normal')
    close(mad(&x).unwrap(), 0.074_130_110_925_280_16, 1e-12);
    assert_eq!(outliers(&x, 4.0), vec![4]);
    assert!(
        outliers(&x[..4], 4.0).is_empty(),
        "fewer than 5 values flag nothing"
    );
    assert_eq!(median(&[2.0, 1.0]), Some(1.5));
    assert_eq!(median(&[]), None);
}

#[test]
fn launches_needed_grows_as_the_change_nears_the_tolerance() {
    let lim = (1.05f64).ln();
    let d = |worse: f64, sd: f64, n_base: usize, fixed_var: f64| Design {
        worse,
        lim,
        sd,
        df: 20.0,
        n_base,
        n_now: 2,
        fixed_var,
    };
    let far = launches_needed(&d(0.0, 0.02, 8, 0.0), 0.05, 100).unwrap();
    let near = launches_needed(&d(0.02, 0.02, 8, 0.0), 0.05, 100).unwrap();
    assert!(near > far, "{near} vs {far}");
    // The baseline alone is too short: even endless candidate launches do not decide.
    assert_eq!(
        launches_needed(&d(0.0, 0.1, 2, 0.0), 0.05, 1000),
        Err(NotDecidable::BaselineTooShort)
    );
    // A session term no launch can shrink says so.
    assert_eq!(
        launches_needed(&d(0.0, 0.02, 1000, 0.03f64.powi(2)), 0.05, 1000),
        Err(NotDecidable::SessionBound)
    );
    assert_eq!(
        launches_needed(&d(0.045, 0.02, 1000, 0.0), 0.05, 10),
        Err(NotDecidable::MoreThan(10))
    );
    // scipy: (t.ppf(.95, 20) + 1)·0.02 = 0.054494; gap ln 1.05 = 0.048790;
    // (gap/need)² − 1/8 = 0.67661 → 1/0.67661 = 1.478 → 2 launches.
    assert_eq!(far, 2);
}

#[test]
fn launches_needed_counts_the_df_the_launches_will_have() {
    // 2 df now (2 candidate launches); each further launch adds one. scipy:
    // n = 3: (t.ppf(.95, 3) + 1) · 0.02 · √(1/8 + 1/3) = 0.045405 ≤ ln 1.05 = 0.048790;
    // n = 2: (t.ppf(.95, 2) + 1) · 0.02 · √(1/8 + 1/2) = 0.061980 > 0.048790.
    // At a fixed 2 df it would ask for 4.
    let d = Design {
        worse: 0.0,
        lim: (1.05f64).ln(),
        sd: 0.02,
        df: 2.0,
        n_base: 8,
        n_now: 2,
        fixed_var: 0.0,
    };
    assert_eq!(launches_needed(&d, 0.05, 50), Ok(3));
}

#[test]
fn rejects_non_positive_values() {
    assert_eq!(
        LogSummary::of(&[1.0, 0.0]),
        Err(StatsError::NonPositive(0.0))
    );
    assert_eq!(LogSummary::of(&[]), Err(StatsError::Empty));
}

#[test]
fn pairs_needed_follows_the_one_sample_formula() {
    // ceil(((t.ppf(0.95, 10) + 1) · 0.03 / log1p(0.05))²) = 3 (scipy)
    let lim = 0.05f64.ln_1p();
    // (df 10 with the 3 pairs it has, so the answer's 3 pairs keep df 10.)
    assert_eq!(pairs_needed(0.0, lim, 0.03, 10.0, 3, 0.05, 100), Ok(3));
    // Nearer the limit needs more; on it, more than any cap.
    let near = pairs_needed(0.03, lim, 0.03, 10.0, 3, 0.05, 100).unwrap();
    assert!(near > 3, "{near}");
    assert_eq!(
        pairs_needed(lim, lim, 0.03, 10.0, 3, 0.05, 100),
        Err(NotDecidable::MoreThan(100))
    );
    assert_eq!(pairs_needed(0.0, lim, 0.0, 10.0, 3, 0.05, 100), Ok(1));
    // The df grow with the pairs: the fewest n with n ≥ ((t.ppf(1 − α, df + n − n_now) + 1)
    // · sd / gap)², by scipy: 11 and 25 pairs, where the df of today (4) would say 26 and 355.
    assert_eq!(pairs_needed(0.0, lim, 0.03, 4.0, 5, 0.001, 100), Ok(11));
    assert_eq!(pairs_needed(0.01, lim, 0.03, 4.0, 5, 1e-5, 200), Ok(25));
    assert_eq!(
        pairs_needed(0.01, lim, 0.03, 4.0, 5, 1e-5, 24),
        Err(NotDecidable::MoreThan(24))
    );
}
