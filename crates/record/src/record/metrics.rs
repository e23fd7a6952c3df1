//! Metric names: which keys a record holds, what values they may take, which way is better.

use serde::{Deserialize, Serialize};

use super::LATENCY_METRICS;

/// The outcome metrics of a record (everything numeric except the flattened statistics),
/// in vLLM's `--save-result` order. `success_rate` is derived and not listed.
pub const OUTCOME_METRICS: [&str; 14] = [
    "completed",
    "failed",
    "duration",
    "total_input_tokens",
    "total_output_tokens",
    "total_output_tokens_retokenized",
    "request_throughput",
    "request_goodput",
    "input_throughput",
    "output_throughput",
    "total_token_throughput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "concurrency",
];

/// Is `name` a metric a baseline may store (an outcome metric or a statistic key)?
pub fn is_metric_key(name: &str) -> bool {
    OUTCOME_METRICS.contains(&name) || is_stat_key(name)
}

/// Whether `v` is a possible value of metric `name`: finite and not negative everywhere; above
/// zero where zero cannot be measured (a TTFT or end-to-end latency statistic other than its
/// spread, the duration, the throughputs). A zero there would be a broken record, and on the
/// gate's log scale it is minus infinity. The error says what is wrong, not which key (the caller
/// names it with its place).
pub fn check_metric_value(name: &str, v: f64) -> Result<(), String> {
    if !v.is_finite() {
        return Err(format!("{v} is not a finite number"));
    }
    if v < 0.0 {
        return Err(format!("{v} is negative"));
    }
    let must_be_positive = matches!(
        name,
        "duration" | "request_throughput" | "output_throughput" | "total_token_throughput"
    ) || (is_stat_key(name)
        && (name.ends_with("_ttft_ms") || name.ends_with("_e2el_ms"))
        && !name.starts_with("std_")
        && !name.starts_with("min_"));
    if must_be_positive && v == 0.0 {
        return Err("0 is not a possible value (it must be above zero)".into());
    }
    Ok(())
}

/// Is `key` a distribution statistic key in vLLM's naming (`mean_ttft_ms`, `p99.9_itl_ms`, …)?
pub fn is_stat_key(key: &str) -> bool {
    let Some(rest) = key.strip_suffix("_ms") else {
        return false;
    };
    let Some((stat, metric)) = rest.rsplit_once('_') else {
        return false;
    };
    if !LATENCY_METRICS.contains(&metric) {
        return false;
    }
    match stat {
        "mean" | "median" | "std" | "min" | "max" => true,
        p => p
            .strip_prefix('p')
            .and_then(|n| n.parse::<f64>().ok())
            .is_some_and(|n| (0.0..=100.0).contains(&n)),
    }
}

/// The key of percentile `p` of `metric`, formatted as vLLM does (`p99_ttft_ms`, `p99.9_ttft_ms`).
pub fn percentile_key(p: f64, metric: &str) -> String {
    format!("p{}_{metric}_ms", format_percentile(p))
}

/// `99.0` → `99`, `99.9` → `99.9` (vLLM prints `int(p)` when p is whole).
pub fn format_percentile(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Higher,
    Lower,
}

impl Direction {
    /// The natural direction of a metric by its name: throughputs, counts of successes and
    /// goodput are better higher; latencies, durations and failures are better lower.
    pub fn of(metric: &str) -> Direction {
        if metric.ends_with("_ms")
            || matches!(metric, "failed" | "duration")
            || metric.starts_with("error")
        {
            Direction::Lower
        } else {
            Direction::Higher
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Direction;

    #[test]
    fn directions() {
        assert_eq!(Direction::of("p99_ttft_ms"), Direction::Lower);
        assert_eq!(Direction::of("failed"), Direction::Lower);
        assert_eq!(Direction::of("output_throughput"), Direction::Higher);
        assert_eq!(Direction::of("completed"), Direction::Higher);
    }
}
