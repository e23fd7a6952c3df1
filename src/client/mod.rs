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
pub mod stamp;
pub mod tokenize;

use std::time::{Duration, Instant};

use crate::dataset::Prompt;
use crate::record::{Failure, FailureKind, RequestRecord};

/// How to talk to the server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// e.g. `http://127.0.0.1:8000` (a trailing `/` is fine).
    pub base_url: String,
    /// `/v1/completions` or `/v1/chat/completions`.
    pub endpoint: String,
    /// The `model` field of the requests (`--served-model-name`, else `--model`).
    pub model: String,
    /// `temperature` of every request; `None`: not sent (the server's default, as vLLM 0.33's
    /// client does). `perfgate check`/`ab` send 0 (greedy).
    pub temperature: Option<f64>,
    pub ignore_eos: bool,
    /// Per-request deadline, from the send time. `None`: wait forever (like vLLM's 6 h).
    pub request_timeout: Option<Duration>,
    /// Extra JSON fields merged into every request body (e.g. `cache_prompt: false`).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Extra HTTP headers of every request (`--header KEY=VALUE`), checked by [`parse_header`].
    pub headers: Vec<(String, String)>,
    /// Each request's `x-request-id` header is this prefix and the request's index (vLLM's
    /// `--request-id-prefix`); `None`: no header.
    pub request_id_prefix: Option<String>,
    /// Reuse connections between requests and open them before the run, so TCP set-up stays out
    /// of TTFT (on by default). Turn it off for servers that announce keep-alive yet close the
    /// connection after a streamed response (llama.cpp's): a request sent on such a connection in
    /// that instant fails although the server never saw it.
    pub keep_alive: bool,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            base_url: "http://127.0.0.1:8000".into(),
            endpoint: "/v1/completions".into(),
            model: String::new(),
            temperature: Some(0.0),
            ignore_eos: false,
            request_timeout: None,
            extra_body: serde_json::Map::new(),
            headers: Vec::new(),
            request_id_prefix: None,
            keep_alive: true,
        }
    }
}

impl ClientConfig {
    /// True for the chat API (`…/chat/completions`).
    pub fn is_chat(&self) -> bool {
        self.endpoint
            .trim_end_matches('/')
            .ends_with("chat/completions")
    }

    /// The full URL of the endpoint.
    pub fn url(&self) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            self.endpoint.trim_start_matches('/')
        )
    }
}

/// The APIs perfgate measures (streaming completions). Others (`/v1/responses`,
/// `/v1/embeddings`, …) are refused up front instead of failing every request.
pub const ENDPOINTS: [&str; 2] = ["/v1/completions", "/v1/chat/completions"];

/// Check `--endpoint`: one of [`ENDPOINTS`], possibly under a path prefix
/// (`/proxy/v1/completions`).
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    let e = endpoint.trim_end_matches('/');
    if ENDPOINTS.iter().any(|ok| e.ends_with(ok)) {
        Ok(())
    } else {
        Err(format!(
            "--endpoint `{endpoint}` is not supported: perfgate measures the streaming \
             completions APIs ({})",
            ENDPOINTS.join(", ")
        ))
    }
}

/// One `--header KEY=VALUE`: a header name of token characters, a value without line breaks
/// (so no header can be smuggled into the request head).
pub fn parse_header(kv: &str) -> Result<(String, String), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("--header `{kv}`: expected KEY=VALUE"))?;
    let k = k.trim();
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if k.is_empty() || !k.chars().all(token) {
        return Err(format!("--header `{kv}`: `{k}` is not a valid header name"));
    }
    if v.contains(['\r', '\n', '\0']) {
        return Err(format!(
            "--header `{k}`: the value may not contain line breaks"
        ));
    }
    if ["host", "content-length", "transfer-encoding", "connection"]
        .contains(&k.to_ascii_lowercase().as_str())
    {
        return Err(format!("--header `{k}`: perfgate sets this header itself"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

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
/// How long the body may take to end after `[DONE]`.
const DRAIN_GRACE: Duration = Duration::from_millis(100);
/// How long the body of an error response may take.
const ERROR_BODY_GRACE: Duration = Duration::from_secs(2);
/// How much of an error response's body is kept for the message.
const ERROR_BODY_MAX: usize = 4096;
/// Size of the per-thread read buffer. Every read of every connection goes through it, so the
/// memory does not grow with concurrency; a read takes whatever the socket holds, up to this.
const READ_BUF: usize = 64 * 1024;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; READ_BUF]);
}

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
        let mut st = StreamState {
            rec,
            t0,
            last: None,
            done: false,
            failure: None,
            chat: self.chat,
            parser: chunk::Stream::new(),
            other_api: 0,
            cap,
        };
        let mut dec = sse::Decoder::new();
        let mut head_buf: Vec<u8> = Vec::new();
        let mut head: Option<h1::Head> = None;
        let mut body = h1::Body::new(h1::Framing::Close);
        let mut error_body: Vec<u8> = Vec::new();
        let mut drain_until: Option<tokio::time::Instant> = None;
        loop {
            // Wait for bytes. After `[DONE]` (or for an error body) only briefly: a server that
            // keeps the body open does not hold the request, the connection is just not reused.
            let ready = match drain_until {
                None => Ok(conn.readable().await),
                Some(d) => tokio::time::timeout_at(d, conn.readable()).await,
            };
            match ready {
                Err(_) => break, // grace over
                Ok(Err(_)) if drain_until.is_some() => break,
                Ok(Err(e)) => return Err(st.broken(head.is_some(), &e.to_string())),
                Ok(Ok(())) => {}
            }
            // A server that writes faster than we read keeps the socket ready forever; without
            // this the task would never yield, starving the others and the request's deadline.
            tokio::task::consume_budget().await;
            let draining = drain_until.is_some();
            let step = SCRATCH.with(|scratch| -> Result<Step, Failure> {
                let mut buf = scratch.borrow_mut();
                let (n, arrived) = match read_draining(&conn, &mut buf[..]) {
                    Ok(read) => read,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(Step::More),
                    Err(_) if draining => return Ok(Step::Eof),
                    Err(e) if head.is_none() && write_error.is_some() => {
                        return Err(sending_failed(write_error.as_ref(), &e))
                    }
                    Err(e) => return Err(st.broken(head.is_some(), &e.to_string())),
                };
                // The bytes' time is when the kernel received them (this thread may have
                // been busy with other streams since): never later than the read (`recv`
                // reads the clock after the data), and not before the send; else now.
                let now = arrived
                    .filter(|&t| t >= sent_at)
                    .unwrap_or_else(Instant::now);
                if n == 0 {
                    return Ok(Step::Eof);
                }
                let mut input = &buf[..n];
                if head.is_none() {
                    head_buf.extend_from_slice(input);
                    let parsed = h1::parse_head(&head_buf).map_err(|e| {
                        let kind = if e.too_long {
                            FailureKind::TooLarge
                        } else {
                            FailureKind::Connection
                        };
                        fail(kind, e.message)
                    })?;
                    let Some((h, len)) = parsed else {
                        return Ok(Step::More);
                    };
                    body = h1::Body::new(h.framing);
                    let rest = head_buf.len() - len;
                    input = &buf[n - rest..n];
                    head = Some(h);
                    head_buf = Vec::new();
                }
                let mut too_long = None;
                let framing = if head.as_ref().is_some_and(h1::Head::success) {
                    body.feed(input, |b| {
                        if let Err(e) = dec.feed(b, |ev| st.event(ev, now)) {
                            too_long = Some(e);
                        }
                    })
                } else {
                    body.feed(input, |b| {
                        let room = ERROR_BODY_MAX.saturating_sub(error_body.len());
                        error_body.extend_from_slice(&b[..b.len().min(room)]);
                    })
                };
                framing.map_err(|m| {
                    fail(
                        FailureKind::ConnectionReset,
                        format!("invalid response body: {m}"),
                    )
                })?;
                if let Some(f) = st.failure.take() {
                    return Err(f);
                }
                if let Some(e) = too_long {
                    return Err(fail(FailureKind::TooLarge, e.to_string()));
                }
                // An error body is kept up to its bound; the rest is not waited for.
                if error_body.len() >= ERROR_BODY_MAX {
                    return Ok(Step::Cut);
                }
                Ok(if body.done() { Step::End } else { Step::More })
            })?;
            match step {
                Step::More => {}
                Step::End => break,
                Step::Cut => {
                    if let Some(h) = head.as_mut() {
                        h.close = true; // the rest of the body is unread: not reusable
                    }
                    break;
                }
                Step::Eof => {
                    if head.is_none() {
                        if let Some(e) = &write_error {
                            return Err(sending_failed(Some(e), e));
                        }
                        return Err(fail(
                            FailureKind::Connection,
                            "the server closed the connection before answering".into(),
                        ));
                    }
                    let streaming = head.as_ref().is_some_and(h1::Head::success);
                    if !body.eof() && !st.done && streaming {
                        return Err(
                            st.broken(true, "the connection closed before the response ended")
                        );
                    }
                    if let Some(h) = head.as_mut() {
                        h.close = true; // closed: not reusable below
                    }
                    break;
                }
            }
            let error_status = head.as_ref().is_some_and(|h| !h.success());
            if drain_until.is_none() && (st.done || error_status) {
                let grace = if st.done {
                    DRAIN_GRACE
                } else {
                    ERROR_BODY_GRACE
                };
                drain_until = Some(tokio::time::Instant::now() + grace);
            }
        }
        let Some(head) = head else {
            return Err(fail(
                FailureKind::Connection,
                "no response from the server".into(),
            ));
        };
        let reusable = request_whole && !head.close && body.done();
        if keep_alive && (reusable || body.extra) {
            // The response is over; did anything follow it? Extra bytes in its last read, or any
            // within STRAY_WATCH after it, are a response nobody asked for, or this request's
            // real answer after a stray that was read in its place.
            if body.extra || self.stray_follows(&conn).await {
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
            let text = String::from_utf8_lossy(&error_body);
            return Err(fail(
                FailureKind::Http(head.status),
                format!(
                    "HTTP {}: {}",
                    head.status,
                    crate::redact::untrusted(text.trim())
                ),
            ));
        }
        if !st.done {
            dec.finish(|ev| st.event(ev, Instant::now()));
        }
        if let Some(f) = st.failure.take() {
            return Err(f);
        }
        if !st.done {
            return Err(fail(
                FailureKind::NoDone,
                format!(
                    "the stream ended without `data: [DONE]` after {} text chunks",
                    st.rec.chunks
                ),
            ));
        }
        if st.rec.first_token.is_none() {
            return Err(fail(FailureKind::NoOutput, st.no_output_message()));
        }
        if let Some(f) = implausible_usage(st.rec, self.limit.for_prompt(st.rec.max_tokens)) {
            return Err(f);
        }
        // With ignore_eos the server owes exactly max_tokens; fewer is not a success (vLLM
        // shortens an output that would run past the context, without an error).
        if self.cfg.ignore_eos {
            if let Some(got) = st
                .rec
                .usage_output_tokens
                .filter(|&u| u < st.rec.max_tokens)
            {
                return Err(fail(
                    FailureKind::ShortOutput,
                    format!(
                        "asked for {} tokens with ignore_eos, the server generated {got} \
                         (finish_reason {}, prompt {} tokens): prompt + max_tokens likely \
                         exceeds the server's context length",
                        st.rec.max_tokens,
                        st.rec.finish_reason.as_deref().unwrap_or("none"),
                        st.rec
                            .usage_prompt_tokens
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

/// Write the whole request, unless the server answers first: `Ok(false)` when bytes (or the
/// end of the connection) arrived before the request was all written. A server may refuse a
/// request by its head (413 for a body too large) and close without reading the body.
async fn write_request(conn: &tokio::net::TcpStream, mut req: &[u8]) -> std::io::Result<bool> {
    use tokio::io::Interest;
    loop {
        match conn.try_write(req) {
            Ok(n) => {
                req = &req[n..];
                if req.is_empty() {
                    return Ok(true);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        let ready = conn.ready(Interest::READABLE | Interest::WRITABLE).await?;
        if ready.is_readable() || ready.is_read_closed() {
            return Ok(false);
        }
    }
}

/// The request could not be written and no answer came: a connection error that says both.
fn sending_failed(write: Option<&std::io::Error>, read: &std::io::Error) -> Failure {
    let msg = match write {
        Some(w) => format!("sending the request failed: {w}"),
        None => format!("sending the request failed: {read}"),
    };
    fail(FailureKind::Connection, msg)
}

/// Read what the socket holds. A read that did not fill `buf` emptied the socket, so the
/// readiness is cleared with it (the reactor is edge-triggered, and tokio keeps any readiness
/// that arrived since): the next wait goes straight to the reactor instead of first spending a
/// `recv` on `EAGAIN`. That saves one system call per wake-up, i.e. per token event at a paced
/// server's rate.
fn read_draining(
    conn: &tokio::net::TcpStream,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<Instant>)> {
    use std::os::fd::AsRawFd;
    let mut got = None;
    let cap = buf.len();
    let r = conn.try_io(tokio::io::Interest::READABLE, || {
        let (n, at) = stamp::recv(conn.as_raw_fd(), buf)?;
        got = Some((n, at));
        if n > 0 && n < cap {
            Err(std::io::ErrorKind::WouldBlock.into())
        } else {
            Ok((n, at))
        }
    });
    match got {
        Some(n) => Ok(n),
        None => r,
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

/// What one read left the exchange with.
enum Step {
    More,
    End,
    Eof,
    /// An error body reached its bound: stop reading.
    Cut,
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

struct StreamState<'r> {
    rec: &'r mut RequestRecord,
    t0: Instant,
    last: Option<Instant>,
    done: bool,
    failure: Option<Failure>,
    chat: bool,
    parser: chunk::Stream,
    /// Chunks that carried a chat `delta` content on the completions API (or completions `text`
    /// on the chat API): the wrong endpoint for the server's answers.
    other_api: u32,
    /// The bounds of the stream's text from the `max_tokens` the server was asked for; `None`:
    /// unknown.
    cap: Option<TextCap>,
}

impl StreamState<'_> {
    fn no_output_message(&self) -> String {
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
    fn broken(&self, streaming: bool, msg: &str) -> Failure {
        let kind = if streaming {
            FailureKind::ConnectionReset
        } else {
            FailureKind::Connection
        };
        fail(kind, msg.to_string())
    }

    fn event(&mut self, ev: sse::Event<'_>, now: Instant) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn state_run(chat: bool, events: &[&str]) -> (RequestRecord, bool, Option<Failure>) {
        let mut rec = RequestRecord::default();
        let t0 = Instant::now();
        let mut st = StreamState {
            rec: &mut rec,
            t0,
            last: None,
            done: false,
            failure: None,
            chat,
            parser: chunk::Stream::new(),
            other_api: 0,
            cap: Some(TextCap::of(4)),
        };
        for (i, e) in events.iter().enumerate() {
            let (event, data) = match e.strip_prefix("error|") {
                Some(d) => (&b"error"[..], d.as_bytes()),
                None => (&b""[..], e.as_bytes()),
            };
            st.event(
                sse::Event { event, data },
                t0 + Duration::from_millis(10 * i as u64),
            );
        }
        let (done, failure) = (st.done, st.failure.take());
        (rec, done, failure)
    }

    #[test]
    fn completions_stream_counts_text_chunks() {
        let (r, done, f) = state_run(
            false,
            &[
                r#"{"choices":[{"index":0,"text":"Hel","finish_reason":null}]}"#,
                r#"{"choices":[{"index":0,"text":"lo\n","finish_reason":null}]}"#,
                r#"{"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":2}}"#,
                "[DONE]",
            ],
        );
        assert!(done && f.is_none());
        assert_eq!(r.text, "Hello\n");
        assert_eq!(r.chunks, 2);
        assert_eq!(r.first_token, Some(Duration::ZERO));
        assert_eq!(r.itl_ns, [10_000_000]);
        assert_eq!(r.end, Duration::from_millis(30));
        assert_eq!(
            (r.usage_output_tokens, r.usage_prompt_tokens),
            (Some(2), Some(4))
        );
        assert_eq!(r.finish_reason.as_deref(), Some("length"));
    }

    #[test]
    fn chat_role_chunk_is_not_a_token() {
        let (r, done, _) = state_run(
            true,
            &[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
                r#"{"choices":[],"usage":{"completion_tokens":1}}"#,
                "[DONE]",
            ],
        );
        assert!(done);
        assert_eq!(r.first_token, Some(Duration::from_millis(10)));
        assert_eq!(r.chunks, 1);
        assert_eq!(r.usage_output_tokens, Some(1));
    }

    #[test]
    fn in_band_errors_and_malformed_events_fail() {
        let (_, _, f) = state_run(
            false,
            &[r#"{"error":{"message":"out of memory","code":500}}"#],
        );
        assert_eq!(
            f.unwrap(),
            Failure {
                kind: FailureKind::ErrorEvent,
                message: "out of memory".into()
            }
        );
        let (_, _, f) = state_run(false, &[r#"{"object":"error","message":"bad","code":400}"#]);
        assert_eq!(f.unwrap().kind, FailureKind::ErrorEvent);
        let (_, _, f) = state_run(false, &["error|upstream died"]);
        assert_eq!(f.unwrap().message, "upstream died");
        let (_, _, f) = state_run(false, &[r#"{"choices":[{"text": oops"#]);
        assert_eq!(f.unwrap().kind, FailureKind::MalformedEvent);
        let (_, _, f) = state_run(false, &[r#"{"choices":5}"#]);
        assert_eq!(f.unwrap().kind, FailureKind::MalformedEvent);
    }

    #[test]
    fn the_output_limit_follows_extra_body() {
        let of = |v: serde_json::Value| OutputLimit::of(v.as_object().unwrap());
        assert_eq!(of(serde_json::json!({})), OutputLimit::PerPrompt);
        assert_eq!(
            of(serde_json::json!({"max_tokens": 9})),
            OutputLimit::Fixed(9)
        );
        assert_eq!(
            of(serde_json::json!({"max_tokens": 9, "max_completion_tokens": 9})),
            OutputLimit::Fixed(9)
        );
        assert_eq!(
            of(serde_json::json!({"max_tokens": 9, "max_completion_tokens": 8})),
            OutputLimit::Unknown
        );
        assert_eq!(
            of(serde_json::json!({"max_tokens": null})),
            OutputLimit::Unknown
        );
        assert_eq!(chunk_cap(4), 21);
        assert_eq!(chunk_cap(u32::MAX), u32::MAX);
        // Past the cap, the stream is cut.
        let ev = r#"{"choices":[{"index":0,"text":"a","finish_reason":null}]}"#;
        let (r, _, f) = state_run(false, &[ev; 30]);
        assert_eq!(f.unwrap().kind, FailureKind::OverMaxTokens);
        assert_eq!(r.chunks, 22);
    }

    #[test]
    fn body_asks_for_usage_and_ignore_eos() {
        let c = Client::new(ClientConfig {
            model: "m".into(),
            ignore_eos: true,
            endpoint: "/v1/chat/completions".into(),
            ..Default::default()
        })
        .unwrap();
        let p = Prompt {
            text: "hi".into(),
            input_len: 1,
            output_len: 7,
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::from_slice(&c.body(&p)).unwrap();
        assert_eq!(v["messages"][0]["content"], "hi");
        assert_eq!(v["max_tokens"], 7);
        assert_eq!(v["stream"], true);
        assert_eq!(v["stream_options"]["include_usage"], true);
        assert_eq!(v["ignore_eos"], true);
        assert_eq!(c.target.path, "/v1/chat/completions");
        assert_eq!(c.target.host, "127.0.0.1:8000");
    }
}
