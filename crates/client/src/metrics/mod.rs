//! Metrics: folds per-request measurements ([`RequestRecord`]) into a [`ScenarioResult`] with
//! vLLM's definitions (TTFT, TPOT, pooled ITL, E2EL, goodput, peak tokens/s, peak concurrency).
//!
//! Pure and bounded: a request's chunk gaps are folded into an hdrhistogram as soon as the
//! request is added, so memory grows with the number of requests (three floats each), never with
//! the number of streamed tokens, unless per-request details are asked for.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::record::{
    percentile_key, ErrorCount, Failure, FailureKind, OutputTokenSource, RequestRecord,
    ScenarioResult,
};
use crate::steady;

/// The four latency metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    Ttft,
    Tpot,
    Itl,
    E2el,
}

impl Metric {
    pub const ALL: [Metric; 4] = [Metric::Ttft, Metric::Tpot, Metric::Itl, Metric::E2el];

    pub fn key(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft",
            Metric::Tpot => "tpot",
            Metric::Itl => "itl",
            Metric::E2el => "e2el",
        }
    }

    /// vLLM's short display name.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Ttft => "TTFT",
            Metric::Tpot => "TPOT",
            Metric::Itl => "ITL",
            Metric::E2el => "E2EL",
        }
    }

    /// vLLM's section header.
    pub fn header(self) -> &'static str {
        match self {
            Metric::Ttft => "Time to First Token",
            Metric::Tpot => "Time per Output Token (excl. 1st token)",
            Metric::Itl => "Inter-token Latency",
            Metric::E2el => "End-to-end Latency",
        }
    }
}

impl std::str::FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ttft" => Ok(Metric::Ttft),
            "tpot" => Ok(Metric::Tpot),
            "itl" => Ok(Metric::Itl),
            "e2el" => Ok(Metric::E2el),
            other => Err(format!(
                "unknown metric `{other}` (expected ttft, tpot, itl or e2el)"
            )),
        }
    }
}

/// Which statistics to compute.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsConfig {
    /// Metrics whose mean/median/std/percentiles go into the result (vLLM's `--percentile-metrics`).
    pub percentile_metrics: Vec<Metric>,
    /// Percentiles, e.g. `[99.0]` (vLLM's `--metric-percentiles`).
    pub percentiles: Vec<f64>,
    /// Service-level objectives in milliseconds (vLLM's `--goodput ttft:MS tpot:MS e2el:MS`).
    pub goodput: Vec<(Metric, f64)>,
    /// Keep per-request arrays (`--save-detailed`).
    pub detailed: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            percentile_metrics: vec![Metric::Ttft, Metric::Tpot, Metric::Itl],
            percentiles: vec![99.0],
            goodput: Vec::new(),
            detailed: false,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MetricsError {
    #[error("--goodput: `{0}` is not METRIC:MS (METRIC is ttft, tpot or e2el, MS > 0)")]
    Goodput(String),
    #[error("--metric-percentiles: `{0}` is not a number in (0, 100]")]
    Percentile(String),
}

/// Parse `--goodput` entries like `ttft:500`.
pub fn parse_goodput(items: &[String]) -> Result<Vec<(Metric, f64)>, MetricsError> {
    items
        .iter()
        .flat_map(|s| s.split_whitespace())
        .map(|item| {
            let bad = || MetricsError::Goodput(item.to_string());
            let (m, v) = item.split_once(':').ok_or_else(bad)?;
            let metric: Metric = m.parse().map_err(|_| bad())?;
            if metric == Metric::Itl {
                return Err(bad());
            }
            let ms: f64 = v.trim().parse().map_err(|_| bad())?;
            if !(ms > 0.0 && ms.is_finite()) {
                return Err(bad());
            }
            Ok((metric, ms))
        })
        .collect()
}

/// Parse `--metric-percentiles` like `50,90,99`.
pub fn parse_percentiles(s: &str) -> Result<Vec<f64>, MetricsError> {
    s.split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| match t.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
            _ => Err(MetricsError::Percentile(t.trim().to_string())),
        })
        .collect()
}

/// Per-request arrays kept for `--save-detailed` (vLLM's names; times in seconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Detailed {
    pub input_lens: Vec<u32>,
    pub output_lens: Vec<u32>,
    pub ttfts: Vec<f64>,
    pub itls: Vec<Vec<f64>>,
    /// End-to-end latency of each request (0 for a failure, as vLLM writes it).
    pub latencies: Vec<f64>,
    pub start_times: Vec<f64>,
    /// How long each request waited past its due time for a free slot (`--max-concurrency`):
    /// sent minus scheduled.
    pub queue_times: Vec<f64>,
    pub generated_texts: Vec<String>,
    /// One message per request (`""` for a success), written as `errors` as vLLM does; the
    /// by-kind counts of the record are `errors_by_kind`.
    #[serde(rename = "errors")]
    pub request_errors: Vec<String>,
    /// The same requests row by row, for `--save-detailed-format jsonl,csv` (not part of the
    /// result JSON).
    #[serde(skip)]
    pub rows: Vec<crate::export::RequestRow>,
}

/// Summary statistics of one distribution, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    pub mean: f64,
    pub median: f64,
    pub std: f64,
}

/// numpy's default (linear) percentile of sorted values; 0 for no values, as vLLM reports.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0],
        n => {
            let rank = (p / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = rank.floor() as usize;
            let hi = rank.ceil() as usize;
            sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
        }
    }
}

/// Mean and population standard deviation (numpy's `std`, ddof = 0); zeros for no values.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// A pooled distribution too large to keep: exact count, mean and standard deviation (Welford),
/// percentiles from an hdrhistogram in nanoseconds (3 significant digits).
#[derive(Debug, Clone)]
pub struct PooledDist {
    hist: Histogram<u64>,
    count: u64,
    mean_ns: f64,
    m2: f64,
}

impl Default for PooledDist {
    fn default() -> Self {
        PooledDist {
            hist: Histogram::new(3).expect("3 significant digits is valid"),
            count: 0,
            mean_ns: 0.0,
            m2: 0.0,
        }
    }
}

impl PooledDist {
    pub fn record(&mut self, ns: u64) {
        // Auto-resizing histogram: recording never fails for u64 values.
        let _ = self.hist.record(ns.max(1));
        self.count += 1;
        let x = ns as f64;
        let d = x - self.mean_ns;
        self.mean_ns += d / self.count as f64;
        self.m2 += d * (x - self.mean_ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Merge another distribution into this one.
    pub fn merge(&mut self, other: &PooledDist) {
        if other.count == 0 {
            return;
        }
        let _ = self.hist.add(&other.hist);
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        let d = other.mean_ns - self.mean_ns;
        self.mean_ns += d * nb / n;
        self.m2 += other.m2 + d * d * na * nb / n;
        self.count += other.count;
    }

    /// Mean, milliseconds.
    pub fn mean_ms(&self) -> f64 {
        self.mean_ns / 1e6
    }

    /// Population standard deviation, milliseconds.
    pub fn std_ms(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            (self.m2 / self.count as f64).sqrt() / 1e6
        }
    }

    /// Percentile `p` (0–100), milliseconds (0 for no values).
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let v = self.hist.value_at_quantile((p / 100.0).clamp(0.0, 1.0));
        self.hist.median_equivalent(v) as f64 / 1e6
    }
}

/// Folds requests one at a time; [`Accumulator::finish`] produces the result.
#[derive(Debug, Clone)]
pub struct Accumulator {
    cfg: MetricsConfig,
    completed: u64,
    failed: u64,
    good: u64,
    /// Input tokens as the prompts were built (the dataset's counts).
    total_input: u64,
    /// Input tokens as the server counted them (`usage.prompt_tokens`), and whether every
    /// completed request reported it.
    server_input: u64,
    server_input_all: bool,
    total_output: u64,
    retok_total: u64,
    retok_all: bool,
    from_usage: u64,
    from_retok: u64,
    from_chunks: u64,
    ttft_ms: Vec<f64>,
    tpot_ms: Vec<f64>,
    e2el_ms: Vec<f64>,
    itl: PooledDist,
    tokens_per_s: Vec<f64>,
    concurrent_per_s: Vec<u64>,
    /// Every request's `[sent, end)`, in nanoseconds from the start: the in-flight peak.
    spans: Vec<(u64, u64)>,
    /// Every request's times and figures, for the steady window.
    points: Vec<steady::Point>,
    errors: BTreeMap<String, ErrorCount>,
    detailed: Option<Detailed>,
}

impl Accumulator {
    pub fn new(cfg: MetricsConfig) -> Self {
        let detailed = cfg.detailed.then(Detailed::default);
        Accumulator {
            cfg,
            completed: 0,
            failed: 0,
            good: 0,
            total_input: 0,
            server_input: 0,
            server_input_all: true,
            total_output: 0,
            retok_total: 0,
            retok_all: true,
            from_usage: 0,
            from_retok: 0,
            from_chunks: 0,
            ttft_ms: Vec::new(),
            tpot_ms: Vec::new(),
            e2el_ms: Vec::new(),
            itl: PooledDist::default(),
            tokens_per_s: Vec::new(),
            concurrent_per_s: Vec::new(),
            spans: Vec::new(),
            points: Vec::new(),
            errors: BTreeMap::new(),
            detailed,
        }
    }

    pub fn completed(&self) -> u64 {
        self.completed
    }

    pub fn failed(&self) -> u64 {
        self.failed
    }

    /// The failures so far, by kind.
    pub fn errors(&self) -> &BTreeMap<String, ErrorCount> {
        &self.errors
    }

    /// Add one request. `retokenized` is the token count of its generated text when the caller
    /// re-tokenized it (usage missing, or `--retokenize`).
    pub fn add(&mut self, r: &RequestRecord, retokenized: Option<u32>) {
        // A record without a failure but without a first token (made by something other than
        // the client, which fails such a request itself) is a failure too, never a TTFT of 0.
        let no_output;
        let (failure, ttft) = match (&r.failure, r.ttft()) {
            (Some(f), _) => (Some(f), 0.0),
            (None, Some(t)) => (None, t),
            (None, None) => {
                no_output = Failure {
                    kind: FailureKind::NoOutput,
                    message: "the response carried no text chunk".into(),
                };
                (Some(&no_output), 0.0)
            }
        };
        // In flight from send to end, failed or not: a failed request held its slot too.
        self.spans
            .push((r.sent.as_nanos() as u64, r.end.as_nanos() as u64));
        if let Some(f) = failure {
            self.add_failed(r, f);
            return;
        }
        self.completed += 1;
        let output = self.output_tokens(r, retokenized);
        self.total_input += u64::from(r.input_len);
        match r.usage_prompt_tokens {
            Some(p) => self.server_input += u64::from(p),
            None => self.server_input_all = false,
        }
        self.total_output += u64::from(output);

        let e2el = r.e2el();
        let tpot = if output > 1 {
            (e2el - ttft) / f64::from(output - 1)
        } else {
            0.0
        };
        self.ttft_ms.push(ttft * 1e3);
        self.e2el_ms.push(e2el * 1e3);
        if output > 1 {
            self.tpot_ms.push(tpot * 1e3);
        }
        for &g in &r.itl_ns {
            self.itl.record(g);
        }
        self.points.push(steady::Point {
            sent: r.sent.as_secs_f64(),
            first: r.first_token.unwrap_or(r.end).as_secs_f64(),
            end: r.end.as_secs_f64(),
            ok: true,
            output_tokens: u64::from(output),
            ttft_ms: ttft * 1e3,
            tpot_ms: (output > 1).then_some(tpot * 1e3),
            itl_sum_ms: r.itl_ns.iter().sum::<u64>() as f64 / 1e6,
            itl_count: r.itl_ns.len() as u64,
        });
        if self.is_good(ttft, tpot, e2el) {
            self.good += 1;
        }

        self.add_to_buckets(r, output);

        let tpot = (output > 1).then_some(tpot);
        self.keep_detailed(r, Some((output, ttft, tpot, e2el)), None);
    }

    /// A failed request: counted by kind (the first message kept), in flight from send to end.
    fn add_failed(&mut self, r: &RequestRecord, f: &Failure) {
        self.points.push(steady::Point {
            sent: r.sent.as_secs_f64(),
            first: r.end.as_secs_f64(),
            end: r.end.as_secs_f64(),
            ..Default::default()
        });
        self.failed += 1;
        self.errors
            .entry(f.kind.key())
            .and_modify(|e| e.count += 1)
            .or_insert_with(|| ErrorCount {
                count: 1,
                first_message: f.message.clone(),
            });
        let error = format!("{}: {}", f.kind.key(), f.message);
        self.keep_detailed(r, None, Some(error));
    }

    /// A request's output tokens: the server's usage, else the retokenized text, else its
    /// chunks; counted by source, and the retokenized total kept.
    fn output_tokens(&mut self, r: &RequestRecord, retokenized: Option<u32>) -> u32 {
        let output = match (r.usage_output_tokens, retokenized) {
            (Some(u), _) => {
                self.from_usage += 1;
                u
            }
            (None, Some(t)) => {
                self.from_retok += 1;
                t
            }
            (None, None) => {
                self.from_chunks += 1;
                r.chunks
            }
        };
        match retokenized {
            Some(t) => self.retok_total += u64::from(t),
            None => self.retok_all = false,
        }
        output
    }

    /// Whether a request met every goodput objective (seconds; ITL objectives are not per
    /// request). False when there are none.
    fn is_good(&self, ttft: f64, tpot: f64, e2el: f64) -> bool {
        !self.cfg.goodput.is_empty()
            && self.cfg.goodput.iter().all(|&(m, slo_ms)| {
                let v = match m {
                    Metric::Ttft => ttft,
                    Metric::Tpot => tpot,
                    Metric::E2el => e2el,
                    Metric::Itl => return true,
                };
                v <= slo_ms / 1e3
            })
    }

    /// The per-second buckets: output tokens (for the peak output rate) and requests active
    /// (vLLM's peak concurrency).
    fn add_to_buckets(&mut self, r: &RequestRecord, output: u32) {
        // Peak output tokens/s: each text chunk lands in its 1 s bucket, weighted so a request's
        // chunks add up to its output tokens (1 per chunk when the server streams token by token).
        if let Some(first) = r.first_token {
            let weight = if r.chunks > 0 {
                f64::from(output) / f64::from(r.chunks)
            } else {
                0.0
            };
            let mut t = first.as_nanos() as u64;
            self.bucket_tokens(t, weight);
            for &g in &r.itl_ns {
                t += g;
                self.bucket_tokens(t, weight);
            }
        }
        // vLLM's peak concurrency: the request is active in every 1 s bucket from send to end.
        let (s, e) = (r.sent.as_secs() as usize, r.end.as_secs() as usize);
        if self.concurrent_per_s.len() <= e {
            self.concurrent_per_s.resize(e + 1, 0);
        }
        for c in &mut self.concurrent_per_s[s..=e.max(s)] {
            *c += 1;
        }
    }

    /// Keep a request in the per-request arrays and rows (`--save-detailed`): `done` holds the
    /// output tokens, TTFT, TPOT and end-to-end latency of a success; `error` says why it failed.
    fn keep_detailed(
        &mut self,
        r: &RequestRecord,
        done: Option<(u32, f64, Option<f64>, f64)>,
        error: Option<String>,
    ) {
        let Some(d) = &mut self.detailed else {
            return;
        };
        let itl: Vec<f64> = r.itl_ns.iter().map(|&g| g as f64 / 1e9).collect();
        let output = done.map_or(0, |d| d.0);
        d.input_lens.push(r.input_len);
        d.output_lens.push(output);
        d.ttfts.push(done.map_or(0.0, |d| d.1));
        d.itls.push(if done.is_some() {
            itl.clone()
        } else {
            Vec::new()
        });
        d.latencies.push(done.map_or(0.0, |d| d.3));
        d.start_times.push(r.sent.as_secs_f64());
        d.queue_times
            .push(r.sent.saturating_sub(r.scheduled).as_secs_f64());
        d.generated_texts.push(match done {
            Some(_) => r.text.clone(),
            None => String::new(),
        });
        d.request_errors.push(error.clone().unwrap_or_default());
        d.rows.push(crate::export::RequestRow {
            index: r.index,
            request_id: None,
            model: r.model.clone(),
            conversation: r.turn.map(|t| t.0),
            turn: r.turn.map(|t| t.1),
            input_len: r.input_len,
            output_len: output,
            ttft: done.map(|d| d.1),
            tpot: done.and_then(|d| d.2),
            itl,
            latency: done.map(|d| d.3),
            start_time: r.sent.as_secs_f64(),
            scheduled_time: r.scheduled.as_secs_f64(),
            error,
        });
    }

    fn bucket_tokens(&mut self, t_ns: u64, weight: f64) {
        let b = (t_ns / 1_000_000_000) as usize;
        if self.tokens_per_s.len() <= b {
            self.tokens_per_s.resize(b + 1, 0.0);
        }
        self.tokens_per_s[b] += weight;
    }

    /// Fill the outcome fields and statistics of `out` for a run that took `duration` seconds
    /// (identity fields are left as they are). Returns the per-request arrays when kept.
    pub fn finish(mut self, duration: f64, out: &mut ScenarioResult) -> Option<Detailed> {
        let dur = if duration > 0.0 {
            duration
        } else {
            f64::MIN_POSITIVE
        };
        out.completed = self.completed;
        out.failed = self.failed;
        out.duration = duration;
        // The server's count is the truth of what it processed (a chat template adds tokens the
        // prompts do not have); the prompts' own count is kept beside it.
        let server_input = self.server_input_all && self.completed > 0;
        out.total_input_tokens = if server_input {
            self.server_input
        } else {
            self.total_input
        };
        out.total_input_tokens_client = server_input.then_some(self.total_input);
        out.total_output_tokens = self.total_output;
        out.total_output_tokens_retokenized =
            (self.retok_all && self.completed > 0).then_some(self.retok_total);
        out.request_throughput = self.completed as f64 / dur;
        out.request_goodput = (!self.cfg.goodput.is_empty()).then(|| self.good as f64 / dur);
        out.output_throughput = self.total_output as f64 / dur;
        out.total_token_throughput =
            Some((out.total_input_tokens + self.total_output) as f64 / dur);
        out.max_output_tokens_per_s = Some(self.tokens_per_s.iter().copied().fold(0.0, f64::max));
        out.max_concurrent_requests =
            Some(self.concurrent_per_s.iter().copied().max().unwrap_or(0));
        out.max_in_flight_requests = Some(max_in_flight(&self.spans));
        out.output_token_source = Some(if self.from_chunks > 0 {
            OutputTokenSource::Chunks
        } else if self.from_retok > 0 {
            OutputTokenSource::Retokenized
        } else {
            OutputTokenSource::Usage
        });
        out.errors = std::mem::take(&mut self.errors);
        let p = &out.params;
        let finite_rate = !p.request_rate.is_inf() || p.ramp_up_strategy.is_some();
        out.steady = steady::rule_for(finite_rate, p.max_concurrency)
            .and_then(|rule| steady::figures(&self.points, rule));

        for m in self.cfg.percentile_metrics.clone() {
            let k = m.key();
            let (mean, std, median, pcts): (f64, f64, f64, Vec<f64>) = match m {
                Metric::Itl => (
                    self.itl.mean_ms(),
                    self.itl.std_ms(),
                    self.itl.percentile_ms(50.0),
                    self.cfg
                        .percentiles
                        .iter()
                        .map(|&p| self.itl.percentile_ms(p))
                        .collect(),
                ),
                _ => {
                    let v = match m {
                        Metric::Ttft => &mut self.ttft_ms,
                        Metric::Tpot => &mut self.tpot_ms,
                        _ => &mut self.e2el_ms,
                    };
                    v.sort_by(f64::total_cmp);
                    let (mean, std) = mean_std(v);
                    let pcts = self
                        .cfg
                        .percentiles
                        .iter()
                        .map(|&p| percentile_sorted(v, p))
                        .collect();
                    (mean, std, percentile_sorted(v, 50.0), pcts)
                }
            };
            out.stats.insert(format!("mean_{k}_ms"), mean);
            out.stats.insert(format!("median_{k}_ms"), median);
            out.stats.insert(format!("std_{k}_ms"), std);
            for (&p, v) in self.cfg.percentiles.iter().zip(pcts) {
                out.stats.insert(percentile_key(p, k), v);
            }
        }
        self.detailed
    }
}

/// The most `[start, end)` spans that overlap at one instant (a span ending when another starts
/// does not overlap it).
pub fn max_in_flight(spans: &[(u64, u64)]) -> u64 {
    // (time, +1 start / -1 end); ends sort before starts at the same time.
    let mut events: Vec<(u64, i64)> = Vec::with_capacity(spans.len() * 2);
    for &(s, e) in spans {
        events.push((s, 1));
        events.push((e.max(s), -1));
    }
    events.sort_unstable();
    let (mut now, mut peak) = (0i64, 0i64);
    for (_, d) in events {
        now += d;
        peak = peak.max(now);
    }
    peak as u64
}

#[cfg(test)]
mod tests;
