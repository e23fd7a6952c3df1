//! Where to post: reads the GitHub Actions environment (repository, API URL, event payload) and
//! resolves the target pull request, head SHA and fork status, with command-line overrides.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::GithubError;

/// The public API of github.com; `GITHUB_API_URL` overrides it (GitHub Enterprise, test doubles).
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// An access token. It never appears in `Debug` output, error messages or reports: the only way
/// to read it is [`Token::expose`], used once to configure the HTTP client.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    pub fn new(token: impl Into<String>) -> Option<Token> {
        let t = token.into().trim().to_string();
        crate::redact::register(&t);
        (!t.is_empty()).then_some(Token(t))
    }

    /// The secret itself. Call only to hand it to the HTTP client.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub owner: String,
    pub name: String,
}

impl Repo {
    pub fn parse(s: &str) -> Result<Repo, GithubError> {
        let bad = || GithubError::Config(format!("repository `{s}` is not of the form OWNER/NAME"));
        let (owner, name) = s.trim().split_once('/').ok_or_else(bad)?;
        let ok = |p: &str| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        if !ok(owner) || !ok(name) {
            return Err(bad());
        }
        Ok(Repo {
            owner: owner.to_string(),
            name: name.to_string(),
        })
    }
}

impl fmt::Display for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// What the event payload (`GITHUB_EVENT_PATH`) says about the pull request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventInfo {
    pub pr: Option<u64>,
    /// The PR's head commit (not the merge commit `GITHUB_SHA` points at on `pull_request`).
    pub head_sha: Option<String>,
    /// The PR comes from another repository than the one it targets.
    pub fork: bool,
    /// A `workflow_run` event: the run's head commit and head repository (`OWNER/NAME`), which
    /// the pull request named by `--pr` must match before anything is posted to it.
    pub run_head: Option<(Option<String>, Option<String>)>,
}

/// Command-line values that take precedence over the environment.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub repo: Option<String>,
    pub pr: Option<u64>,
    pub sha: Option<String>,
    pub api_url: Option<String>,
}

/// Everything the poster needs to know about where it runs.
#[derive(Debug, Clone)]
pub struct Context {
    pub token: Option<Token>,
    pub repo: Option<Repo>,
    pub api_url: String,
    pub event_name: Option<String>,
    pub pr: Option<u64>,
    pub sha: Option<String>,
    pub fork: bool,
    /// On a `workflow_run` event: the head commit of the run that produced the reports (trusted:
    /// GitHub wrote it, not the run's artifacts). The PR posted to must have this head.
    pub run_head_sha: Option<String>,
    /// On a `workflow_run` event: the repository (`OWNER/NAME`) the run's head commit came from.
    /// The PR posted to must come from this repository.
    pub run_head_repo: Option<String>,
    /// `$GITHUB_STEP_SUMMARY`: a file the job summary markdown is appended to.
    pub step_summary: Option<PathBuf>,
    /// `$GITHUB_OUTPUT`: a file step outputs are appended to.
    pub output: Option<PathBuf>,
    /// Running inside GitHub Actions (`GITHUB_ACTIONS=true`).
    pub in_actions: bool,
}

impl Context {
    /// Read the context through `var` (normally `std::env::var`), then apply `over`.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
        over: &Overrides,
    ) -> Result<Context, GithubError> {
        let get = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let event_name = get("GITHUB_EVENT_NAME");
        let event = match get("GITHUB_EVENT_PATH") {
            Some(p) => read_event(Path::new(&p), event_name.as_deref())?,
            None => EventInfo::default(),
        };
        let repo = match over.repo.clone().or_else(|| get("GITHUB_REPOSITORY")) {
            Some(r) => Some(Repo::parse(&r)?),
            None => None,
        };
        let (run_head_sha, run_head_repo) = event.run_head.clone().unwrap_or_default();
        let run_head_sha = match run_head_sha {
            Some(s) => Some(check_sha(&s)?),
            None => None,
        };
        let sha = match over
            .sha
            .clone()
            .or(event.head_sha)
            .or_else(|| get("GITHUB_SHA"))
        {
            Some(s) => Some(check_sha(&s)?),
            None => None,
        };
        let api_url = over
            .api_url
            .clone()
            .or_else(|| get("GITHUB_API_URL"))
            .unwrap_or_else(|| DEFAULT_API_URL.to_string());
        let token = get("GITHUB_TOKEN").and_then(Token::new);
        if token
            .as_ref()
            .is_some_and(|t| t.expose().chars().any(char::is_control))
        {
            // It would go into a header: refuse it rather than send (or panic on) a line break.
            return Err(GithubError::Config(
                "GITHUB_TOKEN holds a control character (CR, LF, …): it cannot be sent as a header"
                    .into(),
            ));
        }
        Ok(Context {
            token,
            repo,
            api_url: api_url.trim_end_matches('/').to_string(),
            pr: over.pr.or(event.pr),
            sha,
            fork: event.fork,
            run_head_sha,
            run_head_repo,
            event_name,
            step_summary: get("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: get("GITHUB_OUTPUT").map(PathBuf::from),
            in_actions: get("GITHUB_ACTIONS").as_deref() == Some("true"),
        })
    }

    /// A `pull_request` (or `pull_request_target`) event whose head lives in a fork: the job runs
    /// code from outside the repository, so perfgate will not post from it unless told to.
    pub fn is_fork_pr_event(&self) -> bool {
        self.fork
            && matches!(
                self.event_name.as_deref(),
                Some("pull_request" | "pull_request_target")
            )
    }
}

fn check_sha(s: &str) -> Result<String, GithubError> {
    let s = s.trim();
    if (7..=40).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(GithubError::Config(format!(
            "`{s}` is not a commit SHA (7 to 40 hexadecimal digits)"
        )))
    }
}

/// Read the PR number, head SHA and fork status from an event payload file.
pub fn read_event(path: &Path, event_name: Option<&str>) -> Result<EventInfo, GithubError> {
    let text = std::fs::read_to_string(path).map_err(|e| GithubError::Event {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| GithubError::Event {
        path: path.to_path_buf(),
        reason: format!("not JSON: {e}"),
    })?;
    Ok(parse_event(&v, event_name))
}

/// Extract [`EventInfo`] from a parsed payload. Unknown events give an empty result.
pub fn parse_event(v: &Value, event_name: Option<&str>) -> EventInfo {
    let s = |v: &Value| v.as_str().map(str::to_string);
    if let Some(pr) = v.get("pull_request").filter(|p| p.is_object()) {
        // pull_request, pull_request_target, pull_request_review, …
        let base_repo = pr.pointer("/base/repo/full_name").and_then(Value::as_str);
        let head_repo = pr.pointer("/head/repo/full_name").and_then(Value::as_str);
        // A deleted fork has `head.repo: null`: treat it as a fork.
        let fork = match (head_repo, base_repo) {
            (Some(h), Some(b)) => !h.eq_ignore_ascii_case(b),
            (None, Some(_)) => true,
            _ => false,
        };
        return EventInfo {
            pr: pr.get("number").and_then(Value::as_u64),
            head_sha: pr.pointer("/head/sha").and_then(s),
            fork,
            run_head: None,
        };
    }
    if let Some(run) = v.get("workflow_run").filter(|r| r.is_object()) {
        // The trusted half of the fork-safe pattern. GitHub leaves `pull_requests` empty for
        // runs from forks, so the workflow passes `--pr` from the uploaded artifact instead.
        let head_repo = run
            .pointer("/head_repository/full_name")
            .and_then(Value::as_str);
        let repo = run.pointer("/repository/full_name").and_then(Value::as_str);
        return EventInfo {
            pr: run
                .pointer("/pull_requests/0/number")
                .and_then(Value::as_u64),
            head_sha: run.get("head_sha").and_then(s),
            fork: matches!((head_repo, repo), (Some(h), Some(r)) if !h.eq_ignore_ascii_case(r)),
            run_head: Some((
                run.get("head_sha").and_then(s),
                head_repo.map(str::to_string),
            )),
        };
    }
    if event_name == Some("issue_comment") {
        if let Some(issue) = v.get("issue").filter(|i| i.get("pull_request").is_some()) {
            return EventInfo {
                pr: issue.get("number").and_then(Value::as_u64),
                ..EventInfo::default()
            };
        }
    }
    EventInfo::default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    fn pr_event(head: Option<&str>) -> Value {
        json!({"pull_request": {
            "number": 42,
            "head": {"sha": "AbCdEf0123456789abcdef0123456789abcdef01",
                     "repo": head.map(|h| json!({"full_name": h})).unwrap_or(Value::Null)},
            "base": {"sha": "1111111111111111111111111111111111111111",
                     "repo": {"full_name": "vllm-project/vllm"}}
        }})
    }

    #[test]
    fn pull_request_from_same_repo_is_not_a_fork() {
        let e = parse_event(&pr_event(Some("vllm-project/vllm")), Some("pull_request"));
        assert_eq!(e.pr, Some(42));
        assert_eq!(
            e.head_sha.as_deref(),
            Some("AbCdEf0123456789abcdef0123456789abcdef01")
        );
        assert!(!e.fork);
    }

    #[test]
    fn pull_request_from_other_or_deleted_repo_is_a_fork() {
        assert!(parse_event(&pr_event(Some("someone/vllm")), Some("pull_request")).fork);
        assert!(parse_event(&pr_event(None), Some("pull_request")).fork);
    }

    #[test]
    fn workflow_run_gives_head_sha_and_pr_when_present() {
        let v = json!({"workflow_run": {
            "head_sha": "2222222222222222222222222222222222222222",
            "pull_requests": [{"number": 7}],
            "head_repository": {"full_name": "o/r"}, "repository": {"full_name": "o/r"}}});
        let e = parse_event(&v, Some("workflow_run"));
        assert_eq!(e.pr, Some(7));
        assert_eq!(
            e.head_sha.as_deref(),
            Some("2222222222222222222222222222222222222222")
        );
        assert!(!e.fork);
        let v = json!({"workflow_run": {"head_sha": "2222222", "pull_requests": [],
            "head_repository": {"full_name": "x/r"}, "repository": {"full_name": "o/r"}}});
        let e = parse_event(&v, Some("workflow_run"));
        assert_eq!(e.pr, None);
        assert!(e.fork);
    }

    #[test]
    fn context_prefers_flags_then_event_then_env() {
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("event.json");
        std::fs::write(&ev, pr_event(Some("other/vllm")).to_string()).unwrap();
        let env: HashMap<&str, String> = [
            ("GITHUB_TOKEN", "ghs_secret".to_string()),
            ("GITHUB_REPOSITORY", "vllm-project/vllm".to_string()),
            ("GITHUB_EVENT_NAME", "pull_request".to_string()),
            ("GITHUB_EVENT_PATH", ev.display().to_string()),
            (
                "GITHUB_SHA",
                "3333333333333333333333333333333333333333".to_string(),
            ),
            ("GITHUB_API_URL", "http://127.0.0.1:9/api/v3/".to_string()),
        ]
        .into_iter()
        .collect();
        let var = |k: &str| env.get(k).cloned();
        let c = Context::from_env(var, &Overrides::default()).unwrap();
        assert_eq!(c.repo.as_ref().unwrap().to_string(), "vllm-project/vllm");
        assert_eq!(c.pr, Some(42));
        // The PR head, not the merge commit in GITHUB_SHA.
        assert_eq!(
            c.sha.as_deref(),
            Some("abcdef0123456789abcdef0123456789abcdef01")
        );
        assert_eq!(c.api_url, "http://127.0.0.1:9/api/v3");
        assert!(c.is_fork_pr_event());
        assert!(!format!("{c:?}").contains("ghs_secret"));

        let over = Overrides {
            repo: Some("a/b".into()),
            pr: Some(5),
            sha: Some("4444444".into()),
            api_url: None,
        };
        let c = Context::from_env(var, &over).unwrap();
        assert_eq!(c.repo.unwrap().to_string(), "a/b");
        assert_eq!(c.pr, Some(5));
        assert_eq!(c.sha.as_deref(), Some("4444444"));
    }

    #[test]
    fn a_token_with_a_line_break_is_refused_and_not_shown() {
        let env = |k: &str| (k == "GITHUB_TOKEN").then(|| "ghs_abc\r\nX-Evil: 1".to_string());
        let err = Context::from_env(env, &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("control character"), "{err}");
        assert!(!err.contains("ghs_abc"), "{err}");
    }

    #[test]
    fn bad_values_are_named() {
        let err = Repo::parse("justaname").unwrap_err().to_string();
        assert!(err.contains("justaname"), "{err}");
        assert!(Repo::parse("a/b/c").is_err());
        let over = Overrides {
            sha: Some("not-a-sha".into()),
            ..Overrides::default()
        };
        let err = Context::from_env(|_| None, &over).unwrap_err().to_string();
        assert!(err.contains("not-a-sha"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("event.json");
        std::fs::write(&ev, "{oops").unwrap();
        let err = read_event(&ev, None).unwrap_err().to_string();
        assert!(err.contains("event.json"), "{err}");
    }
}
