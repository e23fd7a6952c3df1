//! A small stateful GitHub REST double on wiremock: issue comments (paged with `Link`
//! headers like GitHub, each with its author), comment updates, check runs, pull requests'
//! heads, and `GET /user` refused as GitHub refuses it to the workflow's installation token.
//! Enough for `perfgate comment`.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const OWNER: &str = "vllm-project";
pub const REPO: &str = "vllm";
/// Who comments made through the API are by (the workflow token's identity).
pub const BOT: &str = "github-actions[bot]";
/// The head of pull request 42 unless a test says otherwise.
pub const PR42_HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub body: String,
    pub author: String,
}

#[derive(Debug, Default)]
pub struct State {
    pub comments: Vec<Comment>,
    /// Pull request number → (head sha, head repository `OWNER/NAME`).
    pub pulls: std::collections::BTreeMap<u64, (String, String)>,
    pub check_runs: Vec<Value>,
    pub next_id: u64,
}

#[derive(Clone)]
pub struct FakeGithub {
    pub state: Arc<Mutex<State>>,
    base: String,
}

impl FakeGithub {
    /// Start a server with the fake mounted at the lowest priority, so a test can put failing
    /// mocks in front of it.
    pub async fn start() -> (MockServer, FakeGithub) {
        let server = MockServer::start().await;
        let fake = FakeGithub {
            state: Arc::new(Mutex::new(State {
                next_id: 1000,
                pulls: [(42, (PR42_HEAD.to_string(), format!("{OWNER}/{REPO}")))]
                    .into_iter()
                    .collect(),
                ..State::default()
            })),
            base: server.uri(),
        };
        Mock::given(any())
            .respond_with(fake.clone())
            .with_priority(10)
            .mount(&server)
            .await;
        (server, fake)
    }

    /// Pre-load comments written by people (no marker).
    pub fn seed_comments(&self, n: usize) {
        let mut s = self.state.lock().unwrap();
        for i in 0..n {
            s.next_id += 1;
            let id = s.next_id;
            s.comments.push(Comment {
                id,
                body: format!("comment {i} by a reviewer"),
                author: "reviewer".into(),
            });
        }
    }

    /// A comment perfgate made earlier (by the bot).
    pub fn add_comment(&self, body: &str) -> u64 {
        self.add_comment_by(BOT, body)
    }

    pub fn add_comment_by(&self, author: &str, body: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        s.next_id += 1;
        let id = s.next_id;
        s.comments.push(Comment {
            id,
            body: body.to_string(),
            author: author.to_string(),
        });
        id
    }

    /// Open pull request `pr` with head `sha` from repository `head_repo`.
    pub fn add_pull(&self, pr: u64, sha: &str, head_repo: &str) {
        let mut s = self.state.lock().unwrap();
        s.pulls.insert(pr, (sha.to_string(), head_repo.to_string()));
    }

    pub fn comments(&self) -> Vec<Comment> {
        self.state.lock().unwrap().comments.clone()
    }

    pub fn check_runs(&self) -> Vec<Value> {
        self.state.lock().unwrap().check_runs.clone()
    }

    fn comment_json(&self, c: &Comment, pr: u64) -> Value {
        json!({
            "id": c.id,
            "body": c.body,
            "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/{pr}#issuecomment-{}", c.id),
            "user": {"login": c.author, "type": if c.author.ends_with("[bot]") { "Bot" } else { "User" }},
        })
    }
}

fn query(req: &Request, key: &str) -> Option<String> {
    req.url
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

impl Respond for FakeGithub {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let path = req.url.path().to_string();
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let method = req.method.as_str();
        if req.headers.get("authorization").is_none() {
            return ResponseTemplate::new(401)
                .set_body_json(json!({"message": "Requires authentication"}));
        }
        match (method, parts.as_slice()) {
            ("GET", ["repos", o, r, "issues", n, "comments"]) if *o == OWNER && *r == REPO => {
                let pr: u64 = n.parse().unwrap();
                let per_page: usize = query(req, "per_page")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(30)
                    .min(100);
                let page: usize = query(req, "page").and_then(|v| v.parse().ok()).unwrap_or(1);
                let s = self.state.lock().unwrap();
                let start = (page - 1) * per_page;
                let items: Vec<Value> = s
                    .comments
                    .iter()
                    .skip(start)
                    .take(per_page)
                    .map(|c| self.comment_json(c, pr))
                    .collect();
                let mut t = ResponseTemplate::new(200).set_body_json(items);
                if start + per_page < s.comments.len() {
                    // Like GitHub: absolute URLs, a different path shape than the request.
                    let last = s.comments.len().div_ceil(per_page);
                    t = t.insert_header(
                        "link",
                        format!(
                            "<{b}/repositories/4242/issues/{pr}/comments?per_page={per_page}&page={}>; rel=\"next\", <{b}/repositories/4242/issues/{pr}/comments?per_page={per_page}&page={last}>; rel=\"last\"",
                            page + 1,
                            b = self.base
                        ),
                    );
                }
                t
            }
            // The `repositories/{id}` form GitHub uses in Link headers.
            ("GET", ["repositories", _, "issues", n, "comments"]) => {
                let mut req2 = req.clone();
                req2.url
                    .set_path(&format!("/repos/{OWNER}/{REPO}/issues/{n}/comments"));
                self.respond(&req2)
            }
            ("POST", ["repos", o, r, "issues", n, "comments"]) if *o == OWNER && *r == REPO => {
                let body: Value = req.body_json().unwrap();
                let pr: u64 = n.parse().unwrap();
                let mut s = self.state.lock().unwrap();
                s.next_id += 1;
                let c = Comment {
                    id: s.next_id,
                    body: body["body"].as_str().unwrap().to_string(),
                    author: BOT.to_string(),
                };
                s.comments.push(c.clone());
                ResponseTemplate::new(201).set_body_json(self.comment_json(&c, pr))
            }
            // Like GitHub for an installation token (the workflow's GITHUB_TOKEN).
            ("GET", ["user"]) => ResponseTemplate::new(403).set_body_json(json!({
                "message": "Resource not accessible by integration",
                "status": "403"})),
            ("GET", ["repos", o, r, "pulls", n]) if *o == OWNER && *r == REPO => {
                let pr: u64 = n.parse().unwrap();
                let s = self.state.lock().unwrap();
                match s.pulls.get(&pr) {
                    Some((sha, repo)) => ResponseTemplate::new(200).set_body_json(json!({
                        "number": pr,
                        "state": "open",
                        "head": {"sha": sha, "ref": "feature", "repo": {"full_name": repo}},
                        "base": {"ref": "main", "repo": {"full_name": format!("{OWNER}/{REPO}")}},
                    })),
                    None => {
                        ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}))
                    }
                }
            }
            ("PATCH", ["repos", o, r, "issues", "comments", id]) if *o == OWNER && *r == REPO => {
                let body: Value = req.body_json().unwrap();
                let id: u64 = id.parse().unwrap();
                let mut s = self.state.lock().unwrap();
                // Like GitHub for a token with write access: anyone's comment can be edited.
                match s.comments.iter_mut().find(|c| c.id == id) {
                    Some(c) => {
                        c.body = body["body"].as_str().unwrap().to_string();
                        let c = c.clone();
                        ResponseTemplate::new(200).set_body_json(self.comment_json(&c, 0))
                    }
                    None => {
                        ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"}))
                    }
                }
            }
            ("POST", ["repos", o, r, "check-runs"]) if *o == OWNER && *r == REPO => {
                let body: Value = req.body_json().unwrap();
                let mut s = self.state.lock().unwrap();
                s.next_id += 1;
                let id = s.next_id;
                s.check_runs.push(body);
                ResponseTemplate::new(201).set_body_json(json!({
                    "id": id,
                    "html_url": format!("https://github.com/{OWNER}/{REPO}/runs/{id}"),
                }))
            }
            _ => ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
        }
    }
}
