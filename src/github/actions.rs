//! The GitHub Actions runner's file and stdout protocols: append to the job summary
//! (`$GITHUB_STEP_SUMMARY`), set step outputs (`$GITHUB_OUTPUT`), and format `::error` /
//! `::warning` workflow commands for the rows that need attention.

use std::io::Write;
use std::path::Path;

use crate::gate::{Report, Row, Verdict};

use super::GithubError;

/// Append `markdown` (already within the runner's limit) to the job summary file (created if
/// missing).
pub fn append_step_summary(path: &Path, markdown: &str) -> Result<(), GithubError> {
    append(path, &format!("{}\n", markdown.trim_end()))
}

/// Append `name=value` step outputs to the `$GITHUB_OUTPUT` file. Uses the multi-line
/// (`name<<DELIMITER`) form with a random delimiter, so no value can inject another output.
pub fn set_outputs(path: &Path, outputs: &[(&str, &str)]) -> Result<(), GithubError> {
    let mut text = String::new();
    for (name, value) in outputs {
        let delim = loop {
            let d = format!("perfgate_{:016x}", rand::random::<u64>());
            if !value.contains(&d) {
                break d;
            }
        };
        text.push_str(&format!("{name}<<{delim}\n{value}\n{delim}\n"));
    }
    append(path, &text)
}

fn append(path: &Path, text: &str) -> Result<(), GithubError> {
    let io = |e: std::io::Error| GithubError::File {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)
}

/// Escape the message part of a workflow command.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a property value (`title=…`) of a workflow command.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(level: &str, title: &str, message: &str) -> String {
    format!(
        "::{level} title={}::{}",
        escape_property(title),
        escape_data(message)
    )
}

fn describe(row: &Row) -> String {
    let mut s = format!("{} / {} / {}", row.model, row.scenario, row.metric);
    if let (Some(b), Some(c)) = (row.baseline, row.current) {
        s.push_str(&format!(": {b:.4} -> {c:.4}"));
    }
    if let Some(p) = row.change_pct {
        s.push_str(&format!(" ({p:+.1}%"));
        if let Some(t) = row.tolerance_pct {
            s.push_str(&format!(", tolerance {t}%"));
        }
        s.push(')');
    }
    if let Some(note) = &row.note {
        s.push_str(&format!(" - {note}"));
    }
    s
}

/// Workflow commands for the rows that need attention: `::error` for gated regressions,
/// `::warning` for regressions in shown-only metrics and for rows that could not be measured.
/// One per row, in report order; at most `limit` (GitHub shows 10 per step anyway). A
/// `::warning` that the sides' machines differ ([`crate::gate::machine_note`]) comes first and
/// is not counted.
pub fn annotations(report: &Report, limit: usize) -> Vec<String> {
    let machine = crate::gate::machine_note(report)
        .map(|n| command("warning", "perfgate: the machines differ", &n));
    let mut out = Vec::new();
    for row in &report.rows {
        let cmd = match (row.verdict, row.gated) {
            (Verdict::Regressed, true) => command("error", "perfgate: regression", &describe(row)),
            (Verdict::Regressed, false) => command(
                "warning",
                "perfgate: regression (not gated)",
                &describe(row),
            ),
            (Verdict::Error, _) => command("warning", "perfgate: not measured", &describe(row)),
            _ => continue,
        };
        out.push(cmd);
    }
    if out.len() > limit {
        let rest = out.len() - limit;
        out.truncate(limit);
        out.push(command(
            "warning",
            "perfgate",
            &format!("{rest} more rows need attention: see the job summary"),
        ));
    }
    out.splice(0..0, machine);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escaping() {
        assert_eq!(
            command("error", "a: b, c", "50% up\nnext"),
            "::error title=a%3A b%2C c::50%25 up%0Anext"
        );
    }

    #[test]
    fn outputs_use_random_delimiters() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        set_outputs(&p, &[("verdict", "fail"), ("report-path", "a\nb=c")]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert!(lines[0].starts_with("verdict<<perfgate_"));
        assert_eq!(lines[1], "fail");
        assert_eq!(lines[2], &lines[0]["verdict<<".len()..]);
        assert_eq!(&lines[4..6], &["a", "b=c"]);
    }

    #[test]
    fn machines_that_differ_are_a_warning_before_the_rows() {
        let mut r = crate::report::sample::report();
        let rows = annotations(&r, 10);
        assert!(
            rows.iter().all(|a| !a.contains("machines differ")),
            "{rows:?}"
        );
        r.baseline.calibration_ms = Some(9.93);
        r.current.calibration_ms = Some(4.63);
        let all = annotations(&r, 10);
        assert!(
            all[0].starts_with(
                "::warning title=perfgate%3A the machines differ::the machines differ: perfgate's"
            ),
            "{all:?}"
        );
        assert_eq!(&all[1..], &rows[..]);
        // Not counted against the limit of rows.
        assert_eq!(annotations(&r, 0).len(), 1 + usize::from(!rows.is_empty()));
    }

    #[test]
    fn step_summary_appends() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.md");
        append_step_summary(&p, "# one").unwrap();
        append_step_summary(&p, "# two\n\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "# one\n# two\n");
    }
}
