use super::*;

/// A successful request: `output_tokens` tokens, TTFT and TPOT in ms, its gaps summing to
/// `(output_tokens - 1) · tpot`.
fn ok(sent: f64, end: f64, tokens: u64, ttft_ms: f64, tpot_ms: f64) -> Point {
    Point {
        sent,
        first: sent + ttft_ms / 1e3,
        end,
        ok: true,
        output_tokens: tokens,
        ttft_ms,
        tpot_ms: Some(tpot_ms),
        itl_sum_ms: tpot_ms * (tokens - 1) as f64,
        itl_count: tokens - 1,
    }
}

// Batch means 26, 13, 10.2, 9.8, 10.4, 9.6 (the two trailing 99s are a remainder, left out).
// MSER(d), by hand and with numpy (((z[d:] - z[d:].mean())**2).sum() / (6 - d)**2):
// d=0 5.700926, d=1 0.304, d=2 0.025, d=3 0.038519 → d* = 2, 10 observations dropped.
const WARMUP: [f64; 32] = [
    30., 28., 26., 24., 22., 12., 14., 13., 12., 14., 10., 11., 9., 10., 11., 9., 11., 10., 9.,
    10., 11., 9., 10., 11., 11., 10., 10., 9., 9., 10., 99., 99.,
];

#[test]
fn mser_statistic_matches_hand_values() {
    let z = [26.0, 13.0, 10.2, 9.8, 10.4, 9.6];
    let want = [5.700925925925926, 0.304, 0.025, 0.038518518518518556];
    for (d, w) in want.iter().enumerate() {
        assert!((mser(&z, d) - w).abs() < 1e-12, "d={d}: {}", mser(&z, d));
    }
    assert_eq!(mser5_truncation(&WARMUP), Some(10));
}

#[test]
fn mser5_can_stop_inside_the_first_half() {
    // Batch means 20, 10, 10, 12, 8, 12, 8, 10 (m = 8, d ≤ 4); numpy: MSER = 1.6171875,
    // 0.326531, 0.444444, 0.64, 0.6875 → d* = 1: the later swings are not warm-up.
    let mut y = Vec::new();
    for z in [20.0, 10.0, 10.0, 12.0, 8.0, 12.0, 8.0, 10.0] {
        y.extend([z; 5]);
    }
    assert_eq!(mser5_truncation(&y), Some(5));
    // A flat series keeps everything (ties go to the smaller d); under 5 values: no rule.
    assert_eq!(mser5_truncation(&[3.0; 20]), Some(0));
    assert_eq!(mser5_truncation(&[1.0, 2.0, 3.0, 4.0]), None);
}

#[test]
fn cap_window_opens_at_the_cap_and_closes_at_the_last_drop() {
    // Cap 2. In flight: 1 at 0, 2 at 0.5 (open), 1 at 3 then 2, 1 at 5 then 2, 1 at 6 then 2,
    // 1 at 8 (the last drop: close), 0 at 9.
    let spans = [(0.0, 3.0), (0.5, 5.0), (3.0, 6.0), (5.0, 8.0), (6.0, 9.0)];
    assert_eq!(cap_window(&spans, 2), Some((0.5, 8.0)));
    // Never at the cap: no window.
    assert_eq!(cap_window(&spans, 3), None);
    assert_eq!(cap_window(&[(0.0, 1.0), (1.0, 2.0)], 2), None);
}

#[test]
fn figures_over_the_cap_window_by_hand() {
    let mut points = vec![
        ok(0.0, 3.0, 10, 100.0, 10.0),
        ok(0.5, 5.0, 10, 200.0, 20.0),
        ok(3.0, 6.0, 10, 300.0, 30.0),
        ok(5.0, 8.0, 10, 400.0, 40.0),
        ok(6.0, 9.0, 10, 500.0, 50.0),
    ];
    // A failure inside the window holds no slot here (it would change the window) and is
    // never a figure.
    points.push(Point {
        sent: 6.5,
        first: 6.5,
        end: 6.5,
        ttft_ms: 1.0,
        ..Point::default()
    });
    let s = figures(&points, Rule::InFlightCap(2)).unwrap();
    assert_eq!(s.rule, "in_flight_cap");
    assert_eq!((s.start_s, s.end_s), (0.5, 8.0));
    // Inside: the requests sent at 0.5, 3 and 5 (0 is before, 6 ends after 8).
    assert_eq!(s.requests, 3);
    // Tokens produced inside [0.5, 8] (first token at sent + TTFT, 9 more spread to the end):
    // request 0: first at 0.1 (before), 9 · 2.5/2.9; requests 0.5, 3 and 5: all 10 each;
    // request 6: first at 6.5, 9 · 1.5/2.5 = 5.4 more: 44.158620689655… over 7.5 s.
    let want = (9.0 * 2.5 / 2.9 + 30.0 + 6.4) / 7.5;
    assert!(
        (s.output_throughput - want).abs() < 1e-12,
        "{}",
        s.output_throughput
    );
    assert!((s.output_throughput - 5.887816091954023).abs() < 1e-12);
    // TTFT 200, 300, 400: median 300, p99 = 300 + 0.98·100 (rank 0.99·2 = 1.98).
    assert_eq!(s.median_ttft_ms, 300.0);
    assert!((s.p99_ttft_ms - 398.0).abs() < 1e-9);
    assert_eq!(s.median_tpot_ms, 30.0);
    assert!((s.p99_tpot_ms - 39.8).abs() < 1e-9);
    // Gaps: (9·20 + 9·30 + 9·40) / 27 = 30.
    assert!((s.mean_itl_ms - 30.0).abs() < 1e-12);
    assert_eq!(s.metric("median_ttft_ms"), Some(300.0));
    assert_eq!(s.metric("mean_ttft_ms"), None);
}

#[test]
fn mser5_window_cuts_the_warmup_and_the_drain() {
    // Request i is sent at i s and ends at i + 1 s, its TTFT the WARMUP series: MSER-5 drops
    // 10, so the window opens at the send of request 10 and closes at the last send (31 s).
    let points: Vec<Point> = WARMUP
        .iter()
        .enumerate()
        .map(|(i, &t)| ok(i as f64, i as f64 + 1.0, 4, t, 1.0))
        .collect();
    let s = figures(&points, Rule::Mser5).unwrap();
    assert_eq!((s.start_s, s.end_s), (10.0, 31.0));
    // Sent at 10 … 30 (the one sent at 31 ends at 32).
    assert_eq!(s.requests, 21);
    // Produced inside [10, 31]: the 21 requests inside, 4 tokens each; request 9's tokens all
    // came before 10 (it ends at 10), request 31's after 31: 84 over 21 s.
    assert!(
        (s.output_throughput - 4.0).abs() < 1e-12,
        "{}",
        s.output_throughput
    );
    // TTFT of requests 10 … 30: six 9s, eight 10s, six 11s and a 99: median 10.
    assert_eq!(s.median_ttft_ms, 10.0);
    assert_eq!(s.rule, "mser5");
}

#[test]
fn the_rule_follows_the_scenario() {
    assert_eq!(rule_for(false, Some(4)), Some(Rule::InFlightCap(4)));
    assert_eq!(rule_for(true, Some(4)), Some(Rule::Mser5));
    assert_eq!(rule_for(true, None), Some(Rule::Mser5));
    assert_eq!(rule_for(false, None), None);
    // Too few requests for a window: no figures rather than figures of nothing.
    assert_eq!(
        figures(&[ok(0.0, 1.0, 2, 1.0, 1.0)], Rule::InFlightCap(2)),
        None
    );
}
