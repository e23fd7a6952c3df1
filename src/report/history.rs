//! The terminal view of a baseline [`History`]: the baselines in release order, then one line
//! per series with its values and its change points.

use std::fmt::Write as _;

use crate::history::History;

fn fmt(v: f64) -> String {
    super::fmt_value("", Some(v))
}

/// The table; `changes_only` keeps the series with a change point (marked `▲`/`▼` better/worse).
pub fn render_terminal(h: &History, changes_only: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Baselines in release order:");
    for (i, e) in h.entries.iter().enumerate() {
        let _ = writeln!(
            out,
            "  #{:<2} {:<24} {:<12} {}",
            i + 1,
            e.label,
            e.date.as_deref().unwrap_or("–"),
            e.path
        );
    }
    if !h.machine_changes.is_empty() {
        let _ = writeln!(
            out,
            "\nThe machines differ (a step at such a baseline can be the machine's):"
        );
        for (i, why) in &h.machine_changes {
            let _ = writeln!(out, "  #{}: {why}", i + 1);
        }
    }
    let _ = writeln!(out);
    let mut rows: Vec<Vec<String>> = vec![{
        let mut h0 = vec!["model".into(), "scenario".into(), "metric".into()];
        h0.extend((1..=h.entries.len()).map(|i| format!("#{i}")));
        h0.push("change points".into());
        h0
    }];
    let mut flagged = 0;
    for s in &h.series {
        if changes_only && s.detection.changes.is_empty() {
            continue;
        }
        flagged += usize::from(!s.detection.changes.is_empty());
        let mut r = vec![s.model.clone(), s.scenario.clone(), s.metric.clone()];
        r.extend(
            s.points
                .iter()
                .map(|p| p.as_ref().map_or("–".into(), |p| fmt(p.value))),
        );
        let cps: Vec<String> = s
            .detection
            .changes
            .iter()
            .map(|c| {
                format!(
                    "{} at #{} {:+.1}% (z {:.1}){}",
                    if s.is_worse(c) {
                        "▼ worse"
                    } else {
                        "▲ better"
                    },
                    c.index + 1,
                    c.change_pct,
                    c.z,
                    if h.machine_change(c.index).is_some() {
                        ", machines differ"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        r.push(if cps.is_empty() {
            "–".into()
        } else {
            cps.join("; ")
        });
        rows.push(r);
    }
    let ncol = rows[0].len();
    let widths: Vec<usize> = (0..ncol)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c == ncol - 1 {
                    cell.clone()
                } else {
                    format!("{cell:<w$}", w = widths[c])
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    let _ = writeln!(
        out,
        "\n{flagged} of {} series with a change point (two-window test, window {}, Bonferroni over the boundaries, step ≥ the gate's tolerance).",
        h.series.len(),
        h.window
    );
    out
}

#[cfg(test)]
mod tests {
    use super::render_terminal;
    use crate::gate::GateConfig;
    use crate::history::build;
    use crate::report::sample::release_series;

    #[test]
    fn a_step_where_the_machine_changed_says_so() {
        let cfg = GateConfig::default();
        let mut series = release_series(|i| if i >= 6 { 0.8 } else { 1.0 });
        // Releases 0.7 and on ran their calibration loop 2× slower.
        for (_, b) in series.iter_mut() {
            let later = crate::history::version_key(b.engine.version.as_deref().unwrap())[1] >= 7;
            for run in b
                .models
                .iter_mut()
                .flat_map(|m| &mut m.scenarios)
                .flat_map(|s| &mut s.runs)
            {
                run.calibration_ms = Some(if later { 9.0 } else { 4.5 });
            }
        }
        let h = build(&series, &[], &cfg, 3).unwrap();
        assert_eq!(h.machine_changes.len(), 1, "{:?}", h.machine_changes);
        let text = render_terminal(&h, true);
        assert!(
            text.contains(
                "  #7: perfgate's calibration loop ran 2.0× slower before #7's runs (9.00 ms) \
                 than before #6's (4.50 ms)"
            ),
            "{text}"
        );
        assert!(
            text.contains("▼ worse at #7 -20.4% (z -7.1), machines differ"),
            "{text}"
        );
    }

    #[test]
    fn a_planted_step_is_drawn_and_a_flat_history_says_so() {
        let cfg = GateConfig::default();
        let h = build(
            &release_series(|i| if i >= 6 { 0.8 } else { 1.0 }),
            &[],
            &cfg,
            3,
        )
        .unwrap();
        let text = render_terminal(&h, true);
        assert!(text.contains("▼ worse at #7"), "{text}");
        assert!(!text.contains("machines differ"), "{text}");
        let flat = build(&release_series(|_| 1.0), &[], &cfg, 3).unwrap();
        assert!(render_terminal(&flat, false).contains("0 of 2 series"));
    }
}
