//! One streamed generation on the connection: the response head, token chunks at their due
//! times (paced) or as fast as the socket takes them (blast, `events_per_write` chunks a write),
//! the final chunk and `[DONE]`, or the request's [`Fault`]; every token write is stamped into
//! the truth as it is handed to the kernel.

use std::io;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::config::{FakeConfig, Fault};
use super::http::{chunk_into, gone, LAST_CHUNK, STREAM_HEAD};
use super::sse::{Events, DONE, ERROR_EVENT, MALFORMED_EVENT};
use super::truth::{Live, Recorder};

/// What to stream for one request.
pub(super) struct Job<'a> {
    pub events: &'a Events,
    pub arrived: Instant,
    pub max_tokens: u32,
    pub prompt_tokens: u64,
    pub fault: Fault,
}

/// How long a stalled stream waits for its client to give up.
const STALL: Duration = Duration::from_secs(3600);

/// Stream `job` on `sock`. `Ok(true)`: the response ended cleanly and the connection may carry
/// another; `Ok(false)`: close it (a fault, or the client went away).
pub(super) async fn stream(
    sock: &mut TcpStream,
    cfg: &FakeConfig,
    rec: &Recorder,
    job: Job<'_>,
) -> io::Result<bool> {
    let ev = job.events;
    let n = job.max_tokens;
    let per = cfg.tokens_per_chunk;
    let rem = n % per;
    let blast = cfg.is_blast();
    let plan = Plan {
        events: ev,
        n,
        per,
        rem,
        after: job.fault.after(),
        per_write: if blast { cfg.events_per_write } else { 1 },
        blast,
        short: (rem > 0).then(|| ev.short(rem)),
    };
    // A stream without a fault (or with `NoDone`) ends with this, in its last token write.
    let ends = matches!(job.fault, Fault::None | Fault::NoDone);
    let tail = if ends { ending(cfg, &job) } else { Vec::new() };

    let mut live = rec.stream(job.arrived);
    let mut out = Vec::with_capacity(ev.batch.len() + tail.len() + 512);
    out.extend_from_slice(STREAM_HEAD);
    if let Some(role) = &ev.role {
        out.extend_from_slice(role);
    }
    if !blast {
        // Paced: the head now, the tokens when due. Blast: the head rides with the first tokens.
        sock.write_all(&out).await?;
        out.clear();
    }
    let mut payload = Vec::new();
    // Token i is due at `anchor + itl × (i − shift)`: the first chunk `ttft` after arrival, the
    // later ones paced from when the first was actually written. A chunk is due with its last
    // token.
    let (mut anchor, mut shift) = (job.arrived + cfg.ttft, 0u32);
    let mut sent = 0u32;
    while sent < n && sent < plan.after {
        let k = plan.next_write(sent, &mut out, &mut payload);
        if !blast {
            let ahead = cfg.itl.saturating_mul(sent + k - 1 - shift);
            let due = anchor.checked_add(ahead).unwrap_or(anchor + STALL);
            tokio::select! {
                _ = tokio::time::sleep_until(due.into()) => {}
                _ = gone(sock) => return Ok(false),
            }
        }
        let last = ends && sent + k >= n;
        if last {
            out.extend_from_slice(&tail);
        }
        sock.write_all(&out).await?;
        out.clear();
        let first = !live.started();
        let now = live.wrote(k);
        if first {
            (anchor, shift) = (now, k - 1);
        }
        sent += k;
        if last {
            live.complete();
            return Ok(true);
        }
    }
    finish(sock, job.fault, out, &tail, live).await
}

/// The shape of one stream's token writes.
struct Plan<'a> {
    events: &'a Events,
    /// Tokens in all (`max_tokens`).
    n: u32,
    /// Tokens per full chunk, and in the short last chunk (`n % per`, 0: none).
    per: u32,
    rem: u32,
    /// Tokens before the fault.
    after: u32,
    /// Chunks per write (blast), else 1.
    per_write: u32,
    blast: bool,
    /// The short last chunk's event, when there is one.
    short: Option<Vec<u8>>,
}

impl Plan<'_> {
    /// Append the next write's chunks, `sent` tokens in, to `out` (`payload` is a reusable
    /// buffer); returns how many tokens they carry. A blast write of whole chunks is the
    /// prebuilt batch.
    #[inline]
    fn next_write(&self, sent: u32, out: &mut Vec<u8>, payload: &mut Vec<u8>) -> u32 {
        let (n, per, rem, after) = (self.n, self.per, self.rem, self.after);
        let per_write = self.per_write;
        let full_left = (n - rem).saturating_sub(sent) / per;
        let to_fault = (after - sent).div_ceil(per);
        if self.blast && full_left >= per_write && to_fault >= per_write {
            out.extend_from_slice(&self.events.batch);
            return per_write * per;
        }
        payload.clear();
        let (mut k, mut chunks) = (0u32, 0u32);
        while chunks < per_write && sent + k < n && sent + k < after {
            match &self.short {
                Some(s) if n - (sent + k) == rem => {
                    payload.extend_from_slice(s);
                    k += rem;
                }
                _ => {
                    payload.extend_from_slice(&self.events.full);
                    k += per;
                }
            }
            chunks += 1;
        }
        chunk_into(out, payload);
        k
    }
}

/// The last bytes of a stream that ends (no fault, or `NoDone`): the final chunk (with usage when
/// configured), `[DONE]` unless the fault is `NoDone`, and the body's last chunk.
fn ending(cfg: &FakeConfig, job: &Job<'_>) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut s = job
        .events
        .finals(cfg.usage.then_some((job.prompt_tokens, job.max_tokens)))
        .into_bytes();
    if job.fault != Fault::NoDone {
        s.extend_from_slice(DONE);
    }
    chunk_into(&mut tail, &s);
    tail.extend_from_slice(LAST_CHUNK);
    tail
}

/// The stream's end after its last token write: the fault's bytes (with `out`, what is still
/// unwritten), or for a stream of no tokens the `tail`.
async fn finish(
    sock: &mut TcpStream,
    fault: Fault,
    mut out: Vec<u8>,
    tail: &[u8],
    mut live: Live<'_>,
) -> io::Result<bool> {
    match fault {
        Fault::ErrorEvent { .. } | Fault::Malformed { .. } => {
            let event = if matches!(fault, Fault::ErrorEvent { .. }) {
                ERROR_EVENT
            } else {
                MALFORMED_EVENT
            };
            chunk_into(&mut out, event);
            out.extend_from_slice(LAST_CHUNK);
            sock.write_all(&out).await?;
            Ok(true)
        }
        Fault::Close { .. } => {
            sock.write_all(&out).await?;
            Ok(false)
        }
        Fault::Stall { .. } => {
            sock.write_all(&out).await?;
            live.settle();
            tokio::select! {
                _ = tokio::time::sleep(STALL) => {}
                _ = gone(sock) => {}
            }
            Ok(false)
        }
        // Only a stream of no tokens gets here.
        Fault::None | Fault::NoDone | Fault::Http500 => {
            out.extend_from_slice(tail);
            sock.write_all(&out).await?;
            live.complete();
            Ok(true)
        }
    }
}
