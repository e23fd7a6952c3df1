//! `nvidia-smi --query-gpu` output: one CSV line per GPU (no header, no units), read robustly:
//! `[N/A]`, `[Not Supported]` or any other unreadable field is a missing value, never an error,
//! and the throttle-reason bit mask becomes names.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::series::{Series, SeriesAcc};

/// The fields asked for, in order (`clocks_event_reasons.active` is the newer drivers' name of
/// the last one; [`QUERY_FIELDS_NEW`] asks for it).
pub const QUERY_FIELDS: &str = "index,clocks.sm,clocks.mem,power.draw,temperature.gpu,\
utilization.gpu,clocks_throttle_reasons.active";
/// [`QUERY_FIELDS`] under the name drivers that dropped `clocks_throttle_reasons` use.
pub const QUERY_FIELDS_NEW: &str = "index,clocks.sm,clocks.mem,power.draw,temperature.gpu,\
utilization.gpu,clocks_event_reasons.active";

/// The fields asked for once per run, for the platform: each GPU's name and the driver.
pub const NAME_FIELDS: &str = "name,driver_version";

/// One GPU at one instant.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuSample {
    pub index: String,
    pub sm_clock_mhz: Option<f64>,
    pub mem_clock_mhz: Option<f64>,
    pub power_w: Option<f64>,
    pub temperature_c: Option<f64>,
    pub utilization_pct: Option<f64>,
    /// The active reasons' bit mask, when reported.
    pub reasons: Option<u64>,
}

/// The bits of `clocks_throttle_reasons.active` (NVML's `nvmlClocksThrottleReasons`), by name.
/// The first two do not slow a busy GPU down; the rest do.
const REASONS: [(u64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

/// Reasons that do not mean the GPU was held below its clocks while it worked.
pub const BENIGN_REASONS: [&str; 2] = ["gpu_idle", "applications_clocks_setting"];

/// Names of the bits set in `mask` (an unknown bit as `0x…`).
pub fn reason_names(mask: u64) -> Vec<String> {
    let mut out: Vec<String> = REASONS
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, n)| (*n).to_string())
        .collect();
    let known: u64 = REASONS.iter().map(|(b, _)| b).sum();
    if mask & !known != 0 {
        out.push(format!("{:#x}", mask & !known));
    }
    out
}

fn number(field: &str) -> Option<f64> {
    let v: f64 = field.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

fn mask(field: &str) -> Option<u64> {
    let f = field.trim();
    let hex = f.strip_prefix("0x").or_else(|| f.strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok()
}

/// The GPUs of one `nvidia-smi` answer. A line with the wrong number of fields is skipped and
/// counted in the second value.
pub fn parse(text: &str) -> (Vec<GpuSample>, usize) {
    let mut gpus = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 7 {
            bad += 1;
            continue;
        }
        gpus.push(GpuSample {
            index: f[0].trim().to_string(),
            sm_clock_mhz: number(f[1]),
            mem_clock_mhz: number(f[2]),
            power_w: number(f[3]),
            temperature_c: number(f[4]),
            utilization_pct: number(f[5]),
            reasons: mask(f[6]),
        });
    }
    (gpus, bad)
}

/// One GPU over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuSummary {
    /// nvidia-smi's index of the GPU.
    pub index: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_clock_mhz: Option<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_pct: Option<Series>,
    /// Every throttle reason seen active in any sample, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle_reasons: Vec<String>,
}

#[derive(Debug, Clone, Default)]
struct GpuAcc {
    sm: SeriesAcc,
    mem: SeriesAcc,
    power: SeriesAcc,
    temp: SeriesAcc,
    util: SeriesAcc,
    reasons: BTreeSet<String>,
}

/// GPU samples as they arrive, by GPU index.
#[derive(Debug, Clone, Default)]
pub struct GpuAccs(BTreeMap<String, GpuAcc>);

impl GpuAccs {
    pub fn push(&mut self, s: &GpuSample) {
        let a = self.0.entry(s.index.clone()).or_default();
        let put = |acc: &mut SeriesAcc, v: Option<f64>| {
            if let Some(v) = v {
                acc.push(v);
            }
        };
        put(&mut a.sm, s.sm_clock_mhz);
        put(&mut a.mem, s.mem_clock_mhz);
        put(&mut a.power, s.power_w);
        put(&mut a.temp, s.temperature_c);
        put(&mut a.util, s.utilization_pct);
        if let Some(m) = s.reasons {
            a.reasons.extend(reason_names(m));
        }
    }

    pub fn summaries(&self) -> Vec<GpuSummary> {
        self.0
            .iter()
            .map(|(index, a)| GpuSummary {
                index: index.clone(),
                sm_clock_mhz: a.sm.summary(),
                mem_clock_mhz: a.mem.summary(),
                power_w: a.power.summary(),
                temperature_c: a.temp.summary(),
                utilization_pct: a.util.summary(),
                throttle_reasons: a.reasons.iter().cloned().collect(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_two_gpus_with_missing_fields() {
        let text = "0, 1980, 2619, 312.45, 67, 98, 0x0000000000000000\n\
                    1, [N/A], 2619, [Not Supported], 71, [N/A], 0x0000000000000024\n\
                    \n\
                    garbage line\n";
        let (g, bad) = parse(text);
        assert_eq!(bad, 1);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].sm_clock_mhz, Some(1980.0));
        assert_eq!(g[0].power_w, Some(312.45));
        assert_eq!(g[0].reasons, Some(0));
        assert_eq!(g[1].index, "1");
        assert_eq!(g[1].sm_clock_mhz, None);
        assert_eq!(g[1].power_w, None);
        assert_eq!(g[1].utilization_pct, None);
        assert_eq!(g[1].temperature_c, Some(71.0));
        assert_eq!(
            reason_names(g[1].reasons.unwrap()),
            ["sw_power_cap", "sw_thermal_slowdown"]
        );
    }

    #[test]
    fn unknown_bits_and_unreadable_masks() {
        assert_eq!(reason_names(0x1 | 0x1000), ["gpu_idle", "0x1000"]);
        assert!(reason_names(0).is_empty());
        let (g, _) = parse("0, 1, 2, 3, 4, 5, [N/A]\n");
        assert_eq!(g[0].reasons, None);
    }

    #[test]
    fn summary_per_gpu() {
        let mut acc = GpuAccs::default();
        for line in [
            "0, 1980, 2619, 300, 60, 90, 0x0\n1, 1400, 2619, 350, 80, 95, 0x4",
            "0, 1950, 2619, 310, 62, 91, 0x1\n1, [N/A], 2619, 360, 84, 97, 0x40",
        ] {
            for s in parse(line).0 {
                acc.push(&s);
            }
        }
        let s = acc.summaries();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].sm_clock_mhz.unwrap().median, 1965.0);
        assert_eq!(s[0].throttle_reasons, ["gpu_idle"]);
        assert_eq!(s[1].sm_clock_mhz.unwrap().n, 1);
        assert_eq!(s[1].temperature_c.unwrap().max, 84.0);
        assert_eq!(
            s[1].throttle_reasons,
            ["hw_thermal_slowdown", "sw_power_cap"]
        );
    }
}
