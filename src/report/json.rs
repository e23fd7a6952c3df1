//! The JSON rendering of a gate report (`--json`): the verdict, the counts, every row (model,
//! scenario, metric, baseline, current, change_pct, interval, verdict, …), the method and the
//! provenance of both sides. Stable key order; pretty-printed with a trailing newline.

use crate::gate::Report;

/// Render the report as pretty JSON.
pub fn render_json(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("reports serialize");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn snapshot() {
        let report = sample::report();
        let text = render_json(&report);
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back.rows.len(), report.rows.len());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["verdict"], "fail");
        for key in [
            "model",
            "scenario",
            "metric",
            "baseline",
            "current",
            "change_pct",
            "interval",
            "verdict",
        ] {
            assert!(v["rows"][0].get(key).is_some(), "row lacks {key}");
        }
        insta::assert_snapshot!(text);
    }
}
