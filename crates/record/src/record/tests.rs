use super::*;

fn sample() -> ScenarioResult {
    let mut r = ScenarioResult {
        model: "Qwen/Qwen3-8B".into(),
        params: ScenarioParams {
            dataset_name: "random".into(),
            num_prompts: 2000,
            random_input_len: Some(1024),
            random_output_len: Some(1024),
            random_range_ratio: Some(1.0),
            range_convention: Some(RangeConvention::Sglang),
            ..Default::default()
        },
        completed: 2000,
        duration: 640.59,
        total_input_tokens: 2048000,
        total_output_tokens: 2048000,
        request_throughput: 3.12,
        output_throughput: 3197.08,
        ..Default::default()
    };
    r.stats.insert("mean_ttft_ms".into(), 274601.85);
    r.stats.insert("p99.9_itl_ms".into(), 1.5);
    r
}

#[test]
fn jsonl_round_trips_exact_numbers() {
    let r = sample();
    let text = to_jsonl(std::slice::from_ref(&r));
    assert!(text.contains("\"mean_ttft_ms\":274601.85"), "{text}");
    assert!(text.contains("\"request_rate\":\"inf\""), "{text}");
    let back = parse_jsonl(&text, "x.jsonl").unwrap();
    assert_eq!(back, vec![r]);
}

const MINIMAL: &str = "{\"model\":\"m\",\"dataset_name\":\"random\",\"num_prompts\":1,\"completed\":1,\"duration\":1,\"total_input_tokens\":1,\"total_output_tokens\":1,\"request_throughput\":1,\"output_throughput\":1";

#[test]
fn metadata_echoes_take_the_fields_type() {
    // `--metadata tensor_parallel_size=1 engine_version=0.11`, echoed as strings.
    let line = format!(
        "{MINIMAL},\"metadata\":{{\"tensor_parallel_size\":\"1\",\"engine_version\":\"0.11\"}},\"tensor_parallel_size\":\"1\",\"engine_version\":\"0.11\"}}\n"
    );
    let read = parse_jsonl_with_warnings(&line, "m.jsonl").unwrap();
    let r = &read.records[0];
    assert_eq!(r.tensor_parallel_size, Some(1));
    assert_eq!(r.engine_version.as_deref(), Some("0.11"));
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    // A string that spells no count is still refused by name.
    let bad = line.replace("\"1\"", "\"one\"");
    let err = parse_jsonl(&bad, "m.jsonl").unwrap_err().to_string();
    assert!(err.contains("`tensor_parallel_size`"), "{err}");
}

#[test]
fn unknown_keys_are_ignored_with_one_warning_each() {
    let mut text = to_jsonl(&[sample()]);
    text.push_str(&format!(
        "\n{MINIMAL},\"bogus\":3,\"gpu\":\"l6\"}}\n{MINIMAL},\"bogus\":4}}\n"
    ));
    let got = parse_jsonl_with_warnings(&text, "r.jsonl").unwrap();
    assert_eq!(got.records.len(), 3);
    assert_eq!(got.records[1].completed, 1);
    assert_eq!(
        got.warnings,
        [
            "r.jsonl:3: unknown field `bogus` ignored (and 1 more lines)",
            "r.jsonl:3: unknown field `gpu` ignored",
        ]
    );
}

#[test]
fn type_errors_name_the_key_and_line() {
    let bad = MINIMAL.replace("\"completed\":1", "\"completed\":\"l6\"");
    let text = format!("{MINIMAL}}}\n{bad}}}\n");
    let err = parse_jsonl(&text, "r.jsonl").unwrap_err().to_string();
    assert!(
        err.starts_with("r.jsonl:2: `completed`: invalid type: string \"l6\", expected u64"),
        "{err}"
    );
    let stat = format!("{MINIMAL},\"p99_ttft_ms\":\"fast\"}}\n");
    let err = parse_jsonl(&stat, "r.jsonl").unwrap_err().to_string();
    assert_eq!(
        err,
        "r.jsonl:1: `p99_ttft_ms`: expected a number, got string \"fast\""
    );
    let missing = "{\"model\":\"m\"}\n";
    let err = parse_jsonl(missing, "r.jsonl").unwrap_err().to_string();
    assert!(err.starts_with("r.jsonl:1: missing field `"), "{err}");
    let err = parse_jsonl("[1]\n", "r.jsonl").unwrap_err().to_string();
    assert_eq!(err, "r.jsonl:1: a record must be a JSON object");
}

#[test]
fn errors_by_kind_read_from_the_old_key_and_vllm_lists() {
    let old = format!(
        "{MINIMAL},\"errors\":{{\"timeout\":{{\"count\":2,\"first_message\":\"slow\"}}}}}}\n"
    );
    let r = &parse_jsonl(&old, "o.jsonl").unwrap()[0];
    assert_eq!(r.errors["timeout"].count, 2);
    let text = to_jsonl(std::slice::from_ref(r));
    assert!(text.contains("\"errors_by_kind\":{\"timeout\""), "{text}");
    assert!(text.contains("\"max_concurrency\":null"), "{text}");
    assert_eq!(&parse_jsonl(&text, "n.jsonl").unwrap()[0], r);
    let vllm = format!("{MINIMAL},\"errors\":[\"\",\"boom\"]}}\n");
    assert!(parse_jsonl(&vllm, "v.jsonl").unwrap()[0].errors.is_empty());
}

#[test]
fn record_keys_list_every_serialised_field() {
    let mut r = sample();
    r.errors.insert(
        "x".into(),
        ErrorCount {
            count: 1,
            first_message: "m".into(),
        },
    );
    r.metadata.insert("k".into(), "v".into());
    r.derived.push("duration".into());
    r.seed = Some(1);
    for k in [
        "model",
        "launch_id",
        "errors_by_kind",
        "errors",
        "max_concurrency",
        "ramp_up_strategy",
        "dataset_name",
        "metadata",
    ] {
        assert!(record_keys().contains(k), "{k}");
    }
    assert!(!record_keys().contains("p99_ttft_ms"));
    assert!(!record_keys().contains("stats"));
    for (k, v) in serde_json::to_value(&r).unwrap().as_object().unwrap() {
        assert!(record_keys().contains(k) || is_stat_key(k), "{k} = {v}");
    }
}

#[test]
fn bad_values_are_named_by_key_cut_short_and_a_bom_is_fine() {
    let good = to_jsonl(&[sample()]);
    assert_eq!(
        parse_jsonl(&format!("\u{feff}{good}"), "r.jsonl")
            .unwrap()
            .len(),
        1
    );
    let huge = "x".repeat(1_000_000);
    let bad = good.replace("\"duration\":640.59", &format!("\"duration\":\"{huge}\""));
    let err = parse_jsonl(&bad, "r.jsonl").unwrap_err().to_string();
    assert!(
        err.starts_with("r.jsonl:1: `duration`: "),
        "{}",
        &err[..100]
    );
    assert!(err.len() < 400, "{} bytes", err.len());
    for (from, to, says) in [
        (
            "\"mean_ttft_ms\":274601.85",
            "\"mean_ttft_ms\":-5.0",
            "`mean_ttft_ms`: -5 is negative",
        ),
        (
            "\"mean_ttft_ms\":274601.85",
            "\"mean_ttft_ms\":0.0",
            "`mean_ttft_ms`: 0 is not a possible value",
        ),
        (
            "\"duration\":640.59",
            "\"duration\":0",
            "`duration`: 0 is not",
        ),
    ] {
        let err = parse_jsonl(&good.replace(from, to), "r.jsonl")
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn conventions_name_the_same_exact_scenario() {
    let mut a = sample().params;
    let mut b = a.clone();
    b.random_range_ratio = Some(0.0);
    b.range_convention = Some(RangeConvention::Vllm);
    assert_eq!(a.id(), "random-in1024-out1024-n2000");
    assert_eq!(a.id(), b.id());
    a.random_range_ratio = Some(0.5);
    assert_eq!(a.id(), "random-in512..1024-out512..1024-n2000");
}

#[test]
fn range_bounds() {
    assert_eq!(RangeConvention::Vllm.bounds(100, 0.1), (90, 110));
    assert_eq!(RangeConvention::Sglang.bounds(100, 0.1), (10, 100));
    assert_eq!(RangeConvention::Sglang.bounds(100, 0.0), (1, 100));
    assert_eq!(RangeConvention::Sglang.bounds(100, 1.0), (100, 100));
    assert_eq!(RangeConvention::Vllm.bounds(100, 0.0), (100, 100));
}

#[test]
fn stat_keys() {
    assert!(is_stat_key("p99_ttft_ms"));
    assert!(is_stat_key("p99.9_e2el_ms"));
    assert!(is_stat_key("std_itl_ms"));
    assert!(!is_stat_key("p99_foo_ms"));
    assert!(!is_stat_key("completed"));
    assert_eq!(percentile_key(99.0, "ttft"), "p99_ttft_ms");
    assert_eq!(percentile_key(99.9, "ttft"), "p99.9_ttft_ms");
}
