//! The CPU's state from Linux's text files: load average (`/proc/loadavg`), time spent busy,
//! waiting for I/O and stolen by the hypervisor (`/proc/stat`, as fractions of the time between
//! two reads) and clock frequency (`cpufreq/scaling_cur_freq`, else `/proc/cpuinfo`). Parsing
//! only; the monitor reads the files.

use serde::{Deserialize, Serialize};

use super::series::Series;

/// The 1-minute load average of `/proc/loadavg`.
pub fn load1(loadavg: &str) -> Option<f64> {
    loadavg.split_whitespace().next()?.parse().ok()
}

/// The all-CPU line of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuTimes {
    /// user + nice + system + idle + iowait + irq + softirq + steal (guest time is inside user).
    pub total: u64,
    pub idle: u64,
    pub iowait: u64,
    pub steal: u64,
}

/// The `cpu ` line of `/proc/stat` (kernels before 2.6.11 lack steal: counted 0).
pub fn cpu_times(stat: &str) -> Option<CpuTimes> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 5 {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTimes {
        total: (0..8).map(at).sum(),
        idle: at(3),
        iowait: at(4),
        steal: at(7),
    })
}

/// Busy, I/O-wait and steal fractions between two reads (`None` when no tick passed).
pub fn fractions(a: CpuTimes, b: CpuTimes) -> Option<(f64, f64, f64)> {
    let dt = b.total.checked_sub(a.total).filter(|d| *d > 0)? as f64;
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64 / dt;
    let idle = d(a.idle, b.idle);
    let iowait = d(a.iowait, b.iowait);
    Some(((1.0 - idle - iowait).max(0.0), iowait, d(a.steal, b.steal)))
}

/// The mean `cpu MHz` of `/proc/cpuinfo` over the CPUs that report one.
pub fn cpuinfo_mhz(cpuinfo: &str) -> Option<f64> {
    let v: Vec<f64> = cpuinfo
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split_once(':')?.1.trim().parse().ok())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The mean of `scaling_cur_freq` values (kHz, one file per CPU) in MHz.
pub fn scaling_mhz<'a>(files: impl Iterator<Item = &'a str>) -> Option<f64> {
    let v: Vec<f64> = files.filter_map(|t| t.trim().parse::<f64>().ok()).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64 / 1000.0)
}

/// The CPU over a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuSummary {
    /// CPUs the process may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// 1-minute load average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load1: Option<Series>,
    /// Mean clock over the CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freq_mhz: Option<Series>,
    /// Fractions of all CPUs' time from the first sample to the last (`/proc/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_frac: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iowait_frac: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_frac: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadavg_and_stat() {
        assert_eq!(load1("0.52 0.58 0.59 1/389 12345\n"), Some(0.52));
        assert_eq!(load1(""), None);
        let a =
            cpu_times("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 50 0 25 400 5 0 0 20 0 0\nintr 1 2\n")
                .unwrap();
        assert_eq!(a.total, 1000);
        let b = cpu_times("cpu  160 0 70 880 30 0 0 60 0 0\n").unwrap();
        // 200 ticks: idle 80, iowait 20, steal 20 → busy 0.5.
        let (busy, io, steal) = fractions(a, b).unwrap();
        assert!((busy - 0.5).abs() < 1e-12);
        assert!((io - 0.1).abs() < 1e-12);
        assert!((steal - 0.1).abs() < 1e-12);
        assert_eq!(fractions(a, a), None);
        assert_eq!(cpu_times("cpu  1 2 x 4 5\n"), None);
        // An old kernel: no steal column.
        assert_eq!(cpu_times("cpu  1 2 3 4 5\n").unwrap().steal, 0);
    }

    #[test]
    fn frequencies() {
        let info = "processor\t: 0\ncpu MHz\t\t: 2000.000\nprocessor\t: 1\ncpu MHz\t\t: 3000.5\n";
        assert_eq!(cpuinfo_mhz(info), Some(2500.25));
        assert_eq!(cpuinfo_mhz("processor: 0\n"), None);
        assert_eq!(
            scaling_mhz(["2400000\n", "2600000\n", "bad"].into_iter()),
            Some(2500.0)
        );
    }
}
