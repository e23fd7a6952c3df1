//! One engine process: spawned with `sh -c` in its own process group with its output in a log
//! file, probed until ready, watched while it serves, and stopped (docker stop, SIGTERM to the
//! group, a grace period, SIGKILL) with the port and GPU memory waited for afterwards.
//!
//! The engine never outlives perfgate. Its leader gets a parent-death signal (SIGKILL, set
//! before `exec`), and a reaper (`sh`, in a process group of its own, ignoring SIGINT, SIGTERM
//! and SIGHUP) reads a socket whose other end only perfgate holds: when perfgate is gone in any
//! way, SIGKILL included, that end closes and the reaper sends SIGTERM, then after the grace
//! period SIGKILL, to the engine's whole process group, and runs `docker rm -f` on a container
//! perfgate named. A process that leaves the group (`setsid`, a double fork) escapes both.
//!
//! A container perfgate names (`perfgate-…`) also gets the label `perfgate.owner=<pid>` after
//! `docker run`; only a container with perfgate's name and label is stopped and removed, and it
//! is removed however the launch ends (stop, fault, start timeout, signal, drop, the reaper).

mod probe;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

pub use probe::{gpu_memory_used_mib, parse_gpu_memory, probe_ready, ready_poll_pause};
use probe::{wait_gpu_memory, wait_port_free};

use super::EngineError;
use crate::suite::StopMethod;

/// Lines of the engine log quoted in error messages.
pub const LOG_TAIL_LINES: usize = 20;

/// Variables the engine never inherits (it runs the pull request's code): the Actions runner's
/// control files, through which a step sets outputs, environment and `PATH` for later steps
/// (the post step's binary among them), and the GitHub credentials.
pub const DENIED_ENV: [&str; 11] = [
    "GITHUB_OUTPUT",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_PAT",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "PERFGATE_TOKEN",
];

/// Names of variables (comma-separated) that the engine may inherit although their name looks
/// secret, e.g. `HF_TOKEN` for a gated model. The names of [`DENIED_ENV`] and `ACTIONS_*` are
/// removed whatever this says.
pub const PASS_ENV_VAR: &str = "PERFGATE_ENGINE_PASS_ENV";

/// Is the variable `name` kept from the engine? [`DENIED_ENV`], the runner's `ACTIONS_*`
/// (runtime, cache and OIDC tokens and their URLs), and any name holding `TOKEN`, `SECRET`,
/// `PASSWORD` or `PRIVATE_KEY` (any case) unless `pass` names it.
pub fn env_denied(name: &str, pass: &[String]) -> bool {
    let up = name.to_ascii_uppercase();
    if DENIED_ENV.contains(&up.as_str()) || up.starts_with("ACTIONS_") {
        return true;
    }
    let secret = ["TOKEN", "SECRET", "PASSWORD", "PRIVATE_KEY"]
        .iter()
        .any(|w| up.contains(w));
    secret && !pass.iter().any(|p| p == name)
}

/// Remove from `cmd` every inherited variable [`env_denied`] names (the allow-list read from
/// [`PASS_ENV_VAR`]). Variables set on `cmd` afterwards (a preset's `env`) are kept.
pub fn scrub_env(cmd: &mut Command) {
    let pass: Vec<String> = std::env::var(PASS_ENV_VAR)
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for (k, _) in std::env::vars_os() {
        if env_denied(&k.to_string_lossy(), &pass) {
            cmd.env_remove(&k);
        }
    }
}

/// What to launch and how.
#[derive(Debug, Clone)]
pub struct EngineSpec {
    /// The shell command (run with `sh -c`).
    pub command: String,
    pub env: BTreeMap<String, String>,
    pub port: u16,
    /// Where requests go, e.g. `http://127.0.0.1:8000`.
    pub base_url: String,
    /// The model `/v1/models` must list before the engine counts as ready.
    pub served_model_name: String,
    pub start_timeout: Duration,
    pub stop: StopMethod,
    /// SIGTERM → SIGKILL grace period (also `docker stop -t`).
    pub grace: Duration,
    /// The engine's stdout and stderr go here.
    pub log_path: PathBuf,
}

/// How a stop went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopOutcome {
    /// The process group had to be killed with SIGKILL after the grace period.
    pub killed: bool,
    /// The port stopped accepting connections.
    pub port_freed: bool,
    /// The process's exit status, if it was reaped.
    pub status: Option<String>,
    /// Anything worth telling the user (GPU memory not freed, docker stop failed, …).
    pub notes: Vec<String>,
}

/// A launched engine. Dropping it without [`Engine::stop`] SIGKILLs the process group.
#[derive(Debug)]
pub struct Engine {
    spec: EngineSpec,
    child: Option<Child>,
    pgid: Pid,
    exit: Option<ExitStatus>,
    gpu_mem_before: Option<u64>,
    /// Stops the group if perfgate dies; `None` if it could not be started (said on stderr).
    reaper: Option<Reaper>,
}

/// The reaper process and perfgate's end of its socket pair (never written: closing it, which
/// the kernel does when perfgate exits in any way, is the signal).
#[derive(Debug)]
struct Reaper {
    child: Child,
    _link: std::os::unix::net::UnixStream,
}

/// The reaper's script: `$1` the engine's process group, `$2` the grace period in seconds, `$3`
/// a container to remove (or empty), `$4` its owner label. `read` returns at end of file, when
/// perfgate is gone.
const REAPER: &str = "read -r _; kill -TERM \"-$1\" 2>/dev/null; \
    if [ -n \"$3\" ]; then \
    ids=$(docker ps -aq --filter \"label=$4\" --filter \"name=^/?$3\\$\" 2>/dev/null); \
    [ -n \"$ids\" ] && docker rm -f $ids >/dev/null 2>&1; fi; \
    i=0; while [ \"$i\" -lt \"$2\" ] && kill -0 \"-$1\" 2>/dev/null; do sleep 1; i=$((i+1)); done; \
    kill -KILL \"-$1\" 2>/dev/null";

/// `perfgate.owner=<this perfgate's pid>`: the label of the containers this process starts.
fn owner_label() -> String {
    format!("{}={}", crate::suite::OWNER_LABEL, std::process::id())
}

/// The ids of the containers named `name` that carry `label` (`perfgate.owner` or
/// `perfgate.owner=<pid>`); empty when there are none or docker does not answer.
fn containers(name: &str, label: &str) -> Vec<String> {
    let mut cmd = Command::new("docker");
    cmd.args(["ps", "-aq", "--filter"])
        .arg(format!("label={label}"))
        .arg("--filter")
        .arg(format!("name=^/?{name}$"));
    match bounded(cmd, Duration::from_secs(20)) {
        Some((true, stdout)) => stdout.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// Run `cmd` (stdin and stderr closed) for at most `limit` (then it is killed: a docker that
/// does not answer never hangs perfgate); whether it succeeded, and its stdout.
fn bounded(mut cmd: Command, limit: Duration) -> Option<(bool, String)> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                let mut out = String::new();
                if let Some(mut o) = child.stdout.take() {
                    let _ = o.read_to_string(&mut out);
                }
                return Some((st.success(), out));
            }
            Ok(None) if t0.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// `docker rm -f` the containers named `name` that carry `label`; says what failed.
fn remove_containers(name: &str, label: &str) -> Option<String> {
    let ids = containers(name, label);
    if ids.is_empty() {
        return None;
    }
    let mut cmd = Command::new("docker");
    cmd.args(["rm", "-f"]).args(&ids);
    match bounded(cmd, Duration::from_secs(30)) {
        Some((true, _)) => None,
        Some((false, _)) => Some(format!("`docker rm -f` of container {name} failed")),
        None => Some(format!(
            "`docker rm -f` of container {name} did not finish in 30 s"
        )),
    }
}

impl Reaper {
    /// Start the reaper of process group `pgid`.
    fn start(pgid: Pid, grace: Duration, container: Option<&str>) -> std::io::Result<Reaper> {
        // Both ends close-on-exec: no other child (the engine above all) holds perfgate's end.
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(REAPER)
            .arg("perfgate-reaper")
            .arg(pgid.as_raw().to_string())
            .arg(grace.as_secs().max(1).to_string())
            .arg(container.unwrap_or(""))
            .arg(owner_label())
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: only async-signal-safe calls (sigaction) between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                use nix::sys::signal::{signal, SigHandler};
                for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
                    signal(s, SigHandler::SigIgn).map_err(std::io::Error::from)?;
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        Ok(Reaper { child, _link: ours })
    }

    /// The engine is stopped: end the reaper without it doing anything.
    fn dismiss(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Is something already serving or bound at `port` on this machine?
pub fn port_in_use(port: u16) -> Option<String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    if TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok() {
        return Some(format!(
            "something already accepts connections on 127.0.0.1:{port}"
        ));
    }
    match TcpListener::bind(addr) {
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            Some(format!("port {port} is already bound by another process"))
        }
        Err(_) => None,
    }
}

/// The last `n` lines of a log file (reads at most the last 64 KiB), as untrusted text: the
/// engine wrote it, so secrets are masked, control characters dropped and workflow commands
/// defused ([`crate::redact::untrusted`]) before it reaches stderr, errors.jsonl or a report.
pub fn log_tail(path: &Path, n: usize) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(64 * 1024);
    if f.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(n);
    crate::redact::untrusted(&lines[from..].join("\n"))
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => match Signal::try_from(s) {
            Ok(sig) => format!("killed by {sig}"),
            Err(_) => format!("killed by signal {s}"),
        },
        _ => status.to_string(),
    }
}

impl Engine {
    /// Check the port, then start the command in its own process group, logging to the log file.
    pub fn spawn(spec: EngineSpec) -> Result<Engine, EngineError> {
        if let Some(detail) = port_in_use(spec.port) {
            return Err(EngineError::PortTaken {
                port: spec.port,
                detail,
            });
        }
        let mut command = spec.command.clone();
        if let StopMethod::Docker { container } = &spec.stop {
            // A container of a perfgate (its label) left over from a crashed run would block
            // `docker run --name`; one without the label is not ours and stays.
            let _ = remove_containers(container, crate::suite::OWNER_LABEL);
            command = crate::suite::with_owner_label(&command, &std::process::id().to_string());
        }
        let log_err = |reason| EngineError::Log {
            path: spec.log_path.display().to_string(),
            reason,
        };
        if let Some(dir) = spec.log_path.parent() {
            std::fs::create_dir_all(dir).map_err(log_err)?;
        }
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&spec.log_path)
            .map_err(log_err)?;
        let _ = writeln!(
            log,
            "# perfgate {}: launching: {}",
            chrono::Utc::now().to_rfc3339(),
            command.replace('\n', " ")
        );
        let err_log = log.try_clone().map_err(log_err)?;
        let gpu_mem_before = gpu_memory_used_mib();
        let mut sh = Command::new("sh");
        scrub_env(&mut sh);
        sh.arg("-c")
            .arg(&command)
            .envs(&spec.env)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(err_log))
            .process_group(0);
        let parent = nix::unistd::getpid();
        // SAFETY: only async-signal-safe calls (sigaction, prctl, getppid, kill) between fork
        // and exec.
        unsafe {
            sh.pre_exec(move || {
                // perfgate ignores SIGXFSZ (`atomic::ignore_file_size_signal`); the engine gets
                // the default back.
                use nix::sys::signal::{signal, SigHandler};
                signal(Signal::SIGXFSZ, SigHandler::SigDfl).map_err(std::io::Error::from)?;
                // The leader dies with perfgate, even by SIGKILL. The signal follows the thread
                // that spawned it: perfgate spawns engines from its runtime's thread, which lives
                // as long as the process.
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
                if nix::unistd::getppid() != parent {
                    // perfgate died between fork and prctl.
                    let _ = nix::sys::signal::kill(nix::unistd::getpid(), Signal::SIGKILL);
                }
                Ok(())
            });
        }
        let child = sh.spawn().map_err(|reason| EngineError::Spawn {
            command: spec.command.clone(),
            reason,
        })?;
        let pgid = Pid::from_raw(child.id() as i32);
        let container = match &spec.stop {
            StopMethod::Docker { container } => Some(container.as_str()),
            _ => None,
        };
        let reaper = match Reaper::start(pgid, spec.grace, container) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!(
                    "perfgate: warning: no reaper for the engine ({e}): if perfgate is killed, \
                     processes of the engine's group {pgid} may be left"
                );
                None
            }
        };
        Ok(Engine {
            spec,
            child: Some(child),
            pgid,
            exit: None,
            gpu_mem_before,
            reaper,
        })
    }

    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }

    /// The process group id (= the shell's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid.as_raw()
    }

    /// The last lines of the engine log.
    pub fn log_tail(&self) -> String {
        log_tail(&self.spec.log_path, LOG_TAIL_LINES)
    }

    /// `Some(description)` once the launched command has exited.
    pub fn exited(&mut self) -> Option<String> {
        if self.exit.is_none() {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    self.exit = Some(st);
                }
            }
        }
        self.exit.map(describe)
    }

    /// Wait until `/health` answers 200 (or 404: no such endpoint) and `/v1/models` lists the
    /// served model. Fails when the process exits or the start timeout passes.
    pub async fn wait_ready(&mut self, http: &reqwest::Client) -> Result<Duration, EngineError> {
        let t0 = Instant::now();
        let deadline = t0 + self.spec.start_timeout;
        let mut last;
        let mut polls = 0u32;
        loop {
            if let Some(status) = self.exited() {
                return Err(EngineError::ExitedBeforeReady {
                    status,
                    tail: self.log_tail(),
                });
            }
            match probe_ready(http, &self.spec.base_url, &self.spec.served_model_name).await {
                Ok(()) => return Ok(t0.elapsed()),
                Err(why) => last = why,
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(EngineError::StartTimeout {
                    timeout_s: self.spec.start_timeout.as_secs_f64(),
                    last,
                    tail: self.log_tail(),
                });
            }
            tokio::time::sleep((deadline - now).min(ready_poll_pause(polls))).await;
            polls = polls.saturating_add(1);
        }
    }

    /// Stop the engine: `docker stop` for containers, SIGTERM to the process group, the grace
    /// period, SIGKILL; then wait (bounded) for the port and GPU memory to be released.
    pub async fn stop(&mut self) -> StopOutcome {
        let mut out = StopOutcome::default();
        let grace = self.spec.grace;
        let docker = match &self.spec.stop {
            StopMethod::Docker { container } => Some(container.clone()),
            StopMethod::ProcessGroup => None,
        };
        let owned = docker
            .as_deref()
            .map(|c| containers(c, &owner_label()))
            .unwrap_or_default();
        if let (Some(container), false) = (&docker, owned.is_empty()) {
            let secs = grace.as_secs().max(1).to_string();
            let mut cmd = tokio::process::Command::new("docker");
            cmd.args(["stop", "-t", &secs])
                .args(&owned)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true);
            match tokio::time::timeout(grace + Duration::from_secs(15), cmd.status()).await {
                Ok(Ok(st)) if st.success() => {}
                Ok(Ok(st)) => out
                    .notes
                    .push(format!("`docker stop {container}` ended with {st}")),
                Ok(Err(e)) => out.notes.push(format!("`docker stop {container}`: {e}")),
                Err(_) => out
                    .notes
                    .push(format!("`docker stop {container}` did not finish in time")),
            }
        }
        if !self.group_gone() {
            let _ = killpg(self.pgid, Signal::SIGTERM);
            if !self.wait_group_gone(grace).await {
                out.killed = true;
                let _ = killpg(self.pgid, Signal::SIGKILL);
                self.wait_group_gone(Duration::from_secs(5)).await;
            }
        }
        out.status = self.exited();
        // Removed whatever way it ended (`--rm` may have done it already).
        if let Some(c) = &docker {
            out.notes.extend(remove_containers(c, &owner_label()));
        }
        if let Some(r) = self.reaper.take() {
            r.dismiss();
        }
        out.port_freed = wait_port_free(self.spec.port, Duration::from_secs(30)).await;
        if !out.port_freed {
            out.notes.push(format!(
                "port {} still accepts connections 30 s after the engine stopped",
                self.spec.port
            ));
        }
        if let Some(before) = self.gpu_mem_before {
            if let Some(note) = wait_gpu_memory(before, Duration::from_secs(120)).await {
                out.notes.push(note);
            }
        }
        self.child = None;
        out
    }

    /// True when no process of the group is left (and the leader has been reaped).
    fn group_gone(&mut self) -> bool {
        let _ = self.exited();
        let leader_done = self.exit.is_some() || self.child.is_none();
        leader_done && killpg(self.pgid, None) == Err(Errno::ESRCH)
    }

    async fn wait_group_gone(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.group_gone() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if self.child.is_some() && !self.group_gone() {
            let _ = killpg(self.pgid, Signal::SIGKILL);
            if let Some(c) = self.child.as_mut() {
                let _ = c.wait();
            }
            if let StopMethod::Docker { container } = &self.spec.stop {
                let _ = remove_containers(container, &owner_label());
            }
        }
        if let Some(r) = self.reaper.take() {
            r.dismiss();
        }
    }
}

#[cfg(test)]
mod tests;
