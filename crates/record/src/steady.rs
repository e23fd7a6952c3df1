//! Steady-state figures of a run: the part of a run between its warm-up (the engine filling up)
//! and its drain (the last requests finishing with fewer beside them), and the run's figures
//! measured over that part alone. They are reported beside the whole-run figures (vLLM's keys),
//! never in their place, under the record's `steady` key.
//!
//! Two rules choose the window, by the kind of scenario:
//!
//! - **In flight equals the cap** ([`Rule::InFlightCap`], fixed-concurrency runs: rate `inf`
//!   and a `max_concurrency`): the window opens the first time the requests in flight reach
//!   the cap and closes the last time they drop below it. Before it the first batch starts
//!   together; after it the engine runs with empty slots.
//! - **MSER-5** ([`Rule::Mser5`], fixed-rate runs): the Marginal Standard Error Rule on batch
//!   means of 5 (White, "An effective truncation heuristic for bias reduction in simulation
//!   output", Simulation 69(6), 1997; White, Cobb and Spratt, WSC 2000; Franklin and White,
//!   WSC 2008). The series is the TTFT of the successful requests in the order they were sent;
//!   it is cut into batches of 5 (a remainder at the end is left out of the statistic) with
//!   means `Z_1 … Z_m`, and the truncation `d` (in batches) minimises
//!   `MSER(d) = Σ_{j>d} (Z_j − Z̄_d)² / (m − d)²` over `d ≤ m/2`, ties to the smaller `d`.
//!   The window opens at the send of request `5·d` of that order and closes at the last send
//!   (after it no new work arrives: the drain).
//!
//! Over the window: latencies (TTFT, TPOT, ITL) of the successful requests that start and
//! finish inside it, and the output throughput as the output tokens produced inside it over its
//! length: each request's first token where it arrived, its other tokens spread evenly between
//! its first token and its end (counting whole requests by their end instead would be biased by
//! engines that finish a batch at once, as llama.cpp's slots do, since the cap window closes at
//! the first end of the last batch). ITL is the pooled mean (the sum of a request's gaps is kept, not its gaps,
//! so memory grows with requests, not tokens). Pure: no crate imports.

use serde::{Deserialize, Serialize};

/// What the window rule needs of one request (times in seconds from the run's start).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// When the request was handed to the connection.
    pub sent: f64,
    /// When its first token arrived (`end` when none did).
    pub first: f64,
    /// When it ended (finished or failed).
    pub end: f64,
    /// Whether it succeeded; the latency fields below are meaningful only then.
    pub ok: bool,
    pub output_tokens: u64,
    pub ttft_ms: f64,
    /// `None` for one output token.
    pub tpot_ms: Option<f64>,
    /// Sum and count of the request's inter-token gaps.
    pub itl_sum_ms: f64,
    pub itl_count: u64,
}

/// How the window is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Fixed concurrency: the window where the requests in flight equal this cap.
    InFlightCap(u64),
    /// Fixed rate: MSER-5 truncation of the warm-up, the drain cut at the last send.
    Mser5,
}

impl Rule {
    /// The rule's name as the record writes it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::InFlightCap(_) => "in_flight_cap",
            Rule::Mser5 => "mser5",
        }
    }
}

/// The steady-window figures of a run (the record's `steady` key).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Steady {
    /// The rule that chose the window: `in_flight_cap` or `mser5`.
    pub rule: String,
    /// The window, seconds from the run's start.
    pub start_s: f64,
    pub end_s: f64,
    /// Successful requests that started and finished inside the window.
    pub requests: u64,
    /// Output tokens per second produced inside the window (see the module notes).
    pub output_throughput: f64,
    pub median_ttft_ms: f64,
    pub p99_ttft_ms: f64,
    pub median_tpot_ms: f64,
    pub p99_tpot_ms: f64,
    /// Pooled mean of the inter-token gaps of the window's requests.
    pub mean_itl_ms: f64,
}

impl Steady {
    /// A figure by its whole-run name (`output_throughput`, `median_ttft_ms`, …).
    pub fn metric(&self, name: &str) -> Option<f64> {
        Some(match name {
            "output_throughput" => self.output_throughput,
            "median_ttft_ms" => self.median_ttft_ms,
            "p99_ttft_ms" => self.p99_ttft_ms,
            "median_tpot_ms" => self.median_tpot_ms,
            "p99_tpot_ms" => self.p99_tpot_ms,
            "mean_itl_ms" => self.mean_itl_ms,
            _ => return None,
        })
    }
}

/// The rule for a scenario: the cap for rate `inf` with `max_concurrency`, MSER-5 for a finite
/// rate; `None` for all-at-once runs (rate `inf`, no cap), which have no steady part.
pub fn rule_for(finite_rate: bool, max_concurrency: Option<u64>) -> Option<Rule> {
    match (finite_rate, max_concurrency) {
        (true, _) => Some(Rule::Mser5),
        (false, Some(c)) if c > 0 => Some(Rule::InFlightCap(c)),
        (false, _) => None,
    }
}

/// MSER-5: how many leading observations of `series` to drop (a multiple of 5). `None` for
/// fewer than 5 observations.
pub fn mser5_truncation(series: &[f64]) -> Option<usize> {
    let m = series.len() / 5;
    if m == 0 {
        return None;
    }
    let z: Vec<f64> = series
        .chunks_exact(5)
        .map(|b| b.iter().sum::<f64>() / 5.0)
        .collect();
    let mut best = (0usize, f64::INFINITY);
    for d in 0..=m / 2 {
        let s = mser(&z, d);
        if s < best.1 {
            best = (d, s);
        }
    }
    Some(best.0 * 5)
}

/// The MSER statistic of the batch means `z` truncated by `d` batches.
pub fn mser(z: &[f64], d: usize) -> f64 {
    let rest = &z[d..];
    let k = rest.len() as f64;
    let mean = rest.iter().sum::<f64>() / k;
    rest.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (k * k)
}

/// The window where `[sent, end)` spans in flight equal `cap`: from the first instant they
/// reach it to the last instant they drop below it (a span ending when another starts does not
/// overlap it). `None` when they never reach it or it never closes after it opened.
pub fn cap_window(spans: &[(f64, f64)], cap: u64) -> Option<(f64, f64)> {
    // (time, -1 end / +1 start): ends sort before starts at the same instant.
    let mut events: Vec<(f64, i64)> = Vec::with_capacity(spans.len() * 2);
    for &(s, e) in spans {
        events.push((s, 1));
        events.push((e.max(s), -1));
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let cap = i64::try_from(cap).unwrap_or(i64::MAX);
    let (mut now, mut open, mut close) = (0i64, None, None);
    for (t, d) in events {
        let before = now;
        now += d;
        if now == cap && open.is_none() {
            open = Some(t);
        }
        if before == cap && now < cap && open.is_some() {
            close = Some(t);
        }
    }
    match (open, close) {
        (Some(a), Some(b)) if b > a => Some((a, b)),
        _ => None,
    }
}

/// The window `rule` picks for `points`, if any.
pub fn window(points: &[Point], rule: Rule) -> Option<(f64, f64)> {
    match rule {
        Rule::InFlightCap(cap) => {
            let spans: Vec<(f64, f64)> = points.iter().map(|p| (p.sent, p.end)).collect();
            cap_window(&spans, cap)
        }
        Rule::Mser5 => {
            let mut ok: Vec<&Point> = points.iter().filter(|p| p.ok).collect();
            ok.sort_by(|a, b| a.sent.total_cmp(&b.sent));
            let ttft: Vec<f64> = ok.iter().map(|p| p.ttft_ms).collect();
            let d = mser5_truncation(&ttft)?;
            let start = ok.get(d)?.sent;
            let end = points.iter().map(|p| p.sent).fold(f64::MIN, f64::max);
            (end > start).then_some((start, end))
        }
    }
}

/// The steady figures of a run under `rule`; `None` when the rule finds no window or no
/// successful request starts and finishes inside it.
pub fn figures(points: &[Point], rule: Rule) -> Option<Steady> {
    let (start, end) = window(points, rule)?;
    let inside: Vec<&Point> = points
        .iter()
        .filter(|p| p.ok && p.sent >= start && p.end <= end)
        .collect();
    if inside.is_empty() {
        return None;
    }
    let produced: f64 = points
        .iter()
        .filter(|p| p.ok)
        .map(|p| tokens_within(p, start, end))
        .sum();
    let mut ttft: Vec<f64> = inside.iter().map(|p| p.ttft_ms).collect();
    let mut tpot: Vec<f64> = inside.iter().filter_map(|p| p.tpot_ms).collect();
    ttft.sort_by(f64::total_cmp);
    tpot.sort_by(f64::total_cmp);
    let gaps: u64 = inside.iter().map(|p| p.itl_count).sum();
    let gap_sum: f64 = inside.iter().map(|p| p.itl_sum_ms).sum();
    Some(Steady {
        rule: rule.name().into(),
        start_s: start,
        end_s: end,
        requests: inside.len() as u64,
        output_throughput: produced / (end - start),
        median_ttft_ms: percentile(&ttft, 50.0),
        p99_ttft_ms: percentile(&ttft, 99.0),
        median_tpot_ms: percentile(&tpot, 50.0),
        p99_tpot_ms: percentile(&tpot, 99.0),
        mean_itl_ms: if gaps == 0 {
            0.0
        } else {
            gap_sum / gaps as f64
        },
    })
}

/// The output tokens of `p` produced inside `[a, b]`: its first token where it arrived, the
/// others spread evenly between the first token and the end (per-token times are not kept).
fn tokens_within(p: &Point, a: f64, b: f64) -> f64 {
    let first: f64 = if (a..=b).contains(&p.first) { 1.0 } else { 0.0 };
    let rest = p.output_tokens.saturating_sub(1) as f64;
    let span = p.end - p.first;
    let share = if span > 0.0 {
        (p.end.min(b) - p.first.max(a)).max(0.0) / span
    } else if (a..=b).contains(&p.end) {
        1.0
    } else {
        0.0
    };
    first.min(p.output_tokens as f64) + rest * share
}

/// Linearly interpolated percentile of sorted values (numpy's default); 0 for none.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n => {
            let rank = (p / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
            let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
        }
    }
}

#[cfg(test)]
mod tests;
