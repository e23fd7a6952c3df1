//! Runs a load client as a child process pinned to one core (as `taskset -c N` would) and reads
//! its resource usage from `wait4`: user + system CPU time and peak RSS. A child that outlives its
//! time limit is killed, so the benchmark never hangs.

use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Pin the calling thread to one core (threads it starts afterwards inherit the mask).
pub fn pin_current_thread(core: usize) {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity(0) acts on the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Give the calling thread real-time FIFO priority `prio` (threads it starts inherit it), so
/// other work on a shared machine does not preempt the measurement. Returns false when not
/// permitted (then the thread keeps its normal priority).
/// Real-time priority of the driver thread while it polls a child (above the server's 20).
const POLLER_FIFO: i32 = 30;

/// The calling thread at SCHED_FIFO `prio` until dropped, then back to normal.
struct Priority;

impl Priority {
    fn fifo(prio: i32) -> Priority {
        set_fifo(prio);
        Priority
    }
}

impl Drop for Priority {
    fn drop(&mut self) {
        set_normal();
    }
}

/// The calling thread back to normal (SCHED_OTHER) scheduling.
pub fn set_normal() {
    // SAFETY: sched_param is plain data; pid 0 is the calling thread.
    unsafe {
        let p = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_OTHER, &p);
    }
}

pub fn set_fifo(prio: i32) -> bool {
    // SAFETY: sched_param is plain data; pid 0 is the calling thread.
    unsafe {
        let p = libc::sched_param {
            sched_priority: prio,
        };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    }
}

/// What the child used and said.
#[derive(Debug, Clone)]
pub struct ChildRun {
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub max_rss_kib: u64,
    /// The child's user + system CPU when `started` first returned true (setup done, load begun).
    pub cpu_at_start: Option<Duration>,
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl ChildRun {
    pub fn cpu(&self) -> Duration {
        self.user + self.sys
    }
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

/// Run `cmd` pinned to `core`, stdout/stderr captured into files under `dir` named `name.*`.
pub fn run_pinned(
    mut cmd: Command,
    core: usize,
    fifo: Option<i32>,
    dir: &Path,
    name: &str,
    limit: Duration,
    started: &dyn Fn() -> bool,
) -> io::Result<ChildRun> {
    let out_path = dir.join(format!("{name}.stdout"));
    let err_path = dir.join(format!("{name}.stderr"));
    cmd.stdin(Stdio::null())
        .stdout(File::create(&out_path)?)
        .stderr(File::create(&err_path)?);
    // SAFETY: only async-signal-safe libc calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            if libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
            // Set the policy either way: the driver thread forking us may be real-time itself.
            let (policy, prio) = match fifo {
                Some(prio) => (libc::SCHED_FIFO, prio),
                None => (libc::SCHED_OTHER, 0),
            };
            let p = libc::sched_param {
                sched_priority: prio,
            };
            // Not permitted: run at normal priority.
            let _ = libc::sched_setscheduler(0, policy, &p);
            Ok(())
        });
    }
    // The polling below must not wait behind the real-time server thread on its core (a blast
    // server keeps that core busy): the moment of the first request, and the child's CPU then,
    // would be read late and the load phase under-counted. It polls above the server's priority
    // (it sleeps 5 ms between polls, so the server loses next to nothing).
    let _poller = fifo.map(|_| Priority::fifo(POLLER_FIFO));
    let start = Instant::now();
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data filled by the kernel.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    let mut cpu_at_start = None;
    loop {
        if cpu_at_start.is_none() && started() {
            cpu_at_start = proc_cpu(pid);
        }
        // SAFETY: pid is our own child; status and ru are live, writable plain data.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        if !killed && start.elapsed() > limit {
            // SAFETY: kill has no memory preconditions; pid is our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall = start.elapsed();
    let exit_code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let run = ChildRun {
        wall,
        user: tv(ru.ru_utime),
        sys: tv(ru.ru_stime),
        max_rss_kib: ru.ru_maxrss as u64,
        cpu_at_start,
        exit_code,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    };
    if killed {
        return Err(io::Error::other(format!(
            "{name}: killed after {:.0} s (limit); stderr tail:\n{}",
            limit.as_secs_f64(),
            tail(&run.stderr, 20)
        )));
    }
    Ok(run)
}

/// User + system CPU of a live process (all its threads) from /proc/PID/stat, in clock ticks.
fn proc_cpu(pid: libc::pid_t) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit(')').next()?;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_micros(ticks * 1_000_000 / hz))
}

pub fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}
