//! The server's own measurements ([`Truth`]): a request's TTFT runs from the kernel's receive
//! time of its first bytes (`SO_TIMESTAMPNS`) to the moment its first token chunk is handed to
//! the kernel; a gap runs between successive token writes of a stream. Tests and the client
//! benchmark hold a client's numbers against it; `/metrics` shows it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A snapshot of the server's own measurements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Truth {
    /// Generation requests received (valid JSON bodies).
    pub requests: u64,
    /// Streams that reached `[DONE]` (or their clean end for `NoDone`).
    pub completed: u64,
    /// Tokens sent.
    pub tokens: u64,
    /// Mean time from a request's arrival to its first token chunk, ms (0 when none).
    pub mean_ttft_ms: f64,
    /// Median of the same, ms.
    pub median_ttft_ms: f64,
    /// Mean gap between successive token writes of a stream, ms (0 when none).
    pub mean_chunk_gap_ms: f64,
    /// Number of those gaps.
    pub gap_count: u64,
    /// Most generation streams in flight at once.
    pub max_in_flight: u64,
    /// Per stream, in order of first token: arrival → first token, ns.
    pub ttft_ns: Vec<u64>,
    /// Per stream: (arrival, first token written), for diagnosis.
    pub times: Vec<(Instant, Instant)>,
}

impl Truth {
    /// Percentile of the TTFTs, ms, interpolated between ranks (numpy's default, as vLLM and
    /// SGLang use).
    pub fn ttft_percentile_ms(&self, p: f64) -> f64 {
        let mut v: Vec<f64> = self.ttft_ns.iter().map(|&x| x as f64 / 1e6).collect();
        percentile(&mut v, p)
    }
}

/// Percentile of `v` (sorted in place) with linear interpolation between ranks; NaN when empty.
pub fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = p / 100.0 * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

/// Where the server keeps its measurements: counters touched once per request, and the rest
/// taken under one lock at a stream's first token and at its end.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    requests: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    acc: Mutex<Acc>,
    /// vLLM's speculative-decoding counters, when mimicked.
    spec: Option<super::config::SpecDecode>,
}

#[derive(Debug, Default)]
struct Acc {
    completed: u64,
    tokens: u64,
    gap_sum_ns: u128,
    gap_count: u64,
    ttft_sum_ns: u128,
    ttft_ns: Vec<u64>,
    times: Vec<(Instant, Instant)>,
    spec_drafts: u64,
    /// Accepted draft tokens by position.
    spec_accepted: Vec<u64>,
}

impl Recorder {
    /// A recorder that also counts speculative decoding as `spec` says.
    pub(super) fn new(spec: Option<super::config::SpecDecode>) -> Recorder {
        Recorder {
            spec,
            ..Default::default()
        }
    }

    fn acc(&self) -> std::sync::MutexGuard<'_, Acc> {
        self.acc.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Count a generation request; returns its sequence number from 0.
    pub(super) fn request(&self) -> u64 {
        self.requests.fetch_add(1, Ordering::Relaxed)
    }

    pub(super) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// A stream begins; the returned [`Live`] tallies it and settles when dropped.
    pub(super) fn stream(&self, arrived: Instant) -> Live<'_> {
        let running = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_in_flight.fetch_max(running, Ordering::Relaxed);
        Live {
            rec: self,
            arrived,
            last_write: None,
            tokens: 0,
            gap_sum_ns: 0,
            gap_count: 0,
            completed: false,
            all_tokens: 0,
        }
    }

    pub(super) fn snapshot(&self) -> Truth {
        let a = self.acc();
        let ms = |sum: u128, n: u64| {
            if n == 0 {
                0.0
            } else {
                sum as f64 / n as f64 / 1e6
            }
        };
        let mut sorted = a.ttft_ns.clone();
        sorted.sort_unstable();
        Truth {
            requests: self.requests(),
            completed: a.completed,
            tokens: a.tokens,
            mean_ttft_ms: ms(a.ttft_sum_ns, a.ttft_ns.len() as u64),
            median_ttft_ms: match sorted.len() {
                0 => 0.0,
                n if n % 2 == 1 => sorted[n / 2] as f64 / 1e6,
                n => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2e6,
            },
            mean_chunk_gap_ms: ms(a.gap_sum_ns, a.gap_count),
            gap_count: a.gap_count,
            max_in_flight: self.max_in_flight.load(Ordering::Relaxed),
            ttft_ns: a.ttft_ns.clone(),
            times: a.times.clone(),
        }
    }

    /// Prometheus text for `/metrics`.
    pub(super) fn metrics_text(&self) -> String {
        let a = self.acc();
        format!(
            "# TYPE fake_requests_total counter\nfake_requests_total {}\n\
             # TYPE fake_streams_completed_total counter\nfake_streams_completed_total {}\n\
             # TYPE fake_tokens_total counter\nfake_tokens_total {}\n\
             # TYPE fake_ttft_seconds summary\nfake_ttft_seconds_sum {}\nfake_ttft_seconds_count {}\n\
             # TYPE fake_chunk_gap_seconds summary\nfake_chunk_gap_seconds_sum {}\nfake_chunk_gap_seconds_count {}\n\
             # TYPE fake_requests_running gauge\nfake_requests_running {}\n\
             # TYPE fake:num_requests_running gauge\nfake:num_requests_running {}\n\
             # TYPE fake:num_requests_waiting gauge\nfake:num_requests_waiting 0\n{}",
            self.requests(),
            a.completed,
            a.tokens,
            a.ttft_sum_ns as f64 / 1e9,
            a.ttft_ns.len(),
            a.gap_sum_ns as f64 / 1e9,
            a.gap_count,
            self.in_flight.load(Ordering::Relaxed),
            self.in_flight.load(Ordering::Relaxed),
            self.spec_text(&a),
        )
    }

    /// vLLM's speculative-decoding counters (empty when not mimicked).
    fn spec_text(&self, a: &Acc) -> String {
        let Some(spec) = self.spec else {
            return String::new();
        };
        let accepted: u64 = a.spec_accepted.iter().sum();
        let draft_tokens = a.spec_drafts * u64::from(spec.num_speculative_tokens);
        let mut s = String::new();
        let counters = [
            ("num_drafts", a.spec_drafts),
            ("num_draft_tokens", draft_tokens),
            ("num_accepted_tokens", accepted),
        ];
        for (name, v) in counters {
            s += &format!(
                "# TYPE vllm:spec_decode_{name}_total counter\n\
                 vllm:spec_decode_{name}_total{{engine=\"0\"}} {v}.0\n"
            );
        }
        s += "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n";
        for p in 0..spec.num_speculative_tokens as usize {
            let v = a.spec_accepted.get(p).copied().unwrap_or(0);
            s += &format!(
                "vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine=\"0\",position=\"{p}\"}} {v}.0\n"
            );
        }
        s
    }
}

/// One stream's tally; settles into the [`Recorder`] when dropped (however the stream ends).
pub(super) struct Live<'a> {
    rec: &'a Recorder,
    arrived: Instant,
    last_write: Option<Instant>,
    tokens: u64,
    gap_sum_ns: u128,
    gap_count: u64,
    completed: bool,
    /// Every token of the stream (not taken by [`Live::settle`]).
    all_tokens: u64,
}

impl Live<'_> {
    /// `tokens` tokens were handed to the kernel just now.
    pub(super) fn wrote(&mut self, tokens: u32) -> Instant {
        let now = Instant::now();
        match self.last_write {
            None => {
                let ns = now.saturating_duration_since(self.arrived).as_nanos() as u64;
                let mut a = self.rec.acc();
                a.ttft_sum_ns += u128::from(ns);
                a.ttft_ns.push(ns);
                a.times.push((self.arrived, now));
            }
            Some(prev) => {
                self.gap_sum_ns += now.duration_since(prev).as_nanos();
                self.gap_count += 1;
            }
        }
        self.last_write = Some(now);
        self.tokens += u64::from(tokens);
        self.all_tokens += u64::from(tokens);
        now
    }

    /// Whether any token was written yet.
    pub(super) fn started(&self) -> bool {
        self.last_write.is_some()
    }

    pub(super) fn complete(&mut self) {
        self.completed = true;
    }

    /// Settle what was counted so far (before a stall, so the truth shows it meanwhile).
    pub(super) fn settle(&mut self) {
        let mut a = self.rec.acc();
        a.tokens += std::mem::take(&mut self.tokens);
        a.gap_sum_ns += std::mem::take(&mut self.gap_sum_ns);
        a.gap_count += std::mem::take(&mut self.gap_count);
        a.completed += u64::from(std::mem::take(&mut self.completed));
    }
}

impl Drop for Live<'_> {
    fn drop(&mut self) {
        self.settle();
        if let Some(spec) = self.rec.spec {
            let (drafts, per_pos) = spec.of_request(self.all_tokens);
            let mut a = self.rec.acc();
            a.spec_drafts += drafts;
            let len = per_pos.len().max(a.spec_accepted.len());
            a.spec_accepted.resize(len, 0);
            for (sum, v) in a.spec_accepted.iter_mut().zip(per_pos) {
                *sum += v;
            }
        }
        self.rec.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_interpolates_and_median_is_exact() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(percentile(&mut v, 50.0), 2.5);
        assert_eq!(percentile(&mut v, 100.0), 4.0);
        assert!(percentile(&mut [], 50.0).is_nan());
        let r = Recorder::default();
        let t0 = Instant::now();
        for _ in 0..3 {
            let mut live = r.stream(t0);
            live.wrote(1);
            live.wrote(2);
            live.complete();
        }
        let t = r.snapshot();
        assert_eq!((t.completed, t.tokens, t.gap_count), (3, 9, 3));
        assert_eq!(t.ttft_ns.len(), 3);
        assert_eq!(t.max_in_flight, 1);
    }
}
