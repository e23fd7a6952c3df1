//! The terminal rendering of a gate report: sides, one table per model (scenario, metric,
//! baseline, current, change, interval, verdict) and a one-line summary. Colour is the caller's
//! choice (NO_COLOR, non-terminals); this function only emits ANSI codes when told to.

use super::{
    by_model, fmt_change, fmt_counts, fmt_interval, fmt_needed, fmt_noise, fmt_side,
    fmt_unconfirmed, fmt_value, fmt_verdict,
};
use crate::gate::{Report, TopVerdict, Verdict};

const RESET: &str = "\x1b[0m";

fn paint(s: &str, code: &str, color: bool) -> String {
    if color && !code.is_empty() {
        format!("\x1b[{code}m{s}{RESET}")
    } else {
        s.to_string()
    }
}

fn verdict_code(v: Verdict, gated: bool) -> &'static str {
    if !gated {
        return "2"; // dim
    }
    match v {
        Verdict::Pass => "",
        Verdict::Regressed => "1;31",
        Verdict::Improved => "32",
        Verdict::Inconclusive => "33",
        Verdict::Missing => "35",
        Verdict::Error => "1;35",
    }
}

fn top_code(v: TopVerdict) -> &'static str {
    match v {
        TopVerdict::Pass => "1;32",
        TopVerdict::Fail => "1;31",
        TopVerdict::Inconclusive => "1;33",
        TopVerdict::Error => "1;35",
    }
}

/// Text from a report (names chosen by a suite, a server or an imported file; error notes) for
/// one line of a terminal or CI log: no control character (no escape sequence of its own), no
/// line break, no `::` workflow command at the start, secrets masked.
fn term(s: &str) -> String {
    crate::redact::untrusted(&s.replace(['\n', '\r'], " "))
}

/// Render the report for a terminal. `color` adds ANSI colours.
pub fn render_terminal(report: &Report, color: bool) -> String {
    let mut out = String::new();
    match &report.ab {
        Some(ab) => {
            for line in super::fmt_ab(ab) {
                out.push_str(&term(&line));
                out.push('\n');
            }
        }
        None => {
            out.push_str(&format!(
                "baseline: {}\n",
                term(&fmt_side(&report.baseline))
            ));
            out.push_str(&format!("current:  {}\n", term(&fmt_side(&report.current))));
        }
    }
    const HEAD: [&str; 8] = [
        "scenario", "metric", "baseline", "current", "change", "interval", "noise", "verdict",
    ];
    for (model, rows) in by_model(report) {
        out.push('\n');
        out.push_str(&paint(&term(model), "1", color));
        out.push('\n');
        let cells: Vec<[String; 8]> = rows
            .iter()
            .map(|r| {
                [
                    term(&r.scenario),
                    term(&r.metric),
                    fmt_value(&r.metric, r.baseline),
                    fmt_value(&r.metric, r.current),
                    fmt_change(r.change_pct),
                    fmt_interval(r.interval),
                    fmt_noise(r),
                    fmt_verdict(r),
                ]
            })
            .collect();
        let mut width = HEAD.map(|h| h.chars().count());
        for c in &cells {
            for (w, s) in width.iter_mut().zip(c.iter()) {
                *w = (*w).max(s.chars().count());
            }
        }
        let line = |c: &[String; 8]| -> Vec<String> {
            (0..8)
                .map(|i| {
                    let pad = width[i] - c[i].chars().count();
                    // Text columns left-aligned, numbers right-aligned.
                    if i < 2 || i == 7 {
                        format!("{}{}", c[i], " ".repeat(pad))
                    } else {
                        format!("{}{}", " ".repeat(pad), c[i])
                    }
                })
                .collect()
        };
        let head = line(&HEAD.map(String::from));
        out.push_str(&format!(
            "  {}\n",
            paint(head.join("  ").trim_end(), "2", color)
        ));
        let mut last_scenario = "";
        for (row, c) in rows.iter().zip(&cells) {
            let mut parts = line(c);
            if row.scenario == last_scenario {
                parts[0] = " ".repeat(width[0]);
            }
            last_scenario = &row.scenario;
            let verdict = parts[7].trim_end().to_string();
            parts[7] = paint(&verdict, verdict_code(row.verdict, row.gated), color);
            out.push_str(&format!("  {}\n", parts.join("  ").trim_end()));
            if matches!(row.verdict, Verdict::Error | Verdict::Missing) {
                if let Some(note) = &row.note {
                    let first = term(note.lines().next().unwrap_or(""));
                    out.push_str(&format!("    └ {first}\n"));
                }
            }
            if let Some(n) = fmt_needed(row) {
                out.push_str(&format!("    └ {n}\n"));
            }
        }
    }
    let gated = report.rows.iter().filter(|r| r.gated).count();
    out.push('\n');
    out.push_str(&format!(
        "perfgate {}: {} — {} (of {gated} gated rows; (…) = shown, not gated)\n",
        report.kind,
        paint(
            &report.verdict.as_str().to_uppercase(),
            top_code(report.verdict),
            color
        ),
        fmt_counts(&report.counts, ", "),
    ));
    if let Some(line) = fmt_unconfirmed(report) {
        out.push_str(&format!("  {}\n", term(&line)));
    }
    if let Some(line) = crate::gate::machine_note(report) {
        out.push_str(&format!("  warning: {}\n", term(&line)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn snapshot_no_color() {
        let text = render_terminal(&sample::report(), false);
        assert!(!text.contains('\x1b'));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn names_cannot_forge_workflow_commands_or_escapes() {
        let mut r = sample::report();
        r.rows[0].model = "::error title=x::forged\u{1b}[2J".into();
        r.rows[0].scenario = "s\n::warning::y".into();
        r.rows[0].note = Some("\u{1b}]0;pwned\u{7}note".into());
        r.current.engine = Some("\n::add-mask::z".into());
        let text = render_terminal(&r, false);
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.lines().all(|l| !l.starts_with("::")), "{text}");
    }

    #[test]
    fn a_regression_nothing_confirmed_says_so_on_its_row_and_under_the_verdict() {
        let plain = render_terminal(&sample::report(), false);
        assert!(!plain.contains("unconfirmed"), "{plain}");
        let mut r = sample::report();
        let i = r
            .rows
            .iter()
            .position(|x| x.gated && x.verdict == Verdict::Regressed)
            .unwrap();
        r.rows[i].note = Some(
            "noise 3.3 % (own launches, 8 df); unconfirmed: decided on its 1 launch(es) alone, \
             with none to hold back as confirmation (a live check launches 1 more)"
                .into(),
        );
        let text = render_terminal(&r, false);
        assert!(
            text.contains("\n    └ unconfirmed: decided on its 1 launch(es) alone"),
            "{text}"
        );
        let last = text.lines().last().unwrap();
        assert!(
            last.starts_with("  1 regressed row(s) unconfirmed: "),
            "{text}"
        );
        // The PR comment says it under the counts and in the row's verdict cell.
        let md = crate::report::render_markdown(&r);
        assert!(md.contains("_1 regressed row(s) unconfirmed: "), "{md}");
        assert!(
            md.contains("**regressed** (unconfirmed: decided on its 1"),
            "{md}"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let text = render_terminal(&sample::report(), true);
        assert!(text.contains("\x1b[1;31mregressed\x1b[0m"), "{text}");
        assert!(text.contains("\x1b[1;31mFAIL\x1b[0m"), "{text}");
    }
}
