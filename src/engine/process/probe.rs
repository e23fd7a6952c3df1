//! What the engine's process is watched with from outside: its HTTP readiness, its port
//! being free again, and the GPU memory it holds (per `nvidia-smi`).

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The pause after failed readiness probe `n` (0-based): 20 ms, doubling up to 250 ms. A server
/// up within milliseconds (a fake engine, a cached model) is seen at once rather than after a
/// quarter of a second, so the start time perfgate reports (`ready after`) is as fine; a slow
/// one is still probed four times a second.
pub fn ready_poll_pause(n: u32) -> Duration {
    Duration::from_millis((20u64 << n.min(4)).min(250))
}

/// One readiness probe: `Ok` when `/health` is fine (200, or 404 = no such endpoint) and
/// `/v1/models` lists `model`; otherwise why not.
pub async fn probe_ready(http: &reqwest::Client, base: &str, model: &str) -> Result<(), String> {
    let timeout = Duration::from_secs(3);
    match http
        .get(format!("{base}/health"))
        .timeout(timeout)
        .send()
        .await
    {
        Ok(r) if r.status().is_success() || r.status() == reqwest::StatusCode::NOT_FOUND => {}
        Ok(r) => return Err(format!("GET /health answered {}", r.status())),
        Err(e) => return Err(format!("GET /health: {}", short_err(&e))),
    }
    let r = http
        .get(format!("{base}/v1/models"))
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| format!("GET /v1/models: {}", short_err(&e)))?;
    if !r.status().is_success() {
        return Err(format!("GET /v1/models answered {}", r.status()));
    }
    let bytes = crate::client::body::read_limited(r, crate::client::body::SMALL_BODY)
        .await
        .map_err(|e| format!("GET /v1/models: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("GET /v1/models: not JSON: {e}"))?;
    let ids: Vec<String> = v
        .get("data")
        .and_then(|d| d.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("id").and_then(|i| i.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if ids.iter().any(|i| i == model) {
        Ok(())
    } else {
        Err(format!(
            "GET /v1/models lists [{}], not `{model}`",
            ids.join(", ")
        ))
    }
}

fn short_err(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        "connection refused".into()
    } else {
        let mut s = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(c) = src {
            s = format!("{s}: {c}");
            src = c.source();
        }
        s
    }
}

pub(super) async fn wait_port_free(port: u16, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        let taken = tokio::time::timeout(
            Duration::from_millis(500),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        .is_ok_and(|r| r.is_ok());
        if !taken {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Total GPU memory in use (MiB) per `nvidia-smi`, or `None` when there is no `nvidia-smi`.
pub fn gpu_memory_used_mib() -> Option<u64> {
    let out = Command::new("nvidia-smi")
        .args(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    parse_gpu_memory(&String::from_utf8_lossy(&out.stdout))
}

/// Sum the per-GPU lines of `nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits`.
pub fn parse_gpu_memory(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut any = false;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        total += line.parse::<u64>().ok()?;
        any = true;
    }
    any.then_some(total)
}

/// Wait until GPU memory in use is back near what it was before the launch (1 GiB slack).
pub(super) async fn wait_gpu_memory(before: u64, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    let mut now_used = before;
    while Instant::now() < deadline {
        match tokio::task::spawn_blocking(gpu_memory_used_mib).await {
            Ok(Some(used)) => {
                now_used = used;
                if used <= before + 1024 {
                    return None;
                }
            }
            _ => return None,
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Some(format!(
        "GPU memory in use is {now_used} MiB, {before} MiB before the launch, {} s after stopping",
        limit.as_secs()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_polls_start_fast_and_settle_at_four_a_second() {
        let ms: Vec<u128> = (0..7).map(|n| ready_poll_pause(n).as_millis()).collect();
        assert_eq!(ms, [20, 40, 80, 160, 250, 250, 250]);
        assert_eq!(ready_poll_pause(u32::MAX), Duration::from_millis(250));
    }
}
