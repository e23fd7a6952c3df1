//! Samples telemetry beside a run on a thread and runtime of its own, never the measuring
//! client's: `nvidia-smi` when it is on `PATH`, the CPU's `/proc` files and the server's
//! `/metrics` gauges, every `every` (1 s by default), into a bounded accumulator
//! ([`crate::telemetry::TelemetryAcc`]). A missing or failing source is noted once in the
//! record and left alone after that; it never fails or slows the run. [`Monitor::finish`] (or
//! dropping the monitor) stops and joins the thread; an `nvidia-smi` still running then is
//! killed and reaped.
//!
//! Before sampling starts, [`calibrate`] times a fixed CPU loop on the caller's thread (about
//! 0.2 s, while nothing else of perfgate runs): the machine's speed just before the run, the
//! covariate of [`crate::telemetry::cuped`]; then [`calibrate_all`] times it on every CPU at
//! once (about 0.1 s), which other work on the machine slows where the one-CPU loop finds a
//! free CPU.

mod sources;

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::telemetry::{Calibration, Telemetry, TelemetryAcc};

/// What to sample.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// Between sampling rounds.
    pub every: Duration,
    /// The server whose `/metrics` to scrape (`None`: no server gauges).
    pub base_url: Option<String>,
    /// The `nvidia-smi` program (a name looked up on `PATH`, or a path).
    pub nvidia_smi: String,
    /// Time the calibration loop before sampling starts.
    pub calibrate: bool,
}

impl MonitorConfig {
    pub fn new(every: Duration, base_url: Option<String>) -> Self {
        MonitorConfig {
            every,
            base_url,
            nvidia_smi: "nvidia-smi".into(),
            calibrate: true,
        }
    }
}

/// A running sampler. Stop it with [`Monitor::finish`]; a dropped one stops too.
pub struct Monitor {
    stop: Option<tokio::sync::watch::Sender<bool>>,
    thread: Option<JoinHandle<TelemetryAcc>>,
    every: Duration,
    calibration: Calibration,
}

impl Monitor {
    /// Calibrate (when asked), then start sampling on a new thread. A thread or runtime that
    /// cannot start is noted in the summary, not an error.
    pub fn start(cfg: MonitorConfig) -> Monitor {
        let calibration = match cfg.calibrate {
            true => Calibration {
                one_ms: Some(calibrate()),
                all_ms: calibrate_all(),
            },
            false => Calibration::default(),
        };
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let every = cfg.every;
        let thread = std::thread::Builder::new()
            .name("perfgate-telemetry".into())
            .spawn(move || sources::sample(&cfg, stopped))
            .ok();
        Monitor {
            stop: Some(stop),
            thread,
            every,
            calibration,
        }
    }

    /// Stop sampling, join the thread and summarise.
    pub fn finish(mut self) -> Telemetry {
        let acc = self.halt().unwrap_or_else(|| {
            let mut a = TelemetryAcc::default();
            a.note("telemetry", "the sampling thread did not start or panicked");
            a
        });
        acc.summary(self.every.as_secs_f64(), self.calibration)
    }

    fn halt(&mut self) -> Option<TelemetryAcc> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        self.thread.take()?.join().ok()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Work units of the calibration loop: 2^20 steps of a xorshift generator each.
const UNIT: u64 = 1 << 20;
/// How long the calibration on one CPU runs.
const CALIBRATION: Duration = Duration::from_millis(200);
/// How long the calibration on every CPU at once runs.
const CALIBRATION_ALL: Duration = Duration::from_millis(100);
/// The most threads the calibration on every CPU starts.
const MAX_CPUS: usize = 256;

/// Milliseconds one unit of a fixed integer loop (2^20 xorshift64 steps) takes, the mean over
/// the units run in about 0.2 s: higher when the CPU is slower at this moment (clocks, other
/// tenants, steal). Comparable between runs of the same perfgate build on one machine only.
pub fn calibrate() -> f64 {
    units_for(CALIBRATION)
}

/// The same loop on every CPU at once (one thread per CPU the process may use, at most
/// 256), about 0.1 s: the mean over the threads of one unit's milliseconds. On an idle
/// machine it reads about as [`calibrate`] does; where other work holds some CPUs (another job
/// on the runner, a neighbour), the threads share them and it reads slower, while the one-CPU
/// loop finds a free CPU and does not. An engine whose threads run on every CPU feels that
/// load. `None` when no thread could start.
pub fn calibrate_all() -> Option<f64> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_CPUS));
    // The threads start together: each waits for the write lock the caller holds while it
    // starts them all.
    let start = std::sync::RwLock::new(());
    let each: Vec<f64> = std::thread::scope(|s| {
        let held = start.write();
        let threads: Vec<_> = (0..n)
            .filter_map(|i| {
                let start = &start;
                std::thread::Builder::new()
                    .name(format!("perfgate-calibrate-{i}"))
                    .spawn_scoped(s, move || {
                        drop(start.read());
                        units_for(CALIBRATION_ALL)
                    })
                    .ok()
            })
            .collect();
        drop(held);
        threads.into_iter().filter_map(|t| t.join().ok()).collect()
    });
    (!each.is_empty()).then(|| each.iter().sum::<f64>() / each.len() as f64)
}

/// Run whole units of the loop until `at_least` has passed; milliseconds a unit.
fn units_for(at_least: Duration) -> f64 {
    let start = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut units = 0u64;
    loop {
        for i in 0..UNIT {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x = x.wrapping_add(i);
        }
        x = std::hint::black_box(x);
        units += 1;
        if start.elapsed() >= at_least {
            break;
        }
    }
    start.elapsed().as_secs_f64() * 1e3 / units as f64
}
