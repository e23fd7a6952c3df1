//! The engine edge: launch an LLM serving engine as a child process group, know when it is
//! ready, notice when it dies or stops answering, scrape its Prometheus `/metrics`, and stop it
//! without leaving processes, containers or a busy port behind.

use std::time::{Duration, Instant};

pub mod metrics;
pub mod process;

pub use process::{Engine, EngineSpec, StopOutcome};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("port {port} is taken before launch: {detail}; stop whatever uses it or pass --port")]
    PortTaken { port: u16, detail: String },
    #[error("could not start `{command}`: {reason}")]
    Spawn {
        command: String,
        reason: std::io::Error,
    },
    #[error("engine log {path}: {reason}")]
    Log {
        path: String,
        reason: std::io::Error,
    },
    #[error("the engine exited ({status}) before it became ready; last log lines:\n{tail}")]
    ExitedBeforeReady { status: String, tail: String },
    #[error("the engine was not ready within the start timeout of {timeout_s} s ({last}); last log lines:\n{tail}")]
    StartTimeout {
        timeout_s: f64,
        last: String,
        tail: String,
    },
    #[error("the engine exited ({status}) during the scenario; last log lines:\n{tail}")]
    Exited { status: String, tail: String },
    #[error("the engine stopped answering: {last} for {secs:.0} s; last log lines:\n{tail}")]
    Unresponsive {
        secs: f64,
        last: String,
        tail: String,
    },
}

impl EngineError {
    /// A one-line reason (no log tail), for table cells.
    pub fn reason(&self) -> String {
        match self {
            EngineError::ExitedBeforeReady { status, .. } => {
                format!("engine exited ({status}) before it became ready")
            }
            EngineError::StartTimeout {
                timeout_s, last, ..
            } => {
                format!("engine not ready within {timeout_s} s ({last})")
            }
            EngineError::Exited { status, .. } => {
                format!("engine exited ({status}) during the scenario")
            }
            EngineError::Unresponsive { secs, last, .. } => {
                format!("engine stopped answering ({last} for {secs:.0} s)")
            }
            other => other.to_string(),
        }
    }

    /// The engine log tail carried by the error, if any.
    pub fn log_tail(&self) -> Option<&str> {
        match self {
            EngineError::ExitedBeforeReady { tail, .. }
            | EngineError::StartTimeout { tail, .. }
            | EngineError::Exited { tail, .. }
            | EngineError::Unresponsive { tail, .. } => Some(tail),
            _ => None,
        }
    }
}

/// Watch an engine while a scenario runs: returns (only) when the launched process has exited or
/// `/health` has failed continuously for `unresponsive_after`. Without a launched engine
/// (`--base-url`) only the health check applies. Run it in `select!` against the scenario.
pub async fn watch(
    mut engine: Option<&mut Engine>,
    http: &reqwest::Client,
    base_url: &str,
    unresponsive_after: Duration,
) -> EngineError {
    let mut failing_since: Option<(Instant, String)> = None;
    let mut next_probe = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(e) = engine.as_deref_mut() {
            if let Some(status) = e.exited() {
                // Let the last words reach the log file.
                tokio::time::sleep(Duration::from_millis(100)).await;
                return EngineError::Exited {
                    status,
                    tail: e.log_tail(),
                };
            }
        }
        if Instant::now() >= next_probe {
            let probe = http
                .get(format!("{base_url}/health"))
                .timeout(Duration::from_secs(5))
                .send()
                .await;
            let bad = match probe {
                Ok(r) if r.status().is_success() || r.status().as_u16() == 404 => None,
                Ok(r) => Some(format!("GET /health answered {}", r.status())),
                Err(e) if e.is_timeout() => Some("GET /health timed out".to_string()),
                Err(_) => Some("GET /health failed to connect".to_string()),
            };
            match (bad, &failing_since) {
                (None, _) => failing_since = None,
                (Some(why), None) => failing_since = Some((Instant::now(), why)),
                (Some(why), Some((since, _))) => {
                    let since = *since;
                    if since.elapsed() >= unresponsive_after {
                        let tail = engine.as_deref().map(|e| e.log_tail()).unwrap_or_default();
                        return EngineError::Unresponsive {
                            secs: since.elapsed().as_secs_f64(),
                            last: why,
                            tail,
                        };
                    }
                    failing_since = Some((since, why));
                }
            }
            next_probe = Instant::now() + Duration::from_secs(2);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
