//! The server's HTTP/1.1 on a raw tokio `TcpStream`: read one request (head and
//! `Content-Length` body) with the kernel's receive time of its first bytes (`SO_TIMESTAMPNS`),
//! write whole responses or the head and chunks of a stream, and notice a client that went away.

use std::io;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request as read off the socket.
pub(super) struct Request {
    /// The kernel's receive time of the request's first bytes (or when they were read, if the
    /// kernel gave no stamp or they came with the previous request).
    pub arrived: Instant,
    pub method: String,
    /// Without the query.
    pub path: String,
    /// Names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `Connection: close` (or HTTP/1.0): close after the response.
    pub close: bool,
}

/// Status line and headers of a streamed response; its body follows in chunks.
pub(super) const STREAM_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";

/// The chunk that ends a chunked body.
pub(super) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// Append `payload` to `out` as one HTTP chunk.
pub(super) fn chunk_into(out: &mut Vec<u8>, payload: &[u8]) {
    use std::io::Write;
    let _ = write!(out, "{:x}\r\n", payload.len());
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
}

/// Write a whole response with a `Content-Length` body.
pub(super) async fn respond(
    sock: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    sock.write_all(&out).await
}

/// Resolves when the client closed its end or the connection broke; never while it is only
/// quiet (nor when it sent more: a pipelined request waits for this response).
pub(super) async fn gone(sock: &TcpStream) {
    let mut b = [0u8; 1];
    match sock.peek(&mut b).await {
        Ok(0) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

/// Largest request head and body accepted.
const MAX_HEAD: usize = 1 << 20;
const MAX_BODY: usize = 64 << 20;

/// Read one request from `sock`, keeping leftovers in `buf`; `None` at a clean end of the
/// connection. The arrival is the kernel's receive time of the first bytes: a truth that does
/// not depend on how busy this server thread is when 1,024 requests land at once.
pub(super) async fn read_request(
    sock: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Request>> {
    let mut arrived = (!buf.is_empty()).then(Instant::now);
    let mut tmp = [0u8; 16384];
    let head_end = loop {
        if let Some(p) = memchr::memmem::find(buf, b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("request head too large"));
        }
        let (n, stamp) = perfgate_stamp::read(sock, &mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        arrived.get_or_insert_with(|| stamp.unwrap_or_else(Instant::now));
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(io::Error::other)?;
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or("").split(' ');
    let method = start.next().unwrap_or("").to_string();
    let target = start.next().unwrap_or("");
    let path = target.split('?').next().unwrap_or("").to_string();
    let mut close = start.next() == Some("HTTP/1.0");
    let mut headers = Vec::new();
    let mut content_length = 0usize;
    for l in lines.filter(|l| !l.is_empty()) {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        match k.as_str() {
            "content-length" => {
                content_length = v.parse().map_err(io::Error::other)?;
            }
            "connection" => close = v.eq_ignore_ascii_case("close"),
            "transfer-encoding" => {
                return Err(io::Error::other("chunked request bodies are not supported"))
            }
            _ => {}
        }
        headers.push((k, v.to_string()));
    }
    if content_length > MAX_BODY {
        return Err(io::Error::other("request body too large"));
    }
    while buf.len() < head_end + content_length {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = buf[head_end..head_end + content_length].to_vec();
    buf.drain(..head_end + content_length);
    Ok(Some(Request {
        arrived: arrived.unwrap_or_else(Instant::now),
        method,
        path,
        headers,
        body,
        close,
    }))
}
