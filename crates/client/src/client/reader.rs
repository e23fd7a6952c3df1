//! The response reader of one exchange: reads the socket until the response is over, parsing the
//! HTTP/1.1 head, then the body — an SSE stream counted into a [`StreamState`] when the status is a
//! success, an error body kept up to its bound otherwise. Each read takes the bytes' kernel receive
//! time once; every event in the read shares it.

use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use super::stream::StreamState;
use perfgate_stamp as stamp;

use super::{fail, h1, sse};
use crate::record::{Failure, FailureKind};

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

/// What one response left behind once [`ResponseReader::run`] is over: its head (`None`: no
/// response), the state of its body, the error body and the stream's events.
pub(super) struct ResponseReader<'r> {
    /// The stream's events, counted into the request's record.
    pub(super) st: StreamState<'r>,
    dec: sse::Decoder,
    /// The head's bytes until it is complete.
    head_buf: Vec<u8>,
    pub(super) head: Option<h1::Head>,
    pub(super) body: h1::Body,
    /// The start of an error response's body, up to [`ERROR_BODY_MAX`].
    pub(super) error_body: Vec<u8>,
    /// Why the request could not be written whole, if it could not (the server may answer first).
    write_error: Option<std::io::Error>,
    /// When the request was sent: no byte of the answer arrived earlier.
    sent_at: Instant,
}

impl<'r> ResponseReader<'r> {
    pub(super) fn new(
        st: StreamState<'r>,
        sent_at: Instant,
        write_error: Option<std::io::Error>,
    ) -> Self {
        ResponseReader {
            st,
            dec: sse::Decoder::new(),
            head_buf: Vec::new(),
            head: None,
            body: h1::Body::new(h1::Framing::Close),
            error_body: Vec::new(),
            write_error,
            sent_at,
        }
    }

    /// Read until the response is over: its body ended, was cut at its bound, or the connection
    /// closed; `Err` for a failure that ends the request (the record is not complete).
    pub(super) async fn run(&mut self, conn: &TcpStream) -> Result<(), Failure> {
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
                Ok(Err(e)) => return Err(self.st.broken(self.head.is_some(), &e.to_string())),
                Ok(Ok(())) => {}
            }
            // A server that writes faster than we read keeps the socket ready forever; without
            // this the task would never yield, starving the others and the request's deadline.
            tokio::task::consume_budget().await;
            let draining = drain_until.is_some();
            let step =
                SCRATCH.with(|scratch| self.read(conn, &mut scratch.borrow_mut()[..], draining))?;
            match step {
                Step::More => {}
                Step::End => break,
                Step::Cut => {
                    if let Some(h) = self.head.as_mut() {
                        h.close = true; // the rest of the body is unread: not reusable
                    }
                    break;
                }
                Step::Eof => return self.at_eof(),
            }
            let error_status = self.head.as_ref().is_some_and(|h| !h.success());
            if drain_until.is_none() && (self.st.done || error_status) {
                let grace = if self.st.done {
                    DRAIN_GRACE
                } else {
                    ERROR_BODY_GRACE
                };
                drain_until = Some(tokio::time::Instant::now() + grace);
            }
        }
        Ok(())
    }

    /// One read of the socket into `buf`, fed to the head or body.
    #[inline]
    fn read(&mut self, conn: &TcpStream, buf: &mut [u8], draining: bool) -> Result<Step, Failure> {
        let (n, arrived) = match read_draining(conn, buf) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(Step::More),
            Err(_) if draining => return Ok(Step::Eof),
            Err(e) if self.head.is_none() && self.write_error.is_some() => {
                return Err(sending_failed(self.write_error.as_ref(), &e))
            }
            Err(e) => return Err(self.st.broken(self.head.is_some(), &e.to_string())),
        };
        // The bytes' time is when the kernel received them (this thread may have been busy with
        // other streams since): never later than the read (`recv` reads the clock after the
        // data), and not before the send; else now.
        let now = arrived
            .filter(|&t| t >= self.sent_at)
            .unwrap_or_else(Instant::now);
        if n == 0 {
            return Ok(Step::Eof);
        }
        self.feed(&buf[..n], now)
    }

    /// The bytes of one read, all received at `now`: the rest of the head, then the body.
    #[inline]
    fn feed(&mut self, mut input: &[u8], now: Instant) -> Result<Step, Failure> {
        if self.head.is_none() {
            self.head_buf.extend_from_slice(input);
            let parsed = h1::parse_head(&self.head_buf).map_err(|e| {
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
            self.body = h1::Body::new(h.framing);
            let rest = self.head_buf.len() - len;
            input = &input[input.len() - rest..];
            self.head = Some(h);
            self.head_buf = Vec::new();
        }
        let mut too_long = None;
        let framing = if self.head.as_ref().is_some_and(h1::Head::success) {
            let (dec, st) = (&mut self.dec, &mut self.st);
            self.body.feed(input, |b| {
                if let Err(e) = dec.feed(b, |ev| st.event(ev, now)) {
                    too_long = Some(e);
                }
            })
        } else {
            let error_body = &mut self.error_body;
            self.body.feed(input, |b| {
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
        if let Some(f) = self.st.failure.take() {
            return Err(f);
        }
        if let Some(e) = too_long {
            return Err(fail(FailureKind::TooLarge, e.to_string()));
        }
        // An error body is kept up to its bound; the rest is not waited for.
        if self.error_body.len() >= ERROR_BODY_MAX {
            return Ok(Step::Cut);
        }
        Ok(if self.body.done() {
            Step::End
        } else {
            Step::More
        })
    }

    /// The connection ended: a failure before the head, or for a stream cut short; else the
    /// response is over (and the connection not reusable).
    fn at_eof(&mut self) -> Result<(), Failure> {
        if self.head.is_none() {
            if let Some(e) = &self.write_error {
                return Err(sending_failed(Some(e), e));
            }
            return Err(fail(
                FailureKind::Connection,
                "the server closed the connection before answering".into(),
            ));
        }
        let streaming = self.head.as_ref().is_some_and(h1::Head::success);
        if !self.body.eof() && !self.st.done && streaming {
            return Err(self
                .st
                .broken(true, "the connection closed before the response ended"));
        }
        if let Some(h) = self.head.as_mut() {
            h.close = true; // closed: not reusable below
        }
        Ok(())
    }

    /// The end of a successful response's body: a pending last event is dispatched (see
    /// [`sse::Decoder::finish`]); `Err` unless the stream reached `[DONE]`, with text and
    /// without a failure.
    pub(super) fn finish_stream(&mut self) -> Result<(), Failure> {
        let st = &mut self.st;
        if !st.done {
            self.dec.finish(|ev| st.event(ev, Instant::now()));
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
        Ok(())
    }
}

/// Write the whole request, unless the server answers first: `Ok(false)` when bytes (or the
/// end of the connection) arrived before the request was all written. A server may refuse a
/// request by its head (413 for a body too large) and close without reading the body.
pub(super) async fn write_request(conn: &TcpStream, mut req: &[u8]) -> std::io::Result<bool> {
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
fn read_draining(conn: &TcpStream, buf: &mut [u8]) -> std::io::Result<(usize, Option<Instant>)> {
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

/// What one read left the exchange with.
enum Step {
    More,
    End,
    Eof,
    /// An error body reached its bound: stop reading.
    Cut,
}
