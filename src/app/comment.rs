//! `perfgate comment` and the `--github` end of `perfgate check`: hand the rendered report to
//! [`Publication::publish`]. The exit code reflects the gate, not GitHub: a failed post is a
//! warning (unless `--fail-on-post-error`), so an outage never turns a pass into a failure or
//! hides a regression.

use std::path::Path;

use anyhow::Context as _;

use super::{exit_for, Exit};
use crate::cli::comment::{CheckGithubArgs, CommentArgs, GithubArgs};
use crate::gate::Report;
use crate::github::publish::Publication;

pub(crate) fn exec(args: CommentArgs) -> anyhow::Result<Exit> {
    let mut report = super::inputs::read_report(&args.report)?;
    if let Some(kind) = &args.kind {
        report.kind = kind.clone();
    }
    // The report's word is not taken for its verdict: what its rows support is posted.
    if let Some(stated) = crate::gate::merge::settle(&mut report) {
        let (said, now) = (stated.as_str(), report.verdict.as_str());
        let path = args.report.display();
        eprintln!(
            "perfgate: warning: {path} says `{said}` but its rows say `{now}`: posting `{now}`"
        );
    }
    let markdown = match &args.markdown {
        Some(p) => std::fs::read_to_string(p)
            .with_context(|| format!("cannot read the markdown {}", p.display()))?,
        None => crate::report::render_markdown(&report),
    };
    let markdown = match &args.html_url {
        Some(url) => {
            crate::report::markdown::with_html_link(&markdown, url).map_err(anyhow::Error::msg)?
        }
        None => markdown,
    };
    let gate_exit = exit_for(report.verdict, args.fail_on);
    post_report(
        &report,
        Some(&args.report),
        &markdown,
        &args.github,
        gate_exit,
    )
}

/// The `--github` end of `perfgate check`: a no-op returning `gate_exit` unless `--github`
/// was given. Call it once the report is rendered.
pub(crate) fn after_check(
    report: &Report,
    report_path: Option<&Path>,
    markdown: &str,
    args: &CheckGithubArgs,
    gate_exit: Exit,
) -> anyhow::Result<Exit> {
    if !args.github {
        return Ok(gate_exit);
    }
    post_report(report, report_path, markdown, &args.post, gate_exit)
}

/// Publish a rendered report to GitHub and return the exit code to use: `gate_exit`, or
/// [`Exit::Infra`] when posting failed under `--fail-on-post-error`.
fn post_report(
    report: &Report,
    report_path: Option<&Path>,
    markdown: &str,
    gh: &GithubArgs,
    gate_exit: Exit,
) -> anyhow::Result<Exit> {
    let publication = Publication {
        report,
        report_path,
        markdown,
        strict: gate_exit == Exit::Regression,
    };
    let failed = publication.publish(&gh.post_options(), |k| std::env::var(k).ok())?;
    Ok(if failed && gh.fail_on_post_error {
        Exit::Infra
    } else {
        gate_exit
    })
}
