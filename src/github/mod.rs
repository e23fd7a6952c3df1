//! GitHub edge: posts an already rendered report where engine developers look. It upserts one
//! sticky PR comment per report kind (found again by the hidden marker the renderer wrote), creates a check run on
//! the PR's head commit, and speaks the Actions runner's protocols ([`actions`]). It never
//! renders: it takes markdown and returns ids. Every HTTP call goes through octocrab with our own
//! visible, bounded retry loop; the token never appears in output or errors.

pub mod actions;
pub mod env;
pub mod publish;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use octocrab::Octocrab;
use serde::Deserialize;
use serde_json::{json, Value};

pub use env::{Context, Overrides, Repo, Token};

/// Errors of the GitHub edge. None of them carries the token.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error("{0}")]
    Config(String),
    #[error("cannot read the GitHub event payload {path}: {reason}")]
    Event { path: PathBuf, reason: String },
    #[error("cannot write {path}: {reason}")]
    File { path: PathBuf, reason: String },
    #[error(
        "GitHub refused to {action} (HTTP 403: {message}). The workflow's token lacks a permission: \
         add `{permission}` under `permissions:` of the job (or the workflow), e.g.\n  permissions:\n    \
         {permission}\nFor pull requests from forks the token is read-only whatever you add: use the \
         `workflow_run` pattern (see docs/github.md, section \"Fork safety\")."
    )]
    Permission {
        action: String,
        message: String,
        permission: String,
    },
    #[error("GitHub answered HTTP {status} to {action}: {message}")]
    Http {
        action: String,
        status: u16,
        message: String,
    },
    #[error("GitHub is unreachable ({action}): {reason}")]
    Unreachable { action: String, reason: String },
    #[error("GitHub's answer to {action} could not be read: {reason}")]
    Decode { action: String, reason: String },
    /// The pull request is not the one the report is about: nothing was posted.
    #[error("refusing to post: {0}")]
    Refused(String),
}

impl GithubError {
    /// A failure of GitHub or the network (as opposed to a configuration problem).
    pub fn is_remote(&self) -> bool {
        matches!(
            self,
            GithubError::Http { .. } | GithubError::Unreachable { .. } | GithubError::Decode { .. }
        )
    }
}

/// How often and how long to retry 5xx answers, rate limits and network errors.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// Delay before the first retry; doubles each time.
    pub base_delay: Duration,
    /// No single wait is longer; a `Retry-After` asking for more ends the retries.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 3,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    fn backoff(&self, attempt: u32) -> Duration {
        let d = self.base_delay.saturating_mul(1u32 << attempt.min(16));
        d.min(self.max_delay)
    }
}

/// The conclusion of a check run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    Success,
    Failure,
    Neutral,
}

impl Conclusion {
    pub fn as_str(self) -> &'static str {
        match self {
            Conclusion::Success => "success",
            Conclusion::Failure => "failure",
            Conclusion::Neutral => "neutral",
        }
    }
}

/// The comment that was created or updated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedComment {
    pub id: u64,
    pub url: Option<String>,
    /// False when an earlier comment was updated in place.
    pub created: bool,
}

/// The check run that was created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedCheck {
    pub id: u64,
    pub url: Option<String>,
}

/// An authenticated client for one repository.
pub struct Client {
    octo: Octocrab,
    repo: Repo,
    retry: RetryPolicy,
    /// One exchange, the answer's whole body included, ends within this (a trickled body too).
    timeout: Duration,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("repo", &self.repo)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct IssueComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    user: Option<Login>,
}

#[derive(Deserialize)]
struct Login {
    login: String,
}

#[derive(Deserialize)]
struct Pull {
    head: PullRef,
}

#[derive(Deserialize)]
struct PullRef {
    sha: String,
    #[serde(default)]
    repo: Option<FullName>,
}

#[derive(Deserialize)]
struct FullName {
    full_name: String,
}

/// The login the workflow's `GITHUB_TOKEN` (an installation token of the GitHub Actions app)
/// posts as. `GET /user` is refused to installation tokens, so this is the identity assumed then.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// What GitHub says a pull request's head is right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullHead {
    /// The head commit (40 lowercase hex digits).
    pub sha: String,
    /// The repository (`OWNER/NAME`) the head lives in; `None` when that fork was deleted.
    pub repo: Option<String>,
}

/// Is `mark` the comment's marker? Only a whole first line equal to it counts, so text quoted
/// further down (a model name, a reviewer citing the marker) never makes a comment ours.
pub fn holds_marker(body: &str, mark: &str) -> bool {
    body.lines().next().map(|l| l.trim_end_matches('\r')) == Some(mark)
}

#[derive(Deserialize)]
struct Created {
    id: u64,
    #[serde(default)]
    html_url: Option<String>,
}

/// One attempt's failure, classified for the retry loop.
enum Failure {
    Retry {
        err: GithubError,
        after: Option<Duration>,
    },
    Fatal(GithubError),
}

struct Answer {
    headers: HeaderMap,
    body: String,
}

impl Client {
    /// Build a client for `api_url` (e.g. `https://api.github.com`, a GitHub Enterprise
    /// `https://HOST/api/v3`, or a local test double).
    pub fn new(
        api_url: &str,
        token: &Token,
        repo: Repo,
        retry: RetryPolicy,
        timeout: Duration,
    ) -> Result<Client, GithubError> {
        let octo = Octocrab::builder()
            .base_uri(api_url)
            .map_err(|_| GithubError::Config(format!("GitHub API URL `{api_url}` is not a URL")))?
            .personal_token(token.expose().to_string())
            .set_connect_timeout(Some(timeout.min(Duration::from_secs(10))))
            .set_read_timeout(Some(timeout))
            .set_write_timeout(Some(timeout))
            .build()
            .map_err(|e| GithubError::Config(format!("cannot build the GitHub client: {e}")))?;
        Ok(Client {
            octo,
            repo,
            retry,
            timeout,
        })
    }

    /// Upsert the one comment of a report kind on pull request `pr`: update the earlier comment
    /// that holds `marker`, or create it. `body` is posted as given (the renderer puts the marker
    /// in it and keeps it within GitHub's limit). The whole find-then-write step is retried, so a
    /// create that GitHub applied but answered with 5xx is found and updated, not duplicated.
    ///
    /// Only a comment written by `author` (the token's own identity, see [`Client::identity`])
    /// whose first line is `marker` is updated: another user's comment holding the marker, or
    /// one quoting it further down, is never touched.
    pub async fn upsert_comment(
        &self,
        pr: u64,
        marker: &str,
        body: &str,
        author: &str,
    ) -> Result<PostedComment, GithubError> {
        if marker.trim().is_empty() || !holds_marker(body, marker) {
            return Err(GithubError::Config(
                "the comment body does not start with its marker".into(),
            ));
        }
        self.with_retry("post the PR comment", || {
            self.upsert_once(pr, marker, body, author)
        })
        .await
    }

    /// The login comments made with this token carry: `GET /user` for a user's token, else
    /// (an installation token, which `GET /user` refuses with 403) [`ACTIONS_BOT`].
    pub async fn identity(&self) -> Result<String, GithubError> {
        let action = "read the token's identity";
        let got = self
            .with_retry(action, || async {
                let ans = self.call(Method::GET, "/user", None, action).await?;
                let u: Login = decode(&ans, action)?;
                Ok(u.login)
            })
            .await;
        match got {
            Ok(login) => Ok(login),
            Err(GithubError::Permission { .. }) => Ok(ACTIONS_BOT.to_string()),
            Err(e) => Err(e),
        }
    }

    /// The current head of pull request `pr`, as GitHub says (`GET /repos/{o}/{r}/pulls/{pr}`).
    pub async fn pull_head(&self, pr: u64) -> Result<PullHead, GithubError> {
        let (o, r) = (&self.repo.owner, &self.repo.name);
        let uri = format!("/repos/{o}/{r}/pulls/{pr}");
        let action = "read the pull request's head";
        self.with_retry(action, || async {
            let ans = self.call(Method::GET, &uri, None, action).await?;
            let p: Pull = decode(&ans, action)?;
            Ok(PullHead {
                sha: p.head.sha.to_ascii_lowercase(),
                repo: p.head.repo.map(|r| r.full_name),
            })
        })
        .await
    }

    async fn upsert_once(
        &self,
        pr: u64,
        mark: &str,
        body: &str,
        author: &str,
    ) -> Result<PostedComment, Failure> {
        let (o, r) = (&self.repo.owner, &self.repo.name);
        let action = "list the PR comments";
        let mut next = Some(format!("/repos/{o}/{r}/issues/{pr}/comments?per_page=100"));
        let mut found = None;
        let mut pages = 0;
        while let Some(uri) = next.take() {
            pages += 1;
            if pages > 1000 {
                return Err(Failure::Fatal(GithubError::Decode {
                    action: action.into(),
                    reason: "more than 1000 pages of comments".into(),
                }));
            }
            let ans = self.call(Method::GET, &uri, None, action).await?;
            let page: Vec<IssueComment> = decode(&ans, action)?;
            if let Some(c) = page.into_iter().find(|c| {
                c.user
                    .as_ref()
                    .is_some_and(|u| u.login.eq_ignore_ascii_case(author))
                    && c.body.as_deref().is_some_and(|b| holds_marker(b, mark))
            }) {
                found = Some(c);
                break;
            }
            next = next_link(&ans.headers);
        }
        let payload = json!({ "body": body });
        match found {
            Some(c) => {
                let action = "update the PR comment";
                let uri = format!("/repos/{o}/{r}/issues/comments/{}", c.id);
                let ans = self
                    .call(Method::PATCH, &uri, Some(&payload), action)
                    .await?;
                let upd: Created = decode(&ans, action)?;
                Ok(PostedComment {
                    id: upd.id,
                    url: upd.html_url.or(c.html_url),
                    created: false,
                })
            }
            None => {
                let action = "create the PR comment";
                let uri = format!("/repos/{o}/{r}/issues/{pr}/comments");
                let ans = self
                    .call(Method::POST, &uri, Some(&payload), action)
                    .await?;
                let c: Created = decode(&ans, action)?;
                Ok(PostedComment {
                    id: c.id,
                    url: c.html_url,
                    created: true,
                })
            }
        }
    }

    /// Create a completed check run named `name` on commit `sha` with the markdown as summary
    /// (already within GitHub's limit).
    pub async fn create_check_run(
        &self,
        name: &str,
        sha: &str,
        conclusion: Conclusion,
        title: &str,
        summary: &str,
    ) -> Result<PostedCheck, GithubError> {
        let (o, r) = (&self.repo.owner, &self.repo.name);
        let uri = format!("/repos/{o}/{r}/check-runs");
        let payload = json!({
            "name": name,
            "head_sha": sha,
            "status": "completed",
            "conclusion": conclusion.as_str(),
            "output": {
                "title": title,
                "summary": summary,
            },
        });
        let action = "create the check run";
        self.with_retry(action, || async {
            let ans = self
                .call(Method::POST, &uri, Some(&payload), action)
                .await?;
            let c: Created = decode(&ans, action)?;
            Ok(PostedCheck {
                id: c.id,
                url: c.html_url,
            })
        })
        .await
    }

    async fn with_retry<T, F, Fut>(&self, action: &str, mut attempt: F) -> Result<T, GithubError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, Failure>>,
    {
        let mut n = 0;
        loop {
            match attempt().await {
                Ok(v) => return Ok(v),
                Err(Failure::Fatal(e)) => return Err(e),
                Err(Failure::Retry { err, after }) => {
                    if n >= self.retry.retries {
                        return Err(err);
                    }
                    let wait = match after {
                        Some(a) if a > self.retry.max_delay => {
                            let err_s = crate::redact::text(&err.to_string());
                            eprintln!(
                                "perfgate: github: {err_s}; GitHub asks to wait {}s, longer than the {}s allowed: giving up",
                                a.as_secs(),
                                self.retry.max_delay.as_secs()
                            );
                            return Err(err);
                        }
                        Some(a) => a.max(self.retry.backoff(n)),
                        None => self.retry.backoff(n),
                    };
                    n += 1;
                    let err_s = crate::redact::text(&err.to_string());
                    eprintln!(
                        "perfgate: github: {err_s}; retry {n}/{} to {action} in {:.1}s",
                        self.retry.retries,
                        wait.as_secs_f64()
                    );
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// One HTTP exchange, its whole answer within the client's timeout, classified: 2xx → the
    /// answer; 5xx, 429, rate-limit 403, network errors and the timeout → retryable; 403 without
    /// rate limit → a permission hint; other 4xx → fatal.
    async fn call(
        &self,
        method: Method,
        uri: &str,
        body: Option<&Value>,
        action: &str,
    ) -> Result<Answer, Failure> {
        match tokio::time::timeout(self.timeout, self.exchange(method, uri, body, action)).await {
            Ok(r) => r,
            Err(_) => Err(Failure::Retry {
                err: GithubError::Unreachable {
                    action: action.into(),
                    reason: format!("no whole answer within {} s", self.timeout.as_secs()),
                },
                after: None,
            }),
        }
    }

    async fn exchange(
        &self,
        method: Method,
        uri: &str,
        body: Option<&Value>,
        action: &str,
    ) -> Result<Answer, Failure> {
        let res = match method {
            Method::GET => self.octo._get(uri).await,
            Method::POST => self.octo._post(uri, body).await,
            Method::PATCH => self.octo._patch(uri, body).await,
            _ => unreachable!("only GET, POST and PATCH are used"),
        };
        let res = match res {
            Ok(r) => r,
            Err(e) => {
                return Err(Failure::Retry {
                    err: GithubError::Unreachable {
                        action: action.into(),
                        reason: error_chain(&e),
                    },
                    after: None,
                })
            }
        };
        let status = res.status();
        let headers = res.headers().clone();
        let body = match self.octo.body_to_string(res).await {
            Ok(b) => b,
            Err(e) => {
                return Err(Failure::Retry {
                    err: GithubError::Unreachable {
                        action: action.into(),
                        reason: format!("reading the answer: {}", error_chain(&e)),
                    },
                    after: None,
                })
            }
        };
        if status.is_success() {
            return Ok(Answer { headers, body });
        }
        let message = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| body.chars().take(200).collect());
        let message = crate::redact::text(&message);
        let http = GithubError::Http {
            action: action.into(),
            status: status.as_u16(),
            message: message.clone(),
        };
        let rate_limited = status == StatusCode::TOO_MANY_REQUESTS
            || (status == StatusCode::FORBIDDEN
                && (header(&headers, "x-ratelimit-remaining").as_deref() == Some("0")
                    || message.to_ascii_lowercase().contains("rate limit")));
        if rate_limited {
            return Err(Failure::Retry {
                err: http,
                after: retry_after(&headers),
            });
        }
        if status.is_server_error() {
            return Err(Failure::Retry {
                err: http,
                after: retry_after(&headers),
            });
        }
        if status == StatusCode::FORBIDDEN {
            let permission = if action.contains("check run") {
                "checks: write"
            } else {
                // `issues: write` also allows PR comments; pull-requests is the narrower one.
                "pull-requests: write"
            };
            return Err(Failure::Fatal(GithubError::Permission {
                action: action.into(),
                message,
                permission: permission.into(),
            }));
        }
        Err(Failure::Fatal(http))
    }
}

fn decode<T: serde::de::DeserializeOwned>(ans: &Answer, action: &str) -> Result<T, Failure> {
    serde_json::from_str(&ans.body).map_err(|e| {
        Failure::Fatal(GithubError::Decode {
            action: action.into(),
            reason: e.to_string(),
        })
    })
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)?.to_str().ok().map(|s| s.trim().to_string())
}

/// `Retry-After` in seconds, or the time until `x-ratelimit-reset` when the quota is spent.
fn retry_after(h: &HeaderMap) -> Option<Duration> {
    if let Some(s) = header(h, "retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_secs(s));
    }
    if header(h, "x-ratelimit-remaining").as_deref() == Some("0") {
        let reset = header(h, "x-ratelimit-reset")?.parse::<u64>().ok()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        return Some(Duration::from_secs(reset.saturating_sub(now)));
    }
    None
}

/// The `rel="next"` target of a `Link` header, as a path and query (so the request stays on
/// the configured API host and keeps its authentication).
pub fn next_link(h: &HeaderMap) -> Option<String> {
    let link = header(h, "link")?;
    for part in link.split(',') {
        let mut pieces = part.split(';');
        let target = pieces.next()?.trim();
        if pieces.any(|p| p.trim().replace(' ', "") == "rel=\"next\"") {
            let url = target.trim_start_matches('<').trim_end_matches('>');
            let uri: http::Uri = url.parse().ok()?;
            return uri.path_and_query().map(|pq| pq.as_str().to_string());
        }
    }
    None
}

/// The error and its causes on one line (octocrab's errors say little at the top level).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_link_is_made_relative() {
        let mut h = HeaderMap::new();
        h.insert(
            "link",
            "<https://ghe.example.com/api/v3/repositories/1/issues/2/comments?per_page=100&page=3>; rel=\"next\", <https://ghe.example.com/api/v3/x?page=9>; rel=\"last\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            next_link(&h).as_deref(),
            Some("/api/v3/repositories/1/issues/2/comments?per_page=100&page=3")
        );
        h.insert(
            "link",
            "<https://x/y?page=1>; rel=\"prev\"".parse().unwrap(),
        );
        assert_eq!(next_link(&h), None);
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy {
            retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
        };
        let d: Vec<u128> = (0..4).map(|i| p.backoff(i).as_millis()).collect();
        assert_eq!(d, vec![100, 200, 350, 350]);
    }

    #[test]
    fn permission_error_names_the_permission() {
        let e = GithubError::Permission {
            action: "create the check run".into(),
            message: "Resource not accessible by integration".into(),
            permission: "checks: write".into(),
        };
        let s = e.to_string();
        assert!(
            s.contains("checks: write") && s.contains("permissions:"),
            "{s}"
        );
    }
}
