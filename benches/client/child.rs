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
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// What the child used and said.
#[derive(Debug, Clone)]
pub struct ChildRun {
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub max_rss_kib: u64,
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
    dir: &Path,
    name: &str,
    limit: Duration,
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
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data filled by the kernel.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        if !killed && start.elapsed() > limit {
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

pub fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}
