//! What one request measured, and why a failed one failed.

use std::time::Duration;

/// Why a request failed. Every kind is counted separately, with the first message kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// The server answered with a non-2xx status.
    Http(u16),
    /// The stream carried an in-band `error` (an `event: error` or a JSON object with `error`).
    ErrorEvent,
    /// A data event that is not JSON, or JSON of an unexpected shape.
    MalformedEvent,
    /// The request could not be sent (refused, reset before a response, bad URL).
    Connection,
    /// The connection broke while the body was streaming.
    ConnectionReset,
    /// `--request-timeout` elapsed.
    Timeout,
    /// With `ignore_eos`, the server generated fewer tokens than `max_tokens` (its
    /// `usage.completion_tokens`): vLLM shortens an output that would run past the context,
    /// without an error. The run did not measure what it asked for.
    ShortOutput,
    /// The body ended cleanly but without `data: [DONE]`.
    NoDone,
    /// The stream ended (`[DONE]`) without one chunk carrying text: nothing to time a first token
    /// by. Counting it a success would put a TTFT of 0 into the statistics.
    NoOutput,
    /// The response broke a size bound: a head over 64 KiB (interim `1xx` included) or an SSE
    /// event over 8 MiB.
    TooLarge,
    /// More text chunks (or text bytes) than `max_tokens` can produce, past a margin: the stream
    /// was cut there (an engine that ignores `max_tokens`, or a server streaming without end).
    OverMaxTokens,
    /// `usage.completion_tokens` the request cannot have: above `max_tokens`, or 0 for a response
    /// that carried text. The engine's count is not taken.
    ImplausibleUsage,
    /// On a reused keep-alive connection, more bytes followed the response: what was read may be
    /// a response the server sent without a request, so it is not counted as this one's answer.
    UnsolicitedResponse,
}

impl FailureKind {
    /// The key in [`ScenarioResult::errors`](super::ScenarioResult::errors).
    pub fn key(self) -> String {
        match self {
            FailureKind::Http(s) => format!("http_{s}"),
            FailureKind::ErrorEvent => "sse_error_event".into(),
            FailureKind::MalformedEvent => "malformed_event".into(),
            FailureKind::Connection => "connection_error".into(),
            FailureKind::ConnectionReset => "connection_reset".into(),
            FailureKind::Timeout => "timeout".into(),
            FailureKind::ShortOutput => "short_output".into(),
            FailureKind::NoDone => "stream_ended_without_done".into(),
            FailureKind::NoOutput => "no_output_tokens".into(),
            FailureKind::TooLarge => "response_too_large".into(),
            FailureKind::OverMaxTokens => "output_over_max_tokens".into(),
            FailureKind::ImplausibleUsage => "implausible_usage".into(),
            FailureKind::UnsolicitedResponse => "unsolicited_response".into(),
        }
    }
}

/// A failed request's kind and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

/// What one request measured. Times are offsets from the start of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestRecord {
    /// Position of the prompt in the scenario.
    pub index: u32,
    /// Prompt length in tokens (from the dataset).
    pub input_len: u32,
    /// The requested `max_tokens`.
    pub max_tokens: u32,
    /// When the request was due. Latencies are measured from here (no coordinated omission).
    pub scheduled: Duration,
    /// When the request was handed to the connection.
    pub sent: Duration,
    /// When the first chunk carrying text arrived.
    pub first_token: Option<Duration>,
    /// When the stream ended (`[DONE]` read) or the request failed.
    pub end: Duration,
    /// Gaps between successive text-bearing chunks, in nanoseconds.
    pub itl_ns: Vec<u64>,
    /// Number of text-bearing chunks.
    pub chunks: u32,
    /// `usage.completion_tokens`, when the server sent usage.
    pub usage_output_tokens: Option<u32>,
    /// `usage.prompt_tokens`, when the server sent usage.
    pub usage_prompt_tokens: Option<u32>,
    /// The generated text.
    pub text: String,
    pub finish_reason: Option<String>,
    pub failure: Option<Failure>,
    /// The request's own `model` (a LoRA adapter), when it was not the run's.
    pub model: Option<String>,
    /// The conversation and turn (from 0) of a multi-turn run.
    pub turn: Option<(u32, u32)>,
}

impl RequestRecord {
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// Time to first token, seconds, from the scheduled send time; `None` when no token arrived.
    pub fn ttft(&self) -> Option<f64> {
        self.first_token
            .map(|t| t.saturating_sub(self.scheduled).as_secs_f64())
    }

    /// End-to-end latency, seconds, from the scheduled send time.
    pub fn e2el(&self) -> f64 {
        self.end.saturating_sub(self.scheduled).as_secs_f64()
    }
}
