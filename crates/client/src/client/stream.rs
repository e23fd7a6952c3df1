//! The record one stream's events build: each SSE event of a successful response is read as a
//! chunk and counted into the request's [`RequestRecord`] (first-token time, gaps, text, usage),
//! or ends the stream with a failure.

use std::time::Instant;

use super::{chunk, fail, sse, TextCap};
use crate::record::{Failure, FailureKind, RequestRecord};

pub(super) struct StreamState<'r> {
    pub(super) rec: &'r mut RequestRecord,
    t0: Instant,
    last: Option<Instant>,
    /// `data: [DONE]` was seen.
    pub(super) done: bool,
    /// The stream failed (an error event, a malformed chunk, too much text): nothing more counts.
    pub(super) failure: Option<Failure>,
    chat: bool,
    parser: chunk::Stream,
    /// Chunks that carried a chat `delta` content on the completions API (or completions `text`
    /// on the chat API): the wrong endpoint for the server's answers.
    other_api: u32,
    /// The bounds of the stream's text from the `max_tokens` the server was asked for; `None`:
    /// unknown.
    cap: Option<TextCap>,
}

impl<'r> StreamState<'r> {
    pub(super) fn new(
        rec: &'r mut RequestRecord,
        t0: Instant,
        chat: bool,
        cap: Option<TextCap>,
    ) -> Self {
        StreamState {
            rec,
            t0,
            last: None,
            done: false,
            failure: None,
            chat,
            parser: chunk::Stream::new(),
            other_api: 0,
            cap,
        }
    }

    pub(super) fn no_output_message(&self) -> String {
        if self.other_api > 0 {
            let (got, want) = if self.chat {
                ("completions `text`", "/v1/completions")
            } else {
                ("chat `delta`", "/v1/chat/completions")
            };
            format!(
                "the stream reached [DONE] without a text chunk; {} chunks carried {got} \
                 content (is the endpoint {want}?)",
                self.other_api
            )
        } else {
            "the stream reached [DONE] without a text chunk".into()
        }
    }

    /// The connection failed: before the response head a connection error, after it a reset.
    pub(super) fn broken(&self, streaming: bool, msg: &str) -> Failure {
        let kind = if streaming {
            FailureKind::ConnectionReset
        } else {
            FailureKind::Connection
        };
        fail(kind, msg.to_string())
    }

    #[inline]
    pub(super) fn event(&mut self, ev: sse::Event<'_>, now: Instant) {
        if self.failure.is_some() || self.done {
            return;
        }
        if ev.event == b"error" {
            self.failure = Some(fail(
                FailureKind::ErrorEvent,
                String::from_utf8_lossy(ev.data).into_owned(),
            ));
            return;
        }
        if !ev.event.is_empty() && ev.event != b"message" {
            return; // other event types carry no tokens
        }
        let data = ev.data.trim_ascii();
        if data == b"[DONE]" {
            self.done = true;
            self.rec.end = now.saturating_duration_since(self.t0);
            return;
        }
        if data.is_empty() {
            return;
        }
        let fields = match self.parser.parse(data) {
            Ok(chunk::Parsed::Fields(f)) => f,
            Ok(chunk::Parsed::Error(msg)) => {
                self.failure = Some(fail(FailureKind::ErrorEvent, msg));
                return;
            }
            Err(e) => {
                let shown = String::from_utf8_lossy(&data[..data.len().min(120)]);
                self.failure = Some(fail(
                    FailureKind::MalformedEvent,
                    format!("invalid event ({e}): {shown}"),
                ));
                return;
            }
        };
        if let Some((completion, prompt)) = fields.usage {
            if completion.is_some() {
                self.rec.usage_output_tokens = completion;
            }
            if prompt.is_some() {
                self.rec.usage_prompt_tokens = prompt;
            }
        }
        let Some(choice) = fields.choice else {
            return;
        };
        if let Some(fr) = choice.finish_reason {
            self.rec.finish_reason = Some(fr.into_owned());
        }
        let (text, other) = if self.chat {
            let c = choice
                .content
                .filter(|c| !c.is_empty())
                .or(choice.reasoning_content);
            (c, choice.text)
        } else {
            (choice.text, choice.content)
        };
        let Some(text) = text.filter(|t| !t.is_empty()) else {
            if other.is_some_and(|o| !o.is_empty()) {
                self.other_api += 1;
            }
            return; // role-only or empty chunk: not a token
        };
        match self.last {
            None => self.rec.first_token = Some(now.saturating_duration_since(self.t0)),
            Some(prev) => self
                .rec
                .itl_ns
                .push(now.saturating_duration_since(prev).as_nanos() as u64),
        }
        self.last = Some(now);
        self.rec.chunks += 1;
        self.rec.text.push_str(&text);
        if let Some(cap) = self.cap {
            if self.rec.chunks > cap.chunks || self.rec.text.len() > cap.bytes {
                self.failure = Some(fail(
                    FailureKind::OverMaxTokens,
                    format!(
                        "the stream carried more text than max_tokens {} allows (past {} \
                         text chunks or {} bytes): cut after {} chunks, {} bytes",
                        cap.max_tokens,
                        cap.chunks,
                        cap.bytes,
                        self.rec.chunks,
                        self.rec.text.len()
                    ),
                ));
            }
        }
    }
}
