//! Helpers shared by the integration tests.

pub mod fake;
pub mod fixture;
pub mod github;

pub use fake::*;

use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// A test's engine, model file or browser is missing: the test fails when the run requires
/// every engine (PERFGATE_REQUIRE_ENGINE=1, as scripts/test.sh sets it after installing them),
/// else it says `skipped: {missing}` on stderr and the caller returns. `install` says how to get
/// it.
#[track_caller]
pub fn skip_unless_required(missing: &str, install: &str) {
    if std::env::var("PERFGATE_REQUIRE_ENGINE").as_deref() == Ok("1") {
        panic!("PERFGATE_REQUIRE_ENGINE=1 but {missing}: {install}");
    }
    eprintln!("skipped: {missing} ({install})");
}

/// A port for a server a test starts: free when handed out, never handed out twice in this
/// process, and below the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`,
/// 32768-60999 by default), where nothing else picks a port by itself: not another test's
/// `bind(0)`, not an engine's internal sockets (vLLM opens several on ports the kernel picks),
/// not an outgoing connection. A port from `bind(127.0.0.1:0)` could be any of those a moment
/// later: on 2026-11-29 a stand-in engine found its port taken that way ("something already
/// accepts connections") inside the whole test command. Where the range leaves no room below
/// it, ports come from the kernel as before, still never twice.
pub fn free_port() -> u16 {
    use std::collections::HashSet;
    use std::net::TcpListener;
    use std::sync::Mutex;
    static GIVEN: Mutex<Option<(u16, HashSet<u16>)>> = Mutex::new(None);
    const SPAN: u16 = 8_000;
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let (next, seen) = given.get_or_insert_with(|| {
        // Processes running tests side by side start at different places of the span.
        let start = u16::try_from(std::process::id() % u32::from(SPAN)).unwrap_or(0);
        (start, HashSet::new())
    });
    if let Some(low) = ephemeral_low().filter(|&low| low >= SPAN + 1024) {
        for _ in 0..SPAN {
            let port = low - SPAN + *next % SPAN;
            *next = next.wrapping_add(1);
            if seen.insert(port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if seen.insert(port) {
            return port;
        }
    }
}

/// The first port of the kernel's ephemeral range, where Linux says.
fn ephemeral_low() -> Option<u16> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Wait for `child` with a hard limit: past it the child is killed and the test fails with its
/// stderr, so a test never hangs. `what` names the child in that message.
pub fn wait_with_limit(mut child: Child, limit: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} did not finish within {limit:?}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A suite of two small scenarios of `command`'s engine (the fake server in `ab` and `bisect`
/// tests), gated like the CPU suite: median TTFT and output throughput with wide tolerances,
/// since the test machine is shared and small.
pub fn two_scenario_suite(command: &str) -> String {
    format!(
        r#"schema_version = 1
[engine]
name = "custom"
[engine.launch]
preset = "custom"
command = '''{command}'''
[gate]
gated = ["median_ttft_ms", "output_throughput", "success_rate"]
[gate.metrics.median_ttft_ms]
tolerance_pct = 60.0
engine_tolerance_pct = 24.0
noise_pct = 15.0
[gate.metrics.output_throughput]
tolerance_pct = 30.0
engine_tolerance_pct = 12.0
noise_pct = 10.0
[[models]]
name = "model-a"
[[models.scenarios]]
id = "random-in16-out8-n8-c4"
[models.scenarios.params]
dataset_name = "random"
num_prompts = 8
random_input_len = 16
random_output_len = 8
max_concurrency = 4
[[models.scenarios]]
id = "random-in16-out16-n8-c2"
[models.scenarios.params]
dataset_name = "random"
num_prompts = 8
random_input_len = 16
random_output_len = 16
max_concurrency = 2
"#
    )
}
