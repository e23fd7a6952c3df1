//! The fast shape of the fake server, for the client benchmark (`benches/client.rs`):
//! pre-rendered SSE bytes, HTTP/1.1 chunked keep-alive, one tokio thread (pinned and prioritised
//! by the caller's hook), and its own truth statistics (TTFT and inter-token gaps measured at the
//! server: a request's start is the kernel's receive time of its first bytes, `SO_TIMESTAMPNS`, a
//! token's time is when its bytes are handed to the kernel).
//!
//! Two shapes: *paced* (a TTFT, then one write per token every `itl`, like a real engine) for the
//! accuracy runs, and *blast* (no delays, `events_per_write` SSE events per write) for the CPU and
//! throughput runs, where the server must outrun the client under test. It answers `GET` with
//! the model list and the two streaming endpoints; the knobs and faults of the tests are the
//! [`FakeServer`](super::FakeServer)'s.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::os::fd::{AsRawFd, RawFd};

use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::oneshot;

/// How the server answers a streaming request.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Time from the request's first byte to the first token (paced mode).
    pub ttft: Duration,
    /// Time between tokens (paced mode). Zero selects blast mode.
    pub itl: Duration,
    /// SSE events per write in blast mode.
    pub events_per_write: usize,
}

impl Config {
    pub fn paced(ttft: Duration, itl: Duration) -> Config {
        Config {
            ttft,
            itl,
            events_per_write: 1,
        }
    }

    pub fn blast(events_per_write: usize) -> Config {
        Config {
            ttft: Duration::ZERO,
            itl: Duration::ZERO,
            events_per_write: events_per_write.max(1),
        }
    }

    fn is_blast(&self) -> bool {
        self.itl.is_zero() && self.ttft.is_zero()
    }
}

/// What the server itself measured, over all streaming requests since start.
#[derive(Debug, Default, Clone)]
pub struct Truth {
    /// Per request: first byte of the request read → first token written, in ns.
    pub ttft_ns: Vec<u64>,
    /// Sum and count of gaps between consecutive token writes (pooled ITL).
    pub gap_sum_ns: u128,
    pub gap_count: u64,
    pub tokens: u64,
    pub requests: u64,
    /// Per request: (first byte of the request, first token written), for diagnosis.
    pub times: Vec<(Instant, Instant)>,
}

impl Truth {
    pub fn mean_ttft_ms(&self) -> f64 {
        if self.ttft_ns.is_empty() {
            return f64::NAN;
        }
        self.ttft_ns.iter().map(|&v| v as f64).sum::<f64>() / self.ttft_ns.len() as f64 / 1e6
    }

    /// Percentile with linear interpolation between ranks (numpy's default, as vLLM and SGLang use).
    pub fn ttft_percentile_ms(&self, p: f64) -> f64 {
        let mut v: Vec<f64> = self.ttft_ns.iter().map(|&x| x as f64 / 1e6).collect();
        percentile(&mut v, p)
    }

    pub fn mean_itl_ms(&self) -> f64 {
        if self.gap_count == 0 {
            return f64::NAN;
        }
        self.gap_sum_ns as f64 / self.gap_count as f64 / 1e6
    }
}

/// Percentile of `v` (sorted in place) with linear interpolation between ranks.
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

/// A running server; stops and joins its thread when dropped.
pub struct Server {
    pub addr: SocketAddr,
    /// Streaming requests received so far (counted when the request is parsed).
    pub arrived: Arc<AtomicU64>,
    truth: Arc<Mutex<Truth>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Start on 127.0.0.1:0 in a thread of its own, which first runs `on_thread` (the benchmark
    /// pins it to a core and raises its priority there).
    pub fn start(cfg: Config, on_thread: impl FnOnce() + Send + 'static) -> io::Result<Server> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = rt.block_on(async {
            let sock = TcpSocket::new_v4()?;
            sock.set_reuseaddr(true)?;
            sock.bind("127.0.0.1:0".parse().unwrap())?;
            sock.listen(4096)
        })?;
        let addr = listener.local_addr()?;
        let truth = Arc::new(Mutex::new(Truth::default()));
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let frames = Arc::new(Frames::new(cfg.events_per_write));
        let truth2 = truth.clone();
        let arrived = Arc::new(AtomicU64::new(0));
        let arrived2 = arrived.clone();
        let thread = std::thread::Builder::new()
            .name("fake-server".into())
            .spawn(move || {
                on_thread();
                rt.block_on(async move {
                    loop {
                        tokio::select! {
                            _ = &mut stop_rx => break,
                            acc = listener.accept() => {
                                let Ok((sock, _)) = acc else { continue };
                                let _ = sock.set_nodelay(true);
                                enable_rx_timestamps(&sock);
                                tokio::spawn(serve_conn(sock, cfg, frames.clone(), truth2.clone(), arrived2.clone()));
                            }
                        }
                    }
                });
                // Dropping the runtime cancels the connection tasks.
                drop(rt);
            })?;
        Ok(Server {
            addr,
            arrived,
            truth,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    pub fn requests_arrived(&self) -> u64 {
        self.arrived.load(Ordering::Relaxed)
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The truth so far.
    pub fn truth(&self) -> Truth {
        self.truth.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

const WORDS: [&str; 8] = [" the", " of", " and", " to", " in", " is", " that", " for"];
const HEAD_STREAM: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";

/// Pre-rendered bytes: `batch[k]` holds k+1 token events (completions or chat) in one HTTP chunk.
struct Frames {
    completions: Vec<Vec<u8>>,
    chat: Vec<Vec<u8>>,
    chat_role: Vec<u8>,
}

fn completion_event(text: &str, finish: Option<&str>) -> String {
    let finish = finish.map_or("null".to_string(), |f| format!("\"{f}\""));
    format!(
        "data: {{\"id\":\"cmpl-bench\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":\"bench\",\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"logprobs\":null,\"finish_reason\":{finish},\"stop_reason\":null}}]}}\n\n"
    )
}

fn chat_event(content: Option<&str>, role: bool, finish: Option<&str>) -> String {
    let finish = finish.map_or("null".to_string(), |f| format!("\"{f}\""));
    let delta = match (role, content) {
        (true, _) => "{\"role\":\"assistant\",\"content\":\"\"}".to_string(),
        (false, Some(c)) => format!("{{\"content\":\"{c}\"}}"),
        (false, None) => "{}".to_string(),
    };
    format!(
        "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"bench\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}]}}\n\n"
    )
}

fn usage_event(chat: bool, completion_tokens: u64) -> String {
    let object = if chat {
        "chat.completion.chunk"
    } else {
        "text_completion"
    };
    format!(
        "data: {{\"id\":\"cmpl-bench\",\"object\":\"{object}\",\"created\":1700000000,\"model\":\"bench\",\"choices\":[],\"usage\":{{\"prompt_tokens\":0,\"total_tokens\":{completion_tokens},\"completion_tokens\":{completion_tokens}}}}}\n\n"
    )
}

fn chunk(payload: &str) -> Vec<u8> {
    let mut v = format!("{:x}\r\n", payload.len()).into_bytes();
    v.extend_from_slice(payload.as_bytes());
    v.extend_from_slice(b"\r\n");
    v
}

impl Frames {
    fn new(max_batch: usize) -> Frames {
        let mut completions = Vec::with_capacity(max_batch);
        let mut chat = Vec::with_capacity(max_batch);
        for k in 1..=max_batch {
            let mut c = String::new();
            let mut h = String::new();
            for i in 0..k {
                let w = WORDS[i % WORDS.len()];
                c.push_str(&completion_event(w, None));
                h.push_str(&chat_event(Some(w), false, None));
            }
            completions.push(chunk(&c));
            chat.push(chunk(&h));
        }
        Frames {
            completions,
            chat,
            chat_role: chunk(&chat_event(None, true, None)),
        }
    }

    fn batch(&self, chat: bool, k: usize) -> &[u8] {
        if chat {
            &self.chat[k - 1]
        } else {
            &self.completions[k - 1]
        }
    }

    /// Final event(s), usage, [DONE] and the terminating zero-length chunk.
    fn tail(&self, chat: bool, n: u64, include_usage: bool) -> Vec<u8> {
        let mut s = if chat {
            chat_event(None, false, Some("length"))
        } else {
            completion_event("", Some("length"))
        };
        if include_usage {
            s.push_str(&usage_event(chat, n));
        }
        s.push_str("data: [DONE]\n\n");
        let mut v = chunk(&s);
        v.extend_from_slice(b"0\r\n\r\n");
        v
    }
}

struct Request {
    first_byte: Instant,
    get: bool,
    chat: bool,
    path_ok: bool,
    max_tokens: u64,
    include_usage: bool,
}

/// Find `"key"` in a JSON body and return the raw value text after the colon.
fn json_raw<'a>(body: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let pat = format!("\"{key}\"");
    let at = memchr::memmem::find(body, pat.as_bytes())? + pat.len();
    let rest = &body[at..];
    let colon = rest.iter().position(|&b| b == b':')?;
    let rest = &rest[colon + 1..];
    let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    Some(&rest[start..])
}

fn json_u64(body: &[u8], key: &str) -> Option<u64> {
    let raw = json_raw(body, key)?;
    let end = raw
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(raw.len());
    std::str::from_utf8(&raw[..end]).ok()?.parse().ok()
}

/// `SO_TIMESTAMPNS` (= `SCM_TIMESTAMPNS`) on Linux x86-64 and arm64.
const SO_TIMESTAMPNS: libc::c_int = 35;

/// Ask the kernel to stamp received data with its arrival time.
fn enable_rx_timestamps(sock: &TcpStream) {
    let one: libc::c_int = 1;
    // SAFETY: a valid socket and a c_int option value of the size passed.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_TIMESTAMPNS,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// `recvmsg` into `buf`, with the kernel's receive time of the data (when it reached the
/// server's host, before the server got round to reading it) as an `Instant`.
fn recv_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; every pointer set below outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: fd is an open socket, msg points at live buffers.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: walking the control messages the kernel wrote into `control`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                stamp = Some(ts);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let at = stamp.map(|ts| {
        let (real, mono) = (std::time::SystemTime::now(), Instant::now());
        let then = std::time::UNIX_EPOCH + Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        mono - real.duration_since(then).unwrap_or_default()
    });
    Ok((n as usize, at))
}

async fn read_stamped(sock: &TcpStream, buf: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    loop {
        sock.readable().await?;
        match sock.try_io(Interest::READABLE, || recv_stamped(sock.as_raw_fd(), buf)) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            r => return r,
        }
    }
}

/// Read one request (head + Content-Length body) from `sock`, keeping leftovers in `buf`. The
/// request's arrival is the kernel's receive time of its first bytes: a truth that does not
/// depend on how busy this server thread is when 1,024 requests land at once.
async fn read_request(sock: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<Option<Request>> {
    let mut first_byte = if buf.is_empty() {
        None
    } else {
        Some(Instant::now())
    };
    let mut tmp = [0u8; 16384];
    let head_end = loop {
        if let Some(p) = memchr::memmem::find(buf, b"\r\n\r\n") {
            break p + 4;
        }
        let (n, stamp) = read_stamped(sock, &mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        first_byte.get_or_insert_with(|| stamp.unwrap_or_else(Instant::now));
        buf.extend_from_slice(&tmp[..n]);
        if buf.len() > 1 << 20 {
            return Err(io::Error::other("request head too large"));
        }
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(io::Error::other)?;
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let method = parts.next().unwrap_or("");
    let path = parts.next().unwrap_or("").to_string();
    let get = method == "GET";
    let mut content_length = 0usize;
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    while buf.len() < head_end + content_length {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = &buf[head_end..head_end + content_length];
    let chat = path.ends_with("/chat/completions");
    let path_ok = chat || path.ends_with("/completions");
    let max_tokens = json_u64(body, "max_completion_tokens")
        .or_else(|| json_u64(body, "max_tokens"))
        .unwrap_or(16);
    let include_usage = json_raw(body, "include_usage").is_some_and(|r| r.starts_with(b"true"));
    buf.drain(..head_end + content_length);
    Ok(Some(Request {
        first_byte: first_byte.unwrap_or_else(Instant::now),
        get,
        chat,
        path_ok,
        max_tokens,
        include_usage,
    }))
}

async fn serve_conn(
    mut sock: TcpStream,
    cfg: Config,
    frames: Arc<Frames>,
    truth: Arc<Mutex<Truth>>,
    arrived: Arc<AtomicU64>,
) {
    let mut buf = Vec::with_capacity(8192);
    loop {
        let req = match read_request(&mut sock, &mut buf).await {
            Ok(Some(r)) => r,
            _ => return,
        };
        if !req.get && req.path_ok {
            arrived.fetch_add(1, Ordering::Relaxed);
        }
        let res = if req.get {
            let body = b"{\"object\":\"list\",\"data\":[{\"id\":\"bench\",\"object\":\"model\",\"owned_by\":\"perfgate\"}]}";
            let mut out = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            out.extend_from_slice(body);
            sock.write_all(&out).await
        } else if !req.path_ok {
            sock.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await
        } else if cfg.is_blast() {
            stream_blast(&mut sock, &req, cfg, &frames).await
        } else {
            stream_paced(&mut sock, &req, cfg, &frames, &truth).await
        };
        if res.is_err() {
            return;
        }
    }
}

async fn stream_blast(
    sock: &mut TcpStream,
    req: &Request,
    cfg: Config,
    frames: &Frames,
) -> io::Result<()> {
    let n = req.max_tokens.max(1);
    let k = cfg.events_per_write as u64;
    let mut out: Vec<u8> =
        Vec::with_capacity(frames.batch(req.chat, cfg.events_per_write).len() + 512);
    out.extend_from_slice(HEAD_STREAM);
    if req.chat {
        out.extend_from_slice(&frames.chat_role);
    }
    let mut sent = 0u64;
    while sent < n {
        let b = k.min(n - sent);
        out.extend_from_slice(frames.batch(req.chat, b as usize));
        sent += b;
        if sent == n {
            out.extend_from_slice(&frames.tail(req.chat, n, req.include_usage));
        }
        sock.write_all(&out).await?;
        out.clear();
    }
    Ok(())
}

async fn stream_paced(
    sock: &mut TcpStream,
    req: &Request,
    cfg: Config,
    frames: &Frames,
    truth: &Mutex<Truth>,
) -> io::Result<()> {
    let n = req.max_tokens.max(1);
    let mut head = HEAD_STREAM.to_vec();
    if req.chat {
        head.extend_from_slice(&frames.chat_role);
    }
    sock.write_all(&head).await?;
    let tail = frames.tail(req.chat, n, req.include_usage);
    let mut last = Vec::with_capacity(256 + tail.len());
    last.extend_from_slice(frames.batch(req.chat, 1));
    last.extend_from_slice(&tail);

    tokio::time::sleep_until((req.first_byte + cfg.ttft).into()).await;
    let mut first = req.first_byte;
    let mut prev = req.first_byte;
    let mut gap_sum: u128 = 0;
    let mut ttft_ns = 0u64;
    for i in 0..n {
        if i > 0 {
            tokio::time::sleep_until((first + cfg.itl * i as u32).into()).await;
        }
        let bytes: &[u8] = if i + 1 == n {
            &last
        } else {
            frames.batch(req.chat, 1)
        };
        sock.write_all(bytes).await?;
        let now = Instant::now();
        if i == 0 {
            first = now;
            ttft_ns = (now - req.first_byte).as_nanos() as u64;
        } else {
            gap_sum += (now - prev).as_nanos();
        }
        prev = now;
    }
    let mut t = truth.lock().unwrap();
    t.ttft_ns.push(ttft_ns);
    t.times.push((req.first_byte, first));
    t.gap_sum_ns += gap_sum;
    t.gap_count += n - 1;
    t.tokens += n;
    t.requests += 1;
    Ok(())
}
