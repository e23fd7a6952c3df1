//! Whether two sets of runs measured on the same machine, as far as their records can tell:
//! the platform each run names (CPU model and features, CPUs, GPUs, driver) and the time of
//! perfgate's calibration loop before it. A stored comparison cannot tell a machine's
//! difference from the engine's, so reports say when the machines differ: `check` between its
//! sides ([`machine_note`]), `history` between consecutive baselines.

use perfgate_record::telemetry::Platform;

use crate::gate::noise::loops::Probe;
use crate::gate::Report;
use crate::record::ScenarioResult;

/// How much faster or slower one side's machine may run perfgate's calibration loop than the
/// other's before a report says the machines differ: 1.25×. Measured on the corpora in
/// `tests/data/` (docs/gate.md, "A machine that changed"): within a session its time varies by
/// sd 1.4–4.8 % (9.1 % over 6 launches of one H200 host), sessions of one machine differ by
/// 0.7–6 %, and the same machine kind four days later, another host, ran it 2.1× faster (while
/// decoding 27–70 % slower); a deliberately loaded machine, up to 9× slower.
pub const MACHINE_SHIFT_LIMIT: f64 = 1.25;

/// The machine under a set of runs: the platforms they named, each once in order of first
/// appearance, and the geometric mean of their calibration loops' times, on one CPU and on
/// every CPU at once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Machine {
    pub platforms: Vec<Platform>,
    pub calibration_ms: Option<f64>,
    pub calibration_all_ms: Option<f64>,
}

/// The geometric mean of the positive, finite times.
fn geomean(ms: impl Iterator<Item = f64>) -> Option<f64> {
    let logs: Vec<f64> = ms
        .filter(|x| *x > 0.0 && x.is_finite())
        .map(f64::ln)
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

impl Machine {
    /// The machine of records, from their `telemetry`.
    pub fn of_records(recs: &[ScenarioResult]) -> Machine {
        let t = || recs.iter().filter_map(|r| r.telemetry.as_ref());
        Machine::of(
            t().filter_map(|t| t.platform.as_ref()),
            t().filter_map(|t| t.calibration_ms),
            t().filter_map(|t| t.calibration_all_ms),
        )
    }

    /// The machine of the given platforms and calibration times, on one CPU and on every CPU
    /// (non-positive ones ignored).
    pub fn of<'a>(
        platforms: impl Iterator<Item = &'a Platform>,
        calibration_ms: impl Iterator<Item = f64>,
        calibration_all_ms: impl Iterator<Item = f64>,
    ) -> Machine {
        let mut distinct: Vec<Platform> = Vec::new();
        for p in platforms {
            if !distinct.contains(p) {
                distinct.push(p.clone());
            }
        }
        Machine {
            platforms: distinct,
            calibration_ms: geomean(calibration_ms),
            calibration_all_ms: geomean(calibration_all_ms),
        }
    }

    /// The geometric mean of the runs' loop times by `probe`.
    fn loop_ms(&self, probe: Probe) -> Option<f64> {
        match probe {
            Probe::OneCpu => self.calibration_ms,
            Probe::AllCpus => self.calibration_all_ms,
        }
    }

    /// Why `self` (whose runs `later` names, e.g. "the candidate's") is not the machine of
    /// `earlier` (named `earlier_name`): a platform none of `earlier`'s runs had (what moved,
    /// against the closest), and a calibration loop (on one CPU, on every CPU) further apart
    /// than [`MACHINE_SHIFT_LIMIT`]. Empty when they agree or one of them recorded neither.
    pub fn differences(&self, later: &str, earlier: &Machine, earlier_name: &str) -> Vec<String> {
        let mut why = Vec::new();
        let moved = self.platforms.iter().find_map(|c| {
            earlier
                .platforms
                .iter()
                .map(|b| c.changes_since(b))
                .min_by_key(Vec::len)
                .filter(|moved| !moved.is_empty())
        });
        if let Some(moved) = moved {
            why.push(format!(
                "{later} runs measured on another platform than {earlier_name} ({})",
                moved.join(", ")
            ));
        }
        for probe in Probe::BOTH {
            let (Some(b), Some(c)) = (earlier.loop_ms(probe), self.loop_ms(probe)) else {
                continue;
            };
            let r = c / b;
            if r.is_finite() && r.ln().abs() > MACHINE_SHIFT_LIMIT.ln() {
                let how = if r > 1.0 {
                    format!("{r:.1}× slower")
                } else {
                    format!("{:.1}× faster", 1.0 / r)
                };
                why.push(format!(
                    "perfgate's {} ran {how} before {later} runs ({c:.2} ms) than before \
                     {earlier_name} ({b:.2} ms)",
                    probe.label()
                ));
            }
        }
        why
    }
}

/// A warning when the two sides' runs measured on machines that differ
/// ([`Machine::differences`]): a stored comparison cannot tell such a difference from the
/// engine's. `None` when they agree or a side recorded neither (imported results,
/// `--no-telemetry`), and in `perfgate ab`, whose arms take turns on one machine by design (an
/// arm that loads the machine while idle is the arm's own doing there).
pub fn machine_note(report: &Report) -> Option<String> {
    if report.ab.is_some() {
        return None;
    }
    let side = |s: &crate::gate::Side| Machine {
        platforms: s.platforms.clone(),
        calibration_ms: s.calibration_ms,
        calibration_all_ms: s.calibration_all_ms,
    };
    let why = side(&report.current).differences(
        "the candidate's",
        &side(&report.baseline),
        "the baseline's",
    );
    (!why.is_empty()).then(|| {
        format!(
            "the machines differ: {}, so a change can be the machine's (another host, or a \
             loaded one): record the baseline on this runner, or compare in pairs (`perfgate ab`)",
            why.join("; and ")
        )
    })
}
