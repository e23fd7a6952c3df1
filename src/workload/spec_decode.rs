//! Speculative-decoding acceptance, as `vllm bench serve` reports it: the server's counters
//! (`vllm:spec_decode_num_drafts_total`, `…_num_draft_tokens_total`,
//! `…_num_accepted_tokens_total`, `…_num_accepted_tokens_per_pos_total{position}`) are read from
//! `/metrics` before and after the run, and the difference gives the acceptance rate and length
//! under vLLM's result keys (`spec_decode_acceptance_rate`, …). A server without the counters
//! gives nothing.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

/// The counters at one moment, summed over label sets (engines, models).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub num_drafts: u64,
    pub num_draft_tokens: u64,
    pub num_accepted_tokens: u64,
    /// Accepted tokens by draft position.
    pub accepted_per_pos: BTreeMap<u32, u64>,
}

/// Read the counters from Prometheus text; `None` when it has none (no speculative decoding).
/// Like vLLM, only `vllm:spec_decode…_total` samples count.
pub fn parse(text: &str) -> Option<Counters> {
    let mut c = Counters::default();
    let mut found = false;
    for line in text.lines().map(str::trim) {
        if !line.starts_with("vllm:spec_decode") {
            continue;
        }
        let Some((series, value)) = line.rsplit_once(char::is_whitespace) else {
            continue;
        };
        let name = series.split('{').next().unwrap_or("").trim();
        if !name.ends_with("_total") {
            continue;
        }
        found = true;
        let Ok(v) = value.trim().parse::<f64>() else {
            continue;
        };
        let v = if v.is_finite() && v > 0.0 {
            v as u64
        } else {
            0
        };
        if name.contains("num_drafts") {
            c.num_drafts += v;
        } else if name.contains("num_draft_tokens") {
            c.num_draft_tokens += v;
        } else if name.contains("num_accepted_tokens_per_pos") {
            if let Some(pos) = label(series, "position").and_then(|p| p.parse().ok()) {
                *c.accepted_per_pos.entry(pos).or_default() += v;
            }
        } else if name.contains("num_accepted_tokens") {
            c.num_accepted_tokens += v;
        }
    }
    found.then_some(c)
}

/// The value of label `key` in a series `name{a="1",key="v"}`.
fn label<'a>(series: &'a str, key: &str) -> Option<&'a str> {
    let inner = series.split_once('{')?.1.trim_end_matches('}');
    inner.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"'))
    })
}

/// What the run added, under vLLM's result keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Accepted draft tokens per draft token, percent.
    pub spec_decode_acceptance_rate: f64,
    /// Tokens per step: 1 + accepted tokens per draft.
    pub spec_decode_acceptance_length: f64,
    pub spec_decode_num_drafts: u64,
    pub spec_decode_draft_tokens: u64,
    pub spec_decode_accepted_tokens: u64,
    /// Per draft position: accepted tokens per draft (0..1).
    pub spec_decode_per_position_acceptance_rates: Vec<f64>,
}

/// The difference between two readings, as vLLM computes it; `None` when the run drafted no
/// token (or a reading is missing).
pub fn delta(before: Option<&Counters>, after: Option<&Counters>) -> Option<Stats> {
    let (b, a) = (before?, after?);
    let drafts = a.num_drafts.saturating_sub(b.num_drafts);
    let draft_tokens = a.num_draft_tokens.saturating_sub(b.num_draft_tokens);
    let accepted = a.num_accepted_tokens.saturating_sub(b.num_accepted_tokens);
    if draft_tokens == 0 {
        return None;
    }
    let mut per_pos = Vec::new();
    if drafts > 0 {
        let positions: std::collections::BTreeSet<u32> = b
            .accepted_per_pos
            .keys()
            .chain(a.accepted_per_pos.keys())
            .copied()
            .collect();
        for p in positions {
            let was = b.accepted_per_pos.get(&p).copied().unwrap_or(0);
            let now = a.accepted_per_pos.get(&p).copied().unwrap_or(was);
            per_pos.push(now.saturating_sub(was) as f64 / drafts as f64);
        }
    }
    Some(Stats {
        spec_decode_acceptance_rate: accepted as f64 / draft_tokens as f64 * 100.0,
        spec_decode_acceptance_length: if drafts > 0 {
            1.0 + accepted as f64 / drafts as f64
        } else {
            0.0
        },
        spec_decode_num_drafts: drafts,
        spec_decode_draft_tokens: draft_tokens,
        spec_decode_accepted_tokens: accepted,
        spec_decode_per_position_acceptance_rates: per_pos,
    })
}

/// The block `vllm bench serve` prints under its results.
pub fn block(s: &Stats) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:-^50}", "Speculative Decoding");
    let _ = writeln!(
        out,
        "{:<40} {:<10.2}",
        "Acceptance rate (%):", s.spec_decode_acceptance_rate
    );
    let _ = writeln!(
        out,
        "{:<40} {:<10.2}",
        "Acceptance length:", s.spec_decode_acceptance_length
    );
    let _ = writeln!(out, "{:<40} {:<10}", "Drafts:", s.spec_decode_num_drafts);
    let _ = writeln!(
        out,
        "{:<40} {:<10}",
        "Draft tokens:", s.spec_decode_draft_tokens
    );
    let _ = writeln!(
        out,
        "{:<40} {:<10}",
        "Accepted tokens:", s.spec_decode_accepted_tokens
    );
    if !s.spec_decode_per_position_acceptance_rates.is_empty() {
        out.push_str("Per-position acceptance (%):\n");
        for (i, r) in s
            .spec_decode_per_position_acceptance_rates
            .iter()
            .enumerate()
        {
            let _ = writeln!(
                out,
                "{:<40} {:<10.2}",
                format!("  Position {i}:"),
                r * 100.0
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "# HELP vllm:spec_decode_num_drafts Number of spec decoding drafts.\n\
        # TYPE vllm:spec_decode_num_drafts counter\n\
        vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 10.0\n\
        vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 30.0\n\
        vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 12.0\n\
        vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",position=\"0\"} 8.0\n\
        vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",position=\"1\"} 4.0\n\
        vllm:spec_decode_num_accepted_tokens_created{engine=\"0\"} 1.7e9\n\
        vllm:num_requests_running{engine=\"0\"} 1.0\n";

    #[test]
    fn counters_are_read_and_summed_over_engines() {
        let c = parse(BEFORE).unwrap();
        assert_eq!(
            (c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens),
            (10, 30, 12)
        );
        assert_eq!(c.accepted_per_pos, BTreeMap::from([(0, 8), (1, 4)]));
        let two = format!(
            "{BEFORE}vllm:spec_decode_num_drafts_total{{engine=\"1\",model_name=\"m\"}} 5\n"
        );
        assert_eq!(parse(&two).unwrap().num_drafts, 15);
        assert_eq!(parse("vllm:num_requests_running 1\nfoo_total 3\n"), None);
    }

    #[test]
    fn the_run_s_difference_is_vllm_s_stats() {
        let b = parse(BEFORE).unwrap();
        let mut a = b.clone();
        a.num_drafts += 20;
        a.num_draft_tokens += 60;
        a.num_accepted_tokens += 30;
        *a.accepted_per_pos.get_mut(&0).unwrap() += 18;
        *a.accepted_per_pos.get_mut(&1).unwrap() += 12;
        let s = delta(Some(&b), Some(&a)).unwrap();
        assert_eq!(s.spec_decode_acceptance_rate, 50.0);
        assert_eq!(s.spec_decode_acceptance_length, 2.5);
        assert_eq!(
            (
                s.spec_decode_num_drafts,
                s.spec_decode_draft_tokens,
                s.spec_decode_accepted_tokens
            ),
            (20, 60, 30)
        );
        assert_eq!(s.spec_decode_per_position_acceptance_rates, [0.9, 0.6]);
        assert!(block(&s).contains("Acceptance length:                       2.50"));
        assert!(block(&s).contains("  Position 1:                            60.00"));
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["spec_decode_num_drafts"], 20);
        assert_eq!(delta(Some(&b), Some(&b)), None, "no drafts in the run");
        assert_eq!(delta(None, Some(&a)), None);
    }
}
