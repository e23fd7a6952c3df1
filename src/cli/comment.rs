//! Flags of `perfgate comment`, and the GitHub flags shared with `perfgate check --github`.

use std::path::PathBuf;

use clap::Args;

use super::FailOn;

#[derive(Debug, Args)]
pub struct CommentArgs {
    /// The JSON report written by `perfgate check --json` or `perfgate merge`.
    #[arg(long, value_name = "REPORT.json")]
    pub report: PathBuf,
    /// Post this markdown instead of rendering the report (e.g. from `perfgate check --markdown`).
    #[arg(long, value_name = "FILE.md")]
    pub markdown: Option<PathBuf>,
    /// Link the HTML sign-off page at this URL (e.g. the uploaded artifact) from the comment.
    #[arg(long, value_name = "URL")]
    pub html_url: Option<String>,
    /// Report kind: one sticky comment per PR and kind. Default: the report's own `kind`.
    #[arg(long)]
    pub kind: Option<String>,
    /// Which verdicts make the exit code non-zero: `regression` (fail 1, error 3),
    /// `inconclusive` (also inconclusive 1) or `never` (always 0 once posted).
    #[arg(long, value_enum, default_value_t = FailOn::Regression)]
    pub fail_on: FailOn,
    #[command(flatten)]
    pub github: GithubArgs,
}

/// Where and what to post. Repository, PR and head SHA come from the Actions environment
/// (`GITHUB_REPOSITORY`, `GITHUB_EVENT_PATH`); these flags override it.
#[derive(Debug, Clone, Args)]
pub struct GithubArgs {
    /// Repository `OWNER/NAME` (default: $GITHUB_REPOSITORY).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// Pull request number (default: from the event payload).
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// Commit the check run is attached to (default: the PR's head SHA from the event payload).
    #[arg(long, value_name = "SHA")]
    pub sha: Option<String>,
    /// Do not post or update the PR comment.
    #[arg(long)]
    pub no_comment: bool,
    /// Do not create a check run.
    #[arg(long)]
    pub no_check_run: bool,
    /// Do not write the job summary or print annotations (another step already did).
    #[arg(long)]
    pub no_summary: bool,
    /// Check run name (default: `perfgate`, or `perfgate (KIND)` for other report kinds).
    #[arg(long, value_name = "NAME")]
    pub check_name: Option<String>,
    /// Post even from a `pull_request` event whose head is a fork (the job ran untrusted code;
    /// prefer the `workflow_run` pattern).
    #[arg(long)]
    pub allow_fork: bool,
    /// The login whose comment holding the marker is updated (default: the token's identity,
    /// `GET /user`; `github-actions[bot]` for the workflow's own token). Comments by anyone
    /// else are never edited. Set it when posting with a GitHub App's token (`APP[bot]`).
    #[arg(long, value_name = "LOGIN", env = "PERFGATE_COMMENT_AUTHOR")]
    pub comment_author: Option<String>,
    /// Exit 3 when posting to GitHub fails (default: warn; the exit code reflects the gate).
    #[arg(long)]
    pub fail_on_post_error: bool,
    /// Retries for 5xx answers, rate limits and network errors.
    #[arg(long, env = "PERFGATE_GITHUB_RETRIES", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(0..=20))]
    pub github_retries: u32,
    /// Delay before the first retry in milliseconds; doubles per retry, capped at 10 s.
    #[arg(long, env = "PERFGATE_GITHUB_RETRY_DELAY_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub github_retry_delay_ms: u64,
    /// Timeout of one GitHub request, in seconds.
    #[arg(long, env = "PERFGATE_GITHUB_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub github_timeout_secs: u64,
}

/// `perfgate check --github`: post the report at the end of the check (flattened into `check`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "GitHub (with --github)")]
pub struct CheckGithubArgs {
    /// After gating, write the job summary and outputs and post the PR comment and check run
    /// (like `perfgate comment`).
    #[arg(long)]
    pub github: bool,
    #[command(flatten)]
    pub post: GithubArgs,
}

impl GithubArgs {
    /// What the GitHub publisher needs of these flags.
    pub fn post_options(&self) -> crate::github::publish::PostOptions {
        crate::github::publish::PostOptions {
            repo: self.repo.clone(),
            pr: self.pr,
            sha: self.sha.clone(),
            no_comment: self.no_comment,
            no_check_run: self.no_check_run,
            no_summary: self.no_summary,
            check_name: self.check_name.clone(),
            allow_fork: self.allow_fork,
            comment_author: self.comment_author.clone(),
            retry: crate::github::RetryPolicy {
                retries: self.github_retries,
                base_delay: std::time::Duration::from_millis(self.github_retry_delay_ms),
                ..Default::default()
            },
            timeout: std::time::Duration::from_secs(self.github_timeout_secs),
        }
    }
}
