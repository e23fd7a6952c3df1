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

use crate::support::fixture::record;
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
        launches: None,
        noise: None,
        launches_needed: None,
        verdict,
        note: None,
        test: None,
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
            ..Default::default()
        },
        current: Side {
            sources: vec![format!("results/{model}.jsonl")],
            engine: Some("vllm".into()),
            engine_version: Some("0.11.0".into()),
            date: Some("2025-10-01".into()),
            ..Default::default()
        },
        method: "Welch's t on log values per row, Holm-corrected across rows.".into(),
        perfgate_version: "0.1.0".into(),
        ab: None,
        settings: None,
        look: None,
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
        summary.contains("| Model | Scenario | Metric |"),
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
        .filter(|r| r.method.as_str() == "GET" && r.url.path().ends_with("/comments"))
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

/// Echoes the request's Authorization header in an error body, as a misconfigured proxy would.
struct EchoAuth(u16);

impl wiremock::Respond for EchoAuth {
    fn respond(&self, req: &wiremock::Request) -> ResponseTemplate {
        let auth = req
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        ResponseTemplate::new(self.0).set_body_json(json!({
            "message": format!("bad request; you sent Authorization: {auth}"),
            "headers": {"Authorization": auth}}))
    }
}

#[tokio::test]
async fn an_error_body_echoing_the_token_is_redacted_everywhere() {
    let (server, _fake) = FakeGithub::start().await;
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/issues/{PR}/comments")))
        .respond_with(EchoAuth(502))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/check-runs")))
        .respond_with(EchoAuth(422))
        .mount(&server)
        .await;
    let job = Job::new(&failing_report(), false);
    let out = job.comment(&server.uri(), &[]).await;
    let all = text(&out);
    assert!(all.contains("::warning"), "{all}");
    assert!(
        all.contains("[REDACTED]"),
        "the echo is shown, masked: {all}"
    );
    assert_no_token(&job, &[&out]);
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
        comments[0].body.contains("| a |")
            && comments[0]
                .body
                .contains("meta-llama/Llama-3.1-8B-Instruct"),
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

/// The `run:` script of one of the action's steps, cut out of action.yml by indentation.
fn action_script(step: &str) -> String {
    let yml =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let name = format!("- name: {step}");
    let mut lines = yml.lines().skip_while(|l| l.trim() != name);
    let mut script = Vec::new();
    let mut indent = None;
    // `run: |`, perhaps with a comment after it (zizmor's ignore marks).
    let run = |l: &str| l.trim() == "run: |" || l.trim().starts_with("run: | #");
    for l in lines.by_ref().skip_while(|l| !run(l)).skip(1) {
        let n = l.len() - l.trim_start().len();
        let ind = *indent.get_or_insert(n);
        if !l.trim().is_empty() && n < ind {
            break;
        }
        script.push(l.get(ind..).unwrap_or(""));
    }
    assert!(
        script.iter().any(|l| !l.trim().is_empty()),
        "no `run: |` script for step `{step}` in action.yml"
    );
    script.join("\n")
}

/// The action's "Fingerprint the perfgate binary" step run on `env`: the SHA-256 it records.
async fn fingerprint(dir: &Path, env: &[(&str, String)]) -> String {
    let out_file = dir.join("fingerprint.txt");
    let mut env = env.to_vec();
    env.retain(|(k, _)| *k != "GITHUB_OUTPUT");
    env.push(("GITHUB_OUTPUT", out_file.display().to_string()));
    let out = run_action(dir, "Fingerprint the perfgate binary", &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let text = std::fs::read_to_string(out_file).unwrap();
    let sum = text
        .lines()
        .find_map(|l| l.strip_prefix("sha256="))
        .unwrap();
    assert_eq!(sum.len(), 64, "{text}");
    sum.to_string()
}

async fn run_action(dir: &Path, step: &str, env: &[(&str, String)]) -> Output {
    let script = dir.join("step.sh");
    std::fs::write(&script, action_script(step)).unwrap();
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg(&script)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn action_passes_inputs_as_single_arguments_and_never_evaluates_them() {
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("perfgate-stub");
    std::fs::write(
        &stub,
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > args.txt\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let evil = "vllm serve {model} --port {port}; touch pwned $(touch pwned2) `touch pwned3`";
    let out = run_action(
        dir.path(),
        "Run perfgate",
        &[
            ("PG_BIN", stub.display().to_string()),
            ("PG_ROOT", String::new()),
            ("PG_MODE", "check".into()),
            ("PG_BASELINE", "baselines/v0.10.1.toml".into()),
            ("PG_MODELS", "Qwen/Qwen3-8B".into()),
            ("PG_ENGINE_CMD", evil.into()),
            ("PG_ENGINE_IMAGE", String::new()),
            ("PG_BASE_URL", String::new()),
            ("PG_RUNS", "3".into()),
            ("PG_FAIL_ON", "regression".into()),
            ("PG_REPORTS", String::new()),
            ("PG_OUT", "out".into()),
            ("GITHUB_TOKEN", TOKEN.into()),
            (
                "GITHUB_OUTPUT",
                dir.path().join("output.txt").display().to_string(),
            ),
        ],
    )
    .await;
    // The step itself succeeds: the gate's code is applied after posting.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let args = std::fs::read_to_string(dir.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(
        args,
        vec![
            "check",
            "--baseline",
            "baselines/v0.10.1.toml",
            "--output-dir",
            "out",
            "--json",
            "out/report.json",
            "--html",
            "out/report.html",
            "--fail-on",
            "regression",
            "--models",
            "Qwen/Qwen3-8B",
            "--engine-cmd",
            evil,
            "--runs",
            "3",
            "--github",
            "--no-comment",
            "--no-check-run",
        ]
    );
    assert!(
        !dir.path().join("token.txt").exists(),
        "perfgate check saw the token"
    );
    for f in ["pwned", "pwned2", "pwned3"] {
        assert!(!dir.path().join(f).exists(), "an input was executed");
    }
    assert!(std::fs::read_to_string(dir.path().join("output.txt"))
        .unwrap()
        .contains("exit-code=1"));
}

#[tokio::test]
async fn action_merge_mode_posts_one_comment_with_the_real_binary() {
    let (server, fake) = FakeGithub::start().await;
    let job = Job::new(&failing_report(), false);
    let reports = job.path("perfgate-reports");
    for (i, r) in [
        report(
            "a",
            TopVerdict::Pass,
            vec![row("a", "s", "output_throughput", Verdict::Pass, 0.5)],
        ),
        failing_report(),
    ]
    .iter()
    .enumerate()
    {
        let d = reports.join(format!("perfgate-{i}"));
        std::fs::create_dir_all(&d).unwrap();
        write(&d, "report.json", r);
    }
    let mut env = vec![
        ("PG_BIN", env!("CARGO_BIN_EXE_perfgate").to_string()),
        ("PG_ROOT", String::new()),
        ("PG_MODE", "merge".into()),
        ("PG_FAIL_ON", "regression".into()),
        ("PG_REPORTS", reports.display().to_string()),
        ("PG_PR", PR.to_string()),
        ("PG_SHA", HEAD_SHA.into()),
        ("PG_OUT", "merged".into()),
        ("GITHUB_ACTIONS", "true".into()),
        ("GITHUB_TOKEN", TOKEN.into()),
        ("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}")),
        ("GITHUB_API_URL", server.uri()),
        ("GITHUB_EVENT_NAME", "workflow_run".into()),
        (
            "GITHUB_STEP_SUMMARY",
            job.path("summary.md").display().to_string(),
        ),
        (
            "GITHUB_OUTPUT",
            job.path("output.txt").display().to_string(),
        ),
        ("PERFGATE_GITHUB_RETRY_DELAY_MS", "20".into()),
    ];
    let gate = run_action(job.dir.path(), "Run perfgate", &env).await;
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));
    assert!(fake.comments().is_empty(), "the gate step does not post");
    let outputs = job.read("output.txt");
    let report_line = outputs
        .lines()
        .find_map(|l| l.strip_prefix("report="))
        .unwrap();
    env.push(("PG_REPORT", report_line.to_string()));
    // The merged HTML page, uploaded by the next step, is linked from the comment.
    assert!(
        outputs.lines().any(|l| l == "html=merged/report.html"),
        "{outputs}"
    );
    assert!(job.read("merged/report.html").contains("<svg"));
    let artifact = "https://github.com/o/r/actions/runs/1/artifacts/2";
    env.push(("PG_HTML_URL", artifact.to_string()));
    env.push(("PG_BIN_SHA256", fingerprint(job.dir.path(), &env).await));
    let post = run_action(job.dir.path(), "Post to the pull request", &env).await;
    assert_eq!(post.status.code(), Some(0), "{}", text(&post));
    env.push(("CODE", "1".into()));
    let out = run_action(job.dir.path(), "Exit with the gate's code", &env).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(fake.comments().len(), 1);
    assert!(fake.comments()[0]
        .body
        .contains(&format!("[Sign-off report (HTML)]({artifact})")));
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["head_sha"], HEAD_SHA);
    assert_eq!(output_value(&job, "verdict").as_deref(), Some("fail"));
    assert!(job.read("output.txt").contains("exit-code=1"));
    let merged: Value = serde_json::from_str(&job.read("merged/report.json")).unwrap();
    assert_eq!(merged["rows"].as_array().unwrap().len(), 4);
    assert_no_token(&job, &[&gate, &post, &out]);
    // The summary was written once, by the gate step.
    assert_eq!(
        job.read("summary.md")
            .matches("<!-- perfgate:check -->")
            .count(),
        1
    );
}

#[tokio::test]
async fn rate_limits_are_retried_only_when_the_wait_is_short() {
    let (server, fake) = FakeGithub::start().await;
    // A secondary rate limit asking for no wait: retried, then posted.
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/issues/{PR}/comments")))
        .respond_with(
            ResponseTemplate::new(429)
                .append_header("retry-after", "0")
                .set_body_json(json!({"message": "You have exceeded a secondary rate limit."})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    // The hourly quota spent, reset in an hour: no point waiting.
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    Mock::given(method("POST"))
        .and(path(format!("/repos/{OWNER}/{REPO}/check-runs")))
        .respond_with(
            ResponseTemplate::new(403)
                .append_header("x-ratelimit-remaining", "0")
                .append_header("x-ratelimit-reset", reset.to_string().as_str())
                .set_body_json(json!({"message": "API rate limit exceeded for installation."})),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    let job = Job::new(&failing_report(), false);
    let started = std::time::Instant::now();
    let out = job.comment(&server.uri(), &[]).await;
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert_eq!(fake.comments().len(), 1, "{all}");
    assert!(
        all.contains("HTTP 429") && all.contains("retry 1/3"),
        "{all}"
    );
    assert!(all.contains("giving up"), "{all}");
    assert!(
        !all.contains("permissions:"),
        "a rate limit is not a permission problem: {all}"
    );
    assert!(fake.check_runs().is_empty());
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn check_with_github_flag_gates_then_posts() {
    let (server, fake) = FakeGithub::start().await;
    let job = Job::new(&failing_report(), false);
    let m = "Qwen/Qwen3-8B";
    let base: Vec<_> = (0..3).map(|i| record(m, i, 1.0, 1.0)).collect();
    let slow: Vec<_> = (0..3).map(|i| record(m, i, 0.8, 1.25)).collect();
    std::fs::write(job.path("base.jsonl"), perfgate::record::to_jsonl(&base)).unwrap();
    std::fs::write(job.path("cur.jsonl"), perfgate::record::to_jsonl(&slow)).unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perfgate"));
    cmd.env_clear()
        .arg("check")
        .arg("--baseline")
        .arg(job.path("base.jsonl"))
        .arg("--results")
        .arg(job.path("cur.jsonl"))
        .arg("--json")
        .arg(job.path("check.json"))
        .args(["--color", "never", "--github", "--github-retries", "1"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", job.path("event.json"))
        .env("GITHUB_STEP_SUMMARY", job.path("summary.md"))
        .env("GITHUB_OUTPUT", job.path("output.txt"))
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .unwrap()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let comments = fake.comments();
    assert_eq!(comments.len(), 1, "{all}");
    assert!(comments[0].body.starts_with("<!-- perfgate:check -->"));
    assert!(comments[0].body.contains("regressed"));
    assert_eq!(fake.check_runs()[0]["conclusion"], "failure");
    assert_eq!(fake.check_runs()[0]["head_sha"], HEAD_SHA);
    assert_eq!(output_value(&job, "verdict").as_deref(), Some("fail"));
    assert_eq!(
        output_value(&job, "report-path").as_deref(),
        Some(job.path("check.json").to_str().unwrap())
    );
    assert!(job.read("summary.md").contains("Needs attention"));
    assert_no_token(&job, &[&out]);
}

/// A `workflow_run` event as GitHub writes it for the fork-safe half: the run's head commit and
/// head repository come from GitHub, the PR number from the run's (untrusted) artifact.
fn workflow_run_event(head_sha: &str, head_repo: &str) -> Value {
    json!({"action": "completed", "workflow_run": {
        "id": 99, "event": "pull_request", "head_sha": head_sha, "pull_requests": [],
        "head_repository": {"full_name": head_repo},
        "repository": {"full_name": format!("{OWNER}/{REPO}")}}})
}

/// `perfgate comment` as the fork workflow runs it: a `workflow_run` event, `--pr` and `--sha`.
async fn comment_on_run(job: &Job, api: &str, event: &Value, args: &[&str]) -> Output {
    std::fs::write(job.path("run-event.json"), event.to_string()).unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perfgate"));
    cmd.env_clear()
        .arg("comment")
        .arg("--report")
        .arg(job.path("report.json"))
        .args(args)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
        .env("GITHUB_API_URL", api)
        .env("GITHUB_EVENT_NAME", "workflow_run")
        .env("GITHUB_EVENT_PATH", job.path("run-event.json"))
        .env("GITHUB_OUTPUT", job.path("output.txt"))
        .env("PERFGATE_GITHUB_RETRY_DELAY_MS", "20")
        .env("PERFGATE_GITHUB_TIMEOUT_SECS", "10")
        .kill_on_drop(true);
    tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .unwrap()
        .unwrap()
}

fn passing_report() -> Report {
    report(
        "m",
        TopVerdict::Pass,
        vec![row("m", "s", "output_throughput", Verdict::Pass, 1.0)],
    )
}

async fn writes(server: &wiremock::MockServer) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() != "GET")
        .count()
}

#[tokio::test]
async fn a_forged_report_for_another_pr_is_refused_and_its_comment_kept() {
    const FORK: &str = "mallory/vllm";
    const FORK_SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const VICTIM: u64 = 7;
    const VICTIM_SHA: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let (server, fake) = FakeGithub::start().await;
    fake.add_pull(VICTIM, VICTIM_SHA, &format!("{OWNER}/{REPO}"));
    fake.add_pull(43, FORK_SHA, FORK);
    // The same commit pushed to a second fork and opened as its own PR.
    fake.add_pull(44, FORK_SHA, "someone-else/vllm");
    let victim_body = "<!-- perfgate:check -->\n## ❌ perfgate check: fail\n";
    let victim_comment = fake.add_comment(victim_body);
    let job = Job::new(&passing_report(), true);
    let run = workflow_run_event(FORK_SHA, FORK);
    let victim = VICTIM.to_string();

    // The fork's artifact names the victim PR; the sha is the fork run's own head (as the
    // workflow passes it), or the victim's head (as a forged step would).
    for sha in [FORK_SHA, VICTIM_SHA] {
        let out = comment_on_run(&job, &server.uri(), &run, &["--pr", &victim, "--sha", sha]).await;
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{all}");
        assert!(
            all.contains("refusing to post") && all.contains("PR #7"),
            "{all}"
        );
        assert!(all.contains("::error"), "{all}");
    }
    // A PR with the fork run's head commit, but from another repository.
    let out = comment_on_run(
        &job,
        &server.uri(),
        &run,
        &["--pr", "44", "--sha", FORK_SHA],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("someone-else/vllm"), "{}", text(&out));
    // Check runs only: refused too.
    let out = comment_on_run(
        &job,
        &server.uri(),
        &run,
        &["--pr", &victim, "--sha", FORK_SHA, "--no-comment"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    assert_eq!(writes(&server).await, 0, "nothing was posted");
    let kept = fake.comments();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].id, victim_comment);
    assert_eq!(
        kept[0].body, victim_body,
        "the other PR's comment is unchanged"
    );
    assert!(fake.check_runs().is_empty());
    assert_no_token(&job, &[&out]);

    // The fork's own PR is posted to.
    let out = comment_on_run(
        &job,
        &server.uri(),
        &run,
        &["--pr", "43", "--sha", FORK_SHA],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(fake.check_runs().len(), 1);
    assert_eq!(fake.check_runs()[0]["head_sha"], FORK_SHA);
}

#[tokio::test]
async fn the_action_posting_a_forged_pr_number_is_refused() {
    // The attack as it ran: the fork workflow's "Merge and post" (the action in merge mode)
    // with the PR number from the fork's artifact pointing at another PR.
    const FORK_SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let (server, fake) = FakeGithub::start().await;
    fake.add_pull(43, FORK_SHA, "mallory/vllm");
    let victim_body = "<!-- perfgate:check -->\n## ❌ perfgate check: fail\n";
    fake.add_comment(victim_body);
    let job = Job::new(&passing_report(), true);
    let reports = job.path("perfgate-reports/perfgate-0");
    std::fs::create_dir_all(&reports).unwrap();
    write(&reports, "report.json", &passing_report());
    std::fs::write(
        job.path("run-event.json"),
        workflow_run_event(FORK_SHA, "mallory/vllm").to_string(),
    )
    .unwrap();
    let mut env = vec![
        ("PG_BIN", env!("CARGO_BIN_EXE_perfgate").to_string()),
        ("PG_ROOT", String::new()),
        ("PG_MODE", "merge".into()),
        ("PG_FAIL_ON", "regression".into()),
        ("PG_REPORTS", "perfgate-reports".into()),
        ("PG_PR", PR.to_string()),
        ("PG_SHA", FORK_SHA.into()),
        ("PG_OUT", "merged".into()),
        ("GITHUB_ACTIONS", "true".into()),
        ("GITHUB_TOKEN", TOKEN.into()),
        ("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}")),
        ("GITHUB_API_URL", server.uri()),
        ("GITHUB_EVENT_NAME", "workflow_run".into()),
        (
            "GITHUB_EVENT_PATH",
            job.path("run-event.json").display().to_string(),
        ),
        (
            "GITHUB_OUTPUT",
            job.path("output.txt").display().to_string(),
        ),
        ("PERFGATE_GITHUB_RETRY_DELAY_MS", "20".into()),
    ];
    let gate = run_action(job.dir.path(), "Run perfgate", &env).await;
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));
    env.push(("PG_REPORT", "merged/report.json".into()));
    env.push(("PG_HTML_URL", String::new()));
    env.push(("PG_BIN_SHA256", fingerprint(job.dir.path(), &env).await));
    let post = run_action(job.dir.path(), "Post to the pull request", &env).await;
    let all = text(&post);
    assert!(all.contains("refusing to post"), "{all}");
    assert_eq!(writes(&server).await, 0, "{all}");
    assert_eq!(fake.comments()[0].body, victim_body);
    assert!(fake.check_runs().is_empty());
}

#[tokio::test]
async fn only_its_own_comment_with_the_marker_line_is_updated() {
    let (server, fake) = FakeGithub::start().await;
    // Another user's comment holding the marker, and a comment of ours quoting it lower down.
    let theirs = "<!-- perfgate:check -->\nplease merge, it is fast";
    let theirs_id = fake.add_comment_by("mallory", theirs);
    let quoting = "## something else\n<!-- perfgate:check -->\n";
    let quoting_id = fake.add_comment(quoting);
    let job = Job::new(&failing_report(), false);
    let out = job.comment(&server.uri(), &["--no-check-run"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("created comment"), "{}", text(&out));
    let c = fake.comments();
    assert_eq!(c.len(), 3);
    assert_eq!(c.iter().find(|c| c.id == theirs_id).unwrap().body, theirs);
    assert_eq!(c.iter().find(|c| c.id == quoting_id).unwrap().body, quoting);
    // The second run finds the comment it made.
    let out = job.comment(&server.uri(), &["--no-check-run"]).await;
    assert!(text(&out).contains("updated comment"), "{}", text(&out));
    assert_eq!(fake.comments().len(), 3);
    // A custom GitHub App posts as APP[bot]: its comment is found with --comment-author.
    let app = fake.add_comment_by("perf-app[bot]", "<!-- perfgate:ab -->\nold");
    let out = job
        .comment(
            &server.uri(),
            &[
                "--no-check-run",
                "--kind",
                "ab",
                "--comment-author",
                "perf-app[bot]",
            ],
        )
        .await;
    assert!(text(&out).contains("updated comment"), "{}", text(&out));
    let c = fake.comments();
    assert_eq!(c.len(), 4);
    assert!(c
        .iter()
        .find(|c| c.id == app)
        .unwrap()
        .body
        .contains("regressed"));
}

#[tokio::test]
async fn a_model_name_holding_a_marker_cannot_claim_another_kinds_comment() {
    let (server, fake) = FakeGithub::start().await;
    let evil = "<!-- perfgate:ab -->";
    let r = report(
        evil,
        TopVerdict::Pass,
        vec![row(evil, "s", "output_throughput", Verdict::Pass, 1.0)],
    );
    let job = Job::new(&r, false);
    let out = job.comment(&server.uri(), &["--no-check-run"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let check = fake.comments()[0].clone();
    assert!(!check.body.contains(evil), "{}", check.body);
    assert!(check.body.contains("perfgate:ab --&gt;"), "{}", check.body);
    // The ab report makes its own comment; the check comment is left alone.
    let job = Job::new(&failing_report(), false);
    let out = job
        .comment(&server.uri(), &["--no-check-run", "--kind", "ab"])
        .await;
    assert!(text(&out).contains("created comment"), "{}", text(&out));
    let c = fake.comments();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].body, check.body);
}

/// An engine doing what the PR's engine did in the attack: it appends a `bin` output, an
/// environment variable and a `PATH` entry to the runner's command files (by variable, and by
/// path as if it had found the files on disk), and looks for tokens.
const EVIL_ENGINE: &str = r#"#!/bin/sh
{
  echo "GITHUB_TOKEN=${GITHUB_TOKEN:-} GH_TOKEN=${GH_TOKEN:-} ACTIONS_RUNTIME_TOKEN=${ACTIONS_RUNTIME_TOKEN:-}"
  echo "GITHUB_OUTPUT=${GITHUB_OUTPUT:-} GITHUB_ENV=${GITHUB_ENV:-} GITHUB_PATH=${GITHUB_PATH:-}"
  echo "GITHUB_STEP_SUMMARY=${GITHUB_STEP_SUMMARY:-} GITHUB_STATE=${GITHUB_STATE:-}"
} > "$SEEN"
[ -n "${GITHUB_OUTPUT:-}" ] && echo "bin=$EVIL" >> "$GITHUB_OUTPUT"
[ -n "${GITHUB_ENV:-}" ] && echo "LD_PRELOAD=$EVIL" >> "$GITHUB_ENV"
for f in "$FOUND"/*; do echo "exit-code=0" >> "$f"; echo "bin=$EVIL" >> "$f"; done
exit 1
"#;

#[tokio::test]
async fn the_engine_cannot_reach_the_token_or_the_runner_command_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = d.join("_runner_file_commands");
    std::fs::create_dir_all(&files).unwrap();
    let (output, envf, pathf) = (
        files.join("set_output_1"),
        files.join("set_env_1"),
        files.join("add_path_1"),
    );
    for f in [&output, &envf, &pathf] {
        std::fs::write(f, "").unwrap();
    }
    let evil = d.join("evil");
    std::fs::write(&evil, "#!/bin/sh\ntouch pwned\n").unwrap();
    let engine = d.join("engine.sh");
    std::fs::write(
        &engine,
        EVIL_ENGINE
            .replace("$SEEN", &d.join("seen.txt").display().to_string())
            .replace("$EVIL", &evil.display().to_string())
            .replace("$FOUND", &files.display().to_string()),
    )
    .unwrap();
    for f in [&engine, &evil] {
        std::fs::set_permissions(f, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let port = crate::support::free_port();
    std::fs::write(
        d.join("suite.toml"),
        format!(
            "schema_version = 1\n[engine]\nname = \"custom\"\n[engine.launch]\npreset = \"custom\"\n\
             command = \"true\"\nport = {port}\n[[models]]\nname = \"m\"\n[[models.scenarios]]\n\
             id = \"random-in8-out4-n2\"\n[models.scenarios.params]\ndataset_name = \"random\"\nnum_prompts = 2\n\
             random_input_len = 8\nrandom_output_len = 4\n"
        ),
    )
    .unwrap();
    let env = vec![
        ("PG_BIN", env!("CARGO_BIN_EXE_perfgate").to_string()),
        ("PG_ROOT", String::new()),
        ("PG_MODE", "check".into()),
        ("PG_BASELINE", "suite.toml".into()),
        ("PG_MODELS", String::new()),
        ("PG_ENGINE_CMD", engine.display().to_string()),
        ("PG_ENGINE_IMAGE", String::new()),
        ("PG_BASE_URL", String::new()),
        ("PG_RUNS", "1".into()),
        ("PG_FAIL_ON", "regression".into()),
        ("PG_REPORTS", String::new()),
        ("PG_OUT", "out".into()),
        ("GITHUB_ACTIONS", "true".into()),
        ("GITHUB_TOKEN", TOKEN.into()),
        ("GH_TOKEN", TOKEN.into()),
        ("ACTIONS_RUNTIME_TOKEN", TOKEN.into()),
        ("GITHUB_OUTPUT", output.display().to_string()),
        ("GITHUB_ENV", envf.display().to_string()),
        ("GITHUB_PATH", pathf.display().to_string()),
        (
            "GITHUB_STEP_SUMMARY",
            d.join("summary.md").display().to_string(),
        ),
    ];
    let gate = run_action(d, "Run perfgate", &env).await;
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));
    let seen = std::fs::read_to_string(d.join("seen.txt"))
        .unwrap_or_else(|e| panic!("the engine did not run ({e}):\n{}", text(&gate)));
    assert!(!seen.contains(TOKEN), "the engine saw a token: {seen}");
    for f in [&output, &envf, &pathf] {
        assert!(!seen.contains(&f.display().to_string()), "{seen}");
    }
    // What the engine appended by path is dropped; the step's own outputs are kept.
    let out = std::fs::read_to_string(&output).unwrap();
    assert!(
        !out.contains("evil") && !out.contains("exit-code=0"),
        "{out}"
    );
    assert!(out.contains("exit-code=3"), "{out}");
    assert_eq!(std::fs::read_to_string(&envf).unwrap(), "");
    assert_eq!(std::fs::read_to_string(&pathf).unwrap(), "");
    assert!(!d.join("pwned").exists());
}

#[tokio::test]
async fn the_post_step_runs_only_the_binary_fingerprinted_before_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = d.join("perfgate");
    std::fs::copy(env!("CARGO_BIN_EXE_perfgate"), &bin).unwrap();
    let env = vec![
        ("PG_BIN", bin.display().to_string()),
        ("PG_ROOT", String::new()),
        ("PG_REPORT", "report.json".into()),
        ("PG_PR", String::new()),
        ("PG_SHA", String::new()),
        ("PG_FAIL_ON", "regression".into()),
        ("PG_HTML_URL", String::new()),
        ("GITHUB_TOKEN", TOKEN.into()),
    ];
    let sum = fingerprint(d, &env).await;
    // The PR's engine replaces the binary (same user) after the fingerprint was taken.
    std::fs::remove_file(&bin).unwrap();
    std::fs::write(&bin, "#!/bin/sh\necho \"$GITHUB_TOKEN\" > pwned\n").unwrap();
    std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut env = env;
    env.push(("PG_BIN_SHA256", sum));
    let out = run_action(d, "Post to the pull request", &env).await;
    assert!(
        text(&out).contains("changed since it was installed"),
        "{}",
        text(&out)
    );
    assert!(
        !d.join("pwned").exists(),
        "the replaced binary ran with the token"
    );
    // The post step's binary never comes from the gate step's outputs.
    let yml =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    assert!(
        !yml.contains("steps.gate.outputs.bin"),
        "action.yml trusts the gate step's `bin`"
    );
}

#[tokio::test]
async fn comment_posts_what_the_rows_support_not_the_reports_word() {
    let (server, fake) = FakeGithub::start().await;
    // A report saying "pass" over a regressed gated row.
    let mut lying = failing_report();
    lying.verdict = TopVerdict::Pass;
    let job = Job::new(&lying, false);
    let out = job.comment(&server.uri(), &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("says `pass` but its rows say `fail`"),
        "{}",
        text(&out)
    );
    assert!(fake.comments()[0].body.contains("perfgate check: fail"));
    assert_eq!(fake.check_runs()[0]["conclusion"], "failure");
    // A report that compared nothing (a matrix job with no rows) does not pass.
    let empty = report("m", TopVerdict::Pass, vec![]);
    let job = Job::new(&empty, false);
    let out = job.comment(&server.uri(), &[]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert_eq!(fake.check_runs()[1]["conclusion"], "failure");
    // Nor does a merge holding such a job's report.
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &passing_report());
    let b = write(dir.path(), "b.json", &empty);
    let merged = dir.path().join("merged.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
        .arg("merge")
        .args([&a, &b])
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(3),
        "{}",
        text(&out)
    );
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(m["verdict"], "error", "{m:#}");
}

#[tokio::test]
async fn a_token_with_a_line_break_is_refused_not_a_panic() {
    let (server, fake) = FakeGithub::start().await;
    let job = Job::new(&failing_report(), false);
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perfgate"));
    cmd.env_clear()
        .arg("comment")
        .arg("--report")
        .arg(job.path("report.json"))
        .env("GITHUB_TOKEN", format!("{TOKEN}\r\nX-Evil: 1"))
        .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", job.path("event.json"));
    let out = cmd.output().await.unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("control character"), "{all}");
    assert!(!all.contains(TOKEN), "{all}");
    assert!(fake.comments().is_empty());
}

#[tokio::test]
async fn a_trickled_answer_ends_at_the_github_timeout() {
    // Answers 200 with a 100 kB body, one byte every 300 ms (each read within any read timeout).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { return };
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf);
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n",
                );
                while c.write_all(b" ").is_ok() {
                    std::thread::sleep(Duration::from_millis(300));
                }
            });
        }
    });
    let job = Job::new(&failing_report(), false);
    let t0 = std::time::Instant::now();
    let out = job
        .comment(
            &api,
            &["--github-timeout-secs", "2", "--github-retries", "0"],
        )
        .await;
    let took = t0.elapsed();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("no whole answer within 2 s"), "{all}");
    assert!(took < Duration::from_secs(10), "{took:?}\n{all}");
}
