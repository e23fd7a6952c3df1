//! The telemetry table of a model's section: per side and scenario, what the machine and the
//! server did while its runs were measured (medians over the runs of each run's summary).

use super::{plot, Page, SimpleTable};
use crate::record::ScenarioResult;
use crate::telemetry::{Series, Telemetry};

/// Columns: (header, the value of one run's telemetry, shown as a percentage).
type Column = (&'static str, fn(&Telemetry) -> Option<f64>, bool);

fn med(s: Option<Series>) -> Option<f64> {
    s.map(|s| s.median)
}

fn gpu_min(t: &Telemetry, f: fn(&crate::telemetry::GpuSummary) -> Option<Series>) -> Option<f64> {
    t.gpus
        .iter()
        .filter_map(|g| f(g).map(|s| s.min))
        .reduce(f64::min)
}

fn gpu_max(t: &Telemetry, f: fn(&crate::telemetry::GpuSummary) -> Option<Series>) -> Option<f64> {
    t.gpus
        .iter()
        .filter_map(|g| f(g).map(|s| s.max))
        .reduce(f64::max)
}

const COLUMNS: [Column; 9] = [
    ("calibration ms", |t| t.calibration_ms, false),
    ("load (1 min)", |t| med(t.cpu.as_ref()?.load1), false),
    ("CPU MHz", |t| med(t.cpu.as_ref()?.freq_mhz), false),
    ("CPU busy", |t| t.cpu.as_ref()?.busy_frac, true),
    ("steal", |t| t.cpu.as_ref()?.steal_frac, true),
    ("GPU SM MHz min", |t| gpu_min(t, |g| g.sm_clock_mhz), false),
    ("GPU W max", |t| gpu_max(t, |g| g.power_w), false),
    ("GPU °C max", |t| gpu_max(t, |g| g.temperature_c), false),
    (
        "running max",
        |t| t.server.get("running").map(|s| s.max),
        false,
    ),
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The table, or `None` when no run of this model carries telemetry.
pub(super) fn table(page: &Page<'_>, model: &str, scenarios: &[String]) -> Option<SimpleTable> {
    let mut rows = Vec::new();
    for side in &page.sides {
        for s in scenarios {
            let ts: Vec<&Telemetry> = side
                .records
                .iter()
                .filter(|r| r.model == model && &r.scenario_id() == s)
                .filter_map(|r: &ScenarioResult| r.telemetry.as_ref())
                .collect();
            if ts.is_empty() {
                continue;
            }
            let mut row = vec![side.label.clone(), s.clone(), ts.len().to_string()];
            for (_, get, pct) in COLUMNS {
                let v: Vec<f64> = ts.iter().filter_map(|t| get(t)).collect();
                row.push(match v.is_empty() {
                    true => "–".into(),
                    false if pct => format!("{:.1}%", median(v) * 100.0),
                    false => plot::fmt_num(median(v)),
                });
            }
            let mut reasons: Vec<String> = ts.iter().flat_map(|t| t.throttling()).collect();
            reasons.sort();
            reasons.dedup();
            row.push(if reasons.is_empty() {
                "–".into()
            } else {
                reasons.join(", ")
            });
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["side".to_string(), "scenario".into(), "runs".into()];
    headers.extend(COLUMNS.iter().map(|c| c.0.to_string()));
    headers.push("GPU throttling".into());
    Some(SimpleTable { headers, rows })
}
