//! The markdown rendering of a gate report, for PR comments and job summaries: a hidden marker
//! that identifies the comment, the summary first, a compact table of the rows that need
//! attention, a Mermaid `xychart-beta` of the change per scenario, the full table folded in
//! `<details>`, and the method in one sentence. Shortened, never rejected, to fit GitHub's limit.

use super::{
    fmt_change, fmt_counts, fmt_interval, fmt_needed, fmt_noise, fmt_side, fmt_value, fmt_verdict,
};
use crate::gate::{Report, Row, TopVerdict, Verdict};
use crate::record::Direction;

/// GitHub's limit on the body of an issue comment, in characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;
/// GitHub's limit on a check run's summary, in characters.
pub const GITHUB_CHECK_SUMMARY_LIMIT: usize = 65_535;
/// The Actions runner's limit on one step's job summary is 1 MiB; in characters of up to four
/// bytes, this many always fit.
pub const GITHUB_STEP_SUMMARY_LIMIT: usize = 1024 * 1024 / 4;

/// An error row's reason in a table cell is cut to this many characters.
const REASON_CHARS: usize = 160;

/// At most this many bars in the chart.
const MAX_BARS: usize = 40;

/// The hidden marker of a report kind: `<!-- perfgate:check -->`. The PR comment of a kind is
/// found again by it.
pub fn marker(kind: &str) -> String {
    format!("<!-- perfgate:{kind} -->")
}

/// A report kind names a marker: letters, digits, `-`, `_` or `.` only.
pub fn check_kind(kind: &str) -> Result<(), String> {
    if kind.is_empty()
        || !kind
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "report kind `{kind}` must be letters, digits, `-`, `_` or `.` (it names the comment's marker)"
        ));
    }
    Ok(())
}

/// The body of the sticky PR comment of `kind`: `markdown` with its marker as the first line
/// (added when a markdown given by the user does not start with it), within GitHub's comment
/// limit. The marker is found again only as that whole first line.
pub fn comment_body(markdown: &str, kind: &str) -> String {
    let mark = marker(kind);
    if markdown.lines().next().map(|l| l.trim_end_matches('\r')) == Some(mark.as_str()) {
        fit(markdown, GITHUB_COMMENT_LIMIT)
    } else {
        fit(&format!("{mark}\n{markdown}"), GITHUB_COMMENT_LIMIT)
    }
}

/// Shorten `body` to at most `limit` characters, cutting at a line end and saying so. The
/// renderer stays under GitHub's limits by itself; this is the safety net for a markdown
/// given by the user.
pub fn fit(body: &str, limit: usize) -> String {
    if body.chars().count() <= limit {
        return body.to_string();
    }
    const NOTE: &str = "\n\n… shortened to fit GitHub's size limit: the full report is in the job summary and the report artifact.\n";
    let keep = limit.saturating_sub(NOTE.chars().count());
    let cut = body
        .char_indices()
        .nth(keep)
        .map(|(i, _)| i)
        .unwrap_or(body.len());
    let head = &body[..cut];
    let head = match head.rfind('\n') {
        Some(i) if i > cut / 2 => &head[..i],
        _ => head,
    };
    format!("{head}{NOTE}")
}

/// Render for a PR comment or a job summary, within GitHub's comment limit.
pub fn render_markdown(report: &Report) -> String {
    render_markdown_limited(report, GITHUB_COMMENT_LIMIT)
}

/// Render within `limit` characters: first the full table is cut, then the attention table.
pub fn render_markdown_limited(report: &Report, limit: usize) -> String {
    let n = report.rows.len();
    let mut full = n;
    let mut attention = n;
    loop {
        let text = render(report, full, attention);
        if text.chars().count() <= limit {
            return text;
        }
        if full > 0 {
            full /= 2;
        } else if attention > 0 {
            attention /= 2;
        } else {
            // Only the fixed parts are left; cut them at a character boundary.
            let mut cut: String = text.chars().take(limit.saturating_sub(40)).collect();
            cut.push_str("\n\n… (shortened to fit)\n");
            return cut;
        }
    }
}

/// Untrusted text (model and engine names, labels) for a table cell or a line: no line breaks
/// or other control characters, no cell breaks, no `<` / `>` (it can never open raw HTML or an
/// HTML comment such as another report's hidden marker), no link or image syntax (`[`, `]`, `!`
/// escaped) and no `@mention` (a zero-width space after `@`: nobody is notified).
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '[' | ']' | '!' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '@' => out.push_str("@\u{200b}"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Untrusted text inside a code span of a table cell: no backtick (the span would close), no
/// control character, and `|` escaped (GitHub splits cells before code spans).
fn code(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() && *c != '`')
        .collect::<String>()
        .replace('|', "\\|")
}

fn icon(v: TopVerdict) -> &'static str {
    match v {
        TopVerdict::Pass => "✅",
        TopVerdict::Fail => "❌",
        TopVerdict::Inconclusive => "⚠️",
        TopVerdict::Error => "💥",
    }
}

fn verdict_cell(r: &Row) -> String {
    let word = fmt_verdict(r);
    match (r.gated, r.verdict) {
        (true, Verdict::Regressed) | (true, Verdict::Error) => format!("**{word}**"),
        _ => word,
    }
}

fn table(rows: &[&Row], limit: usize, out: &mut String) {
    out.push_str(
        "| Model | Scenario | Metric | Baseline | Current | Change | Interval | Noise | Verdict |\n",
    );
    out.push_str("|---|---|---|--:|--:|--:|--:|--:|---|\n");
    for r in rows.iter().take(limit) {
        let verdict = match fmt_needed(r) {
            Some(n) => format!("{} ({n})", verdict_cell(r)),
            None => verdict_cell(r),
        };
        // An error or missing row says why (the first line of its note, shortened).
        let verdict = match (&r.note, r.verdict) {
            (Some(note), Verdict::Error | Verdict::Missing) => {
                let first = note.lines().next().unwrap_or("").trim();
                let short: String = first.chars().take(REASON_CHARS).collect();
                let more = if first.chars().count() > REASON_CHARS {
                    "…"
                } else {
                    ""
                };
                format!("{verdict}: {}{more}", esc(&short))
            }
            _ => verdict,
        };
        out.push_str(&format!(
            "| {} | `{}` | `{}` | {} | {} | {} | {} | {} | {} |\n",
            esc(&r.model),
            code(&r.scenario),
            code(&r.metric),
            fmt_value(&r.metric, r.baseline),
            fmt_value(&r.metric, r.current),
            fmt_change(r.change_pct),
            fmt_interval(r.interval),
            fmt_noise(r),
            verdict,
        ));
    }
    if rows.len() > limit {
        out.push_str(&format!(
            "\n_{} more rows left out to fit GitHub's comment limit; see the JSON report._\n",
            rows.len() - limit
        ));
    }
}

/// Untrusted text inside the chart's fenced block and a quoted label: no quote, no backtick (a
/// fence could be closed), no control character (a line break could start a new fence line) and
/// no `<` / `>` (Mermaid labels may hold HTML).
fn chart_label(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() && !matches!(c, '`' | '<' | '>'))
        .map(|c| if c == '"' { '\'' } else { c })
        .collect()
}

fn short_model(m: &str) -> &str {
    m.rsplit('/').next().unwrap_or(m)
}

/// A Mermaid bar chart of the change of the first gated throughput metric (else the first
/// gated metric with numbers) per model × scenario.
fn chart(report: &Report) -> Option<String> {
    let tested = |r: &&Row| r.gated && r.change_pct.is_some() && r.interval.is_some();
    let metric = report
        .rows
        .iter()
        .filter(tested)
        .find(|r| r.direction == Direction::Higher)
        .or_else(|| report.rows.iter().find(tested))?
        .metric
        .clone();
    let all: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.metric == metric && r.change_pct.is_some())
        .collect();
    let rows = &all[..all.len().min(MAX_BARS)];
    let labels: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "\"{} {}\"",
                chart_label(short_model(&r.model)),
                chart_label(&r.scenario)
            )
        })
        .collect();
    let values: Vec<f64> = rows
        .iter()
        .map(|r| (r.change_pct.unwrap_or(0.0) * 10.0).round() / 10.0)
        .collect();
    let tol = rows.first().and_then(|r| r.tolerance_pct).unwrap_or(5.0);
    let lo = values.iter().copied().fold(-tol, f64::min).floor() - 1.0;
    let hi = values.iter().copied().fold(tol, f64::max).ceil() + 1.0;
    let better = match rows[0].direction {
        Direction::Higher => "higher is better",
        Direction::Lower => "lower is better",
    };
    let nums: Vec<String> = values.iter().map(|v| format!("{v}")).collect();
    let first = if all.len() > MAX_BARS {
        format!(", first {MAX_BARS} of {}", all.len())
    } else {
        String::new()
    };
    Some(format!(
        "```mermaid\nxychart-beta\n    title \"{metric}: change % per scenario ({better}{first})\"\n    \
         x-axis [{}]\n    y-axis \"change %\" {lo} --> {hi}\n    bar [{}]\n```\n",
        labels.join(", "),
        nums.join(", ")
    ))
}

fn render(report: &Report, full_limit: usize, attention_limit: usize) -> String {
    let mut out = String::new();
    out.push_str(&marker(&report.kind));
    out.push('\n');
    out.push_str(&format!(
        "## {} perfgate {}: {}\n\n",
        icon(report.verdict),
        report.kind,
        report.verdict.as_str()
    ));
    let gated = report.rows.iter().filter(|r| r.gated).count();
    out.push_str(&format!(
        "**{}** of {gated} gated rows.\n\n",
        fmt_counts(&report.counts, " · ")
    ));
    if let Some(line) = super::fmt_unconfirmed(report) {
        out.push_str(&format!("_{}._\n\n", esc(&line)));
    }
    if let Some(line) = crate::gate::machine_note(report) {
        out.push_str(&format!("> [!WARNING]\n> {}.\n\n", esc(&line)));
    }
    match &report.ab {
        Some(ab) => {
            let lines = super::fmt_ab(ab);
            out.push_str(&format!("**{}**\n\n", esc(&lines[0])));
            for line in &lines[1..] {
                out.push_str(&format!("- {}\n", esc(line)));
            }
            out.push('\n');
        }
        None => out.push_str(&format!(
            "Baseline: {} · Current: {}\n\n",
            esc(&fmt_side(&report.baseline)),
            esc(&fmt_side(&report.current))
        )),
    }
    let attention: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| {
            r.gated
                && matches!(
                    r.verdict,
                    Verdict::Regressed | Verdict::Error | Verdict::Missing | Verdict::Inconclusive
                )
        })
        .collect();
    // Worst first, report order within a verdict.
    let mut attention = attention;
    attention.sort_by_key(|r| match r.verdict {
        Verdict::Regressed => 0,
        Verdict::Error => 1,
        Verdict::Missing => 2,
        _ => 3,
    });
    if attention.is_empty() {
        out.push_str("Nothing needs attention.\n\n");
    } else {
        out.push_str("### Needs attention\n\n");
        table(&attention, attention_limit, &mut out);
        out.push('\n');
        if report.ab.is_some() && attention.iter().any(|r| r.verdict == Verdict::Inconclusive) {
            out.push_str(
                "_Inconclusive: neither a regression nor a change within the tolerance is shown; \
                 each row says how many pairs in all would likely decide it (raise \
                 `--max-launches` or `--max-minutes`)._\n\n",
            );
        } else if attention.iter().any(|r| r.verdict == Verdict::Inconclusive) {
            out.push_str(
                "_Inconclusive: neither a regression nor a change within the tolerance is shown; \
                 each row says how many candidate launches would likely decide it \
                 (`--rerun inconclusive` adds them)._\n\n",
            );
        }
    }
    if let Some(c) = chart(report) {
        out.push_str(&c);
        out.push('\n');
    }
    let all: Vec<&Row> = report.rows.iter().collect();
    out.push_str(&format!(
        "<details><summary>All {} rows</summary>\n\n",
        all.len()
    ));
    table(&all, full_limit, &mut out);
    out.push_str(
        "\n(…) = shown, not gated. Interval: the change's two-sided interval; its worse end must stay within δ to pass. Noise: the sd of one launch's value the row was judged with (own launches, `runs` without launch ids, or `prior`) and the launches a side (L).\n\n</details>\n\n",
    );
    out.push_str(&format!(
        "<sub>{} perfgate {}</sub>\n",
        esc(&report.method),
        report.perfgate_version
    ));
    out
}

/// The markdown with a link to the HTML sign-off page under its heading (near the top, so a
/// comment shortened to GitHub's limit keeps it). The URL must be a plain `https://` address
/// (it is pasted into markdown).
pub fn with_html_link(markdown: &str, url: &str) -> Result<String, String> {
    let plain = url.starts_with("https://")
        && url
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~:/?#@!$&'*+,;=%".contains(&b));
    if !plain || url.contains(')') {
        return Err(format!("--html-url `{url}`: expected a plain https:// URL"));
    }
    let link = format!(
        "📊 [Sign-off report (HTML)]({url}): throughput and latency plots per model, the verdict table with filters, engine metrics (download the artifact, open `report.html`).\n"
    );
    let at = markdown
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|&i| {
            markdown[..i]
                .lines()
                .last()
                .is_some_and(|l| l.starts_with('#'))
        })
        .unwrap_or(0);
    Ok(format!("{}\n{link}\n{}", &markdown[..at], &markdown[at..]).replacen("\n\n\n", "\n\n", 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn names_cannot_mention_embed_or_inject_html() {
        let mut r = sample::report();
        r.rows[0].model = "@octocat ![t](https://x.test/p.png) [l](https://x.test) <img src=x> <!-- perfgate:ab -->".into();
        r.rows[0].scenario = "s` <b>x</b> | @team".into();
        let md = render_markdown(&r);
        // Outside code: no mention. (Inside a code span or the chart's fence nothing links.)
        assert!(!md.contains("@octocat"), "{md}");
        assert!(!md.contains("![t]") && !md.contains("[l](https"), "{md}");
        assert!(
            !md.contains("<img") && !md.contains("<!-- perfgate:ab"),
            "{md}"
        );
        assert!(!md.contains("s` <b>"), "{md}");
        assert!(md.starts_with("<!-- perfgate:check -->\n"), "{md}");
    }

    #[test]
    fn html_link_goes_under_the_heading() {
        let md = render_markdown(&sample::report());
        let out = with_html_link(&md, "https://github.com/o/r/actions/runs/1/artifacts/2").unwrap();
        let heading = out.lines().position(|l| l.starts_with('#')).unwrap();
        let link = out.lines().position(|l| l.starts_with("📊 [Sign-off report (HTML)](https://github.com/o/r/actions/runs/1/artifacts/2)")).unwrap();
        assert!(link > heading && link <= heading + 2, "{out}");
        // Nothing of the report is lost.
        let kept: Vec<&str> = out
            .lines()
            .filter(|l| !l.starts_with("📊") && !l.is_empty())
            .collect();
        let orig: Vec<&str> = md.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(kept, orig);
        for bad in [
            "http://x",
            "https://x/a)b",
            "https://x/<script>",
            "javascript:alert(1)",
        ] {
            assert!(with_html_link(&md, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn snapshot() {
        let md = render_markdown(&sample::report());
        assert!(md.starts_with("<!-- perfgate:check -->\n"));
        insta::assert_snapshot!(md);
    }

    #[test]
    fn shortened_to_fit() {
        let mut report = sample::report();
        let row = report.rows[0].clone();
        for i in 0..3000 {
            let mut r = row.clone();
            r.scenario = format!("scenario-{i}");
            report.rows.push(r);
        }
        let full = render(&report, usize::MAX, usize::MAX);
        assert!(full.chars().count() > GITHUB_COMMENT_LIMIT);
        let md = render_markdown(&report);
        assert!(md.chars().count() <= GITHUB_COMMENT_LIMIT);
        assert!(md.starts_with(&marker("check")));
        assert!(md.contains("more rows left out"));
        assert!(md.contains("</details>"));
        let tiny = render_markdown_limited(&report, 500);
        assert!(tiny.chars().count() <= 500, "{}", tiny.chars().count());
    }

    #[test]
    fn fit_shortens_under_the_limit_and_says_so() {
        let body: String = (0..10_000).map(|i| format!("| row {i} | é |\n")).collect();
        let short = fit(&body, GITHUB_COMMENT_LIMIT);
        assert!(short.chars().count() <= GITHUB_COMMENT_LIMIT);
        assert!(short.contains("shortened"));
        assert!(short.starts_with("| row 0 |"));
        assert_eq!(fit("small", 10), "small");
    }

    #[test]
    fn the_comment_body_always_holds_its_marker() {
        let b = comment_body("hello", "nightly");
        assert!(b.starts_with("<!-- perfgate:nightly -->\nhello"));
        assert_eq!(comment_body(&b, "nightly"), b);
        assert!(check_kind("nightly-1.x_y").is_ok());
        assert!(check_kind("bad kind")
            .unwrap_err()
            .contains("must be letters"));
        assert!(check_kind("").is_err());
    }
}
