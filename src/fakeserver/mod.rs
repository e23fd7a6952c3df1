//! A fake OpenAI-compatible streaming server for tests, benchmarks and demos: `/v1/completions`
//! and `/v1/chat/completions` (SSE), `/health`, `/v1/models`, `/tokenize`, `/detokenize` and
//! `/metrics`, on 127.0.0.1 with knobs for time to first token, per-token delay, tokens per chunk,
//! usage on/off and faults (HTTP 500, in-band error event, malformed JSON, mid-stream close,
//! stall, missing `[DONE]`). It measures its own truth — the TTFT and chunk gaps it actually
//! produced — so tests can hold the client's numbers against it.
//!
//! Every token is the text `" tok"`; a request always gets exactly `max_tokens` tokens (as with
//! `ignore_eos`). Chunk bytes are rendered once per request and sent as shared `Bytes`; chunk
//! times follow absolute deadlines, so delays never drift.
//!
//! The client benchmark uses its [`fast`] shape (pre-rendered bytes, kernel receive times). The
//! module is built only with the `fake-server` feature: tests, benches and examples get it
//! through the crate's dev-dependency on itself; `perfgate fake-server` needs
//! `cargo build --features fake-server`.

pub mod fast;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// A way for a request to go wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fault {
    #[default]
    None,
    /// Answer HTTP 500 with a JSON error body.
    Http500,
    /// Stream `after` tokens, then an in-band `{"error": …}` event and `[DONE]`.
    ErrorEvent { after: u32 },
    /// Stream `after` tokens, then an event that is not JSON.
    Malformed { after: u32 },
    /// Stream `after` tokens, then break the connection mid-body.
    Close { after: u32 },
    /// Stream `after` tokens, then send nothing more (until the client gives up).
    Stall { after: u32 },
    /// Stream everything but end the body without `data: [DONE]`.
    NoDone,
}

impl std::str::FromStr for Fault {
    type Err = String;
    /// `none`, `http500`, `error-event[:N]`, `malformed[:N]`, `close[:N]`, `stall[:N]`, `no-done`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, n) = match s.split_once(':') {
            Some((a, b)) => (a, b.parse::<u32>().map_err(|e| format!("{s}: {e}"))?),
            None => (s, 1),
        };
        Ok(match name {
            "none" => Fault::None,
            "http500" => Fault::Http500,
            "error-event" => Fault::ErrorEvent { after: n },
            "malformed" => Fault::Malformed { after: n },
            "close" => Fault::Close { after: n },
            "stall" => Fault::Stall { after: n },
            "no-done" => Fault::NoDone,
            _ => return Err(format!(
                "unknown fault `{s}` (none, http500, error-event[:N], malformed[:N], close[:N], stall[:N], no-done)"
            )),
        })
    }
}

/// The server's behaviour.
#[derive(Debug, Clone)]
pub struct FakeConfig {
    /// Delay from receiving a request to its first token.
    pub ttft: Duration,
    /// Delay between successive tokens.
    pub itl: Duration,
    /// Tokens per SSE chunk (≥ 1); chunks then come every `itl × tokens_per_chunk`.
    pub tokens_per_chunk: u32,
    /// Send `usage` (completions: in the final chunk; chat: a separate `choices: []` chunk).
    pub usage: bool,
    pub fault: Fault,
    /// Apply the fault to every `fault_every`-th request (1 = all), counting from the first.
    pub fault_every: u64,
    /// The model name in `/v1/models`.
    pub model: String,
    /// `max_tokens` when a request does not say.
    pub default_max_tokens: u32,
}

impl Default for FakeConfig {
    fn default() -> Self {
        FakeConfig {
            ttft: Duration::from_millis(50),
            itl: Duration::from_millis(10),
            tokens_per_chunk: 1,
            usage: true,
            fault: Fault::None,
            fault_every: 1,
            model: "fake-model".into(),
            default_max_tokens: 16,
        }
    }
}

/// What the server itself measured.
#[derive(Debug, Default)]
struct TruthCounters {
    requests: AtomicU64,
    completed: AtomicU64,
    tokens: AtomicU64,
    ttft_ns: AtomicU64,
    ttft_count: AtomicU64,
    gap_ns: AtomicU64,
    gap_count: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    /// Every TTFT, ns (8 bytes a request).
    ttfts: std::sync::Mutex<Vec<u64>>,
}

/// A snapshot of the server's own measurements.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Truth {
    /// Generation requests received.
    pub requests: u64,
    /// Streams that reached `[DONE]` (or their clean end for `NoDone`).
    pub completed: u64,
    /// Tokens sent.
    pub tokens: u64,
    /// Mean time from a request's arrival to its first token chunk, ms.
    pub mean_ttft_ms: f64,
    /// Median of the same, ms.
    pub median_ttft_ms: f64,
    /// Mean gap between successive token chunks of a stream, ms.
    pub mean_chunk_gap_ms: f64,
    /// Most generation requests in flight at once.
    pub max_in_flight: u64,
}

impl TruthCounters {
    fn snapshot(&self) -> Truth {
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mean = |s: &AtomicU64, c: &AtomicU64| {
            let c = ld(c);
            if c == 0 {
                0.0
            } else {
                ld(s) as f64 / c as f64 / 1e6
            }
        };
        Truth {
            requests: ld(&self.requests),
            completed: ld(&self.completed),
            tokens: ld(&self.tokens),
            mean_ttft_ms: mean(&self.ttft_ns, &self.ttft_count),
            median_ttft_ms: {
                let mut v = self.ttfts.lock().map(|v| v.clone()).unwrap_or_default();
                v.sort_unstable();
                match v.len() {
                    0 => 0.0,
                    n if n % 2 == 1 => v[n / 2] as f64 / 1e6,
                    n => (v[n / 2 - 1] + v[n / 2]) as f64 / 2e6,
                }
            },
            mean_chunk_gap_ms: mean(&self.gap_ns, &self.gap_count),
            max_in_flight: ld(&self.max_in_flight),
        }
    }
}

struct Shared {
    cfg: FakeConfig,
    truth: TruthCounters,
    /// The last generation request: its path, headers and JSON body (for tests of what a client
    /// sends).
    last: std::sync::Mutex<Option<SeenRequest>>,
}

/// A generation request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenRequest {
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

/// A running fake server. Dropping it stops it.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeServer {
    /// Start on 127.0.0.1:`port` (0 = any free port) on the current tokio runtime.
    pub async fn start(cfg: FakeConfig, port: u16) -> std::io::Result<FakeServer> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            cfg: sanitize(cfg),
            truth: TruthCounters::default(),
            last: std::sync::Mutex::new(None),
        });
        let (stop, stop_rx) = watch::channel(false);
        tokio::spawn(accept_loop(listener, shared.clone(), stop_rx));
        Ok(FakeServer {
            addr,
            shared,
            stop,
            thread: None,
        })
    }

    /// Start on its own thread with its own single-threaded runtime, so it does not share a
    /// scheduler with the code under test.
    pub fn start_in_thread(cfg: FakeConfig) -> std::io::Result<FakeServer> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("fakeserver".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                rt.block_on(async move {
                    match FakeServer::start(cfg, 0).await {
                        Ok(s) => {
                            let mut stopped = s.stop.subscribe();
                            let handle = (s.addr, s.shared.clone(), s.stop.clone());
                            let _ = tx.send(Ok(handle));
                            let _ = stopped.wait_for(|v| *v).await;
                            drop(s);
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                        }
                    }
                });
            })?;
        let (addr, shared, stop) = rx
            .recv()
            .map_err(|_| std::io::Error::other("fake server thread died"))??;
        Ok(FakeServer {
            addr,
            shared,
            stop,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The last generation request received, if any.
    pub fn last_request(&self) -> Option<SeenRequest> {
        self.shared
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// What the server measured so far.
    pub fn truth(&self) -> Truth {
        self.shared.truth.snapshot()
    }

    pub fn config(&self) -> &FakeConfig {
        &self.shared.cfg
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `perfgate fake-server`: serve on 127.0.0.1:`port` (0: any) until SIGINT or SIGTERM, calling
/// `ready` with the URL once listening; returns the server's truth at the end.
pub fn serve_until_signal(
    cfg: FakeConfig,
    port: u16,
    ready: impl FnOnce(&str),
) -> std::io::Result<Truth> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let server = FakeServer::start(cfg, port).await?;
        ready(&server.url());
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        Ok(server.truth())
    })
}

fn sanitize(mut cfg: FakeConfig) -> FakeConfig {
    cfg.tokens_per_chunk = cfg.tokens_per_chunk.max(1);
    cfg.fault_every = cfg.fault_every.max(1);
    cfg
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|v| *v) => return,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let stamps = Arc::new(Stamps::default());
            let io = Stamped {
                io: stream,
                stamps: stamps.clone(),
                shared: shared.clone(),
            };
            let svc = service_fn(move |req| handle(shared.clone(), stamps.clone(), req));
            let conn =
                hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(io), svc);
            tokio::select! {
                _ = conn => {}
                _ = stop.wait_for(|v| *v) => {}
            }
        });
    }
}

/// Per-connection write stamps. The stream task marks a token chunk as queued; the socket
/// wrapper ([`Stamped`]) records the truth when bytes next reach the socket, so the server's
/// TTFT and gaps include its own scheduling and write path, as a client would see them.
#[derive(Default)]
struct Stamps(std::sync::Mutex<StampState>);

#[derive(Default)]
struct StampState {
    /// Arrival time of a request whose first token is queued but not yet written.
    first_of: Option<Instant>,
    /// A later chunk is queued but not yet written.
    chunk: bool,
    last_write: Option<Instant>,
}

impl Stamps {
    fn mark_first(&self, arrived: Instant) {
        if let Ok(mut s) = self.0.lock() {
            s.first_of = Some(arrived);
            s.chunk = false;
            s.last_write = None;
        }
    }

    fn mark_chunk(&self) {
        if let Ok(mut s) = self.0.lock() {
            s.chunk = true;
        }
    }

    fn written(&self, t: &TruthCounters) {
        let Ok(mut s) = self.0.lock() else { return };
        if s.first_of.is_none() && !s.chunk {
            return;
        }
        let now = Instant::now();
        if let Some(arrived) = s.first_of.take() {
            let ns = now.duration_since(arrived).as_nanos() as u64;
            t.ttft_ns.fetch_add(ns, Ordering::Relaxed);
            t.ttft_count.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut v) = t.ttfts.lock() {
                v.push(ns);
            }
        } else if let Some(prev) = s.last_write {
            t.gap_ns.fetch_add(
                now.duration_since(prev).as_nanos() as u64,
                Ordering::Relaxed,
            );
            t.gap_count.fetch_add(1, Ordering::Relaxed);
        }
        s.chunk = false;
        s.last_write = Some(now);
    }
}

/// The connection's socket, stamping token writes into the truth.
struct Stamped {
    io: tokio::net::TcpStream,
    stamps: Arc<Stamps>,
    shared: Arc<Shared>,
}

impl tokio::io::AsyncRead for Stamped {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Stamped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            if n > 0 {
                self.stamps.written(&self.shared.truth);
            }
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = r {
            if n > 0 {
                self.stamps.written(&self.shared.truth);
            }
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// A response body fed from a channel; an `Err` item breaks the connection.
struct ChanBody(mpsc::Receiver<Result<Bytes, std::io::Error>>);

impl Body for ChanBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }
}

type BoxBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

fn full(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<BoxBody> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(
            Full::new(body.into())
                .map_err(|never: Infallible| match never {})
                .boxed(),
        )
        .expect("static response parts are valid")
}

fn json(status: StatusCode, v: serde_json::Value) -> Response<BoxBody> {
    full(status, "application/json", v.to_string())
}

async fn handle(
    shared: Arc<Shared>,
    stamps: Arc<Stamps>,
    req: Request<Incoming>,
) -> Result<Response<BoxBody>, Infallible> {
    let arrived = Instant::now();
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(full(StatusCode::BAD_REQUEST, "text/plain", e.to_string())),
    };
    let parse = || serde_json::from_slice::<serde_json::Value>(&body);
    if parts.method == Method::POST && path.ends_with("completions") {
        let seen = SeenRequest {
            path: path.clone(),
            headers: parts
                .headers
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                .collect(),
            body: parse().unwrap_or_default(),
        };
        *shared.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(seen);
    }
    let cfg = &shared.cfg;
    Ok(match (parts.method, path.as_str()) {
        (Method::GET, "/health") => json(StatusCode::OK, serde_json::json!({"status": "ok"})),
        (Method::GET, "/v1/models") => json(
            StatusCode::OK,
            serde_json::json!({"object": "list", "data": [{"id": cfg.model, "object": "model", "owned_by": "perfgate", "meta": {"n_vocab": 50_000}}]}),
        ),
        (Method::GET, "/metrics") => full(
            StatusCode::OK,
            "text/plain; version=0.0.4",
            metrics_text(&shared.truth),
        ),
        (Method::POST, "/tokenize") => match parse() {
            Ok(v) => {
                let text = v
                    .get("content")
                    .or_else(|| v.get("prompt"))
                    .and_then(|c| c.as_str())
                    .unwrap_or("");
                let ids: Vec<u32> = text.split_whitespace().map(word_id).collect();
                json(
                    StatusCode::OK,
                    serde_json::json!({"tokens": ids, "count": ids.len()}),
                )
            }
            Err(e) => json(
                StatusCode::BAD_REQUEST,
                serde_json::json!({"error": {"message": e.to_string()}}),
            ),
        },
        (Method::POST, "/detokenize") => match parse() {
            Ok(v) => {
                let n = v
                    .get("tokens")
                    .and_then(|t| t.as_array())
                    .map_or(0, |a| a.len());
                let content = vec!["tok"; n].join(" ");
                json(
                    StatusCode::OK,
                    serde_json::json!({"content": content, "prompt": content}),
                )
            }
            Err(e) => json(
                StatusCode::BAD_REQUEST,
                serde_json::json!({"error": {"message": e.to_string()}}),
            ),
        },
        (Method::POST, "/v1/completions") => generate(&shared, &stamps, arrived, parse(), false),
        (Method::POST, "/v1/chat/completions") => {
            generate(&shared, &stamps, arrived, parse(), true)
        }
        _ => json(
            StatusCode::NOT_FOUND,
            serde_json::json!({"error": {"message": format!("no route {path}")}}),
        ),
    })
}

/// The fake's tokenizer: one token per whitespace-separated word, id from the word's bytes.
fn word_id(w: &str) -> u32 {
    w.bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % 50_000
}

fn metrics_text(t: &TruthCounters) -> String {
    let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
    format!(
        "# TYPE fake_requests_total counter\nfake_requests_total {}\n\
         # TYPE fake_streams_completed_total counter\nfake_streams_completed_total {}\n\
         # TYPE fake_tokens_total counter\nfake_tokens_total {}\n\
         # TYPE fake_ttft_seconds summary\nfake_ttft_seconds_sum {}\nfake_ttft_seconds_count {}\n\
         # TYPE fake_chunk_gap_seconds summary\nfake_chunk_gap_seconds_sum {}\nfake_chunk_gap_seconds_count {}\n\
         # TYPE fake_requests_running gauge\nfake_requests_running {}\n",
        ld(&t.requests),
        ld(&t.completed),
        ld(&t.tokens),
        ld(&t.ttft_ns) as f64 / 1e9,
        ld(&t.ttft_count),
        ld(&t.gap_ns) as f64 / 1e9,
        ld(&t.gap_count),
        ld(&t.in_flight),
    )
}

/// Pre-rendered SSE frames of one request.
struct Frames {
    /// A chunk of `tokens_per_chunk` tokens.
    full: Bytes,
    /// A shorter last chunk, when `max_tokens` is not a multiple.
    rest: Option<(u32, Bytes)>,
    role: Option<Bytes>,
    finals: Bytes,
}

fn render(
    chat: bool,
    model: &str,
    per_chunk: u32,
    max_tokens: u32,
    usage: Option<(u64, u32)>,
) -> Frames {
    let model = serde_json::Value::from(model).to_string();
    let chunk = |k: u32| -> Bytes {
        let text = " tok".repeat(k as usize);
        let s = if chat {
            format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n")
        } else {
            format!("data: {{\"id\":\"cmpl-fake\",\"object\":\"text_completion\",\"created\":0,\"model\":{model},\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"logprobs\":null,\"finish_reason\":null}}]}}\n\n")
        };
        Bytes::from(s)
    };
    let rem = max_tokens % per_chunk;
    let usage_json = usage.map(|(p, c)| {
        format!(
            "{{\"prompt_tokens\":{p},\"completion_tokens\":{c},\"total_tokens\":{}}}",
            p + u64::from(c)
        )
    });
    let finals = if chat {
        let mut s = format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"length\"}}]}}\n\n");
        if let Some(u) = &usage_json {
            s.push_str(&format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":{model},\"choices\":[],\"usage\":{u}}}\n\n"));
        }
        s
    } else {
        let u = usage_json
            .map(|u| format!(",\"usage\":{u}"))
            .unwrap_or_default();
        format!("data: {{\"id\":\"cmpl-fake\",\"object\":\"text_completion\",\"created\":0,\"model\":{model},\"choices\":[{{\"index\":0,\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"length\"}}]{u}}}\n\n")
    };
    Frames {
        full: chunk(per_chunk),
        rest: (rem > 0).then(|| (rem, chunk(rem))),
        role: chat.then(|| Bytes::from(format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":null}},\"finish_reason\":null}}]}}\n\n"))),
        finals: Bytes::from(finals),
    }
}

fn generate(
    shared: &Arc<Shared>,
    stamps: &Arc<Stamps>,
    arrived: Instant,
    body: serde_json::Result<serde_json::Value>,
    chat: bool,
) -> Response<BoxBody> {
    let cfg = &shared.cfg;
    let v = match body {
        Ok(v) => v,
        Err(e) => {
            return json(
                StatusCode::BAD_REQUEST,
                serde_json::json!({"error": {"message": format!("invalid JSON body: {e}")}}),
            )
        }
    };
    let seq = shared.truth.requests.fetch_add(1, Ordering::Relaxed);
    let fault = if seq % cfg.fault_every == 0 {
        cfg.fault
    } else {
        Fault::None
    };
    if fault == Fault::Http500 {
        return json(
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({"error": {"message": "fake internal server error", "type": "InternalServerError", "code": 500}}),
        );
    }
    let max_tokens = v
        .get("max_tokens")
        .or_else(|| v.get("max_completion_tokens"))
        .and_then(|m| m.as_u64())
        .map_or(cfg.default_max_tokens, |m| {
            m.min(u64::from(u32::MAX)) as u32
        });
    let model = v
        .get("model")
        .and_then(|m| m.as_str())
        .unwrap_or(&cfg.model);
    let prompt_tokens = if chat {
        v.pointer("/messages/0/content")
            .and_then(|c| c.as_str())
            .map_or(0, |s| s.split_whitespace().count())
    } else {
        v.get("prompt")
            .and_then(|c| c.as_str())
            .map_or(0, |s| s.split_whitespace().count())
    } as u64;
    let frames = render(
        chat,
        model,
        cfg.tokens_per_chunk,
        max_tokens,
        cfg.usage.then_some((prompt_tokens, max_tokens)),
    );
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(stream(
        shared.clone(),
        stamps.clone(),
        arrived,
        frames,
        max_tokens,
        fault,
        tx,
    ));
    Response::builder()
        .status(StatusCode::OK)
        .header(http::header::CONTENT_TYPE, "text/event-stream")
        .header(http::header::CACHE_CONTROL, "no-cache")
        .body(BodyExt::boxed(ChanBody(rx)))
        .expect("static response parts are valid")
}

async fn stream(
    shared: Arc<Shared>,
    stamps: Arc<Stamps>,
    arrived: Instant,
    frames: Frames,
    max_tokens: u32,
    fault: Fault,
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    let t = &shared.truth;
    let running = t.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
    t.max_in_flight.fetch_max(running, Ordering::Relaxed);
    let _ = run_stream(&shared, &stamps, arrived, frames, max_tokens, fault, &tx).await;
    t.in_flight.fetch_sub(1, Ordering::Relaxed);
}

/// Returns `Err(())` when the client went away.
async fn run_stream(
    shared: &Shared,
    stamps: &Stamps,
    arrived: Instant,
    frames: Frames,
    max_tokens: u32,
    fault: Fault,
    tx: &mpsc::Sender<Result<Bytes, std::io::Error>>,
) -> Result<(), ()> {
    let cfg = &shared.cfg;
    let t = &shared.truth;
    let send = |b: Bytes| async move { tx.send(Ok(b)).await.map_err(|_| ()) };
    if let Some(role) = frames.role.clone() {
        send(role).await?;
    }
    let after = match fault {
        Fault::ErrorEvent { after }
        | Fault::Malformed { after }
        | Fault::Close { after }
        | Fault::Stall { after } => after,
        _ => u32::MAX,
    };
    let per = cfg.tokens_per_chunk;
    let mut sent_tokens = 0u32;
    let mut last: Option<Instant> = None;
    while sent_tokens < max_tokens && sent_tokens < after {
        let (k, bytes) = match &frames.rest {
            Some((rem, b)) if max_tokens - sent_tokens == *rem => (*rem, b.clone()),
            _ => (per, frames.full.clone()),
        };
        // The chunk is due when its last token is: ttft for the first token, then itl per token.
        let due = arrived + cfg.ttft + cfg.itl * (sent_tokens + k - 1);
        tokio::select! {
            _ = tokio::time::sleep_until(due) => {}
            _ = tx.closed() => return Err(()),
        }
        // The truth is taken when the socket write happens (see `Stamped`).
        if last.is_none() {
            stamps.mark_first(arrived);
        } else {
            stamps.mark_chunk();
        }
        send(bytes).await?;
        let now = Instant::now();
        last = Some(now);
        t.tokens.fetch_add(u64::from(k), Ordering::Relaxed);
        sent_tokens += k;
    }
    match fault {
        Fault::ErrorEvent { .. } => {
            send(Bytes::from_static(b"data: {\"error\":{\"message\":\"fake in-band error\",\"type\":\"InternalServerError\",\"code\":500}}\n\ndata: [DONE]\n\n")).await?;
            return Ok(());
        }
        Fault::Malformed { .. } => {
            send(Bytes::from_static(
                b"data: {\"choices\":[{\"text\": fake-malformed\n\ndata: [DONE]\n\n",
            ))
            .await?;
            return Ok(());
        }
        Fault::Close { .. } => {
            let _ = tx
                .send(Err(std::io::Error::other("fake mid-stream close")))
                .await;
            return Ok(());
        }
        Fault::Stall { .. } => {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(3600)) => {}
                _ = tx.closed() => {}
            }
            return Ok(());
        }
        _ => {}
    }
    send(frames.finals.clone()).await?;
    if fault != Fault::NoDone {
        send(Bytes::from_static(b"data: [DONE]\n\n")).await?;
    }
    t.completed.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse() {
        assert_eq!(
            "stall:3".parse::<Fault>().unwrap(),
            Fault::Stall { after: 3 }
        );
        assert_eq!("http500".parse::<Fault>().unwrap(), Fault::Http500);
        assert_eq!("close".parse::<Fault>().unwrap(), Fault::Close { after: 1 });
        assert!("boom".parse::<Fault>().is_err());
    }

    #[test]
    fn frames_are_valid_sse_json() {
        let f = render(true, "m\"x", 3, 7, Some((5, 7)));
        let mut all = Vec::new();
        all.extend_from_slice(f.role.as_ref().unwrap());
        all.extend_from_slice(&f.full);
        all.extend_from_slice(&f.rest.as_ref().unwrap().1);
        all.extend_from_slice(&f.finals);
        let events = crate::client::sse::decode_all([&all[..]]);
        assert_eq!(events.len(), 5);
        for e in &events {
            let v: serde_json::Value = serde_json::from_slice(&e.data).unwrap();
            assert_eq!(v["model"], "m\"x");
        }
        assert_eq!(f.rest.as_ref().unwrap().0, 1);
        let usage: serde_json::Value = serde_json::from_slice(&events[4].data).unwrap();
        assert_eq!(usage["usage"]["completion_tokens"], 7);
    }
}
