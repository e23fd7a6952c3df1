//! `perfgate comment` and the `--github` end of `perfgate check`: write the job summary and
//! step outputs, print annotations, then upsert the sticky PR comment and create the check run.
//! The exit code reflects the gate, not GitHub: a failed post is a warning (unless
//! `--fail-on-post-error`), so an outage never turns a pass into a failure or hides a regression.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;

use super::{exit_for, Exit};
use crate::cli::comment::{CheckGithubArgs, CommentArgs, GithubArgs};
use crate::gate::{Report, TopVerdict};
use crate::github::{self, actions, Client, Conclusion, Context, GithubError, Overrides};
use crate::report;
use crate::report::markdown::{self, GITHUB_CHECK_SUMMARY_LIMIT, GITHUB_STEP_SUMMARY_LIMIT};

/// How many annotations to print at most.
const ANNOTATION_LIMIT: usize = 20;

pub(crate) fn exec(args: CommentArgs) -> anyhow::Result<Exit> {
    let mut report = read_report(&args.report)?;
    if let Some(kind) = &args.kind {
        report.kind = kind.clone();
    }
    let markdown = match &args.markdown {
        Some(p) => std::fs::read_to_string(p)
            .with_context(|| format!("cannot read the markdown {}", p.display()))?,
        None => crate::report::render_markdown(&report),
    };
    let markdown = match &args.html_url {
        Some(url) => with_html_link(&markdown, url)?,
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

/// The markdown with a link to the HTML sign-off page under its heading (near the top, so a
/// comment shortened to GitHub's limit keeps it). The URL must be a plain `https://` address
/// (it is pasted into markdown).
pub(crate) fn with_html_link(markdown: &str, url: &str) -> anyhow::Result<String> {
    let plain = url.starts_with("https://")
        && url
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~:/?#@!$&'*+,;=%".contains(&b));
    anyhow::ensure!(
        plain && !url.contains(')'),
        "--html-url `{url}`: expected a plain https:// URL"
    );
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

/// Read a JSON report written by `perfgate check --json` or `perfgate merge`.
pub(crate) fn read_report(path: &Path) -> anyhow::Result<Report> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the report {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not a perfgate report", path.display()))
}

/// Publish a rendered report to GitHub and return the exit code to use: `gate_exit`, or
/// [`Exit::Infra`] when posting failed under `--fail-on-post-error`. It runs its own runtime
/// (on a separate thread when called from inside one). Only invalid flags are errors.
pub(crate) fn post_report(
    report: &Report,
    report_path: Option<&Path>,
    markdown: &str,
    gh: &GithubArgs,
    gate_exit: Exit,
) -> anyhow::Result<Exit> {
    let over = Overrides {
        repo: gh.repo.clone(),
        pr: gh.pr,
        sha: gh.sha.clone(),
        api_url: None,
    };
    let ctx = Context::from_env(|k| std::env::var(k).ok(), &over)?;
    let mut problems: Vec<GithubError> = Vec::new();

    // 1. Local outputs first: they must exist whatever GitHub does.
    if let Some(p) = ctx.step_summary.as_ref().filter(|_| !gh.no_summary) {
        if let Err(e) =
            actions::append_step_summary(p, &markdown::fit(markdown, GITHUB_STEP_SUMMARY_LIMIT))
        {
            warn(&ctx, "warning", &e.to_string());
        }
    }
    if ctx.in_actions && !gh.no_summary {
        for line in actions::annotations(report, ANNOTATION_LIMIT) {
            println!("{line}");
        }
    }
    let verdict = report::verdict_word(report.verdict);
    let path = report_path
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut outputs: Vec<(&'static str, String)> =
        vec![("verdict", verdict.to_string()), ("report-path", path)];

    // 2. Then GitHub, on a thread of its own when called from inside a runtime.
    if !gh.no_comment || !gh.no_check_run {
        let mut remote = || {
            post_remote(
                &ctx,
                gh,
                report,
                markdown,
                gate_exit,
                &mut outputs,
                &mut problems,
            )
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(remote).join())
                .map_err(|_| anyhow::anyhow!("the GitHub poster panicked"))??;
        } else {
            remote()?;
        }
    }
    if let Some(p) = &ctx.output {
        let pairs: Vec<(&str, &str)> = outputs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        if let Err(e) = actions::set_outputs(p, &pairs) {
            problems.push(e);
        }
    }
    let failed = !problems.is_empty();
    for e in problems {
        let level = if matches!(e, GithubError::Permission { .. }) {
            "error"
        } else {
            "warning"
        };
        warn(&ctx, level, &format!("not posted: {e}"));
    }
    if failed && gh.fail_on_post_error {
        return Ok(Exit::Infra);
    }
    Ok(gate_exit)
}

/// Say something about posting on stderr and, inside Actions, as an annotation.
fn warn(ctx: &Context, level: &str, msg: &str) {
    let msg = &crate::redact::text(msg);
    eprintln!("perfgate: github: {msg}");
    if ctx.in_actions {
        println!(
            "::{level} title=perfgate::{}",
            msg.replace('%', "%25")
                .replace('\r', "%0D")
                .replace('\n', "%0A")
        );
    }
}

/// Upsert the comment and create the check run; ids go to `outputs`, failures to `problems`.
fn post_remote(
    ctx: &Context,
    gh: &GithubArgs,
    report: &Report,
    markdown: &str,
    gate_exit: Exit,
    outputs: &mut Vec<(&'static str, String)>,
    problems: &mut Vec<GithubError>,
) -> anyhow::Result<()> {
    // The HTTP client must be built inside the runtime that drives it.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let _guard = rt.enter();
    let (client, pr, sha) = match plan(ctx, gh, !gh.no_comment, !gh.no_check_run) {
        Ok(p) => p,
        Err(why) => {
            warn(ctx, "warning", &why);
            return Ok(());
        }
    };
    if let Some(pr) = pr {
        let posted = match markdown::check_kind(&report.kind) {
            Ok(()) => {
                let body = markdown::comment_body(markdown, &report.kind);
                rt.block_on(client.upsert_comment(pr, &markdown::marker(&report.kind), &body))
            }
            Err(why) => Err(GithubError::Config(why)),
        };
        match posted {
            Ok(c) => {
                eprintln!(
                    "perfgate: github: {} comment {} on PR #{pr}{}",
                    if c.created { "created" } else { "updated" },
                    c.id,
                    c.url
                        .as_deref()
                        .map(|u| format!(": {u}"))
                        .unwrap_or_default()
                );
                outputs.push(("comment-id", c.id.to_string()));
                outputs.push(("comment-url", c.url.unwrap_or_default()));
            }
            Err(e) => problems.push(e),
        }
    }
    if let Some(sha) = sha {
        let name = gh
            .check_name
            .clone()
            .unwrap_or_else(|| report::check_run_name(&report.kind));
        let conclusion = conclusion(report.verdict, gate_exit);
        let title = report::check_run_title(report);
        let summary = markdown::fit(markdown, GITHUB_CHECK_SUMMARY_LIMIT);
        match rt.block_on(client.create_check_run(&name, &sha, conclusion, &title, &summary)) {
            Ok(c) => {
                eprintln!(
                    "perfgate: github: check run {} `{name}` concluded {} on {sha}",
                    c.id,
                    conclusion.as_str()
                );
                outputs.push(("check-run-id", c.id.to_string()));
            }
            Err(e) => problems.push(e),
        }
    }
    Ok(())
}

/// Decide what can be posted: a client, the PR to comment on, the SHA to check.
#[allow(clippy::type_complexity)]
fn plan(
    ctx: &Context,
    gh: &GithubArgs,
    want_comment: bool,
    want_check: bool,
) -> Result<(Client, Option<u64>, Option<String>), String> {
    if ctx.is_fork_pr_event() && !gh.allow_fork {
        return Err(format!(
            "not posting: this `{}` event comes from a fork, so the job ran code from outside the \
             repository with a read-only token. Post from a `workflow_run` workflow instead (see the \
             README, \"Fork safety\"), or pass --allow-fork.",
            ctx.event_name.as_deref().unwrap_or("pull_request")
        ));
    }
    let token = ctx
        .token
        .as_ref()
        .ok_or("not posting: GITHUB_TOKEN is not set (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`)")?;
    let repo = ctx
        .repo
        .clone()
        .ok_or("not posting: no repository (set GITHUB_REPOSITORY or --repo OWNER/NAME)")?;
    let pr = if want_comment {
        if ctx.pr.is_none() {
            eprintln!("perfgate: github: no pull request in this event (use --pr N): no comment");
        }
        ctx.pr
    } else {
        None
    };
    let sha = if want_check {
        if ctx.sha.is_none() {
            eprintln!("perfgate: github: no head commit known (use --sha SHA): no check run");
        }
        ctx.sha.clone()
    } else {
        None
    };
    let retry = github::RetryPolicy {
        retries: gh.github_retries,
        base_delay: Duration::from_millis(gh.github_retry_delay_ms),
        ..github::RetryPolicy::default()
    };
    let timeout = Duration::from_secs(gh.github_timeout_secs.max(1));
    let client =
        Client::new(&ctx.api_url, token, repo, retry, timeout).map_err(|e| e.to_string())?;
    Ok((client, pr, sha))
}

/// success for a pass, failure for a regression or error, neutral for an inconclusive gate
/// (failure when the gate was strict about it).
fn conclusion(verdict: TopVerdict, gate_exit: Exit) -> Conclusion {
    match verdict {
        TopVerdict::Pass => Conclusion::Success,
        TopVerdict::Fail | TopVerdict::Error => Conclusion::Failure,
        TopVerdict::Inconclusive if gate_exit == Exit::Regression => Conclusion::Failure,
        TopVerdict::Inconclusive => Conclusion::Neutral,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_run_conclusions_follow_the_gate() {
        use TopVerdict::*;
        assert_eq!(conclusion(Inconclusive, Exit::Pass), Conclusion::Neutral);
        assert_eq!(
            conclusion(Inconclusive, Exit::Regression),
            Conclusion::Failure
        );
        assert_eq!(conclusion(Fail, Exit::Pass), Conclusion::Failure);
    }

    #[test]
    fn html_link_goes_under_the_heading() {
        let md = crate::report::render_markdown(&crate::report::sample::report());
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
}
