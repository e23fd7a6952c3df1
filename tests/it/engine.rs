//! Engine lifecycle against stand-in engines (shell and Python scripts): readiness, start
//! timeout, early exit, port taken, SIGTERM ignored → SIGKILL after the grace period, /metrics.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::killpg;
use nix::unistd::Pid;
use perfgate::engine::{metrics, Engine, EngineError, EngineSpec};
use perfgate::suite::StopMethod;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spec(dir: &Path, command: &str, port: u16) -> EngineSpec {
    EngineSpec {
        command: command.to_string(),
        env: BTreeMap::new(),
        port,
        base_url: format!("http://127.0.0.1:{port}"),
        served_model_name: "stand-in".into(),
        start_timeout: Duration::from_secs(20),
        stop: StopMethod::ProcessGroup,
        grace: Duration::from_secs(2),
        log_path: dir.join("logs").join("engine.log"),
    }
}

fn group_gone(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
}

/// A tiny OpenAI-ish server: /health, /v1/models listing `stand-in`, /metrics.
pub const STAND_IN: &str = r##"
import http.server, json, sys, time
port = int(sys.argv[1]); delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
print("stand-in: loading weights", flush=True)
time.sleep(delay)
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, body, ctype="application/json"):
        b = body.encode(); self.send_response(code)
        self.send_header("Content-Type", ctype); self.send_header("Content-Length", str(len(b)))
        self.end_headers(); self.wfile.write(b)
    def do_GET(self):
        if self.path == "/health": self.send(200, "{}")
        elif self.path == "/v1/models": self.send(200, json.dumps({"object": "list", "data": [{"id": "stand-in"}]}))
        elif self.path == "/metrics": self.send(200, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 3\n", "text/plain")
        else: self.send(404, "{}")
print("stand-in: listening", flush=True)
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"##;

fn python_stand_in(dir: &Path) -> String {
    let p = dir.join("stand_in.py");
    std::fs::write(&p, STAND_IN).unwrap();
    p.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_when_models_lists_the_model_then_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let script = python_stand_in(dir.path());
    let mut e = Engine::spawn(spec(
        dir.path(),
        &format!("python3 {script} {port} 0.3"),
        port,
    ))
    .unwrap();
    let http = reqwest::Client::new();
    let took = e.wait_ready(&http).await.expect("ready");
    assert!(took < Duration::from_secs(20));
    let snap = metrics::scrape(&http, &format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    assert_eq!(snap.values["llamacpp:requests_processing"], 3.0);
    let pgid = e.pgid();
    let out = e.stop().await;
    assert!(!out.killed, "{out:?}");
    assert!(out.port_freed, "{out:?}");
    assert!(group_gone(pgid));
    let log = std::fs::read_to_string(dir.path().join("logs/engine.log")).unwrap();
    assert!(log.contains("stand-in: loading weights"), "{log}");
    assert!(log.contains("# perfgate"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_ready_fails_within_the_start_timeout_with_the_log_tail() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut s = spec(dir.path(), "echo compiling kernels; exec sleep 60", port);
    s.start_timeout = Duration::from_millis(1500);
    let mut e = Engine::spawn(s).unwrap();
    let t0 = Instant::now();
    let err = e.wait_ready(&reqwest::Client::new()).await.unwrap_err();
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_secs(6),
        "{took:?}"
    );
    assert!(matches!(err, EngineError::StartTimeout { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("start timeout of 1.5 s"), "{msg}");
    assert!(msg.contains("compiling kernels"), "{msg}");
    let pgid = e.pgid();
    e.stop().await;
    assert!(group_gone(pgid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_that_exits_early_is_reported_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut e = Engine::spawn(spec(
        dir.path(),
        "echo 'CUDA out of memory' >&2; exit 7",
        port,
    ))
    .unwrap();
    let t0 = Instant::now();
    let err = e.wait_ready(&reqwest::Client::new()).await.unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(5));
    let msg = err.to_string();
    assert!(
        msg.contains("exited (exit code 7) before it became ready"),
        "{msg}"
    );
    assert!(msg.contains("CUDA out of memory"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_ignoring_sigterm_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    // The shell and its children ignore SIGTERM.
    let cmd = "trap '' TERM; echo stubborn; while true; do sleep 0.1; done";
    let mut s = spec(dir.path(), cmd, port);
    s.grace = Duration::from_secs(1);
    let mut e = Engine::spawn(s).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(e.exited().is_none());
    let pgid = e.pgid();
    let t0 = Instant::now();
    let out = e.stop().await;
    let took = t0.elapsed();
    assert!(out.killed, "{out:?}");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(8),
        "{took:?}"
    );
    assert!(group_gone(pgid));
    assert_eq!(out.status.as_deref(), Some("killed by SIGKILL"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_well_behaved_child_stops_on_sigterm_without_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut s = spec(dir.path(), "sleep 60", port);
    s.grace = Duration::from_secs(10);
    let mut e = Engine::spawn(s).unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t0 = Instant::now();
    let out = e.stop().await;
    assert!(!out.killed, "{out:?}");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_taken_port_is_a_clear_error_before_launch() {
    let dir = tempfile::tempdir().unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let err = Engine::spawn(spec(dir.path(), "sleep 60", port)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("port {port} is taken before launch")),
        "{msg}"
    );
    // Nothing was started, so there is no log either.
    assert!(!dir.path().join("logs/engine.log").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_reports_an_engine_killed_while_serving() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let script = python_stand_in(dir.path());
    let mut e = Engine::spawn(spec(dir.path(), &format!("python3 {script} {port}"), port)).unwrap();
    let http = reqwest::Client::new();
    e.wait_ready(&http).await.unwrap();
    let pgid = e.pgid();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let _ = killpg(Pid::from_raw(pgid), nix::sys::signal::Signal::SIGKILL);
    });
    let base = format!("http://127.0.0.1:{port}");
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        perfgate::engine::watch(Some(&mut e), &http, &base, Duration::from_secs(60)),
    )
    .await
    .expect("the watchdog notices within the timeout");
    let msg = err.to_string();
    assert!(
        msg.contains("exited (killed by SIGKILL) during the scenario"),
        "{msg}"
    );
    assert!(msg.contains("stand-in: listening"), "{msg}");
    e.stop().await;
}
