//! Publishing a rendered report (`perfgate comment`, `perfgate check --github`): the job summary
//! and step outputs, the annotations, then the sticky PR comment and the check run. A failed post
//! is reported back as a problem, never as an error: the caller's exit code reflects the gate, so
//! an outage never turns a pass into a failure or hides a regression.

use std::path::Path;
use std::time::Duration;

use super::{actions, Client, Conclusion, Context, GithubError, Overrides, PullHead, RetryPolicy};
use crate::gate::{Report, TopVerdict};
use crate::report;
use crate::report::markdown::{self, GITHUB_CHECK_SUMMARY_LIMIT, GITHUB_STEP_SUMMARY_LIMIT};

/// How many annotations to print at most.
const ANNOTATION_LIMIT: usize = 20;

/// Where and what to post (the `--repo`, `--pr`, `--no-comment`, … flags).
#[derive(Debug, Clone, Default)]
pub struct PostOptions {
    pub repo: Option<String>,
    pub pr: Option<u64>,
    pub sha: Option<String>,
    pub no_comment: bool,
    pub no_check_run: bool,
    pub no_summary: bool,
    pub check_name: Option<String>,
    pub allow_fork: bool,
    /// The login whose comment is ours (default: the token's identity, see `Client::identity`).
    pub comment_author: Option<String>,
    pub retry: RetryPolicy,
    pub timeout: Duration,
}

/// One report to publish: the report, where its JSON was written, its rendered markdown, and
/// whether the gate fails an inconclusive verdict (the check run then concludes `failure`).
pub struct Publication<'a> {
    pub report: &'a Report,
    pub report_path: Option<&'a Path>,
    pub markdown: &'a str,
    pub strict: bool,
}

impl Publication<'_> {
    /// Publish with `opts`, reading the Actions environment through `env`. Returns whether
    /// something could not be posted (each problem was already said on stderr and, inside
    /// Actions, as an annotation). It runs its own runtime (on a separate thread when called
    /// from inside one). Errors: invalid flags, and [`GithubError::Refused`] when the pull
    /// request's head (as GitHub says) is not the commit the report is about.
    pub fn publish(
        &self,
        opts: &PostOptions,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<bool, GithubError> {
        let over = Overrides {
            repo: opts.repo.clone(),
            pr: opts.pr,
            sha: opts.sha.clone(),
            api_url: None,
        };
        let ctx = Context::from_env(env, &over)?;
        let mut posting = Posting {
            ctx: &ctx,
            opts,
            outputs: Vec::new(),
            problems: Vec::new(),
            refused: None,
        };

        // 1. Local outputs first: they must exist whatever GitHub does.
        if let Some(p) = ctx.step_summary.as_ref().filter(|_| !opts.no_summary) {
            let summary = markdown::fit(self.markdown, GITHUB_STEP_SUMMARY_LIMIT);
            if let Err(e) = actions::append_step_summary(p, &summary) {
                warn(&ctx, "warning", &e.to_string());
            }
        }
        if ctx.in_actions && !opts.no_summary {
            for line in actions::annotations(self.report, ANNOTATION_LIMIT) {
                println!("{line}");
            }
        }
        let path = self
            .report_path
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let verdict = report::verdict_word(self.report.verdict).to_string();
        posting.outputs = vec![("verdict", verdict), ("report-path", path)];

        // 2. Then GitHub, on a thread of its own when called from inside a runtime.
        if !opts.no_comment || !opts.no_check_run {
            if tokio::runtime::Handle::try_current().is_ok() {
                std::thread::scope(|s| s.spawn(|| posting.remote(self)).join())
                    .map_err(|_| GithubError::Config("the GitHub poster panicked".into()))??;
            } else {
                posting.remote(self)?;
            }
        }
        if let Some(p) = &ctx.output {
            let pairs: Vec<(&str, &str)> = posting
                .outputs
                .iter()
                .map(|(k, v)| (*k, v.as_str()))
                .collect();
            if let Err(e) = actions::set_outputs(p, &pairs) {
                posting.problems.push(e);
            }
        }
        let failed = !posting.problems.is_empty();
        for e in posting.problems {
            let level = if matches!(e, GithubError::Permission { .. }) {
                "error"
            } else {
                "warning"
            };
            warn(&ctx, level, &format!("not posted: {e}"));
        }
        if let Some(e) = posting.refused {
            if ctx.in_actions {
                println!("{}", annotation("error", &e.to_string()));
            }
            return Err(e);
        }
        Ok(failed)
    }

    /// success for a pass, failure for a regression or error, neutral for an inconclusive gate
    /// (failure when the gate was strict about it).
    fn conclusion(&self) -> Conclusion {
        conclusion(self.report.verdict, self.strict)
    }
}

fn conclusion(verdict: TopVerdict, strict: bool) -> Conclusion {
    match verdict {
        TopVerdict::Pass => Conclusion::Success,
        TopVerdict::Fail | TopVerdict::Error => Conclusion::Failure,
        TopVerdict::Inconclusive if strict => Conclusion::Failure,
        TopVerdict::Inconclusive => Conclusion::Neutral,
    }
}

/// What one publication posted (step outputs) and what failed.
struct Posting<'a> {
    ctx: &'a Context,
    opts: &'a PostOptions,
    outputs: Vec<(&'static str, String)>,
    problems: Vec<GithubError>,
    /// The pull request is not the report's: nothing was posted.
    refused: Option<GithubError>,
}

/// Is `head` (what GitHub says pull request `pr`'s head is now) the commit the report is about?
/// `sha` is the report's commit (`--sha`, or the event's head); on a `workflow_run` event the
/// run's own head commit and head repository (from GitHub's event payload, not from the run's
/// artifacts) must match too. A number taken from an artifact can then only name the PR the
/// run was for.
pub fn check_head(
    pr: u64,
    sha: Option<&str>,
    head: &PullHead,
    ctx: &Context,
) -> Result<(), GithubError> {
    let refuse = |why: String| Err(GithubError::Refused(why));
    let Some(sha) = sha else {
        return refuse(format!(
            "no commit is known to check PR #{pr}'s head against: pass --sha SHA (the commit the \
             report measured)"
        ));
    };
    if !head.sha.starts_with(&sha.to_ascii_lowercase()) {
        return refuse(format!(
            "PR #{pr}'s head is {}, not {sha}, the commit this report is about (another PR's \
             report, or the PR has moved on since)",
            head.sha
        ));
    }
    if let Some(run) = &ctx.run_head_sha {
        if !head.sha.starts_with(run.as_str()) {
            return refuse(format!(
                "PR #{pr}'s head is {}, not {run}, the head of the workflow run that made this report",
                head.sha
            ));
        }
    }
    if let Some(run_repo) = &ctx.run_head_repo {
        let same = head
            .repo
            .as_deref()
            .is_some_and(|r| r.eq_ignore_ascii_case(run_repo));
        if !same {
            return refuse(format!(
                "PR #{pr}'s head lives in {}, not in {run_repo}, where the workflow run that made \
                 this report ran",
                head.repo.as_deref().unwrap_or("a deleted repository")
            ));
        }
    }
    Ok(())
}

impl Posting<'_> {
    /// Upsert the comment and create the check run; ids go to `outputs`, failures to `problems`.
    fn remote(&mut self, p: &Publication<'_>) -> Result<(), GithubError> {
        // The HTTP client must be built inside the runtime that drives it.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| GithubError::Config(format!("cannot start a runtime: {e}")))?;
        let _guard = rt.enter();
        let (client, pr, sha) = match self.plan() {
            Ok(p) => p,
            Err(why) => {
                warn(self.ctx, "warning", &why);
                return Ok(());
            }
        };
        let report = p.report;
        // Nothing goes to a pull request whose head is not the report's commit.
        if let Some(pr) = pr {
            let checked = rt
                .block_on(client.pull_head(pr))
                .and_then(|head| check_head(pr, sha.as_deref(), &head, self.ctx));
            match checked {
                Ok(()) => {}
                Err(e @ GithubError::Refused(_)) => {
                    self.refused = Some(e);
                    return Ok(());
                }
                Err(e) => {
                    self.problems.push(e);
                    return Ok(());
                }
            }
        }
        if let Some(pr) = pr.filter(|_| !self.opts.no_comment) {
            let posted = match markdown::check_kind(&report.kind) {
                Ok(()) => {
                    let body = markdown::comment_body(p.markdown, &report.kind);
                    let author = match &self.opts.comment_author {
                        Some(a) => Ok(a.clone()),
                        None => rt.block_on(client.identity()),
                    };
                    author.and_then(|author| {
                        rt.block_on(client.upsert_comment(
                            pr,
                            &markdown::marker(&report.kind),
                            &body,
                            &author,
                        ))
                    })
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
                    self.outputs.push(("comment-id", c.id.to_string()));
                    self.outputs
                        .push(("comment-url", c.url.unwrap_or_default()));
                }
                Err(e) => self.problems.push(e),
            }
        }
        if let Some(sha) = sha.filter(|_| !self.opts.no_check_run) {
            let name = self
                .opts
                .check_name
                .clone()
                .unwrap_or_else(|| report::check_run_name(&report.kind));
            let conclusion = p.conclusion();
            let title = report::check_run_title(report);
            let summary = markdown::fit(p.markdown, GITHUB_CHECK_SUMMARY_LIMIT);
            match rt.block_on(client.create_check_run(&name, &sha, conclusion, &title, &summary)) {
                Ok(c) => {
                    eprintln!(
                        "perfgate: github: check run {} `{name}` concluded {} on {sha}",
                        c.id,
                        conclusion.as_str()
                    );
                    self.outputs.push(("check-run-id", c.id.to_string()));
                }
                Err(e) => self.problems.push(e),
            }
        }
        Ok(())
    }

    /// Decide what can be posted: a client, the PR to comment on, the SHA to check.
    // Its one caller takes the tuple apart at once; a struct would only name it.
    #[allow(clippy::type_complexity)]
    fn plan(&self) -> Result<(Client, Option<u64>, Option<String>), String> {
        let (ctx, opts) = (self.ctx, self.opts);
        if ctx.is_fork_pr_event() && !opts.allow_fork {
            return Err(format!(
                "not posting: this `{}` event comes from a fork, so the job ran code from outside the \
                 repository with a read-only token. Post from a `workflow_run` workflow instead (see \
                 docs/github.md, \"Fork safety\"), or pass --allow-fork.",
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
        // Kept with --no-comment too: a check run for a known PR is checked against its head.
        if ctx.pr.is_none() && !opts.no_comment {
            eprintln!("perfgate: github: no pull request in this event (use --pr N): no comment");
        }
        let pr = ctx.pr;
        // Kept with --no-check-run too: the PR's head is checked against it.
        if ctx.sha.is_none() && !opts.no_check_run {
            eprintln!("perfgate: github: no head commit known (use --sha SHA): no check run");
        }
        let sha = ctx.sha.clone();
        let timeout = opts.timeout.max(Duration::from_secs(1));
        let client = Client::new(&ctx.api_url, token, repo, opts.retry, timeout)
            .map_err(|e| e.to_string())?;
        Ok((client, pr, sha))
    }
}

/// Say something about posting on stderr and, inside Actions, as an annotation.
fn warn(ctx: &Context, level: &str, msg: &str) {
    let msg = &crate::redact::text(msg);
    eprintln!("perfgate: github: {msg}");
    if ctx.in_actions {
        println!("{}", annotation(level, msg));
    }
}

/// A workflow-command annotation line holding `msg` (redacted, escaped).
fn annotation(level: &str, msg: &str) -> String {
    format!(
        "::{level} title=perfgate::{}",
        crate::redact::text(msg)
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_run_conclusions_follow_the_gate() {
        use TopVerdict::*;
        assert_eq!(conclusion(Inconclusive, false), Conclusion::Neutral);
        assert_eq!(conclusion(Inconclusive, true), Conclusion::Failure);
        assert_eq!(conclusion(Fail, false), Conclusion::Failure);
    }
}
