//! The measuring HTTP client: sends one streaming completion or chat request and turns what comes
//! back into a [`RequestRecord`] — send time, first-token time, every text chunk's gap, usage,
//! finish reason, or the failure and its kind. No retries, ever: every failure is data.
//!
//! Timestamps are taken once per read from the socket, right after its bytes are in; every SSE
//! event in that read shares it. The HTTP/1.1 framing ([`h1`]), the event framing ([`sse`])
//! and the JSON of each event ([`chunk`]) are decoded in place, so an event costs a scan of its
//! bytes and an append of its text. The load generator ([`load`]) schedules requests over it.

pub mod body;
pub mod chunk;
pub mod conversation;
pub mod h1;
pub mod load;
pub mod sse;
pub mod tokenize;

mod config;
mod reader;
mod stream;

use std::time::{Duration, Instant};

pub use config::{check_endpoint, parse_header, ClientConfig, ENDPOINTS};
use reader::{write_request, ResponseReader};
use stream::StreamState;

use crate::dataset::Prompt;
use crate::record::{Failure, FailureKind, RequestRecord};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid URL `{url}`: {message}")]
    Url { url: String, message: String },
    #[error("OPENAI_API_KEY holds a control character (CR, LF, …); it cannot be sent as a header")]
    ApiKey,
}

/// A streaming client for one endpoint. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Client {
    target: h1::Target,
    pool: h1::Pool,
    cfg: ClientConfig,
    chat: bool,
    /// `Authorization` header value from `OPENAI_API_KEY` (as vLLM's benchmark does). Never printed.
    authorization: Option<String>,
    /// Where the output limit comes from: each prompt's `max_tokens`, a fixed value set by
    /// `extra_body`, or none (an `extra_body` limit perfgate cannot read).
    limit: OutputLimit,
}

/// The `max_tokens` the server was asked for, as far as perfgate can tell.
#[derive(Debug, Clone, Copy, PartialEq)]
enum OutputLimit {
    PerPrompt,
    Fixed(u32),
    Unknown,
}

impl OutputLimit {
    fn of(extra_body: &serde_json::Map<String, serde_json::Value>) -> OutputLimit {
        let mut limit = OutputLimit::PerPrompt;
        for key in ["max_tokens", "max_completion_tokens"] {
            match extra_body.get(key) {
                None => {}
                Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
                    Some(n) if limit == OutputLimit::PerPrompt => limit = OutputLimit::Fixed(n),
                    Some(n) if limit == OutputLimit::Fixed(n) => {}
                    _ => return OutputLimit::Unknown,
                },
            }
        }
        limit
    }

    fn for_prompt(self, output_len: u32) -> Option<u32> {
        match self {
            OutputLimit::PerPrompt => Some(output_len),
            OutputLimit::Fixed(n) => Some(n),
            OutputLimit::Unknown => None,
        }
    }
}

/// The most text chunks a stream asked for `max_tokens` may carry: `max_tokens` plus a quarter
/// plus 16 (a chunk holds at least one token, but a server may split a token's bytes).
pub fn chunk_cap(max_tokens: u32) -> u32 {
    max_tokens.saturating_add(max_tokens / 4).saturating_add(16)
}

/// The most text bytes per allowed chunk (the longest tokens of real vocabularies are well below).
pub const TEXT_BYTES_PER_CHUNK: usize = 256;

/// The bounds of one stream's text, derived once per request from the `max_tokens` it asked for.
#[derive(Debug, Clone, Copy)]
struct TextCap {
    max_tokens: u32,
    /// [`chunk_cap`] of `max_tokens`.
    chunks: u32,
    /// `chunks` × [`TEXT_BYTES_PER_CHUNK`].
    bytes: usize,
}

impl TextCap {
    fn of(max_tokens: u32) -> TextCap {
        let chunks = chunk_cap(max_tokens);
        TextCap {
            max_tokens,
            chunks,
            bytes: chunks as usize * TEXT_BYTES_PER_CHUNK,
        }
    }
}

const MAX_MESSAGE: usize = 300;
/// How long a kept-alive connection is watched after a response before it is reused: bytes that
/// arrive in this time are a response nobody asked for (a server's second answer written right
/// after the first), and would otherwise pass for the next request's answer.
const STRAY_WATCH: Duration = Duration::from_millis(1);

impl Client {
    pub fn new(cfg: ClientConfig) -> Result<Self, ClientError> {
        let url_s = cfg.url();
        let target = h1::Target::parse(&url_s).map_err(|message| ClientError::Url {
            url: crate::redact::url(&url_s),
            message,
        })?;
        let pool = h1::Pool::new(
            target.addr,
            cfg.request_timeout.unwrap_or(Duration::from_secs(30)),
        );
        let authorization = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.trim().is_empty())
            .map(|k| format!("Bearer {}", k.trim()));
        if let Some(a) = &authorization {
            crate::redact::register(&a["Bearer ".len()..]);
        }
        // A CR or LF in the key would end the header and start another one of the key's choice.
        if authorization
            .as_deref()
            .is_some_and(|a| a.bytes().any(|b| b.is_ascii_control()))
        {
            return Err(ClientError::ApiKey);
        }
        let chat = cfg.is_chat();
        let limit = OutputLimit::of(&cfg.extra_body);
        Ok(Client {
            target,
            pool,
            cfg,
            chat,
            authorization,
            limit,
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// The JSON body for one prompt.
    pub fn body(&self, prompt: &Prompt) -> Vec<u8> {
        let mut m = serde_json::Map::new();
        let model = prompt.model.as_deref().unwrap_or(&self.cfg.model);
        m.insert("model".into(), model.into());
        if self.chat {
            let mut messages = serde_json::to_value(&prompt.history).unwrap_or_default();
            if let Some(all) = messages.as_array_mut() {
                all.push(serde_json::json!({"role": "user", "content": prompt.text}));
            }
            m.insert("messages".into(), messages);
        } else {
            m.insert("prompt".into(), prompt.text.clone().into());
        }
        m.insert("max_tokens".into(), prompt.output_len.into());
        if let Some(t) = self.cfg.temperature {
            m.insert("temperature".into(), t.into());
        }
        m.insert("stream".into(), true.into());
        m.insert(
            "stream_options".into(),
            serde_json::json!({"include_usage": true}),
        );
        if self.cfg.ignore_eos {
            m.insert("ignore_eos".into(), true.into());
        }
        for (k, v) in &self.cfg.extra_body {
            m.insert(k.clone(), v.clone());
        }
        serde_json::to_vec(&m).expect("a JSON map serializes")
    }

    /// Open up to `n` keep-alive connections before a run, so connection set-up is not part of
    /// the first requests' TTFT (servers are measured as clients that keep their connections see
    /// them). Failures are ignored: the measured requests will report them.
    pub async fn preconnect(&self, n: usize) {
        let want = n.saturating_sub(self.pool.idle());
        let opened = futures_util::future::join_all((0..want).map(|_| self.pool.connect())).await;
        for s in opened.into_iter().flatten() {
            self.pool.checkin_new(s);
        }
    }

    /// Send one request and measure it. `t0` is the start of the run (all times in the record are
    /// offsets from it); `scheduled` is when the request was due (`None`: when it is sent, i.e.
    /// latencies count from the send). Never panics, never returns early without a record:
    /// failures are recorded in [`RequestRecord::failure`].
    pub async fn send(
        &self,
        index: u32,
        prompt: &Prompt,
        t0: Instant,
        scheduled: Option<Instant>,
    ) -> RequestRecord {
        let body = self.body(prompt);
        let mut rec = RequestRecord {
            index,
            input_len: prompt.input_len,
            max_tokens: prompt.output_len,
            itl_ns: Vec::with_capacity(prompt.output_len.min(4096) as usize),
            model: prompt.model.clone(),
            ..Default::default()
        };
        let sent = Instant::now();
        rec.sent = sent.saturating_duration_since(t0);
        rec.scheduled = scheduled.map_or(rec.sent, |s| s.saturating_duration_since(t0));
        let id = self
            .cfg
            .request_id_prefix
            .as_ref()
            .map(|p| format!("{p}{index}"));
        let exchange = self.exchange(body, id.as_deref(), t0, &mut rec);
        let result = match self.cfg.request_timeout {
            None => exchange.await,
            Some(d) => {
                let deadline = tokio::time::Instant::from_std(sent + d);
                match tokio::time::timeout_at(deadline, exchange).await {
                    Ok(r) => r,
                    Err(_) => Err(fail(
                        FailureKind::Timeout,
                        "no complete response within --request-timeout".into(),
                    )),
                }
            }
        };
        if let Err(f) = result {
            rec.failure = Some(f);
            rec.end = Instant::now().saturating_duration_since(t0);
        }
        rec
    }

    async fn exchange(
        &self,
        body: Vec<u8>,
        request_id: Option<&str>,
        t0: Instant,
        rec: &mut RequestRecord,
    ) -> Result<(), Failure> {
        // Once the server was seen sending bytes nobody asked for, no connection is reused.
        let keep_alive = self.cfg.keep_alive && !self.pool.strays_seen();
        let connect_err = |e: std::io::Error| {
            fail(
                FailureKind::Connection,
                format!("cannot connect to {}: {e}", self.target.addr),
            )
        };
        let (conn, reused) = if keep_alive {
            self.pool.checkout().await
        } else {
            self.pool.connect().await.map(|c| (c, false))
        }
        .map_err(connect_err)?;
        let req = h1::request(
            &self.target,
            &body,
            keep_alive,
            self.authorization.as_deref(),
            &self.cfg.headers,
            request_id,
        );
        drop(body);
        // The server may answer before it has read the whole request (a 413 for a huge prompt):
        // then the answer is what counts, and the connection is not reused.
        let (request_whole, write_error) = match write_request(&conn, &req).await {
            Ok(whole) => (whole, None),
            Err(e) => (false, Some(e)),
        };
        drop(req);

        let cap = self.limit.for_prompt(rec.max_tokens).map(TextCap::of);
        let sent_at = t0 + rec.sent;
        let mut reader = ResponseReader::new(
            StreamState::new(rec, t0, self.chat, cap),
            sent_at,
            write_error,
        );
        reader.run(&conn).await?;
        let Some(head) = reader.head.take() else {
            return Err(fail(
                FailureKind::Connection,
                "no response from the server".into(),
            ));
        };
        let reusable = request_whole && !head.close && reader.body.done();
        if keep_alive && (reusable || reader.body.extra) {
            // The response is over; did anything follow it? Extra bytes in its last read, or any
            // within STRAY_WATCH after it, are a response nobody asked for, or this request's
            // real answer after a stray that was read in its place.
            if reader.body.extra || self.stray_follows(&conn).await {
                self.pool.saw_strays();
                if reused && head.success() {
                    return Err(fail(
                        FailureKind::UnsolicitedResponse,
                        "more bytes followed the response on a reused keep-alive connection: \
                         the answer read may be one the server sent without a request \
                         (connections are no longer reused)"
                            .into(),
                    ));
                }
            } else {
                self.pool.checkin(conn);
            }
        }
        if !head.success() {
            let text = String::from_utf8_lossy(&reader.error_body);
            return Err(fail(
                FailureKind::Http(head.status),
                format!(
                    "HTTP {}: {}",
                    head.status,
                    crate::redact::untrusted(text.trim())
                ),
            ));
        }
        reader.finish_stream()?;
        self.check_output(reader.st.rec)
    }

    /// The checks of a complete stream's output against what was asked: a plausible usage, and
    /// with ignore_eos every token of `max_tokens`.
    fn check_output(&self, rec: &RequestRecord) -> Result<(), Failure> {
        if let Some(f) = implausible_usage(rec, self.limit.for_prompt(rec.max_tokens)) {
            return Err(f);
        }
        // With ignore_eos the server owes exactly max_tokens; fewer is not a success (vLLM
        // shortens an output that would run past the context, without an error).
        if self.cfg.ignore_eos {
            if let Some(got) = rec.usage_output_tokens.filter(|&u| u < rec.max_tokens) {
                return Err(fail(
                    FailureKind::ShortOutput,
                    format!(
                        "asked for {} tokens with ignore_eos, the server generated {got} \
                         (finish_reason {}, prompt {} tokens): prompt + max_tokens likely \
                         exceeds the server's context length",
                        rec.max_tokens,
                        rec.finish_reason.as_deref().unwrap_or("none"),
                        rec.usage_prompt_tokens
                            .map_or("?".to_string(), |p| p.to_string()),
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl Client {
    /// Whether bytes (not the end of the stream) arrive on `conn` within [`STRAY_WATCH`].
    async fn stray_follows(&self, conn: &tokio::net::TcpStream) -> bool {
        let deadline = tokio::time::Instant::now() + STRAY_WATCH;
        loop {
            match tokio::time::timeout_at(deadline, conn.readable()).await {
                Err(_) | Ok(Err(_)) => return false,
                Ok(Ok(())) => match h1::idle_state(conn) {
                    h1::Idle::Stray => return true,
                    h1::Idle::Closed => return false,
                    // A spurious wake-up: clear it and wait on.
                    h1::Idle::Quiet => {
                        let _ = conn.try_io(tokio::io::Interest::READABLE, || {
                            Err::<(), _>(std::io::ErrorKind::WouldBlock.into())
                        });
                    }
                },
            }
        }
    }
}

/// A `usage.completion_tokens` that cannot be the request's: above `max_tokens` (the API's hard
/// limit), or 0 for a response that carried text. The engine's word would inflate (or zero) its
/// own throughput, so the request is a failure of its own kind.
fn implausible_usage(rec: &RequestRecord, max_tokens: Option<u32>) -> Option<Failure> {
    let used = rec.usage_output_tokens?;
    let msg = if let Some(m) = max_tokens.filter(|&m| used > m) {
        format!("usage.completion_tokens is {used}, above the max_tokens {m} asked for")
    } else if used == 0 && !rec.text.is_empty() {
        format!(
            "usage.completion_tokens is 0 for a response of {} text chunks",
            rec.chunks
        )
    } else {
        return None;
    };
    Some(fail(FailureKind::ImplausibleUsage, msg))
}

fn fail(kind: FailureKind, mut message: String) -> Failure {
    if message.len() > MAX_MESSAGE {
        let mut cut = MAX_MESSAGE;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push('…');
    }
    Failure { kind, message }
}

#[cfg(test)]
mod tests;
