//! The result block `perfgate run` prints, laid out like `vllm bench serve` (same title, labels
//! padded to 40 columns, TTFT/TPOT/ITL/E2EL sections) so its numbers read the same way, plus a
//! failure breakdown by kind. Pure: returns a `String`.

use std::fmt::Write;

use crate::metrics::Metric;
use crate::record::{format_percentile, percentile_key, RequestRate, ScenarioResult};
use crate::steady::Steady;

fn line(s: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(s, "{label:<40} {value:<10}");
}

fn fline(s: &mut String, label: &str, value: f64) {
    let _ = writeln!(s, "{label:<40} {value:<10.2}");
}

/// The label of vLLM's `max_concurrent_requests` (vLLM prints "Peak concurrent requests:").
pub const PEAK_PER_SECOND_LABEL: &str = "Peak concurrent requests (1 s buckets):";

/// The steady-window figures, after the whole-run ones (perfgate's own; vLLM prints none).
fn steady_section(s: &mut String, w: &Steady) {
    let rule = match w.rule.as_str() {
        "in_flight_cap" => "in flight = cap",
        "mser5" => "MSER-5",
        other => other,
    };
    let _ = writeln!(s, "{:-^50}", format!("Steady Window ({rule})"));
    line(
        s,
        "Window (s from start):",
        format!("{:.2} to {:.2}", w.start_s, w.end_s),
    );
    line(s, "Requests inside the window:", w.requests);
    fline(s, "Output token throughput (tok/s):", w.output_throughput);
    fline(s, "Median TTFT (ms):", w.median_ttft_ms);
    fline(s, "P99 TTFT (ms):", w.p99_ttft_ms);
    fline(s, "Median TPOT (ms):", w.median_tpot_ms);
    fline(s, "P99 TPOT (ms):", w.p99_tpot_ms);
    fline(s, "Mean ITL (ms):", w.mean_itl_ms);
}

/// Render the result block for `r`, with sections for `metrics` and the given percentiles.
pub fn result_block(r: &ScenarioResult, metrics: &[Metric], percentiles: &[f64]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:=^50}", " Serving Benchmark Result ");
    line(&mut s, "Successful requests:", r.completed);
    line(&mut s, "Failed requests:", r.failed);
    if let Some(c) = r.params.max_concurrency {
        line(&mut s, "Maximum request concurrency:", c);
    }
    if let RequestRate::PerSecond(rate) = r.params.request_rate {
        fline(&mut s, "Request rate configured (RPS):", rate);
    }
    fline(&mut s, "Benchmark duration (s):", r.duration);
    if let Some(b) = r.params.duration_s {
        // A time-bounded run: what it issued within its budget (perfgate's own lines).
        fline(&mut s, "Time budget (s):", b);
        line(&mut s, "Requests issued:", r.completed + r.failed);
    }
    line(&mut s, "Total input tokens:", r.total_input_tokens);
    line(&mut s, "Total generated tokens:", r.total_output_tokens);
    if let Some(t) = r.total_output_tokens_retokenized {
        line(&mut s, "Total generated tokens (retokenized):", t);
    }
    fline(&mut s, "Request throughput (req/s):", r.request_throughput);
    if let Some(g) = r.request_goodput {
        fline(&mut s, "Request goodput (req/s):", g);
    }
    fline(
        &mut s,
        "Output token throughput (tok/s):",
        r.output_throughput,
    );
    if let Some(p) = r.max_output_tokens_per_s {
        fline(&mut s, "Peak output token throughput (tok/s):", p);
    }
    if let Some(c) = r.max_in_flight_requests {
        line(&mut s, "Peak requests in flight:", c);
    }
    // vLLM's figure under a label that says what it counts: requests that follow each other
    // within one second both count, so it can exceed --max-concurrency.
    if let Some(c) = r.max_concurrent_requests {
        fline(&mut s, PEAK_PER_SECOND_LABEL, c as f64);
    }
    if let Some(t) = r.total_token_throughput {
        fline(&mut s, "Total Token throughput (tok/s):", t);
    }
    for &m in metrics {
        let k = m.key();
        let Some(mean) = r.stats.get(&format!("mean_{k}_ms")) else {
            continue;
        };
        let _ = writeln!(s, "{:-^50}", m.header());
        fline(&mut s, &format!("Mean {} (ms):", m.label()), *mean);
        if let Some(v) = r.stats.get(&format!("median_{k}_ms")) {
            fline(&mut s, &format!("Median {} (ms):", m.label()), *v);
        }
        for &p in percentiles {
            if let Some(v) = r.stats.get(&percentile_key(p, k)) {
                let label = format!("P{} {} (ms):", format_percentile(p), m.label());
                fline(&mut s, &label, *v);
            }
        }
    }
    if !r.errors.is_empty() {
        let _ = writeln!(s, "{:-^50}", "Failed Requests by Kind");
        for (kind, e) in &r.errors {
            line(&mut s, &format!("{kind}:"), e.count);
            let _ = writeln!(s, "  first: {}", e.first_message);
        }
    }
    if let Some(w) = &r.steady {
        steady_section(&mut s, w);
    }
    let _ = writeln!(s, "{}", "=".repeat(50));
    if let Some(c) = r.total_input_tokens_client {
        if c != r.total_input_tokens {
            let _ = writeln!(
                s,
                "note: input tokens: {} counted by the server (usage.prompt_tokens), {} in the \
                 prompts as built; on chat the difference is the chat template",
                r.total_input_tokens, c
            );
        }
    }
    if let Some(e) = r.errors.get("short_output") {
        let _ = writeln!(
            s,
            "warning: {} request(s) got fewer output tokens than asked for with ignore_eos \
             (short_output): the server shortened them, likely because prompt + max_tokens \
             exceeds its context length",
            e.count
        );
    }
    if let Some(t) = r.total_output_tokens_retokenized {
        if t != r.total_output_tokens {
            let _ = writeln!(
                s,
                "warning: output tokens differ: {} counted ({}), {} re-tokenized",
                r.total_output_tokens,
                r.output_token_source
                    .map(|o| format!("{o:?}").to_lowercase())
                    .unwrap_or_default(),
                t
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ErrorCount, ScenarioParams};

    fn sample() -> ScenarioResult {
        let mut r = ScenarioResult {
            model: "m".into(),
            params: ScenarioParams {
                dataset_name: "random".into(),
                num_prompts: 4,
                max_concurrency: Some(2),
                ..Default::default()
            },
            completed: 3,
            failed: 1,
            duration: 1.5,
            total_input_tokens: 30,
            total_output_tokens: 12,
            total_output_tokens_retokenized: Some(13),
            request_throughput: 2.0,
            output_throughput: 8.0,
            total_token_throughput: Some(28.0),
            max_output_tokens_per_s: Some(9.0),
            max_concurrent_requests: Some(2),
            max_in_flight_requests: Some(2),
            output_token_source: Some(crate::record::OutputTokenSource::Usage),
            ..Default::default()
        };
        for (k, v) in [
            ("mean_ttft_ms", 50.125),
            ("median_ttft_ms", 50.0),
            ("p99_ttft_ms", 51.0),
            ("p99.9_ttft_ms", 51.5),
            ("mean_itl_ms", 10.0),
            ("median_itl_ms", 10.0),
            ("p99_itl_ms", 10.5),
        ] {
            r.stats.insert(k.into(), v);
        }
        r.errors.insert(
            "http_500".into(),
            ErrorCount {
                count: 1,
                first_message: "HTTP 500: boom".into(),
            },
        );
        r
    }

    #[test]
    fn block_matches_vllm_layout() {
        let got = result_block(
            &sample(),
            &[Metric::Ttft, Metric::Tpot, Metric::Itl],
            &[99.0, 99.9],
        );
        let want = "\
============ Serving Benchmark Result ============
Successful requests:                     3         
Failed requests:                         1         
Maximum request concurrency:             2         
Benchmark duration (s):                  1.50      
Total input tokens:                      30        
Total generated tokens:                  12        
Total generated tokens (retokenized):    13        
Request throughput (req/s):              2.00      
Output token throughput (tok/s):         8.00      
Peak output token throughput (tok/s):    9.00      
Peak requests in flight:                 2         
Peak concurrent requests (1 s buckets):  2.00      
Total Token throughput (tok/s):          28.00     
---------------Time to First Token----------------
Mean TTFT (ms):                          50.12     
Median TTFT (ms):                        50.00     
P99 TTFT (ms):                           51.00     
P99.9 TTFT (ms):                         51.50     
---------------Inter-token Latency----------------
Mean ITL (ms):                           10.00     
Median ITL (ms):                         10.00     
P99 ITL (ms):                            10.50     
-------------Failed Requests by Kind--------------
http_500:                                1         
  first: HTTP 500: boom
==================================================
warning: output tokens differ: 12 counted (usage), 13 re-tokenized
";
        assert_eq!(got, want);
    }

    #[test]
    fn steady_window_follows_the_whole_run_figures() {
        let mut r = sample();
        r.errors.clear();
        r.total_output_tokens_retokenized = None;
        r.steady = Some(Steady {
            rule: "in_flight_cap".into(),
            start_s: 0.25,
            end_s: 1.25,
            requests: 2,
            output_throughput: 7.5,
            median_ttft_ms: 40.0,
            p99_ttft_ms: 41.0,
            median_tpot_ms: 9.0,
            p99_tpot_ms: 9.5,
            mean_itl_ms: 9.25,
        });
        let got = result_block(&r, &[Metric::Ttft], &[99.0]);
        let want = "\
---------------Time to First Token----------------
Mean TTFT (ms):                          50.12     
Median TTFT (ms):                        50.00     
P99 TTFT (ms):                           51.00     
---------Steady Window (in flight = cap)----------
Window (s from start):                   0.25 to 1.25
Requests inside the window:              2         
Output token throughput (tok/s):         7.50      
Median TTFT (ms):                        40.00     
P99 TTFT (ms):                           41.00     
Median TPOT (ms):                        9.00      
P99 TPOT (ms):                           9.50      
Mean ITL (ms):                           9.25      
==================================================
";
        assert!(got.ends_with(want), "{got}");
    }
}
