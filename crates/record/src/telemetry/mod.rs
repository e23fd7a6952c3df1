//! Machine and server telemetry beside a run: what the GPUs (`nvidia-smi`), the CPU (`/proc`)
//! and the server's `/metrics` gauges did while a scenario ran, summarised per run into the
//! record's `telemetry` key, and the CUPED adjustment ([`cuped`]) that uses a pre-launch
//! calibration measurement as a covariate. Pure: the types, the parsers of the tools' text and
//! the arithmetic; the `monitor` module samples on its own thread.

pub mod cpu;
pub mod cuped;
pub mod gpu;
pub mod platform;
mod series;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub use cpu::CpuSummary;
pub use gpu::GpuSummary;
pub use platform::Platform;
pub use series::{Series, SeriesAcc};

/// What was sampled beside one run. Written under the record's `telemetry` key, only when
/// sampled; vLLM's keys are untouched.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Telemetry {
    /// Seconds between samples.
    pub interval_s: f64,
    /// Sampling rounds taken while the run went on.
    pub samples: u64,
    /// One entry per GPU `nvidia-smi` listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuSummary>,
    /// The server's gauges by perfgate's name (`running`, `waiting`, `kv_cache_usage`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server: BTreeMap<String, Series>,
    /// The time of the fixed calibration loop measured just before the run (milliseconds): a
    /// covariate of the machine's speed at that moment, for [`cuped`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_ms: Option<f64>,
    /// The same loop run on every CPU at once just before the run, the mean over the CPUs of
    /// one unit's time (milliseconds): a machine whose other CPUs are busy (another job, a
    /// neighbour) reads slower here while the one-CPU time above can read as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_all_ms: Option<f64>,
    /// The machine: CPU model and features, CPUs, GPUs and driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Sources that were missing or failed, each once, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Telemetry {
    /// Throttle reasons seen on any GPU that hold a working GPU below its clocks (power, thermal,
    /// hardware slowdown; not idle or an applications-clock setting).
    pub fn throttling(&self) -> BTreeSet<String> {
        self.gpus
            .iter()
            .flat_map(|g| g.throttle_reasons.iter())
            .filter(|r| !gpu::BENIGN_REASONS.contains(&r.as_str()))
            .cloned()
            .collect()
    }
}

/// perfgate's calibration loop timed before a run, in milliseconds a unit: on one CPU, and on
/// every CPU at once (`None`: not timed).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Calibration {
    pub one_ms: Option<f64>,
    pub all_ms: Option<f64>,
}

/// The server gauges kept, by perfgate's name.
pub const SERVER_GAUGES: [&str; 3] = ["running", "waiting", "kv_cache_usage"];

/// Samples of one run as they arrive (bounded memory: see [`SeriesAcc`]).
#[derive(Debug, Clone, Default)]
pub struct TelemetryAcc {
    pub rounds: u64,
    pub gpus: gpu::GpuAccs,
    pub load1: SeriesAcc,
    pub freq_mhz: SeriesAcc,
    pub cpus: Option<u32>,
    /// `/proc/stat` at the first and the latest sample.
    pub stat_first: Option<cpu::CpuTimes>,
    pub stat_last: Option<cpu::CpuTimes>,
    pub server: BTreeMap<String, SeriesAcc>,
    pub platform: Option<Platform>,
    pub notes: Vec<String>,
}

impl TelemetryAcc {
    /// Note a missing or failing source once (the first reason of each source is kept).
    pub fn note(&mut self, source: &str, why: &str) {
        let head = format!("{source}: ");
        if !self.notes.iter().any(|n| n.starts_with(&head)) {
            self.notes.push(format!("{head}{why}"));
        }
    }

    pub fn stat(&mut self, t: cpu::CpuTimes) {
        self.stat_first.get_or_insert(t);
        self.stat_last = Some(t);
    }

    pub fn server_gauge(&mut self, name: &str, v: f64) {
        self.server.entry(name.to_string()).or_default().push(v);
    }

    pub fn summary(&self, interval_s: f64, calibration: Calibration) -> Telemetry {
        let fr = match (self.stat_first, self.stat_last) {
            (Some(a), Some(b)) => cpu::fractions(a, b),
            _ => None,
        };
        let cpu = CpuSummary {
            cpus: self.cpus,
            load1: self.load1.summary(),
            freq_mhz: self.freq_mhz.summary(),
            busy_frac: fr.map(|f| f.0),
            iowait_frac: fr.map(|f| f.1),
            steal_frac: fr.map(|f| f.2),
        };
        Telemetry {
            interval_s,
            samples: self.rounds,
            gpus: self.gpus.summaries(),
            cpu: (cpu != CpuSummary::default()).then_some(cpu),
            server: self
                .server
                .iter()
                .filter_map(|(k, a)| Some((k.clone(), a.summary()?)))
                .collect(),
            calibration_ms: calibration.one_ms,
            calibration_all_ms: calibration.all_ms,
            platform: self.platform.clone(),
            notes: self.notes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_notes_once_and_serializes_only_what_was_seen() {
        let mut a = TelemetryAcc::default();
        a.note("nvidia-smi", "not on PATH");
        a.note("nvidia-smi", "again");
        a.stat(cpu::cpu_times("cpu  100 0 0 900 0 0 0 0\n").unwrap());
        a.stat(cpu::cpu_times("cpu  150 0 0 950 0 0 0 0\n").unwrap());
        a.server_gauge("running", 3.0);
        a.server_gauge("running", 5.0);
        a.rounds = 2;
        let cal = Calibration {
            one_ms: Some(201.5),
            all_ms: Some(240.25),
        };
        let t = a.summary(1.0, cal);
        assert_eq!(t.notes, ["nvidia-smi: not on PATH"]);
        assert_eq!(t.cpu.as_ref().unwrap().busy_frac, Some(0.5));
        assert_eq!(t.server["running"].median, 4.0);
        let json = serde_json::to_value(&t).unwrap();
        assert!(json.get("gpus").is_none(), "{json}");
        assert_eq!(json["calibration_ms"], 201.5);
        assert_eq!(json["calibration_all_ms"], 240.25);
        let back: Telemetry = serde_json::from_value(json).unwrap();
        assert_eq!(back, t);
        assert!(t.throttling().is_empty());
    }

    #[test]
    fn throttling_leaves_out_idle() {
        let mut a = TelemetryAcc::default();
        for s in gpu::parse("0, 1, 1, 1, 1, 1, 0x1\n1, 1, 1, 1, 1, 1, 0x24\n").0 {
            a.gpus.push(&s);
        }
        let t = a.summary(1.0, Calibration::default());
        let json = serde_json::to_value(&t).unwrap();
        assert!(json.get("calibration_all_ms").is_none(), "{json}");
        assert_eq!(
            t.throttling().into_iter().collect::<Vec<_>>(),
            ["sw_power_cap", "sw_thermal_slowdown"]
        );
    }
}
