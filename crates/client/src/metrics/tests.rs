use super::*;
use crate::record::{Failure, FailureKind};
use std::time::Duration;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// A request sent at `sent` ms whose chunks arrive at `times` ms.
fn req(sent: u64, times: &[u64], usage: Option<u32>) -> RequestRecord {
    let itl_ns = times
        .windows(2)
        .map(|w| (w[1] - w[0]) * 1_000_000)
        .collect();
    RequestRecord {
        input_len: 10,
        max_tokens: times.len() as u32,
        scheduled: ms(sent),
        sent: ms(sent),
        first_token: times.first().map(|&t| ms(t)),
        end: ms(*times.last().unwrap_or(&sent)),
        itl_ns,
        chunks: times.len() as u32,
        usage_output_tokens: usage,
        ..Default::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn hand_computed_ttft_tpot_e2el_itl() {
    let cfg = MetricsConfig {
        percentile_metrics: Metric::ALL.to_vec(),
        percentiles: vec![50.0, 99.0],
        ..Default::default()
    };
    let mut acc = Accumulator::new(cfg);
    // A: ttft 100, tokens at 100,110,130 → e2e 130, tpot (130-100)/2 = 15, itl 10,20
    acc.add(&req(0, &[100, 110, 130], Some(3)), None);
    // B: sent at 1000, ttft 50, tokens at 1050,1090 → e2e 90, tpot 40/1 = 40, itl 40
    acc.add(&req(1000, &[1050, 1090], Some(2)), None);
    let mut r = ScenarioResult::default();
    assert!(acc.finish(2.0, &mut r).is_none());
    let s = &r.stats;
    assert_eq!((r.completed, r.failed), (2, 0));
    assert_eq!((r.total_input_tokens, r.total_output_tokens), (20, 5));
    assert!(close(r.request_throughput, 1.0));
    assert!(close(r.output_throughput, 2.5));
    assert!(close(r.total_token_throughput.unwrap(), 12.5));
    assert!(close(s["mean_ttft_ms"], 75.0));
    assert!(close(s["median_ttft_ms"], 75.0));
    assert!(close(s["std_ttft_ms"], 25.0));
    // numpy: percentile([50,100], 99) = 50 + 50*0.99
    assert!(close(s["p99_ttft_ms"], 99.5));
    assert!(close(s["mean_tpot_ms"], 27.5));
    assert!(close(s["mean_e2el_ms"], 110.0));
    assert!(close(s["p50_e2el_ms"], 110.0));
    // pooled ITL: 10, 20, 40
    assert!((s["mean_itl_ms"] - 70.0 / 3.0).abs() < 1e-6);
    let var = ((10.0f64 - 70.0 / 3.0).powi(2)
        + (20.0f64 - 70.0 / 3.0).powi(2)
        + (40.0f64 - 70.0 / 3.0).powi(2))
        / 3.0;
    assert!((s["std_itl_ms"] - var.sqrt()).abs() < 1e-6);
    assert!((s["median_itl_ms"] - 20.0).abs() < 0.02);
    assert!((s["p99_itl_ms"] - 40.0).abs() < 0.04);
    // tokens: A's 3 in second 0, B's 2 in second 1
    assert_eq!(r.max_output_tokens_per_s, Some(3.0));
    assert_eq!(r.max_concurrent_requests, Some(1));
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Usage));
    assert_eq!(r.total_output_tokens_retokenized, None);
}

#[test]
fn defaults_follow_vllm_selection() {
    let mut acc = Accumulator::new(MetricsConfig::default());
    acc.add(&req(0, &[10, 20], Some(2)), None);
    let mut r = ScenarioResult::default();
    acc.finish(1.0, &mut r);
    let keys: Vec<&str> = r.stats.keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "mean_itl_ms",
            "mean_tpot_ms",
            "mean_ttft_ms",
            "median_itl_ms",
            "median_tpot_ms",
            "median_ttft_ms",
            "p99_itl_ms",
            "p99_tpot_ms",
            "p99_ttft_ms",
            "std_itl_ms",
            "std_tpot_ms",
            "std_ttft_ms"
        ]
    );
}

#[test]
fn latency_counts_from_the_scheduled_time() {
    let mut r = req(100, &[150, 160], Some(2));
    r.scheduled = ms(40); // queued 60 ms behind schedule
    assert!(close(r.ttft().unwrap(), 0.110));
    assert!(close(r.e2el(), 0.120));
}

#[test]
fn a_record_without_a_first_token_is_a_failure_not_a_ttft_of_zero() {
    let mut acc = Accumulator::new(MetricsConfig::default());
    acc.add(&req(0, &[100, 110], Some(2)), None);
    let mut silent = req(0, &[], Some(0));
    silent.end = ms(5);
    assert_eq!(silent.ttft(), None);
    acc.add(&silent, None);
    let mut r = ScenarioResult::default();
    let _ = acc.finish(1.0, &mut r);
    assert_eq!((r.completed, r.failed), (1, 1));
    assert_eq!(r.errors["no_output_tokens"].count, 1);
    assert!(
        close(r.stats["mean_ttft_ms"], 100.0),
        "{}",
        r.stats["mean_ttft_ms"]
    );
}

#[test]
fn failures_are_counted_by_kind_with_first_message() {
    let mut acc = Accumulator::new(MetricsConfig {
        detailed: true,
        ..Default::default()
    });
    let fail = |kind, msg: &str| RequestRecord {
        failure: Some(Failure {
            kind,
            message: msg.into(),
        }),
        ..Default::default()
    };
    acc.add(&fail(FailureKind::Http(500), "boom"), None);
    acc.add(&fail(FailureKind::Http(500), "second"), None);
    acc.add(&fail(FailureKind::Timeout, "slow"), None);
    acc.add(&req(0, &[5, 6, 7], Some(3)), None);
    let mut r = ScenarioResult::default();
    let d = acc.finish(1.0, &mut r).expect("detailed kept");
    assert_eq!((r.completed, r.failed), (1, 3));
    assert_eq!(r.errors["http_500"].count, 2);
    assert_eq!(r.errors["http_500"].first_message, "boom");
    assert_eq!(r.errors["timeout"].count, 1);
    assert_eq!(d.output_lens, [0, 0, 0, 3]);
    assert_eq!(d.request_errors[2], "timeout: slow");
    assert_eq!(d.itls[3].len(), 2);
    // Failed requests add no latency samples.
    assert!(close(r.stats["mean_ttft_ms"], 5.0));
}

#[test]
fn in_flight_peak_counts_overlap_at_one_instant() {
    // Four back-to-back pairs inside one second: two at a time, never more.
    let spans: Vec<(u64, u64)> = (0..4)
        .flat_map(|i| [(i * 100, i * 100 + 100), (i * 100 + 10, i * 100 + 100)])
        .collect();
    assert_eq!(max_in_flight(&spans), 2);
    // A span that ends when the next starts does not overlap it.
    assert_eq!(max_in_flight(&[(0, 5), (5, 9), (9, 12)]), 1);
    assert_eq!(max_in_flight(&[(0, 10), (1, 9), (2, 8)]), 3);
    assert_eq!(max_in_flight(&[]), 0);
}

#[test]
fn output_tokens_usage_then_retokenized_then_chunks() {
    let mut acc = Accumulator::new(MetricsConfig::default());
    acc.add(&req(0, &[1, 2], Some(7)), Some(6));
    acc.add(&req(0, &[1, 2, 3], None), Some(4));
    let mut r = ScenarioResult::default();
    acc.finish(1.0, &mut r);
    assert_eq!(r.total_output_tokens, 11);
    assert_eq!(r.total_output_tokens_retokenized, Some(10));
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Retokenized));

    let mut acc = Accumulator::new(MetricsConfig::default());
    acc.add(&req(0, &[1, 2, 3], None), None);
    let mut r = ScenarioResult::default();
    acc.finish(1.0, &mut r);
    assert_eq!(r.total_output_tokens, 3);
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Chunks));
}

#[test]
fn tpot_skips_single_token_requests_and_goodput_uses_slos() {
    let mut acc = Accumulator::new(MetricsConfig {
        goodput: parse_goodput(&["ttft:60".into(), "tpot:15".into()]).unwrap(),
        ..Default::default()
    });
    acc.add(&req(0, &[50], Some(1)), None); // good: ttft 50, tpot 0
    acc.add(&req(0, &[50, 70], Some(2)), None); // tpot 20 > 15: bad
    acc.add(&req(0, &[70, 80], Some(2)), None); // ttft 70 > 60: bad
    let mut r = ScenarioResult::default();
    acc.finish(2.0, &mut r);
    assert_eq!(r.request_goodput, Some(0.5));
    // TPOT only from the two multi-token requests: 20 and 10.
    assert!(close(r.stats["mean_tpot_ms"], 15.0));
}

#[test]
fn peaks_weight_multi_token_chunks_and_count_overlaps() {
    let mut acc = Accumulator::new(MetricsConfig::default());
    // 2 chunks carrying 8 tokens in second 0; active 0..=1 s.
    acc.add(&req(0, &[100, 1200], Some(8)), None);
    // active 0.5..=1.5 s, 1 chunk in second 1.
    acc.add(&req(500, &[1500], Some(1)), None);
    let mut r = ScenarioResult::default();
    acc.finish(2.0, &mut r);
    assert_eq!(r.max_output_tokens_per_s, Some(5.0));
    assert_eq!(r.max_concurrent_requests, Some(2));
}

#[test]
fn empty_run_reports_zeros() {
    let acc = Accumulator::new(MetricsConfig::default());
    let mut r = ScenarioResult::default();
    acc.finish(0.0, &mut r);
    assert_eq!(r.stats["mean_ttft_ms"], 0.0);
    assert_eq!(r.stats["p99_itl_ms"], 0.0);
    assert_eq!(r.request_throughput, 0.0);
}

#[test]
fn percentile_matches_numpy_linear() {
    let v = [1.0, 2.0, 3.0, 4.0];
    assert!(close(percentile_sorted(&v, 50.0), 2.5));
    assert!(close(percentile_sorted(&v, 99.0), 3.97));
    assert!(close(percentile_sorted(&v, 100.0), 4.0));
    assert!(close(percentile_sorted(&[7.0], 99.0), 7.0));
}

#[test]
fn parsers_reject_bad_input() {
    assert_eq!(parse_percentiles("50, 99.9").unwrap(), [50.0, 99.9]);
    assert!(parse_percentiles("0").is_err());
    assert!(parse_goodput(&["itl:5".into()]).is_err());
    assert!(parse_goodput(&["ttft".into()]).is_err());
    assert_eq!(
        parse_goodput(&["ttft:5 e2el:9".into()]).unwrap(),
        [(Metric::Ttft, 5.0), (Metric::E2el, 9.0)]
    );
}

#[test]
fn pooled_merge_equals_recording_everything() {
    let (mut a, mut b, mut all) = (
        PooledDist::default(),
        PooledDist::default(),
        PooledDist::default(),
    );
    for (i, v) in [3u64, 9, 27, 81, 243, 729].iter().enumerate() {
        let v = v * 1_000_000;
        all.record(v);
        if i % 2 == 0 {
            a.record(v)
        } else {
            b.record(v)
        }
    }
    a.merge(&b);
    assert_eq!(a.count(), all.count());
    assert!((a.mean_ms() - all.mean_ms()).abs() < 1e-9);
    assert!((a.std_ms() - all.std_ms()).abs() < 1e-9);
    assert_eq!(a.percentile_ms(50.0), all.percentile_ms(50.0));
}
