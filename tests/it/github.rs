//! `perfgate comment` and `perfgate merge` end to end against a GitHub double: the sticky
//! comment is created then updated in place, check runs, job summary, outputs, pagination,
//! permission hints, retries, an unreachable GitHub and fork refusal.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use perfgate::gate::{Counts, Report, Row, Side, TopVerdict, Verdict};
use perfgate::record::Direction;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::github::{FakeGithub, OWNER, REPO};

const TOKEN: &str = "ghs_perfgateTestToken0123456789SECRET";
const HEAD_SHA: &str = "0123456789abcdef0123456789abcdef01234567";
const MERGE_SHA: &str = "fedcba9876543210fedcba9876543210fedcba98";
const PR: u64 = 42;

fn row(model: &str, scenario: &str, metric: &str, verdict: Verdict, change: f64) -> Row {
    Row {
        model: model.into(),
        scenario: scenario.into(),
        metric: metric.into(),
        gated: true,
        direction: Direction::of(metric),
        baseline: Some(100.0),
        current: Some(100.0 * (1.0 + change / 100.0)),
        change_pct: Some(change),
        interval: Some([change - 2.0, change + 2.0]),
        tolerance_pct: Some(5.0),
        p_value: Some(0.001),
        n_baseline: 2,
        n_current: 2,
        verdict,
        note: None,
    }
}

fn report(model: &str, verdict: TopVerdict, rows: Vec<Row>) -> Report {
    let mut counts = Counts::default();
    for r in &rows {
        match r.verdict {
            Verdict::Pass => counts.pass += 1,
            Verdict::Regressed => counts.regressed += 1,
            Verdict::Improved => counts.improved += 1,
            Verdict::Inconclusive => counts.inconclusive += 1,
            Verdict::Missing => counts.missing += 1,
            Verdict::Error => counts.error += 1,
        }
    }
    Report {
        kind: "check".into(),
        verdict,
        counts,
        rows,
        baseline: Side {
            sources: vec!["baselines/v0.10.1.toml".into()],
            engine: Some("vllm".into()),
            engine_version: Some("0.10.1".into()),
            date: Some("2025-08-20".into()),
        },
        current: Side {
            sources: vec![format!("results/{model}.jsonl")],
            engine: Some("vllm".into()),
            engine_version: Some("0.11.0".into()),
            date: Some("2025-10-01".into()),
        },
        method: "Welch's t on log values per row, Holm-corrected across rows.".into(),
        perfgate_version: "0.1.0".into(),
    }
}

fn failing_report() -> Report {
    report(
        "meta-llama/Llama-3.1-8B-Instruct",
        TopVerdict::Fail,
        vec![
            row(
                "meta-llama/Llama-3.1-8B-Instruct",
                "random-1024-1024",
                "output_throughput",
                Verdict::Regressed,
                -20.0,
            ),
            row(
                "meta-llama/Llama-3.1-8B-Instruct",
                "random-1024-1024",
                "median_ttft_ms",
                Verdict::Regressed,
                25.0,
            ),
            row(
                "meta-llama/Llama-3.1-8B-Instruct",
                "sharegpt",
                "output_throughput",
                Verdict::Pass,
                0.4,
            ),
        ],
    )
}

struct Job {
    dir: tempfile::TempDir,
}

impl Job {
    fn new(report: &Report, fork: bool) -> Job {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("report.json"),
            serde_json::to_string_pretty(report).unwrap(),
        )
        .unwrap();
        let head_repo = if fork {
            "someone/vllm".to_string()
        } else {
            format!("{OWNER}/{REPO}")
        };
        let event = json!({"action": "synchronize", "number": PR, "pull_request": {
            "number": PR,
            "head": {"sha": HEAD_SHA, "repo": {"full_name": head_repo}},
            "base": {"sha": MERGE_SHA, "repo": {"full_name": format!("{OWNER}/{REPO}")}}}});
        std::fs::write(dir.path().join("event.json"), event.to_string()).unwrap();
        Job { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// Run `perfgate comment --report report.json ARGS` with a clean Actions-like environment.
    async fn comment(&self, api: &str, args: &[&str]) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perfgate"));
        cmd.env_clear()
            .arg("comment")
            .arg("--report")
            .arg(self.path("report.json"))
            .args(args)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
            .env("GITHUB_API_URL", api)
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", self.path("event.json"))
            .env("GITHUB_SHA", MERGE_SHA)
            .env("GITHUB_STEP_SUMMARY", self.path("summary.md"))
            .env("GITHUB_OUTPUT", self.path("output.txt"))
            .env("PERFGATE_GITHUB_RETRY_DELAY_MS", "20")
            .env("PERFGATE_GITHUB_TIMEOUT_SECS", "10")
            .kill_on_drop(true);
        tokio::time::timeout(Duration::from_secs(60), cmd.output())
            .await
            .expect("perfgate comment did not finish within 60 s")
            .unwrap()
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_no_token(job: &Job, outputs: &[&Output]) {
    for o in outputs {
        assert!(!text(o).contains(TOKEN), "token printed:\n{}", text(o));
    }
    for f in ["summary.md", "output.txt", "report.json"] {
        assert!(!job.read(f).contains(TOKEN), "token written to {f}");
    }
}

fn output_value(job: &Job, name: &str) -> Option<String> {
    let text = job.read("output.txt");
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some(delim) = l.strip_prefix(&format!("{name}<<")) {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    return Some(v.join("\n"));
                }
                v.push(l);
            }
        }
    }
    None
}

#[tokio::test]
async fn failing_report_twice_creates_then_updates_one_comment_and_fails_the_check() {
    let (server, fake) = FakeGithub::start().await;
    fake.seed_comments(3);
    let job = Job::new(&failing_report(), false);

    let first = job.comment(&server.uri(), &[]).await;
    assert_eq!(first.status.code(), Some(1), "{}", text(&first));
    let after_first = fake.comments();
    assert_eq!(after_first.len(), 4, "one comment created");
    let ours = after_first.last().unwrap().clone();
    assert!(ours.body.contains("<!-- perfgate:check -->"));
    assert!(text(&first).contains("created comment"), "{}", text(&first));

    let second = job.comment(&server.uri(), &[]).await;
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    let after_second = fake.comments();
    assert_eq!(after_second.len(), 4, "no duplicate comment");
    assert_eq!(after_second.last().unwrap().id, ours.id, "updated in place");
    assert!(
        text(&second).contains("updated comment"),
        "{}",
        text(&second)
    );
    let patches = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "PATCH")
        .count();
    assert_eq!(patches, 1);

    // One check run per invocation, concluded failure, on the PR head (not the merge commit).
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 2);
    for run in &runs {
        assert_eq!(run["head_sha"], HEAD_SHA);
        assert_eq!(run["conclusion"], "failure");
        assert_eq!(run["status"], "completed");
        assert_eq!(run["name"], "perfgate");
        assert_eq!(run["output"]["summary"].as_str().unwrap(), ours.body);
    }
    assert!(runs[0]["output"]["title"]
        .as_str()
        .unwrap()
        .starts_with("fail: 2 regressed"));

    // The job summary holds the table (appended once per run); outputs are set.
    let summary = job.read("summary.md");
    assert!(
        summary.contains("| model | scenario | metric |"),
        "{summary}"
    );
    assert!(summary.contains("output_throughput"));
    assert_eq!(summary.matches("<!-- perfgate:check -->").count(), 2);
    assert_eq!(output_value(&job, "verdict").as_deref(), Some("fail"));
    assert_eq!(
        output_value(&job, "report-path").as_deref(),
        Some(job.path("report.json").to_str().unwrap())
    );
    assert_eq!(output_value(&job, "comment-id"), Some(ours.id.to_string()));

    // Annotations for the regressed rows.
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(
        stdout
            .matches("::error title=perfgate%3A regression::")
            .count(),
        2,
        "{stdout}"
    );

    // The token was used, and appears nowhere.
    let reqs = server.received_requests().await.unwrap();
    assert!(reqs.iter().all(
        |r| r.headers.get("authorization").unwrap().to_str().unwrap() == format!("Bearer {TOKEN}")
    ));
    assert_no_token(&job, &[&first, &second]);

    insta::assert_snapshot!("comment_body_failing", ours.body);
}

#[tokio::test]
async fn finds_its_comment_past_the_first_hundred() {
    let (server, fake) = FakeGithub::start().await;
    fake.seed_comments(230);
    let ours = fake.add_comment("<!-- perfgate:check -->\nold report");
    fake.seed_comments(20);
    let job = Job::new(&failing_report(), false);
    let out = job.comment(&server.uri(), &["--no-check-run"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let comments = fake.comments();
    assert_eq!(comments.len(), 251, "nothing created");
    let updated = comments.iter().find(|c| c.id == ours).unwrap();
    assert!(
        updated.body.contains("output_throughput"),
        "{}",
        updated.body
    );
    let gets: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "GET")
        .map(|r| r.url.to_string())
        .collect();
    assert_eq!(gets.len(), 3, "{gets:?}");
    assert!(gets[2].contains("page=3"), "{gets:?}");
    assert!(fake.check_runs().is_empty());
}

#[tokio::test]
async fn forbidden_names_the_permissions_and_keeps_the_gate_exit() {
    let (server, fake) = FakeGithub::start().await;
    let forbidden = ResponseTemplate::new(403).set_body_json(json!({
        "message": "Resource not accessible by integration",
        "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
        "status": "403"}));
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/issues/{PR}/comments")))
        .respond_with(forbidden.clone())
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/check-runs")))
        .respond_with(forbidden)
        .mount(&server)
        .await;
    let job = Job::new(&failing_report(), false);
    let out = job.comment(&server.uri(), &[]).await;
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("Resource not accessible by integration"),
        "{all}"
    );
    assert!(all.contains("pull-requests: write"), "{all}");
    assert!(all.contains("checks: write"), "{all}");
    assert!(
        !all.contains("retry"),
        "403 without rate limit is not retried: {all}"
    );
    assert!(fake.comments().is_empty());
    assert!(job.read("summary.md").contains("output_throughput"));
    assert_no_token(&job, &[&out]);

    // Under --fail-on-post-error the failed post is an infrastructure error.
    let out = job.comment(&server.uri(), &["--fail-on-post-error"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}

#[tokio::test]
async fn bad_gateway_is_retried_then_succeeds_without_duplicates() {
    let (server, fake) = FakeGithub::start().await;
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/issues/{PR}/comments")))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>Bad Gateway</html>"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/check-runs")))
        .respond_with(ResponseTemplate::new(503).append_header("retry-after", "0"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    let job = Job::new(&failing_report(), false);
    let out = job.comment(&server.uri(), &[]).await;
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("HTTP 502") && all.contains("retry 1/3"),
        "{all}"
    );
    assert!(
        all.contains("HTTP 503") && all.contains("retry 2/3"),
        "{all}"
    );
    assert_eq!(fake.comments().len(), 1);
    assert_eq!(fake.check_runs().len(), 1);
}

#[tokio::test]
async fn github_down_still_writes_the_summary_and_exits_with_the_gate() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let api = format!("http://127.0.0.1:{port}");
    let job = Job::new(&failing_report(), false);
    let out = job.comment(&api, &["--github-retries", "1"]).await;
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("unreachable"), "{all}");
    assert!(job.read("summary.md").contains("output_throughput"));
    assert_eq!(output_value(&job, "verdict").as_deref(), Some("fail"));
    assert_no_token(&job, &[&out]);

    let passing = report(
        "m",
        TopVerdict::Pass,
        vec![row("m", "s", "output_throughput", Verdict::Pass, 1.0)],
    );
    let job = Job::new(&passing, false);
    let out = job.comment(&api, &["--github-retries", "0"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = job
        .comment(&api, &["--github-retries", "0", "--fail-on-post-error"])
        .await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}

#[tokio::test]
async fn fork_pull_request_is_not_posted_from_unless_allowed() {
    let (server, fake) = FakeGithub::start().await;
    let job = Job::new(&failing_report(), true);
    let out = job.comment(&server.uri(), &[]).await;
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("fork") && all.contains("workflow_run"),
        "{all}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
    assert!(job.read("summary.md").contains("output_throughput"));

    let out = job.comment(&server.uri(), &["--allow-fork"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(fake.comments().len(), 1);
}

fn write(dir: &Path, name: &str, r: &Report) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(r).unwrap()).unwrap();
    p
}

#[tokio::test]
async fn merge_then_comment_posts_one_comment_for_every_model() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "a.json",
        &report(
            "a",
            TopVerdict::Pass,
            vec![row("a", "s", "output_throughput", Verdict::Pass, 0.5)],
        ),
    );
    let b = write(dir.path(), "b.json", &failing_report());
    let merged = dir.path().join("merged.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
        .args(["merge"])
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(m["verdict"], "fail");
    assert_eq!(m["counts"]["regressed"], 2);
    assert_eq!(m["counts"]["pass"], 2);
    assert_eq!(m["rows"].as_array().unwrap().len(), 4);

    let merged_report: Report = serde_json::from_value(m).unwrap();
    let (server, fake) = FakeGithub::start().await;
    let job = Job::new(&merged_report, false);
    let out = job.comment(&server.uri(), &["--fail-on", "never"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let comments = fake.comments();
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].body.contains("| a |") || comments[0].body.contains("Llama"),
        "{}",
        comments[0].body
    );
    assert_eq!(fake.check_runs()[0]["conclusion"], "failure");

    // Duplicate inputs are refused with a usage error naming the files.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
        .arg("merge")
        .arg(&b)
        .arg(&b)
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("b.json"), "{}", text(&out));
}
