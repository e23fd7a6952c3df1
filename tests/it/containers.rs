//! Containers (issue 24, item 11), against a fake `docker` on PATH that logs its arguments: a
//! container is started with perfgate's name and its owner label, and removed on every exit path
//! (normal end, engine fault, start timeout, SIGTERM, SIGKILL of perfgate); a `--name X` among
//! the engine's own arguments never makes perfgate stop or remove container X.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use crate::engine::{live_baseline, live_command, word_tokenizer};
use crate::support::{free_port, wait_with_limit};

const BIN: &str = env!("CARGO_BIN_EXE_perfgate");

/// How the fake `docker run` behaves.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Run {
    /// Serves as the fake server (10 ms per token).
    Serve,
    /// Exits at once (an engine fault before ready).
    Die,
    /// Never answers (the start timeout).
    Hang,
}

/// Write `dir/bin/docker`: logs each call's arguments to `dir/docker.log`; `docker ps` lists
/// one container, `c0ffee`; `docker run` does what `run` says.
fn fake_docker(dir: &Path, run: Run, port: u16) -> std::path::PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("docker.log");
    let run_cmd = match run {
        Run::Serve => {
            format!("exec {BIN} fake-server --port {port} --model model-a --ttft-ms 5 --itl-ms 10")
        }
        Run::Die => "echo 'docker: no such image' >&2; exit 125".into(),
        Run::Hang => "exec sleep 60".into(),
    };
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> {log}\ncase \"$1\" in\n  run) {run_cmd} ;;\n  \
         ps) echo c0ffee ;;\nesac\nexit 0\n",
        log = log.display()
    );
    let p = bin.join("docker");
    std::fs::write(&p, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn log_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("docker.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Run a live check whose engine is `docker run … img serve --name X …` through the fake docker;
/// `signal`: sent once the engine listens. Returns perfgate's pid and exit code.
fn live_in_docker(dir: &Path, run: Run, signal: Option<Signal>) -> (u32, Option<i32>) {
    let port = free_port();
    let bin = fake_docker(dir, run, port);
    let tok = word_tokenizer(dir);
    let cmd = "docker run --rm --name {container} --net host img serve --name X --port {port}";
    let (n, out) = match signal {
        Some(_) => (16, 250),
        None => (4, 8),
    };
    let b = live_baseline(cmd, &[("model-a", n, out)]);
    let port_s = port.to_string();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = live_command(
        dir,
        &b,
        &[
            "--port",
            &port_s,
            "--tokenizer",
            &tok,
            "--start-timeout",
            "3",
        ],
    );
    let child = c.env("PATH", path).spawn().unwrap();
    let pid = child.id();
    if let Some(sig) = signal {
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(t0.elapsed() < Duration::from_secs(30), "never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_secs(1));
        nix::sys::signal::kill(Pid::from_raw(pid as i32), sig).unwrap();
    }
    let o = wait_with_limit(child, Duration::from_secs(60), "perfgate check (docker)");
    let stderr = String::from_utf8_lossy(&o.stderr);
    if signal != Some(Signal::SIGKILL) {
        assert!(
            o.status.code().is_some(),
            "{run:?}: {:?}\n{stderr}",
            o.status
        );
    }
    (pid, o.status.code())
}

/// The container was started with perfgate's name and label, removed after it started, and X was
/// never stopped or removed.
fn assert_owned_and_removed(dir: &Path, pid: u32, what: &str) {
    let label = format!("--label perfgate.owner={pid}");
    // The reaper (SIGKILL) removes it after perfgate is gone: wait for it, bounded.
    let t0 = Instant::now();
    let removed_after_run = |lines: &[String]| {
        let run = lines.iter().position(|l| l.starts_with("run "));
        run.is_some_and(|i| lines[i..].iter().any(|l| l == "rm -f c0ffee"))
    };
    while !removed_after_run(&log_lines(dir)) && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let lines = log_lines(dir);
    let all = lines.join("\n");
    let run = lines
        .iter()
        .find(|l| l.starts_with("run "))
        .unwrap_or_else(|| panic!("{what}: no docker run\n{all}"));
    assert!(
        run.starts_with(&format!("run {label} --rm --name perfgate-engine ")),
        "{what}: {run}"
    );
    assert!(removed_after_run(&lines), "{what}: not removed\n{all}");
    // Only containers carrying this perfgate's label (and its name) are stopped and removed.
    let owned_filter =
        format!("ps -aq --filter label=perfgate.owner={pid} --filter name=^/?perfgate-engine$");
    assert!(lines.iter().any(|l| l == &owned_filter), "{what}: {all}");
    for l in &lines {
        if l.starts_with("stop") || l.starts_with("rm") || l.starts_with("kill") {
            assert!(!l.split(' ').any(|w| w == "X"), "{what}: touched X: {l}");
        }
    }
}

#[test]
fn a_container_ends_removed_after_a_normal_run() {
    let dir = tempfile::tempdir().unwrap();
    let (pid, code) = live_in_docker(dir.path(), Run::Serve, None);
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    assert_owned_and_removed(dir.path(), pid, "normal end");
    // Stopped by its id, never by the name the engine's arguments gave.
    assert!(log_lines(dir.path())
        .iter()
        .any(|l| l == "stop -t 2 c0ffee"));
}

#[test]
fn a_container_ends_removed_after_an_engine_fault() {
    let dir = tempfile::tempdir().unwrap();
    let (pid, code) = live_in_docker(dir.path(), Run::Die, None);
    assert_eq!(code, Some(3));
    assert_owned_and_removed(dir.path(), pid, "engine fault");
}

#[test]
fn a_container_ends_removed_after_the_start_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (pid, code) = live_in_docker(dir.path(), Run::Hang, None);
    assert_eq!(code, Some(3));
    assert_owned_and_removed(dir.path(), pid, "start timeout");
}

#[test]
fn a_container_ends_removed_after_sigterm() {
    let _serial = crate::support::serial();
    let dir = tempfile::tempdir().unwrap();
    let (pid, code) = live_in_docker(dir.path(), Run::Serve, Some(Signal::SIGTERM));
    assert_eq!(code, Some(3));
    assert_owned_and_removed(dir.path(), pid, "SIGTERM");
}

#[test]
fn a_container_ends_removed_after_sigkill_of_perfgate() {
    let _serial = crate::support::serial();
    let dir = tempfile::tempdir().unwrap();
    let (pid, _) = live_in_docker(dir.path(), Run::Serve, Some(Signal::SIGKILL));
    assert_owned_and_removed(dir.path(), pid, "SIGKILL");
}
