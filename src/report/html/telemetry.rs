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

const COLUMNS: [Column; 10] = [
    ("calibration ms", |t| t.calibration_ms, false),
    ("… every CPU", |t| t.calibration_all_ms, false),
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

#[cfg(test)]
mod tests {
    use super::super::{render, Dataset};
    use super::*;
    use crate::telemetry::{CpuSummary, GpuSummary};

    fn series(median: f64) -> Option<Series> {
        Some(Series {
            n: 3,
            min: median - 1.0,
            median,
            max: median + 1.0,
        })
    }

    fn rec(cal: f64, reasons: &[&str]) -> ScenarioResult {
        let mut r = ScenarioResult::synthetic("m", 4, 8, 8);
        r.telemetry = Some(Telemetry {
            calibration_ms: Some(cal),
            calibration_all_ms: Some(cal * 1.5),
            cpu: Some(CpuSummary {
                busy_frac: Some(0.5),
                ..Default::default()
            }),
            gpus: vec![GpuSummary {
                index: "0".into(),
                sm_clock_mhz: series(1500.0),
                mem_clock_mhz: None,
                power_w: series(300.0),
                temperature_c: None,
                utilization_pct: None,
                throttle_reasons: reasons.iter().map(|s| s.to_string()).collect(),
            }],
            ..Default::default()
        });
        r
    }

    #[test]
    fn table_of_medians_over_runs_and_the_reasons_seen() {
        let page = Page {
            title: "t".into(),
            report: None,
            sides: vec![Dataset {
                label: "current".into(),
                records: vec![
                    rec(30.0, &["gpu_idle"]),
                    rec(40.0, &["sw_power_cap"]),
                    rec(35.0, &[]),
                ],
                provenance: vec![],
                engine_runs: vec![],
            }],
            generated: "now".into(),
        };
        let id = page.sides[0].records[0].scenario_id();
        let t = table(&page, "m", std::slice::from_ref(&id)).unwrap();
        assert_eq!(t.headers.len(), 3 + COLUMNS.len() + 1);
        let row = &t.rows[0];
        assert_eq!(&row[..5], ["current", id.as_str(), "3", "35.0", "52.5"]);
        assert_eq!(row[5], "–"); // no load average recorded
        assert_eq!(row[7], "50.0%");
        assert_eq!(row[9], "1.5k"); // the lowest SM clock, 1499
        assert_eq!(row.last().unwrap(), "sw_power_cap");
        assert!(table(&page, "other", &[id]).is_none());
        let html = render(&page).unwrap();
        assert!(html.contains("<table class=\"data telemetry\">"), "{html}");
    }
}
