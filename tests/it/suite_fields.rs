//! Suite scenarios that ask for more than a plain completion: the chat endpoint, the sampling
//! fields, `ignore_eos`, `chat_template_kwargs` and `extra_body` reach every request of a live
//! `perfgate check` exactly as written, as the same body `perfgate run` sends for the same
//! flags, and name the records they make. A scenario without them is today's completions
//! request, and a mistyped field is refused with the file, the scenario and the field named.

use std::path::Path;

use perfgate::record::{Endpoint, ScenarioParams};
use perfgate_fakeserver::FakeConfig;

use crate::support::*;

/// The params of the chat scenario (a TOML table body).
const CHAT_PARAMS: &str = r#"dataset_name = "random"
num_prompts = 1
random_input_len = 8
random_output_len = 3
max_concurrency = 1
endpoint = "chat"
temperature = 0.6
top_p = 0.9
top_k = 20
min_p = 0.05
frequency_penalty = 0.1
presence_penalty = -0.2
repetition_penalty = 1.05
ignore_eos = false
chat_template_kwargs = { enable_thinking = false }
extra_body = { seed = 7, logit_bias = { "1" = 0 } }
"#;

/// The params of a scenario as written before the request fields existed.
const PLAIN_PARAMS: &str = r#"dataset_name = "random"
num_prompts = 1
random_input_len = 8
random_output_len = 3
max_concurrency = 1
"#;

/// A suite (no numbers) of one scenario with `params`, its id computed from them.
fn suite(params: &str) -> (String, String) {
    let id = toml::from_str::<ScenarioParams>(params).unwrap().id();
    let text = format!(
        "schema_version = 1\n[engine]\nname = \"custom\"\n[[models]]\nname = \"fake-model\"\n\
         [[models.scenarios]]\nid = \"{id}\"\n[models.scenarios.params]\n{params}"
    );
    (text, id)
}

/// `perfgate check` of `suite` against the server at `url`; the records it wrote.
fn check(dir: &Path, suite: &str, url: &str) -> Vec<perfgate::record::ScenarioResult> {
    let file = dir.join("suite.toml");
    std::fs::write(&file, suite).unwrap();
    let tok = word_tokenizer_json(dir);
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(&file)
        .args(["--base-url", url, "--tokenizer"])
        .arg(&tok)
        .args(["--warmup-requests", "0", "--color", "never", "--output-dir"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    perfgate::record::read_jsonl(&dir.join("out/results.jsonl")).unwrap()
}

fn quick() -> FakeConfig {
    FakeConfig {
        ttft: ms(1),
        itl: ms(1),
        ..Default::default()
    }
}

#[test]
fn a_chat_scenario_sends_its_fields_and_the_body_perfgate_run_sends() {
    let server = fake(quick());
    let dir = tempfile::tempdir().unwrap();
    let (text, id) = suite(CHAT_PARAMS);
    assert!(
        id.starts_with("random-in8-out3-n1-c1-chat-temp0.6-topp0.9-"),
        "{id}"
    );
    let recs = check(dir.path(), &text, &server.url());
    assert_eq!(recs.len(), 1);
    // The record names the scenario with every field, so it meets only its own baseline.
    assert_eq!(recs[0].scenario_id(), id);
    assert_eq!(recs[0].params, toml::from_str(CHAT_PARAMS).unwrap());
    assert_eq!(recs[0].completed, 1, "{:?}", recs[0]);

    let seen = server.last_request().unwrap();
    assert_eq!(seen.path, "/v1/chat/completions");
    let b = &seen.body;
    assert_eq!(b["messages"][0]["role"], "user");
    assert!(b.get("prompt").is_none(), "{b}");
    for (key, want) in [
        ("model", serde_json::json!("fake-model")),
        ("max_tokens", 3.into()),
        ("stream", true.into()),
        ("temperature", 0.6.into()),
        ("top_p", 0.9.into()),
        ("top_k", 20.into()),
        ("min_p", 0.05.into()),
        ("frequency_penalty", 0.1.into()),
        ("presence_penalty", (-0.2).into()),
        ("repetition_penalty", 1.05.into()),
        (
            "chat_template_kwargs",
            serde_json::json!({"enable_thinking": false}),
        ),
        ("seed", 7.into()),
        ("logit_bias", serde_json::json!({"1": 0})),
    ] {
        assert_eq!(b[key], want, "{key}: {b}");
    }
    // `ignore_eos = false` lifts the live check's default (on): nothing is sent.
    assert!(b.get("ignore_eos").is_none(), "{b}");

    // `perfgate run` with the same fields as flags sends the very same body.
    let tok = word_tokenizer_json(dir.path());
    let out = perfgate()
        .args(["run", "--base-url", &server.url(), "--model", "fake-model"])
        .arg("--tokenizer")
        .arg(&tok)
        .args(["--random-input-len", "8", "--random-output-len", "3"])
        .args(["--num-prompts", "1", "--max-concurrency", "1"])
        .args(["--endpoint", "/v1/chat/completions", "--temperature", "0.6"])
        .args(["--top-p", "0.9", "--top-k", "20", "--min-p", "0.05"])
        .args(["--frequency-penalty", "0.1", "--presence-penalty=-0.2"])
        .args(["--repetition-penalty", "1.05", "--ignore-eos", "false"])
        .args([
            "--extra-body",
            r#"{"chat_template_kwargs": {"enable_thinking": false}, "seed": 7, "logit_bias": {"1": 0}}"#,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_run = server.last_request().unwrap();
    assert_eq!(by_run.path, seen.path);
    assert_eq!(by_run.body, seen.body);
}

#[test]
fn a_scenario_without_the_new_fields_keeps_todays_request_and_record() {
    let server = fake(quick());
    let dir = tempfile::tempdir().unwrap();
    let (text, id) = suite(PLAIN_PARAMS);
    assert_eq!(id, "random-in8-out3-n1-c1");
    let recs = check(dir.path(), &text, &server.url());
    assert_eq!(recs[0].scenario_id(), id);
    assert_eq!(recs[0].params.endpoint, None);
    let seen = server.last_request().unwrap();
    assert_eq!(seen.path, "/v1/completions");
    let b = &seen.body;
    assert!(b["prompt"].is_string(), "{b}");
    // The live check's defaults: greedy, EOS ignored, no other sampling field.
    assert_eq!(b["temperature"], 0.0);
    assert_eq!(b["ignore_eos"], true);
    for key in [
        "top_p",
        "top_k",
        "min_p",
        "chat_template_kwargs",
        "messages",
    ] {
        assert!(b.get(key).is_none(), "{key}: {b}");
    }
    // The record holds no key of the new fields: stored baselines and records read the same.
    let line = std::fs::read_to_string(dir.path().join("out/results.jsonl")).unwrap();
    for key in [
        "\"endpoint\"",
        "\"temperature\"",
        "\"extra_body\"",
        "\"ignore_eos\"",
    ] {
        assert!(!line.contains(key), "{key}: {line}");
    }
    // A chat scenario is another scenario: it never meets this one's baseline.
    let mut chat: ScenarioParams = toml::from_str(PLAIN_PARAMS).unwrap();
    chat.endpoint = Some(Endpoint::Chat);
    assert_eq!(chat.id(), "random-in8-out3-n1-c1-chat");
}

#[test]
fn an_unknown_or_ill_typed_field_names_the_file_scenario_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let (text, id) = suite(PLAIN_PARAMS);
    for (line, says) in [
        ("top_pp = 0.9", "unknown field `top_pp` in params"),
        (
            "temperature = \"low\"",
            "params field `temperature`: invalid type",
        ),
        (
            "endpoint = \"responses\"",
            "params field `endpoint`: unknown variant",
        ),
    ] {
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, format!("{text}{line}\n")).unwrap();
        let err = refused(&file);
        let want = format!(
            "{}: model `fake-model`, scenario `{id}`: {says}",
            file.display()
        );
        assert!(err.contains(&want), "{line}: {err}");
    }
}

/// `perfgate ab` runs a chat scenario like any other: both arms' records name it with its
/// fields, and its rows are in the report.
#[test]
fn ab_of_a_chat_scenario_carries_its_fields_into_records_and_report() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let params = CHAT_PARAMS.replace("num_prompts = 1", "num_prompts = 4");
    let (text, id) = suite(&params);
    let cmd = format!(
        "exec {} fake-server --port {{port}} --model {{served_model_name}} --ttft-ms 2 --itl-ms 1",
        env!("CARGO_BIN_EXE_perfgate")
    );
    let text = text.replace(
        "name = \"custom\"\n",
        &format!(
            "name = \"custom\"\n[engine.launch]\npreset = \"custom\"\ncommand = '''{cmd}'''\n"
        ),
    );
    let file = dir.path().join("suite.toml");
    std::fs::write(&file, text).unwrap();
    let tok = word_tokenizer_json(dir.path());
    let out = dir.path().join("out");
    let o = perfgate()
        .args(["ab", "--suite"])
        .arg(&file)
        .arg("--tokenizer")
        .arg(&tok)
        .args(["--port", &free_port().to_string(), "--stop-grace", "2"])
        .args(["--max-launches", "2", "--color", "never", "--output-dir"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(2), "{err}");
    assert_ne!(o.status.code(), Some(3), "{err}");
    let recs = perfgate::record::read_jsonl(&out.join("results.jsonl")).unwrap();
    assert!(recs.len() >= 2, "{err}");
    let want: ScenarioParams = toml::from_str(&params).unwrap();
    assert!(
        recs.iter().all(|r| r.params == want && r.completed == 4),
        "{recs:?}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["scenario"] == id.as_str() && r["metric"] == "median_ttft_ms"),
        "{report:#}"
    );
}

/// A scenario with a time budget runs until it has passed (cycling its one prompt), its record
/// says so; without a cap or a rate the budget is refused on load, naming file, model, scenario.
#[test]
fn a_time_bounded_scenario_runs_for_its_budget_and_says_so() {
    let server = fake(quick());
    let dir = tempfile::tempdir().unwrap();
    let (text, id) = suite(&format!("{PLAIN_PARAMS}duration_s = 0.4\n"));
    assert!(id.ends_with("-n1-d0.4s-c1"), "{id}");
    let records = check(dir.path(), &text, &server.url());
    let r = &records[0];
    assert_eq!(r.params.duration_s, Some(0.4));
    assert!(r.completed > 1, "{} requests in 0.4 s", r.completed);
    assert!(r.duration >= 0.4, "{}", r.duration);
    assert_eq!(r.success_rate(), 1.0);
    // The steady figures came back through the JSON Lines file (cap 1: in flight = 1).
    let steady = r.steady.as_ref().expect("steady figures in the record");
    assert_eq!(steady.rule, "in_flight_cap");
    assert!(
        steady.requests >= 1 && steady.output_throughput > 0.0,
        "{steady:?}"
    );

    let unbounded = PLAIN_PARAMS.replace("max_concurrency = 1\n", "duration_s = 0.4\n");
    let (text, id) = suite(&unbounded);
    let file = dir.path().join("unbounded.toml");
    std::fs::write(&file, text).unwrap();
    let err = refused(&file);
    let want = format!(
        "{}: model `fake-model`, scenario `{id}`: duration_s needs max_concurrency",
        file.display()
    );
    assert!(err.contains(&want), "{err}");
}

/// `perfgate check --dry-run` on a suite it must refuse: exit 2; its stderr.
fn refused(file: &Path) -> String {
    let out = perfgate()
        .args(["check", "--baseline"])
        .arg(file)
        .arg("--dry-run")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{}: {err}", file.display());
    err
}
