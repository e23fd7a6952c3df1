//! One sampling round per tick, on the monitor's own thread and current-thread runtime.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::MonitorConfig;
use crate::engine::metrics;
use crate::telemetry::{cpu, gpu, Platform, TelemetryAcc};

/// Failures of a source before it is left alone for the rest of the run.
const GIVE_UP_AFTER: u32 = 3;
/// The longest one `nvidia-smi` call or one scrape may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Sample until `rx` says stop (or its sender is dropped).
pub(super) fn sample(
    cfg: &MonitorConfig,
    mut rx: tokio::sync::watch::Receiver<bool>,
) -> TelemetryAcc {
    let cpus = std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mut acc = TelemetryAcc {
        cpus,
        platform: Some(Platform::from_cpuinfo(&cpuinfo, cpus)),
        ..Default::default()
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            acc.note("telemetry", &format!("no runtime: {e}"));
            return acc;
        }
    };
    let mut state = State::new(cfg);
    // The GPUs' names and driver, asked once beside the first rounds (a stop cancels it too).
    let mut names_rx = rx.clone();
    let names = async {
        tokio::select! {
            r = run_smi(&cfg.nvidia_smi, gpu::NAME_FIELDS) => Some(r),
            _ = names_rx.changed() => None,
        }
    };
    let sampling = async {
        while !*rx.borrow() {
            tokio::select! {
                () = state.round(&mut acc) => {}
                _ = rx.changed() => break,
            }
            tokio::select! {
                () = tokio::time::sleep(cfg.every) => {}
                _ = rx.changed() => break,
            }
        }
    };
    let (names, ()) = rt.block_on(async { tokio::join!(names, sampling) });
    let why = match names {
        Some(Ok(text)) => match acc
            .platform
            .get_or_insert_with(Platform::default)
            .add_gpus(&text)
        {
            true => None,
            false => Some("GPU names: an unreadable answer (no GPU list in the platform)".into()),
        },
        Some(Err(SmiError::Failed(why))) => Some(format!("GPU names: {why}")),
        // No nvidia-smi is the samples' note; a stop before the answer leaves no GPU list.
        Some(Err(SmiError::NotFound)) | None => None,
    };
    if let Some(why) = why {
        acc.note("nvidia-smi", &why);
    }
    // A last CPU read, so the busy/steal/iowait fractions span the whole run.
    if acc.stat_first.is_some() {
        state.cpu(&mut acc);
    }
    acc
}

struct State<'a> {
    cfg: &'a MonitorConfig,
    http: Option<reqwest::Client>,
    smi_fields: Option<&'static str>,
    smi_failures: u32,
    metrics_failures: u32,
}

impl<'a> State<'a> {
    fn new(cfg: &'a MonitorConfig) -> Self {
        // A fresh connection per scrape: an idle keep-alive one would hold one of the few
        // HTTP threads some engines have (llama.cpp).
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .timeout(CALL_TIMEOUT)
            .build()
            .ok();
        State {
            cfg,
            http,
            smi_fields: Some(gpu::QUERY_FIELDS),
            smi_failures: 0,
            metrics_failures: 0,
        }
    }

    async fn round(&mut self, acc: &mut TelemetryAcc) {
        self.gpus(acc).await;
        self.cpu(acc);
        self.server(acc).await;
        acc.rounds += 1;
    }

    async fn gpus(&mut self, acc: &mut TelemetryAcc) {
        let Some(fields) = self.smi_fields else {
            return;
        };
        match run_smi(&self.cfg.nvidia_smi, fields).await {
            Ok(text) => {
                let (gpus, bad) = gpu::parse(&text);
                if bad > 0 {
                    acc.note(
                        "nvidia-smi",
                        &format!("{bad} unreadable line(s) in its answer"),
                    );
                }
                for g in &gpus {
                    acc.gpus.push(g);
                }
            }
            Err(SmiError::NotFound) => {
                acc.note("nvidia-smi", "not on PATH (no GPU telemetry)");
                self.smi_fields = None;
            }
            // Newer drivers know the last field only as `clocks_event_reasons.active`.
            Err(SmiError::Failed(_)) if fields == gpu::QUERY_FIELDS => {
                self.smi_fields = Some(gpu::QUERY_FIELDS_NEW);
            }
            Err(SmiError::Failed(why)) => {
                acc.note("nvidia-smi", &why);
                self.smi_failures += 1;
                if self.smi_failures >= GIVE_UP_AFTER {
                    self.smi_fields = None;
                }
            }
        }
    }

    fn cpu(&self, acc: &mut TelemetryAcc) {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        match read("/proc/loadavg").as_deref().and_then(cpu::load1) {
            Some(l) => acc.load1.push(l),
            None => acc.note("/proc/loadavg", "unreadable (no load average)"),
        }
        match read("/proc/stat").as_deref().and_then(cpu::cpu_times) {
            Some(t) => acc.stat(t),
            None => acc.note(
                "/proc/stat",
                "unreadable (no busy, steal or iowait fractions)",
            ),
        }
        match cpu_mhz() {
            Some(f) => acc.freq_mhz.push(f),
            None => acc.note(
                "cpu frequency",
                "neither cpufreq nor /proc/cpuinfo gives one",
            ),
        }
    }

    async fn server(&mut self, acc: &mut TelemetryAcc) {
        let (Some(base), Some(http)) = (&self.cfg.base_url, &self.http) else {
            return;
        };
        if self.metrics_failures >= GIVE_UP_AFTER {
            return;
        }
        match metrics::scrape(http, base).await {
            Ok(snap) => {
                for (name, v) in snap.gauges() {
                    acc.server_gauge(name, v);
                }
            }
            Err(e) => {
                acc.note("/metrics", &crate::redact::text(&e.to_string()));
                self.metrics_failures += 1;
            }
        }
    }
}

/// The mean clock of the CPUs: cpufreq's current frequencies, else `/proc/cpuinfo`.
fn cpu_mhz() -> Option<f64> {
    let texts: Vec<String> = std::fs::read_dir("/sys/devices/system/cpu")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("cpu") && n[3..].bytes().all(|b| b.is_ascii_digit()) && n.len() > 3
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("cpufreq/scaling_cur_freq")).ok())
        .collect();
    cpu::scaling_mhz(texts.iter().map(String::as_str))
        .or_else(|| cpu::cpuinfo_mhz(&std::fs::read_to_string("/proc/cpuinfo").ok()?))
}

enum SmiError {
    NotFound,
    Failed(String),
}

/// A child killed and reaped when dropped (a round cancelled by the stop, or a timeout).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// Run `nvidia-smi --query-gpu=FIELDS` and return its standard output.
async fn run_smi(program: &str, fields: &str) -> Result<String, SmiError> {
    use std::io::Read;
    let child = Command::new(program)
        .arg(format!("--query-gpu={fields}"))
        .arg("--format=csv,noheader,nounits")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SmiError::NotFound,
            _ => SmiError::Failed(format!("cannot start: {e}")),
        })?;
    let mut child = Reaped(child);
    let deadline = tokio::time::Instant::now() + CALL_TIMEOUT;
    let status = loop {
        match child.0.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Ok(None) => {
                return Err(SmiError::Failed(format!(
                    "no answer within {} s (killed)",
                    CALL_TIMEOUT.as_secs()
                )))
            }
            Err(e) => return Err(SmiError::Failed(e.to_string())),
        }
    };
    // Bounded reads: the answer of a few GPUs is small.
    let mut out = String::new();
    let mut err = String::new();
    if let Some(o) = child.0.stdout.take() {
        let _ = o.take(1 << 20).read_to_string(&mut out);
    }
    if let Some(e) = child.0.stderr.take() {
        let _ = e.take(4096).read_to_string(&mut err);
    }
    if !status.success() {
        let first = err.lines().chain(out.lines()).next().unwrap_or("").trim();
        return Err(SmiError::Failed(crate::redact::text(&format!(
            "exited with {status}: {first}"
        ))));
    }
    Ok(out)
}
