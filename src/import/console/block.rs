//! One result block: its labelled lines read into canonical record keys.

use super::{is_block_start, is_rule, looks_like_log_line, visible};
use crate::import::ImportError;

/// One parsed value of a block, with the line it came from.
#[derive(Debug, Clone)]
pub(super) struct Value {
    pub(super) text: String,
    pub(super) line: usize,
}

#[derive(Debug, Default)]
pub(super) struct Block {
    pub(super) header_line: usize,
    /// Canonical key (`completed`, `mean_ttft_ms`, `backend`, `request_rate`, …) → value.
    pub(super) values: Vec<(String, Value)>,
    /// SGLang/LMDeploy style (the block names its backend) rather than vLLM style.
    pub(super) sglang_style: bool,
}

impl Block {
    pub(super) fn get(&self, key: &str) -> Option<&Value> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Sections whose lines are printed but not kept (they are not part of the record shape).
const IGNORED_SECTIONS: [&str; 7] = [
    "Client-side Queueing",
    "Queue-inclusive End-to-end Latency",
    "Speculative Decoding",
    "Diffusion Decoding",
    "Probe Requests",
    "Accuracy",
    "Per-position acceptance",
];

/// Lines inside a block that are printed but not kept.
const IGNORED_LABELS: [&str; 5] = [
    "Total input text tokens",
    "Total input vision tokens",
    "Accept length",
    "RTFx (Inverse Real-Time Factor)",
    "Input throughput (inputs/s)",
];

/// The record key of a block label.
fn key_of(label: &str) -> Option<String> {
    let k = match label {
        "Backend" => "backend",
        "Traffic request rate" => "request_rate",
        "Request rate configured (RPS)" => "request_rate_configured",
        "Max request concurrency" | "Maximum request concurrency" => "max_concurrency",
        "Successful requests" => "completed",
        "Failed requests" => "failed",
        "Benchmark duration (s)" => "duration",
        "Total input tokens" => "total_input_tokens",
        "Total generated tokens" => "total_output_tokens",
        "Total generated tokens (retokenized)" => "total_output_tokens_retokenized",
        "Request throughput (req/s)" => "request_throughput",
        "Request goodput (req/s)" => "request_goodput",
        "Input token throughput (tok/s)" => "input_throughput",
        "Output token throughput (tok/s)" => "output_throughput",
        "Peak output token throughput (tok/s)" => "max_output_tokens_per_s",
        "Peak concurrent requests" | "Peak concurrent requests (1 s buckets)" => {
            "max_concurrent_requests"
        }
        "Total Token throughput (tok/s)"
        | "Total token throughput (tok/s)"
        | "Total throughput (tok/s)" => "total_token_throughput",
        "Concurrency" => "concurrency",
        other => return stat_key(other),
    };
    Some(k.to_string())
}

/// `Mean TTFT (ms)` → `mean_ttft_ms`, `P99.9 E2E Latency (ms)` → `p99.9_e2el_ms`.
fn stat_key(label: &str) -> Option<String> {
    let body = label.strip_suffix(" (ms)")?;
    let (stat, metric) = body.split_once(' ')?;
    let metric = match metric {
        "TTFT" => "ttft",
        "TPOT" => "tpot",
        "ITL" => "itl",
        "E2EL" | "E2E Latency" | "E2E" => "e2el",
        _ => return None,
    };
    let stat = match stat {
        "Mean" => "mean".to_string(),
        "Median" => "median".to_string(),
        "Std" => "std".to_string(),
        "Min" => "min".to_string(),
        "Max" => "max".to_string(),
        p => {
            let n = p.strip_prefix('P')?;
            n.parse::<f64>().ok()?;
            format!("p{n}")
        }
    };
    Some(format!("{stat}_{metric}_ms"))
}

/// Parse the block whose header is at `start`; returns it and the index of its closing line.
pub(super) fn parse_block(
    lines: &[&str],
    start: usize,
    path: &str,
    warnings: &mut Vec<String>,
) -> Result<(Block, usize), ImportError> {
    let mut block = Block {
        header_line: start + 1,
        ..Default::default()
    };
    let mut section: Option<String> = None;
    let mut i = start + 1;
    while i < lines.len() {
        let l = visible(lines[i]);
        let t = l.trim();
        let n = i + 1;
        if t.is_empty() {
            i += 1;
            continue;
        }
        if is_block_start(l) {
            break;
        }
        if is_rule(t, '=') {
            if block.get("completed").is_none() {
                return Err(ImportError::at(
                    path,
                    block.header_line,
                    "result block has no `Successful requests` line",
                ));
            }
            return Ok((block, i));
        }
        if t.starts_with('-') && t.ends_with('-') {
            let name = t.trim_matches('-').trim();
            section = (!name.is_empty()).then(|| name.to_string());
            i += 1;
            continue;
        }
        if section
            .as_deref()
            .is_some_and(|s| IGNORED_SECTIONS.iter().any(|x| s.starts_with(x)))
        {
            i += 1;
            continue;
        }
        let Some((label, value)) = t.split_once(':') else {
            if looks_like_log_line(t) {
                i += 1;
                continue;
            }
            return Err(ImportError::at(
                path,
                n,
                format!("unexpected line in a result block: `{t}`"),
            ));
        };
        let label = label.trim();
        if IGNORED_LABELS.contains(&label) {
            i += 1;
            continue;
        }
        let Some(key) = key_of(label) else {
            if looks_like_log_line(t) {
                i += 1;
                continue;
            }
            return Err(ImportError::at(
                path,
                n,
                format!("unknown line in a result block: `{t}`"),
            ));
        };
        if key == "backend" {
            block.sglang_style = true;
        }
        if let Some(first) = block.get(&key) {
            // A line printed twice (an edited log): harmless when it says the same.
            if first.text == value.trim() {
                warnings.push(format!(
                    "{path}:{n}: `{label}` printed twice in one result block (line {}, the same value); read once",
                    first.line
                ));
                i += 1;
                continue;
            }
            return Err(ImportError::at(
                path,
                n,
                format!(
                    "`{label}` appears twice in one result block with different values (line {}: `{}`, here: `{}`)",
                    first.line,
                    first.text,
                    value.trim()
                ),
            ));
        }
        if value.trim().eq_ignore_ascii_case("nan") && key.ends_with("_ms") {
            warnings.push(format!("{path}:{n}: `{label}` is nan; left out"));
            i += 1;
            continue;
        }
        block.values.push((
            key,
            Value {
                text: value.trim().to_string(),
                line: n,
            },
        ));
        i += 1;
    }
    Err(ImportError::at(
        path,
        block.header_line,
        "result block is truncated (no closing `=====` line)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_labels() {
        assert_eq!(stat_key("Mean TTFT (ms)").as_deref(), Some("mean_ttft_ms"));
        assert_eq!(stat_key("P99.9 ITL (ms)").as_deref(), Some("p99.9_itl_ms"));
        assert_eq!(
            stat_key("Median E2E Latency (ms)").as_deref(),
            Some("median_e2el_ms")
        );
        assert_eq!(stat_key("Max ITL (ms)").as_deref(), Some("max_itl_ms"));
        assert_eq!(stat_key("Mean Foo (ms)"), None);
        assert_eq!(
            key_of("Total Token throughput (tok/s)").as_deref(),
            Some("total_token_throughput")
        );
    }
}
