use super::*;

const SAMPLE: &str = r#"
schema_version = 1

[engine]
name = "vllm"
version = "v0.10.1"
image = "vllm/vllm-openai:v0.10.1"

[[models]]
name = "Qwen/Qwen3-8B"
tensor_parallel_size = 1

[[models.scenarios]]
id = "random-in1024-out1024-n2000"

[models.scenarios.params]
dataset_name = "random"
num_prompts = 2000
random_input_len = 1024
random_output_len = 1024
random_range_ratio = 1.0
range_convention = "sglang"
request_rate = "inf"

[[models.scenarios.runs]]
source = "seed.txt:137"
backend = "vllm"

[models.scenarios.metrics]
completed = { direction = "higher", values = [2000.0] }
output_throughput = { direction = "higher", values = [3197.08] }
median_ttft_ms = { direction = "lower", values = [307467.3] }
"#;

#[test]
fn parses_and_yields_records() {
    let b = Baseline::parse(SAMPLE, "b.toml").unwrap();
    let recs = b.to_records();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].completed, 2000);
    assert_eq!(recs[0].output_throughput, 3197.08);
    assert_eq!(recs[0].stats["median_ttft_ms"], 307467.3);
    assert_eq!(recs[0].scenario_id(), "random-in1024-out1024-n2000");
    assert_eq!(recs[0].source.as_deref(), Some("seed.txt:137"));
}

#[test]
fn round_trips_through_toml() {
    let b = Baseline::parse(SAMPLE, "b.toml").unwrap();
    let again = Baseline::parse(&b.to_toml(), "again.toml").unwrap();
    assert_eq!(b, again);
}

#[test]
fn unknown_key_names_line_and_column() {
    let text = SAMPLE.replace("tensor_parallel_size = 1", "tensor_paralel_size = 1");
    let err = Baseline::parse(&text, "b.toml").unwrap_err().to_string();
    assert!(
        err.starts_with("b.toml:11:1: unknown field `tensor_paralel_size`"),
        "{err}"
    );
}

#[test]
fn empty_file_is_an_error() {
    let err = Baseline::parse("  \n", "e.toml").unwrap_err().to_string();
    assert_eq!(err, "e.toml: the file is empty");
}

#[test]
fn nan_or_negative_ratio_and_impossible_values_are_named() {
    for (from, to, says) in [
        (
            "random_range_ratio = 1.0",
            "random_range_ratio = nan",
            "random_range_ratio must be a finite number ≥ 0, got NaN",
        ),
        (
            "random_range_ratio = 1.0",
            "random_range_ratio = -0.5",
            "random_range_ratio must be a finite number ≥ 0, got -0.5",
        ),
        (
            "values = [307467.3]",
            "values = [-1.0]",
            "metric `median_ttft_ms`: -1 is negative",
        ),
        (
            "values = [307467.3]",
            "values = [0.0]",
            "metric `median_ttft_ms`: 0 is not a possible value",
        ),
        (
            "values = [3197.08]",
            "values = [0.0]",
            "metric `output_throughput`: 0 is not",
        ),
    ] {
        let err = Baseline::parse(&SAMPLE.replace(from, to), "b.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{to}: {err}");
        assert!(!err.contains("scenario id"), "not an id error: {err}");
    }
}

#[test]
fn an_unknown_or_ill_typed_scenario_field_is_named() {
    for (field, says) in [
        (
            "tempreature = 0.5",
            "unknown field `tempreature` in params (known: dataset_name,",
        ),
        (
            "temperature = \"hot\"",
            "params field `temperature`: invalid type",
        ),
        (
            "endpoint = \"embeddings\"",
            "params field `endpoint`: unknown variant",
        ),
        ("extra_body = 3", "params field `extra_body`: invalid type"),
    ] {
        let text = SAMPLE.replace(
            "num_prompts = 2000",
            &format!("num_prompts = 2000\n{field}"),
        );
        let err = Baseline::parse(&text, "s.toml").unwrap_err().to_string();
        assert!(
            err.starts_with(
                "s.toml: model `Qwen/Qwen3-8B`, scenario `random-in1024-out1024-n2000`: "
            ),
            "{err}"
        );
        assert!(err.contains(says), "{field}: {err}");
    }
}

#[test]
fn request_fields_enter_the_id_and_are_checked() {
    let chat = SAMPLE.replace(
        "num_prompts = 2000",
        "num_prompts = 2000\nendpoint = \"chat\"\ntemperature = 0.7\ntop_k = 20\n\
         chat_template_kwargs = { enable_thinking = false }",
    );
    let err = Baseline::parse(&chat, "s.toml").unwrap_err().to_string();
    let id = err
        .split("expected `")
        .nth(1)
        .unwrap()
        .trim_end_matches("`)");
    assert!(
        id.starts_with("random-in1024-out1024-n2000-chat-temp0.7-topk20-ctk"),
        "{err}"
    );
    let b = Baseline::parse(
        &chat.replace("random-in1024-out1024-n2000\"", &format!("{id}\"")),
        "s.toml",
    )
    .unwrap();
    let p = &b.models[0].scenarios[0].params;
    assert_eq!(p.endpoint, Some(crate::record::Endpoint::Chat));
    assert_eq!(
        p.body_fields()["chat_template_kwargs"]["enable_thinking"],
        false
    );
    assert_eq!(Baseline::parse(&b.to_toml(), "again.toml").unwrap(), b);
    // chat_template_kwargs without the chat endpoint; a sampling value out of range.
    for (from, to, says) in [
        (
            "endpoint = \"chat\"\n",
            "",
            "chat_template_kwargs needs endpoint = \"chat\"",
        ),
        (
            "temperature = 0.7",
            "temperature = -1.0",
            "temperature must be a finite number ≥ 0, got -1",
        ),
    ] {
        let err = Baseline::parse(&chat.replace(from, to), "s.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn a_bom_is_accepted() {
    assert!(Baseline::parse(&format!("\u{feff}{SAMPLE}"), "b.toml").is_ok());
}

#[test]
fn wrong_id_is_an_error() {
    let text = SAMPLE.replace("id = \"random-in1024-out1024-n2000\"", "id = \"x\"");
    let err = Baseline::parse(&text, "b.toml").unwrap_err().to_string();
    assert!(
        err.contains("expected `random-in1024-out1024-n2000`"),
        "{err}"
    );
}

/// An `ab` run of session `s`: `pairs` pairs of two scenarios, the candidate's latencies ×
/// `change` (throughputs ÷), both arms wiggling by a few tenths of a percent.
fn ab_session(s: &str, pairs: u32, change: f64) -> Vec<ScenarioResult> {
    let wiggle = [0.004, -0.006, 0.002, 0.005, -0.003, -0.002, 0.006, -0.004];
    let mut out = Vec::new();
    for p in 0..pairs {
        for (arm, f) in [
            (crate::record::Arm::Base, 1.0),
            (
                crate::record::Arm::Candidate,
                change * (1.0 + wiggle[p as usize % 8]),
            ),
        ] {
            for n in [100, 200] {
                let mut r = crate::sample::record("m", n, 1.0 / f, f);
                r.arm = Some(arm);
                r.pair = Some(p);
                r.launch_id = Some(format!("L{p}{}", arm.as_str()));
                r.session_id = Some(s.into());
                out.push(r);
            }
        }
    }
    out
}

#[test]
fn calibration_takes_ab_runs_whose_arms_agree() {
    let recs = [ab_session("s1", 6, 1.0), ab_session("s2", 6, 1.0)].concat();
    assert_eq!(calibration_sessions(&recs).unwrap(), 2);
    // One arm of a slower `ab` run compares nothing: it calibrates.
    let mut one_arm = ab_session("s1", 6, 1.3);
    one_arm.retain(|r| r.arm == Some(crate::record::Arm::Candidate));
    one_arm.extend(ab_session("s2", 6, 1.0));
    assert_eq!(calibration_sessions(&one_arm).unwrap(), 2);
    // One session is not enough, whatever the arms.
    let e = calibration_sessions(&ab_session("s1", 6, 1.0)).unwrap_err();
    assert!(e.to_string().contains("≥ 2 recording sessions"), "{e}");
}

#[test]
fn calibration_refuses_ab_runs_whose_arms_differ_and_names_the_rows() {
    // The candidate 30 % slower in session s2: its rows, not s1's, are named.
    let recs = [ab_session("s1", 6, 1.0), ab_session("s2", 6, 1.3)].concat();
    let e = calibration_sessions(&recs).unwrap_err().to_string();
    assert!(e.starts_with("session `s2`: the two arms"), "{e}");
    assert!(e.contains("median_ttft_ms +30.0 %"), "{e}");
    assert!(e.contains("(regressed)"), "{e}");
    assert!(e.contains("more;"), "more than three rows differ: {e}");
    // 30 % faster: named as improved; differing arms are refused before the session count.
    let e = calibration_sessions(&ab_session("s1", 6, 1.0 / 1.3))
        .unwrap_err()
        .to_string();
    assert!(e.contains("(improved)"), "{e}");
    // Records without an arm (a live check's) are not judged as pairs.
    let mut plain = ab_session("s1", 6, 1.3);
    plain.iter_mut().for_each(|r| r.arm = None);
    plain.extend(ab_session("s2", 6, 1.0));
    assert_eq!(calibration_sessions(&plain).unwrap(), 2);
}

#[test]
fn a_runs_calibration_loop_and_platform_survive_the_baseline_file() {
    let mut r = crate::sample::record("m", 100, 1.0, 1.0);
    let mut platform = Platform {
        cpu: Some("Intel(R) Xeon(R) Processor".into()),
        cpu_features: vec!["avx2".into(), "amx_tile".into()],
        cpus: Some(2),
        ..Default::default()
    };
    assert!(platform.add_gpus("NVIDIA H100 80GB HBM3, 550.54.15\n"));
    r.telemetry = Some(Telemetry {
        calibration_ms: Some(9.93),
        calibration_all_ms: Some(11.5),
        platform: Some(platform.clone()),
        samples: 7,
        ..Default::default()
    });
    let plain = crate::sample::record("m", 200, 1.0, 1.0);
    let engine = EngineInfo {
        name: "vllm".into(),
        ..Default::default()
    };
    let (b, _) = Baseline::from_records(&[r, plain], engine, Provenance::default(), None).unwrap();
    let text = b.to_toml();
    assert!(text.contains("calibration_ms = 9.93"), "{text}");
    let recs = Baseline::parse(&text, "b.toml").unwrap().to_records();
    // Only the loop's time and the platform are kept of the telemetry, and only where the
    // run had them.
    let t = recs[0].telemetry.as_ref().unwrap();
    assert_eq!((t.calibration_ms, t.samples), (Some(9.93), 0));
    assert_eq!(t.calibration_all_ms, Some(11.5));
    assert_eq!(t.platform.as_ref(), Some(&platform));
    assert!(
        text.contains("gpus = [\"NVIDIA H100 80GB HBM3\"]"),
        "{text}"
    );
    assert_eq!(recs[1].telemetry, None);
    // A run with a platform and no loop time keeps the platform.
    let mut p = crate::sample::record("m", 100, 1.0, 1.0);
    p.telemetry = Some(Telemetry {
        platform: Some(platform.clone()),
        ..Default::default()
    });
    let engine = EngineInfo {
        name: "vllm".into(),
        ..Default::default()
    };
    let (b, _) = Baseline::from_records(&[p], engine, Provenance::default(), None).unwrap();
    let back = Baseline::parse(&b.to_toml(), "b.toml")
        .unwrap()
        .to_records();
    let t = back[0].telemetry.as_ref().unwrap();
    assert_eq!(
        (t.calibration_ms, t.platform.as_ref()),
        (None, Some(&platform))
    );
}
