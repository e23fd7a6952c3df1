//! The measuring HTTP client: sends one streaming completion or chat request and turns what comes
//! back into a [`RequestRecord`] — send time, first-token time, every text chunk's gap, usage,
//! finish reason, or the failure and its kind. No retries, ever: every failure is data.
//!
//! Timestamps are taken once per body chunk, right after its bytes are read; every SSE event in
//! that chunk shares it. Events are parsed with borrowed serde structs, so a chunk costs one
//! timestamp, one small JSON parse and an append of its text.

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, Instant};

use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::dataset::Prompt;
use crate::metrics::{Failure, FailureKind, RequestRecord};
use crate::sse;

/// How to talk to the server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// e.g. `http://127.0.0.1:8000` (a trailing `/` is fine).
    pub base_url: String,
    /// `/v1/completions` or `/v1/chat/completions`.
    pub endpoint: String,
    /// The `model` field of the requests (`--served-model-name`, else `--model`).
    pub model: String,
    pub temperature: f64,
    pub ignore_eos: bool,
    /// Per-request deadline, from the send time. `None`: wait forever (like vLLM's 6 h).
    pub request_timeout: Option<Duration>,
    /// Extra JSON fields merged into every request body (e.g. `cache_prompt: false`).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
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
            temperature: 0.0,
            ignore_eos: false,
            request_timeout: None,
            extra_body: serde_json::Map::new(),
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

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot build the HTTP client: {0}")]
    Build(String),
    #[error("invalid URL `{url}`: {message}")]
    Url { url: String, message: String },
}

/// A streaming client for one endpoint. Cheap to share behind an `Arc`.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    url: reqwest::Url,
    cfg: ClientConfig,
    chat: bool,
}

const MAX_MESSAGE: usize = 300;
/// How long the body may take to end after `[DONE]`.
const DRAIN_GRACE: Duration = Duration::from_millis(100);

impl Client {
    pub fn new(cfg: ClientConfig) -> Result<Self, ClientError> {
        let url_s = cfg.url();
        let url = reqwest::Url::parse(&url_s).map_err(|e| ClientError::Url {
            url: url_s.clone(),
            message: e.to_string(),
        })?;
        let mut http = reqwest::Client::builder().no_proxy().tcp_nodelay(true);
        if !cfg.keep_alive {
            // See `ClientConfig::keep_alive`: a fresh connection per request.
            http = http.pool_max_idle_per_host(0);
        }
        let http = http
            .connect_timeout(cfg.request_timeout.unwrap_or(Duration::from_secs(30)))
            .build()
            .map_err(|e| ClientError::Build(e.to_string()))?;
        let chat = cfg.is_chat();
        Ok(Client {
            http,
            url,
            cfg,
            chat,
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// The JSON body for one prompt.
    pub fn body(&self, prompt: &Prompt) -> Vec<u8> {
        let mut m = serde_json::Map::new();
        m.insert("model".into(), self.cfg.model.clone().into());
        if self.chat {
            m.insert(
                "messages".into(),
                serde_json::json!([{"role": "user", "content": prompt.text}]),
            );
        } else {
            m.insert("prompt".into(), prompt.text.clone().into());
        }
        m.insert("max_tokens".into(), prompt.output_len.into());
        m.insert("temperature".into(), self.cfg.temperature.into());
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

    /// Open up to `n` keep-alive connections before a run, with concurrent `GET /v1/models`
    /// requests whose answers are read and dropped, so connection set-up is not part of the first
    /// requests' TTFT (servers are measured as clients that keep their connections see them).
    /// Failures are ignored: the measured requests will report them.
    pub async fn preconnect(&self, n: usize) {
        let mut url = self.url.clone();
        url.set_path("/v1/models");
        url.set_query(None);
        let one = |url: reqwest::Url| async move {
            let fut = async {
                if let Ok(mut resp) = self.http.get(url).send().await {
                    while let Ok(Some(_)) = resp.chunk().await {}
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(10), fut).await;
        };
        futures_util::future::join_all((0..n).map(|_| one(url.clone()))).await;
    }

    /// Send one request and measure it. `t0` is the start of the run (all times in the record are
    /// offsets from it); `scheduled` is when the request was due (`None`: now, i.e. latencies
    /// count from the send). Never panics, never returns early without a record: failures are
    /// recorded in [`RequestRecord::failure`].
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
            ..Default::default()
        };
        let sent = Instant::now();
        rec.sent = sent.saturating_duration_since(t0);
        rec.scheduled = scheduled.map_or(rec.sent, |s| s.saturating_duration_since(t0));
        let deadline = self
            .cfg
            .request_timeout
            .map(|d| tokio::time::Instant::from_std(sent + d));
        let failure = self.exchange(body, t0, deadline, &mut rec).await;
        if let Err(f) = failure {
            rec.failure = Some(f);
            rec.end = Instant::now().saturating_duration_since(t0);
        }
        rec
    }

    async fn exchange(
        &self,
        body: Vec<u8>,
        t0: Instant,
        deadline: Option<tokio::time::Instant>,
        rec: &mut RequestRecord,
    ) -> Result<(), Failure> {
        let req = self
            .http
            .post(self.url.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "text/event-stream")
            .body(body)
            .send();
        let mut resp = within(deadline, req)
            .await?
            .map_err(|e| fail(classify(&e, FailureKind::Connection), chain(&e)))?;
        let status = resp.status();
        if !status.is_success() {
            let mut text = Vec::new();
            // Read a bounded part of the error body; its failure does not matter.
            while text.len() < 4096 {
                match within(deadline, resp.chunk()).await {
                    Ok(Ok(Some(c))) => text.extend_from_slice(&c),
                    _ => break,
                }
            }
            let body = String::from_utf8_lossy(&text);
            return Err(fail(
                FailureKind::Http(status.as_u16()),
                format!("HTTP {}: {}", status.as_u16(), body.trim()),
            ));
        }

        let mut st = StreamState {
            rec,
            t0,
            last: None,
            done: false,
            failure: None,
            chat: self.chat,
        };
        let mut dec = sse::Decoder::new();
        loop {
            let next = if st.done {
                // After [DONE], give the body a moment to end so the connection can be reused;
                // a server that keeps it open does not hold the request.
                match tokio::time::timeout(DRAIN_GRACE, resp.chunk()).await {
                    Ok(Ok(Some(_))) => continue,
                    _ => break,
                }
            } else {
                within(deadline, resp.chunk()).await
            };
            let now = Instant::now();
            match next {
                Err(f) => return Err(f),
                Ok(Err(e)) => {
                    return Err(fail(classify(&e, FailureKind::ConnectionReset), chain(&e)))
                }
                Ok(Ok(Some(bytes))) => dec.feed(&bytes, |ev| st.event(ev, now)),
                Ok(Ok(None)) => {
                    dec.finish(|ev| st.event(ev, now));
                    break;
                }
            }
            if let Some(f) = st.failure.take() {
                return Err(f);
            }
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
        Ok(())
    }
}

/// Run `fut` until `deadline` (if any); a missed deadline is a timeout failure.
async fn within<F: std::future::Future>(
    deadline: Option<tokio::time::Instant>,
    fut: F,
) -> Result<F::Output, Failure> {
    match deadline {
        None => Ok(fut.await),
        Some(d) => tokio::time::timeout_at(d, fut).await.map_err(|_| {
            fail(
                FailureKind::Timeout,
                "no complete response within --request-timeout".into(),
            )
        }),
    }
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

fn classify(e: &reqwest::Error, otherwise: FailureKind) -> FailureKind {
    if e.is_timeout() {
        FailureKind::Timeout
    } else if e.is_connect() {
        FailureKind::Connection
    } else {
        otherwise
    }
}

/// An error and its sources, one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        src = c.source();
    }
    s
}

struct StreamState<'r> {
    rec: &'r mut RequestRecord,
    t0: Instant,
    last: Option<Instant>,
    done: bool,
    failure: Option<Failure>,
    chat: bool,
}

impl StreamState<'_> {
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
        let data = trim_ascii(ev.data);
        if data == b"[DONE]" {
            self.done = true;
            self.rec.end = now.saturating_duration_since(self.t0);
            return;
        }
        if data.is_empty() {
            return;
        }
        let chunk: StreamChunk<'_> = match serde_json::from_slice(data) {
            Ok(c) => c,
            Err(e) => {
                let shown = String::from_utf8_lossy(&data[..data.len().min(120)]);
                self.failure = Some(fail(
                    FailureKind::MalformedEvent,
                    format!("invalid event ({e}): {shown}"),
                ));
                return;
            }
        };
        if let Some(err) = chunk.error {
            self.failure = Some(fail(FailureKind::ErrorEvent, error_message(&err)));
            return;
        }
        if chunk.object.as_deref() == Some("error") {
            let msg = chunk.message.as_deref().unwrap_or("error object in stream");
            self.failure = Some(fail(FailureKind::ErrorEvent, msg.to_string()));
            return;
        }
        if let Some(u) = chunk.usage {
            if u.completion_tokens.is_some() {
                self.rec.usage_output_tokens = u.completion_tokens;
            }
            if u.prompt_tokens.is_some() {
                self.rec.usage_prompt_tokens = u.prompt_tokens;
            }
        }
        let Some(choice) = chunk.choices.0 else {
            return;
        };
        if let Some(fr) = choice.finish_reason {
            self.rec.finish_reason = Some(fr.into_owned());
        }
        let text = if self.chat {
            choice
                .delta
                .and_then(|d| d.content.filter(|c| !c.is_empty()).or(d.reasoning_content))
        } else {
            choice.text
        };
        let Some(text) = text.filter(|t| !t.is_empty()) else {
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
    }
}

fn trim_ascii(mut b: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = b {
        if first.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = b {
        if last.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

fn error_message(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => o
            .get("message")
            .and_then(|m| m.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    }
}

#[derive(Deserialize)]
struct StreamChunk<'a> {
    #[serde(default, borrow)]
    choices: FirstOnly<Choice<'a>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default, borrow)]
    object: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    message: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u32>,
    #[serde(default)]
    prompt_tokens: Option<u32>,
}

/// The first element of a JSON array (or nothing for `null`/`[]`), skipping the rest without
/// allocating a vector.
struct FirstOnly<T>(Option<T>);

impl<T> Default for FirstOnly<T> {
    fn default() -> Self {
        FirstOnly(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for FirstOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = FirstOnly<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FirstOnly(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(FirstOnly(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first = seq.next_element::<T>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstOnly(first))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
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
        };
        let v: serde_json::Value = serde_json::from_slice(&c.body(&p)).unwrap();
        assert_eq!(v["messages"][0]["content"], "hi");
        assert_eq!(v["max_tokens"], 7);
        assert_eq!(v["stream"], true);
        assert_eq!(v["stream_options"]["include_usage"], true);
        assert_eq!(v["ignore_eos"], true);
        assert_eq!(c.url.as_str(), "http://127.0.0.1:8000/v1/chat/completions");
    }
}
