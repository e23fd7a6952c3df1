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
use super::truth::Recorder;

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
    let after = job.fault.after();
    let blast = cfg.is_blast();
    let per_write = if blast { cfg.events_per_write } else { 1 };
    // A stream without a fault (or with `NoDone`) ends with this, in its last token write.
    let ends = matches!(job.fault, Fault::None | Fault::NoDone);
    let mut tail = Vec::new();
    if ends {
        let mut s = ev
            .finals(cfg.usage.then_some((job.prompt_tokens, n)))
            .into_bytes();
        if job.fault != Fault::NoDone {
            s.extend_from_slice(DONE);
        }
        chunk_into(&mut tail, &s);
        tail.extend_from_slice(LAST_CHUNK);
    }
    let short = (rem > 0).then(|| ev.short(rem));

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
    while sent < n && sent < after {
        let full_left = (n - rem).saturating_sub(sent) / per;
        let to_fault = (after - sent).div_ceil(per);
        let k = if blast && full_left >= per_write && to_fault >= per_write {
            out.extend_from_slice(&ev.batch);
            per_write * per
        } else {
            payload.clear();
            let (mut k, mut chunks) = (0u32, 0u32);
            while chunks < per_write && sent + k < n && sent + k < after {
                match &short {
                    Some(s) if n - (sent + k) == rem => {
                        payload.extend_from_slice(s);
                        k += rem;
                    }
                    _ => {
                        payload.extend_from_slice(&ev.full);
                        k += per;
                    }
                }
                chunks += 1;
            }
            chunk_into(&mut out, &payload);
            k
        };
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
    match job.fault {
        Fault::ErrorEvent { .. } | Fault::Malformed { .. } => {
            let event = if matches!(job.fault, Fault::ErrorEvent { .. }) {
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
            out.extend_from_slice(&tail);
            sock.write_all(&out).await?;
            live.complete();
            Ok(true)
        }
    }
}
