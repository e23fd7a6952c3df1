//! The HTTP/1.1 under the measuring client: plain-text HTTP to one server, one request per
//! connection at a time, connections kept in a pool.
//!
//! Why not a general HTTP client here: in a load test the client's own cost per streamed token
//! is part of what it measures. A general client hands every body chunk from a connection task to
//! the request task through a channel (two task wake-ups per chunk) and keeps a read buffer per
//! connection. Here the request's own task reads the socket into a per-thread scratch buffer and
//! decodes the chunked framing and the events in place, so a chunk costs one wake-up, one `read`
//! and one timestamp taken the moment the bytes are in. Everything that is not the hot path
//! (engine health checks, `/metrics`, GitHub, the server tokenizer) still uses `reqwest`.
//!
//! The parts: [`Target`] (the parsed URL, resolved once), [`Pool`] (idle keep-alive connections,
//! checked for a server-side close before reuse), [`Head`] (the parsed response head) and
//! [`Body`] (chunked, length-delimited or close-delimited body framing).

use std::io;
use std::mem::MaybeUninit;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Mutex;
use std::time::Duration;

use tokio::net::TcpStream;

/// Where the requests go: an `http://` URL, resolved once when the client is built.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    /// The `Host` header (`host[:port]` as written in the URL).
    pub host: String,
    /// The path of the request line (URLs with a query, fragment or credentials are refused).
    pub path: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, String> {
        let u = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        match u.scheme() {
            "http" => {}
            "https" => {
                return Err("the measuring client speaks plain http:// only (engines under test \
                     serve plain HTTP; put TLS in front of perfgate, not between it and the engine)"
                    .into())
            }
            other => return Err(format!("unsupported scheme `{other}`")),
        }
        // Refused rather than guessed at: the endpoint is appended to the base URL's path, so a
        // query or fragment would end up in the middle of the request path, and credentials in
        // the URL would have to become a header the user never asked for by name.
        if !u.username().is_empty() || u.password().is_some() {
            return Err(
                "credentials in the URL (`user:…@`) are not sent; remove them \
                 (an API key goes in OPENAI_API_KEY)"
                    .into(),
            );
        }
        if u.query().is_some() {
            return Err(
                "a query (`?…`) in the URL is not supported; give the base URL \
                 without it"
                    .into(),
            );
        }
        if u.fragment().is_some() {
            return Err(
                "a fragment (`#…`) in the URL is not supported; give the base URL \
                 without it"
                    .into(),
            );
        }
        let host = u.host_str().ok_or("the URL has no host")?.to_string();
        let port = u.port_or_known_default().unwrap_or(80);
        let addr = (host.trim_start_matches('[').trim_end_matches(']'), port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve `{host}`: {e}"))?
            .next()
            .ok_or_else(|| format!("`{host}` resolves to no address"))?;
        let host_header = match u.port() {
            Some(p) => format!("{host}:{p}"),
            None => host,
        };
        let path = u.path().to_string();
        Ok(Target {
            addr,
            host: host_header,
            path,
        })
    }
}

/// Idle keep-alive connections to one [`Target`], most recently used first.
#[derive(Debug)]
pub struct Pool {
    addr: SocketAddr,
    /// Each with whether it carried an exchange already.
    idle: Mutex<Vec<(TcpStream, bool)>>,
    connect_timeout: Duration,
    /// The server sent bytes nobody asked for (a response without a request) on some connection:
    /// from then on no connection is reused, since on a reused one such bytes can pass for the
    /// next request's answer.
    strays: std::sync::atomic::AtomicBool,
}

impl Pool {
    pub fn new(addr: SocketAddr, connect_timeout: Duration) -> Pool {
        Pool {
            addr,
            idle: Mutex::new(Vec::new()),
            connect_timeout,
            strays: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// An idle connection the server has not closed and that holds no stray bytes, or a new
    /// one; and whether it carried an exchange before (`true`: an answer on it could be a stray
    /// of that earlier exchange).
    pub async fn checkout(&self) -> io::Result<(TcpStream, bool)> {
        while let Some((s, used)) = self.pop() {
            match idle_state(&s) {
                Idle::Quiet => return Ok((s, used)),
                Idle::Closed => {}
                Idle::Stray => self.saw_strays(),
            }
        }
        Ok((self.connect().await?, false))
    }

    fn pop(&self) -> Option<(TcpStream, bool)> {
        if self.strays_seen() {
            self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
            return None;
        }
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    /// Give back a connection whose response was read to its end (dropped once strays were seen).
    pub fn checkin(&self, s: TcpStream) {
        self.put(s, true);
    }

    /// Keep a connection opened ahead of the requests.
    pub fn checkin_new(&self, s: TcpStream) {
        self.put(s, false);
    }

    fn put(&self, s: TcpStream, used: bool) {
        if !self.strays_seen() {
            self.idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((s, used));
        }
    }

    /// Record that the server sent bytes nobody asked for: no connection is reused from now on.
    pub fn saw_strays(&self) {
        self.strays
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the server was seen sending bytes nobody asked for.
    pub fn strays_seen(&self) -> bool {
        self.strays.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Idle connections held now.
    pub fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub async fn connect(&self) -> io::Result<TcpStream> {
        let s = tokio::time::timeout(self.connect_timeout, TcpStream::connect(self.addr))
            .await
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connect timed out after {:?}", self.connect_timeout),
                )
            })??;
        s.set_nodelay(true)?;
        perfgate_stamp::enable(&s);
        Ok(s)
    }
}

/// What an idle connection holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Nothing: it can take a request.
    Quiet,
    /// End of stream. A server may close an idle keep-alive connection at any time (uvicorn
    /// after 5 s); sending on it would fail a request the server never saw.
    Closed,
    /// Bytes nobody asked for.
    Stray,
}

/// Peek at an idle connection without waiting.
pub fn idle_state(s: &TcpStream) -> Idle {
    let mut b = [MaybeUninit::<u8>::uninit(); 1];
    match socket2::SockRef::from(s).peek(&mut b) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Idle::Quiet,
        Err(_) | Ok(0) => Idle::Closed,
        Ok(_) => Idle::Stray,
    }
}

/// The request bytes: head and body in one buffer, written with one call.
pub fn request(
    target: &Target,
    body: &[u8],
    keep_alive: bool,
    authorization: Option<&str>,
    headers: &[(String, String)],
    request_id: Option<&str>,
) -> Vec<u8> {
    let mut r = Vec::with_capacity(body.len() + 256);
    r.extend_from_slice(b"POST ");
    r.extend_from_slice(target.path.as_bytes());
    r.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    r.extend_from_slice(target.host.as_bytes());
    r.extend_from_slice(
        b"\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nUser-Agent: perfgate/",
    );
    r.extend_from_slice(env!("CARGO_PKG_VERSION").as_bytes());
    if let Some(a) = authorization {
        r.extend_from_slice(b"\r\nAuthorization: ");
        r.extend_from_slice(a.as_bytes());
    }
    for (name, value) in headers {
        r.extend_from_slice(b"\r\n");
        r.extend_from_slice(name.as_bytes());
        r.extend_from_slice(b": ");
        r.extend_from_slice(value.as_bytes());
    }
    if let Some(id) = request_id {
        r.extend_from_slice(b"\r\nx-request-id: ");
        r.extend_from_slice(id.as_bytes());
    }
    if !keep_alive {
        r.extend_from_slice(b"\r\nConnection: close");
    }
    r.extend_from_slice(b"\r\nContent-Length: ");
    r.extend_from_slice(body.len().to_string().as_bytes());
    r.extend_from_slice(b"\r\n\r\n");
    r.extend_from_slice(body);
    r
}

/// The most a response head may take (status line and headers, with any interim `1xx` responses
/// before it).
pub const MAX_HEAD: usize = 64 * 1024;

/// Why a response head was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadError {
    /// Over [`MAX_HEAD`] (an endless head, or endless interim responses), rather than malformed.
    pub too_long: bool,
    pub message: String,
}

impl std::fmt::Display for HeadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A parsed response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    /// The server will close the connection after this response.
    pub close: bool,
    pub framing: Framing,
}

impl Head {
    /// A 2xx status: the body is the event stream.
    pub fn success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// How the body's end is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Chunked,
    Length(u64),
    /// Until the server closes the connection.
    Close,
}

/// Find the end of a response head in `buf`: `Ok(Some((head, head_len)))` once it is complete.
/// Interim 1xx responses are skipped (their length is included in `head_len`); together with the
/// final head they must fit in [`MAX_HEAD`].
pub fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, HeadError> {
    let invalid = |message: String| HeadError {
        too_long: false,
        message,
    };
    let mut start = 0;
    let mut interim = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut resp = httparse::Response::new(&mut headers);
        let n = match resp.parse(&buf[start..]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                if buf.len() > MAX_HEAD {
                    return Err(HeadError {
                        too_long: true,
                        message: format!(
                            "response head longer than {} KiB{}",
                            MAX_HEAD >> 10,
                            if interim > 0 {
                                format!(" (after {interim} interim 1xx responses)")
                            } else {
                                String::new()
                            }
                        ),
                    });
                }
                return Ok(None);
            }
            // A header flood: more header lines than any real server sends is a head too large,
            // not a broken connection.
            Err(httparse::Error::TooManyHeaders) => {
                return Err(HeadError {
                    too_long: true,
                    message: format!(
                        "response head with more than {} header lines",
                        headers.len()
                    ),
                });
            }
            Err(e) => {
                let shown = String::from_utf8_lossy(&buf[start..buf.len().min(start + 80)]);
                return Err(invalid(format!("invalid HTTP response ({e}): {shown:?}")));
            }
        };
        let status = resp.code.unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            start += n;
            interim += 1;
            continue;
        }
        if start + n > MAX_HEAD {
            return Err(HeadError {
                too_long: true,
                message: format!(
                    "response head longer than {} KiB (after {interim} interim 1xx responses)",
                    MAX_HEAD >> 10
                ),
            });
        }
        let mut close = resp.version == Some(0);
        let mut chunked = false;
        let mut length = None;
        for h in resp.headers.iter() {
            let v = std::str::from_utf8(h.value).unwrap_or("").trim();
            if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = v
                    .rsplit(',')
                    .next()
                    .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
            } else if h.name.eq_ignore_ascii_case("content-length") {
                let l: u64 = v
                    .parse()
                    .map_err(|_| invalid(format!("invalid Content-Length `{v}`")))?;
                if length.is_some_and(|prev| prev != l) {
                    return Err(invalid("conflicting Content-Length headers".into()));
                }
                length = Some(l);
            } else if h.name.eq_ignore_ascii_case("connection") {
                for tok in v.split(',') {
                    let tok = tok.trim();
                    if tok.eq_ignore_ascii_case("close") {
                        close = true;
                    } else if tok.eq_ignore_ascii_case("keep-alive") && resp.version == Some(0) {
                        close = false;
                    }
                }
            }
        }
        let framing = if chunked {
            Framing::Chunked
        } else if let Some(l) = length {
            Framing::Length(l)
        } else if status == 204 || status == 304 {
            Framing::Length(0)
        } else {
            close = true;
            Framing::Close
        };
        return Ok(Some((
            Head {
                status,
                close,
                framing,
            },
            start + n,
        )));
    }
}

/// Decodes a response body's framing incrementally: feed it what the socket gives, get the body
/// bytes back as slices of the input (no copy).
#[derive(Debug, Clone)]
pub struct Body {
    framing: Framing,
    state: Chunk,
    /// Bytes left in the current chunk, or of a length-delimited body.
    left: u64,
    /// A digit of the current size line was seen (1) or not (0).
    digits: u8,
    /// Bytes arrived after the end of the body (the connection cannot be reused).
    pub extra: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Size,
    /// After the size: an extension up to the end of the line.
    Ext,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    /// At the start of a trailer line (after the last chunk).
    Trailer,
    TrailerLine,
    TrailerLf,
    Done,
}

impl Body {
    pub fn new(framing: Framing) -> Body {
        let left = match framing {
            Framing::Length(l) => l,
            _ => 0,
        };
        Body {
            framing,
            state: Chunk::Size,
            left,
            digits: 0,
            extra: false,
        }
    }

    /// The body is complete (for close-delimited bodies: never, until [`Body::eof`]).
    pub fn done(&self) -> bool {
        match self.framing {
            Framing::Chunked => self.state == Chunk::Done,
            Framing::Length(_) => self.left == 0,
            Framing::Close => false,
        }
    }

    /// The connection ended: was the body complete?
    pub fn eof(&self) -> bool {
        self.framing == Framing::Close || self.done()
    }

    /// Decode `input`, passing each run of body bytes to `out`.
    pub fn feed<'a>(
        &mut self,
        input: &'a [u8],
        mut out: impl FnMut(&'a [u8]),
    ) -> Result<(), String> {
        match self.framing {
            Framing::Close => {
                if !input.is_empty() {
                    out(input);
                }
                Ok(())
            }
            Framing::Length(_) => {
                let take = (self.left.min(input.len() as u64)) as usize;
                if take > 0 {
                    out(&input[..take]);
                }
                self.left -= take as u64;
                if take < input.len() {
                    self.extra = true;
                }
                Ok(())
            }
            Framing::Chunked => self.chunked(input, &mut out),
        }
    }

    fn chunked<'a>(
        &mut self,
        input: &'a [u8],
        out: &mut impl FnMut(&'a [u8]),
    ) -> Result<(), String> {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.state {
                Chunk::Size => {
                    let d = match b {
                        b'0'..=b'9' => Some(b - b'0'),
                        b'a'..=b'f' => Some(b - b'a' + 10),
                        b'A'..=b'F' => Some(b - b'A' + 10),
                        _ => None,
                    };
                    match (d, b) {
                        (Some(d), _) => {
                            // RFC 9112 puts no bound on the digits (leading zeros are fine); the
                            // value must fit in 60 bits, far beyond any real chunk.
                            if self.left >> 56 != 0 {
                                return Err("chunk size too large".into());
                            }
                            self.left = self.left << 4 | u64::from(d);
                            self.digits = 1;
                        }
                        (None, b';' | b' ' | b'\t') if self.digits > 0 => self.state = Chunk::Ext,
                        (None, b'\r') if self.digits > 0 => self.state = Chunk::SizeLf,
                        (None, b'\n') if self.digits > 0 => self.size_line_done(),
                        _ => return Err(format!("invalid chunk size byte {:?}", b as char)),
                    }
                    i += 1;
                }
                Chunk::Ext => match memchr::memchr(b'\n', &input[i..]) {
                    Some(p) => {
                        i += p + 1;
                        self.size_line_done();
                    }
                    None => i = input.len(),
                },
                Chunk::SizeLf => {
                    if b != b'\n' {
                        return Err("chunk size line not ended by CRLF".into());
                    }
                    i += 1;
                    self.size_line_done();
                }
                Chunk::Data => {
                    let take = (self.left.min((input.len() - i) as u64)) as usize;
                    out(&input[i..i + take]);
                    i += take;
                    self.left -= take as u64;
                    if self.left == 0 {
                        self.state = Chunk::DataCr;
                    }
                }
                Chunk::DataCr => {
                    match b {
                        b'\r' => self.state = Chunk::DataLf,
                        b'\n' => self.state = Chunk::Size,
                        _ => return Err("chunk data not followed by CRLF".into()),
                    }
                    i += 1;
                }
                Chunk::DataLf => {
                    if b != b'\n' {
                        return Err("chunk data not followed by CRLF".into());
                    }
                    self.state = Chunk::Size;
                    i += 1;
                }
                Chunk::Trailer => {
                    self.state = match b {
                        b'\r' => Chunk::TrailerLf,
                        b'\n' => Chunk::Done,
                        _ => Chunk::TrailerLine,
                    };
                    i += 1;
                }
                Chunk::TrailerLine => match memchr::memchr(b'\n', &input[i..]) {
                    Some(p) => {
                        i += p + 1;
                        self.state = Chunk::Trailer;
                    }
                    None => i = input.len(),
                },
                Chunk::TrailerLf => {
                    if b != b'\n' {
                        return Err("body trailer not ended by CRLF".into());
                    }
                    self.state = Chunk::Done;
                    i += 1;
                }
                Chunk::Done => {
                    self.extra = true;
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn size_line_done(&mut self) {
        self.digits = 0;
        self.state = if self.left == 0 {
            Chunk::Trailer
        } else {
            Chunk::Data
        };
    }
}

#[cfg(test)]
mod tests;
