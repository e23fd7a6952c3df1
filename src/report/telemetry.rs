//! Telemetry in the text reports: the one line `perfgate check` prints when a run saw its GPU
//! held below its clocks.

use std::collections::BTreeSet;

use crate::record::ScenarioResult;

/// "GPU throttling in N of M runs (reasons) …", when any run's telemetry saw a throttle reason
/// that slows a working GPU (power, thermal, hardware slowdown); `None` otherwise.
pub fn throttle_line(records: &[ScenarioResult]) -> Option<String> {
    let sampled: Vec<_> = records
        .iter()
        .filter_map(|r| r.telemetry.as_ref())
        .collect();
    let mut reasons = BTreeSet::new();
    let mut runs = 0;
    for t in &sampled {
        let seen = t.throttling();
        if !seen.is_empty() {
            runs += 1;
            reasons.extend(seen);
        }
    }
    (runs > 0).then(|| {
        format!(
            "GPU throttling in {runs} of {} sampled runs ({}): clocks were held down while \
             measuring; see the records' `telemetry` key before trusting a latency change",
            sampled.len(),
            reasons.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::{GpuSummary, Telemetry};

    fn rec(reasons: &[&str]) -> ScenarioResult {
        let mut r = ScenarioResult::synthetic("m", 4, 8, 8);
        r.telemetry = Some(Telemetry {
            gpus: vec![GpuSummary {
                index: "0".into(),
                sm_clock_mhz: None,
                mem_clock_mhz: None,
                power_w: None,
                temperature_c: None,
                utilization_pct: None,
                throttle_reasons: reasons.iter().map(|s| s.to_string()).collect(),
            }],
            ..Default::default()
        });
        r
    }

    #[test]
    fn names_the_reasons_and_counts_runs() {
        let recs = [
            rec(&["gpu_idle"]),
            rec(&["hw_thermal_slowdown", "sw_power_cap"]),
            rec(&["sw_power_cap"]),
            ScenarioResult::synthetic("m", 4, 8, 8),
        ];
        let line = throttle_line(&recs).unwrap();
        assert!(
            line.starts_with(
                "GPU throttling in 2 of 3 sampled runs (hw_thermal_slowdown, sw_power_cap)"
            ),
            "{line}"
        );
        assert_eq!(throttle_line(&recs[..1]), None);
        assert_eq!(throttle_line(&recs[3..]), None);
    }
}
