//! `perfgate import` on the seeds, on hand-written vLLM console logs, and on bad inputs.

use std::collections::BTreeMap;

use perfgate::import::{import_text, ImportError, ImportOptions};
use perfgate::record::{RangeConvention, RequestRate, ScenarioResult};

const SEEDS: [&str; 3] = [
    "tests/data/seeds/000_91a68daabf788996.txt",
    "tests/data/seeds/001_6333425655433de6.txt",
    "tests/data/seeds/002_888d5a41793063a3.txt",
];

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn import(path: &str) -> Vec<ScenarioResult> {
    import_text(&read(path), path, &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .records
}

/// The record key of a printed label, written independently of the importer.
fn key(label: &str) -> String {
    let fixed = [
        ("Successful requests", "completed"),
        ("Failed requests", "failed"),
        ("Benchmark duration (s)", "duration"),
        ("Total input tokens", "total_input_tokens"),
        ("Total generated tokens", "total_output_tokens"),
        (
            "Total generated tokens (retokenized)",
            "total_output_tokens_retokenized",
        ),
        ("Request throughput (req/s)", "request_throughput"),
        ("Request goodput (req/s)", "request_goodput"),
        ("Input token throughput (tok/s)", "input_throughput"),
        ("Output token throughput (tok/s)", "output_throughput"),
        (
            "Peak output token throughput (tok/s)",
            "max_output_tokens_per_s",
        ),
        ("Peak concurrent requests", "max_concurrent_requests"),
        ("Total Token throughput (tok/s)", "total_token_throughput"),
        ("Total token throughput (tok/s)", "total_token_throughput"),
        ("Backend", "backend"),
        ("Traffic request rate", "request_rate"),
        ("Maximum request concurrency", "max_concurrency"),
    ];
    if let Some((_, k)) = fixed.iter().find(|(l, _)| *l == label) {
        return k.to_string();
    }
    let body = label.strip_suffix(" (ms)").expect(label);
    let (stat, metric) = body.split_once(' ').unwrap();
    let metric = match metric {
        "E2E Latency" | "E2EL" => "e2el".to_string(),
        m => m.to_lowercase(),
    };
    format!("{}_{metric}_ms", stat.to_lowercase())
}

/// Every `Label: value` line of the block that starts at `header` (1-based), as the record
/// key and the printed text.
fn printed_block(text: &str, header: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines().skip(header) {
        let t = line.trim();
        if t.starts_with("=====") {
            return out;
        }
        if t.starts_with('-') {
            continue;
        }
        let (label, value) = t.split_once(':').expect(t);
        out.push((key(label.trim()), value.trim().to_string()));
    }
    panic!("block at line {header} is not closed");
}

/// Check that every printed number of the record's block equals the record's value, and that
/// the JSON serialisation of the value reads back as the printed text.
fn assert_matches_print(text: &str, rec: &ScenarioResult) {
    let header: usize = rec
        .source
        .as_deref()
        .unwrap()
        .rsplit_once(':')
        .unwrap()
        .1
        .parse()
        .unwrap();
    let json = serde_json::to_value(rec).unwrap();
    let lines = printed_block(text, header);
    assert!(lines.len() >= 15, "{header}: only {} lines", lines.len());
    for (k, printed) in lines {
        let got = &json[&k];
        match k.as_str() {
            "backend" => assert_eq!(got.as_str(), Some(printed.as_str()), "{header} {k}"),
            "request_rate" => {
                assert_eq!(got.to_string().trim_matches('"'), printed, "{header} {k}")
            }
            "max_concurrency" => {
                assert_eq!(got.as_u64(), printed.parse::<u64>().ok(), "{header} {k}")
            }
            _ => {
                let want: f64 = printed.parse().unwrap();
                let v = got
                    .as_f64()
                    .unwrap_or_else(|| panic!("{header}: `{k}` missing"));
                assert_eq!(v, want, "{header} {k}");
                // The serialised text is the printed text (up to trailing zeros).
                let s = got.to_string();
                let norm = |t: &str| {
                    if t.contains('.') {
                        t.trim_end_matches('0').trim_end_matches('.').to_string()
                    } else {
                        t.to_string()
                    }
                };
                assert_eq!(norm(&s), norm(&printed), "{header} {k}");
            }
        }
    }
}

#[test]
fn each_seed_gives_24_records_equal_to_the_print() {
    for path in SEEDS {
        let text = read(path);
        let recs = import(path);
        assert_eq!(recs.len(), 24, "{path}");
        for r in &recs {
            assert_matches_print(&text, r);
            assert_eq!(r.params.request_rate, RequestRate::Inf);
            assert_eq!(r.seed, Some(1));
            assert!(!r.is_incomplete(), "{:?}", r.source);
            assert!(r.launch_command.is_some(), "{:?}", r.source);
            assert!(r.tensor_parallel_size.is_some(), "{:?}", r.source);
        }
        // Six models, four scenarios each, identified by parameters.
        let mut by_model: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for r in &recs {
            by_model.entry(&r.model).or_default().push(r.scenario_id());
        }
        assert_eq!(by_model.len(), 6, "{path}: {by_model:?}");
        for (m, ids) in &by_model {
            assert_eq!(ids.len(), 4, "{path} {m}");
            assert!(
                ids.contains(&"random-in1024-out1024-n2000".to_string()),
                "{m}"
            );
            assert!(
                ids.contains(&"random-in2000-out6000-n500".to_string()),
                "{m}"
            );
            assert!(
                ids.contains(&"random-in6000-out2000-n500".to_string()),
                "{m}"
            );
        }
    }
}

#[test]
fn seed_vllm_first_block_field_by_field() {
    let r = &import(SEEDS[0])[0];
    assert_eq!(r.model, "Qwen/Qwen3-8B");
    assert_eq!(r.engine.as_deref(), Some("vllm"));
    assert_eq!(r.engine_version.as_deref(), Some("v0.10.1"));
    assert_eq!(r.backend.as_deref(), Some("vllm"));
    assert_eq!(r.scenario_id(), "sharegpt-n10000");
    assert_eq!(r.completed, 10000);
    assert_eq!(r.duration, 578.48);
    assert_eq!(r.total_input_tokens, 2258583);
    assert_eq!(r.total_output_tokens, 1992177);
    assert_eq!(r.total_output_tokens_retokenized, Some(1992117));
    assert_eq!(r.request_throughput, 17.29);
    assert_eq!(r.input_throughput, Some(3904.34));
    assert_eq!(r.output_throughput, 3443.81);
    assert_eq!(r.stats["mean_e2el_ms"], 289213.70);
    assert_eq!(r.stats["median_ttft_ms"], 274460.89);
    assert_eq!(r.stats["p99_ttft_ms"], 555801.53);
    assert_eq!(r.stats["p99_itl_ms"], 161.67);
    assert_eq!(r.stats.len(), 11);
    assert_eq!(r.tensor_parallel_size, Some(1));
    assert!(r
        .launch_command
        .as_deref()
        .unwrap()
        .contains("--model Qwen/Qwen3-8B --tensor-parallel-size 1"));
    assert_eq!(
        r.source.as_deref(),
        Some("tests/data/seeds/000_91a68daabf788996.txt:98")
    );

    let r = &import(SEEDS[0])[1];
    assert_eq!(r.params.random_input_len, Some(1024));
    assert_eq!(r.params.random_range_ratio, Some(1.0));
    assert_eq!(r.params.range_convention, Some(RangeConvention::Sglang));
}

#[test]
fn sglang_gpt_oss_sharegpt_is_its_own_scenario() {
    let recs = import(SEEDS[1]);
    let gpt: Vec<_> = recs
        .iter()
        .filter(|r| r.model == "openai/gpt-oss-20b")
        .collect();
    assert_eq!(gpt[0].scenario_id(), "sharegpt-n1000");
    assert_eq!(gpt[0].completed, 1000);
    assert_eq!(gpt[0].duration, 719.19);
    assert_eq!(gpt[0].stats["mean_tpot_ms"], 6661.16);
    let qwen = recs.iter().find(|r| r.model == "Qwen/Qwen3-8B").unwrap();
    assert_eq!(qwen.scenario_id(), "sharegpt-n10000");
    assert_ne!(gpt[0].scenario_id(), qwen.scenario_id());
    assert_eq!(
        gpt[0]
            .launch_command
            .as_deref()
            .map(|c| c.contains("sglang.launch_server")),
        Some(true)
    );
}

#[test]
fn lmdeploy_run_arguments_beat_the_launch_command() {
    let path = SEEDS[2];
    let got = import_text(&read(path), path, &ImportOptions::default()).unwrap();
    let big: Vec<_> = got
        .records
        .iter()
        .filter(|r| r.model == "openai/gpt-oss-120b")
        .collect();
    assert_eq!(big.len(), 4);
    assert_eq!(big[0].tensor_parallel_size, Some(2));
    assert!(big[0]
        .launch_command
        .as_deref()
        .unwrap()
        .contains("openai/gpt-oss-20b"));
    assert_eq!(
        got.records
            .iter()
            .filter(|r| r.model == "openai/gpt-oss-20b")
            .count(),
        4
    );
    assert_eq!(got.warnings.len(), 4, "{:?}", got.warnings);
    assert!(got.warnings[0].contains("the run's arguments win"));
    let fp8 = got
        .records
        .iter()
        .find(|r| r.model == "Qwen/Qwen3-235B-A22B-FP8")
        .unwrap();
    assert_eq!(fp8.tensor_parallel_size, Some(4));
}

#[test]
fn vllm_console_with_optional_lines() {
    let path = "tests/data/vllm/bench_serve_optional.log";
    let text = read(path);
    let got = import_text(&text, path, &ImportOptions::default()).unwrap();
    assert_eq!(got.records.len(), 2);
    let a = &got.records[0];
    assert_matches_print(&text, a);
    assert_eq!(a.model, "meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(a.scenario_id(), "random-in1024-out128-n200-c32");
    assert_eq!(a.params.range_convention, Some(RangeConvention::Vllm));
    assert_eq!(a.seed, Some(7));
    assert_eq!((a.completed, a.failed), (198, 2));
    assert!(a.is_incomplete());
    assert_eq!(a.request_goodput, Some(3.92));
    assert_eq!(a.max_output_tokens_per_s, Some(1344.0));
    assert_eq!(a.max_concurrent_requests, Some(32));
    assert_eq!(a.total_token_throughput, Some(5518.14));
    assert_eq!(a.stats["p90_ttft_ms"], 380.12);
    assert_eq!(a.stats["p95_itl_ms"], 99.99);
    assert_eq!(a.stats["max_itl_ms"], 1044.18);
    assert_eq!(a.stats["p99_e2el_ms"], 7003.61);
    assert_eq!(a.stats.len(), 21);
    assert!(
        got.warnings
            .iter()
            .any(|w| w.contains("incomplete run kept and flagged")),
        "{:?}",
        got.warnings
    );

    let b = &got.records[1];
    assert_matches_print(&text, b);
    assert_eq!(b.model, "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(b.params.request_rate, RequestRate::PerSecond(4.0));
    assert_eq!(b.params.burstiness, Some(0.5));
    assert_eq!(b.scenario_id(), "sharegpt-n1000-r4-b0.5");
    assert_eq!(b.total_token_throughput, Some(1645.66));
    assert_eq!(
        b.params.random_input_len, None,
        "random lengths do not apply to sharegpt"
    );
}

#[test]
fn a_log_without_a_model_needs_the_flag() {
    let path = "tests/data/vllm/no_model.log";
    let text = read(path);
    let err = import_text(&text, path, &ImportOptions::default()).unwrap_err();
    assert_eq!(
        err,
        ImportError::NoModel {
            path: path.into(),
            line: 3
        }
    );
    assert_eq!(
        err.to_string(),
        "tests/data/vllm/no_model.log:3: no model found for this result (no `--model` on a command line, no `model=` in a `Namespace(...)` line); pass `--model`"
    );
    let opts = ImportOptions {
        model: Some("my/model".into()),
        ..Default::default()
    };
    let got = import_text(&text, path, &opts).unwrap();
    assert_eq!(got.records.len(), 1);
    assert_eq!(got.records[0].model, "my/model");
    assert_eq!(got.records[0].scenario_id(), "random-in256-out64-n50");
    assert_matches_print(&text, &got.records[0]);
}

fn first_block(path: &str) -> String {
    let text = read(path);
    let lines: Vec<&str> = text.lines().collect();
    lines[88..128].join("\n")
}

#[test]
fn bad_inputs_give_clear_errors() {
    let opts = ImportOptions::default();
    // Truncated: the closing rule is missing.
    let block = first_block(SEEDS[0]);
    let truncated: String = block.lines().take(25).collect::<Vec<_>>().join("\n");
    let err = import_text(&truncated, "t.txt", &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.txt:10: result block is truncated (no closing `=====` line)"
    );
    // A non-numeric value.
    let bad = block.replace("578.48", "57x.48");
    let err = import_text(&bad, "n.txt", &opts).unwrap_err();
    assert_eq!(err.to_string(), "n.txt:14: `57x.48` is not a number");
    // An unknown line inside a block.
    let odd = block.replace("Total input tokens:", "Total imput tokens:");
    let err = import_text(&odd, "u.txt", &opts).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("u.txt:15: unknown line in a result block: `Total imput tokens:"),
        "{err}"
    );
    // Empty file, and a file with no results.
    assert_eq!(
        import_text("", "e.txt", &opts).unwrap_err().to_string(),
        "e.txt: the file is empty"
    );
    let err = import_text("pip install foo\n", "p.txt", &opts).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("p.txt: no benchmark results found"),
        "{err}"
    );
}

#[test]
fn the_import_command_writes_jsonl_and_exits_2_on_bad_input() {
    let bin = env!("CARGO_BIN_EXE_perfgate");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let st = std::process::Command::new(bin)
        .args([
            "import",
            "tests/data/vllm/no_model.log",
            "--model",
            "my/model",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let recs = perfgate::record::read_jsonl(&out).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].model, "my/model");

    let st = std::process::Command::new(bin)
        .args(["import", "tests/data/vllm/no_model.log"])
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(
        err.contains("no_model.log:3: no model found") && err.contains("pass `--model`"),
        "{err}"
    );
}

const SWEEP: &str = "tests/data/vllm/sweep_seed004_style.log";

fn sweep_opts() -> ImportOptions {
    ImportOptions {
        model: Some("meta-llama/Llama-3.1-8B".into()),
        dataset_name: Some("random".into()),
        ..Default::default()
    }
}

/// A seed-004-style sweep: a `vllm` header, `num_prompts: 1, 2, 4, …` and `seq_length: 80`, then
/// bare result blocks. Every printed number is kept; each block gets its count from the header.
#[test]
fn sweep_log_with_a_header_imports_exactly() {
    let text = read(SWEEP);
    let got = import_text(&text, SWEEP, &sweep_opts()).unwrap();
    let counts: Vec<u64> = got.records.iter().map(|r| r.params.num_prompts).collect();
    assert_eq!(counts, [1, 2, 4, 8, 16, 32]);
    for r in &got.records {
        assert_matches_print(&text, r);
        assert_eq!(r.params.random_input_len, Some(80));
        assert_eq!(r.engine.as_deref(), Some("vllm"));
        assert_eq!(r.model, "meta-llama/Llama-3.1-8B");
        // Header values are printed in the file, not derived.
        assert!(r.derived.is_empty(), "{:?}", r.derived);
        assert!(!r.is_incomplete());
    }
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
}

#[test]
fn sweep_blocks_without_a_header_ask_or_derive() {
    let text = read(SWEEP);
    let bare: String = text
        .lines()
        .filter(|l| !l.starts_with("num_prompts") && !l.starts_with("seq_length"))
        .map(|l| format!("{l}\n"))
        .collect();
    // No count anywhere: ask for the flag, naming the block.
    let err = import_text(&bare, "s.log", &sweep_opts())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("s.log:3: no prompt count") && err.contains("--num-prompts"),
        "{err}"
    );
    // With `Failed requests` lines: num_prompts = successful + failed, and the input length from
    // the totals; both listed as derived, with a note each.
    let with_failed = bare.replace(
        "Benchmark duration (s):",
        "Failed requests:                         0\nBenchmark duration (s):",
    );
    let got = import_text(&with_failed, "s.log", &sweep_opts()).unwrap();
    assert_eq!(got.records.len(), 6);
    for r in &got.records {
        assert_eq!(r.params.num_prompts, r.completed);
        assert_eq!(r.params.random_input_len, Some(80));
        assert_eq!(r.derived, ["num_prompts", "random_input_len"]);
    }
    assert_eq!(got.warnings.len(), 12, "{:?}", got.warnings);
    assert!(got.warnings[0].contains("num_prompts = 1 derived from 1 successful + 0 failed"));
    // A header list shorter than the blocks: the block past its end is named.
    let short = text.replace("num_prompts: 1, 2, 4, 8, 16, 32", "num_prompts: 1, 2");
    let err = import_text(&short, "s.log", &sweep_opts())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("block 3 after the `num_prompts:` header of line 2"),
        "{err}"
    );
    // A seq_length the totals contradict is refused, not believed.
    let wrong = text.replace("seq_length: 80", "seq_length: 64");
    let err = import_text(&wrong, "s.log", &sweep_opts())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`seq_length: 64` header of line 3 disagrees"),
        "{err}"
    );
}

#[test]
fn large_inputs_import_and_record_in_one_pass() {
    // A 40,000-row LMDeploy CSV (once 48 s: each row's line was counted from the file's start),
    // 20,000 vLLM JSON lines (the same per object), and a baseline recorded from 20,000 models
    // (each record's model and scenario were looked up by a scan). Counts, not timings: a
    // quadratic pass makes this test take minutes instead of seconds.
    let opts = ImportOptions {
        model: Some("m".into()),
        ..Default::default()
    };
    let mut csv = String::from("batch,num_promts,RPS,RPM,FTL(ave)(s),FTL(min)(s),FTL(max)(s),50%(s),75%(s),95%(s),99%(s),throughput(out tok/s),throughput(total tok/s)\n");
    for i in 0..40_000 {
        csv.push_str(&format!(
            "{},2000,10.250,615.000,0.512,0.031,2.004,0.021,0.027,0.045,0.093,2254.110,4912.337\n",
            i % 256 + 1
        ));
    }
    let t = std::time::Instant::now();
    let got = import_text(&csv, "big.csv", &opts).unwrap();
    eprintln!("40,000-row CSV: {:?}", t.elapsed());
    assert_eq!(got.records.len(), 40_000);
    assert_eq!(got.records[39_999].source.as_deref(), Some("big.csv:40001"));

    let mut json = String::new();
    for i in 0..20_000 {
        json.push_str(&format!(
            r#"{{"backend": "vllm", "model_id": "model-{i}", "dataset_name": "random", "num_prompts": 10, "random_input_len": 4, "random_output_len": 4, "duration": 1.5, "completed": 10, "total_input_tokens": 40, "total_output_tokens": 40, "request_throughput": 6.6, "output_throughput": 26.6, "mean_ttft_ms": 5.0}}"#
        ));
        json.push('\n');
    }
    let t = std::time::Instant::now();
    let got = import_text(&json, "big.json", &ImportOptions::default()).unwrap();
    eprintln!("20,000 JSON lines: {:?}", t.elapsed());
    assert_eq!(got.records.len(), 20_000);
    assert_eq!(
        got.records[19_999].source.as_deref(),
        Some("big.json:20000")
    );

    let t = std::time::Instant::now();
    let (b, notes) = perfgate::baseline::Baseline::from_records(
        &got.records,
        perfgate::baseline::EngineInfo {
            name: "vllm".into(),
            ..Default::default()
        },
        Default::default(),
        None,
    )
    .unwrap();
    eprintln!("baseline of 20,000 models: {:?}", t.elapsed());
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(b.models.len(), 20_000);
    assert_eq!(b.run_count(), 20_000);
    assert_eq!(b.models[19_999].name, "model-19999");
    let t = std::time::Instant::now();
    let text = b.to_toml();
    eprintln!("its TOML written: {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let back = perfgate::baseline::Baseline::parse(&text, "b.toml").unwrap();
    eprintln!("and read: {:?}", t.elapsed());
    assert_eq!(back.models.len(), 20_000);
}

#[test]
fn a_log_with_one_huge_line_is_an_error_naming_its_place() {
    // Once an abort (exit 134) for a 1 GB line; 17 MiB shows the bound without the gigabyte.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("huge.log");
    let mut text = String::from("============ Serving Benchmark Result ============\n");
    text.push_str(&"x".repeat(17 << 20));
    text.push('\n');
    std::fs::write(&log, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
        .arg("import")
        .arg(&log)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("huge.log:2: a line longer than 16 MiB"),
        "{err}"
    );
    assert!(err.len() < 1000, "{} bytes of stderr", err.len());
}

#[test]
fn a_toml_error_quotes_a_huge_value_cut() {
    let huge = "x".repeat(20 << 20);
    let text = format!("schema_version = \"{huge}\"\n");
    let e = perfgate::baseline::Baseline::parse(&text, "b.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("b.toml:1:"), "{}", &e[..e.len().min(300)]);
    assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..300]);
    assert!(e.contains("bytes)"), "{e}");
    let e = perfgate::gate::GateConfig::parse(&format!("alpha = \"{huge}\"\n"), "g.toml")
        .unwrap_err()
        .to_string();
    assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..300]);
}

/// vLLM 0.33 without `--temperature` prints `WARNING: vllm bench serve no longer sets
/// temperature==0 …` between its command line and the block (and `Skipping endpoint ready
/// check.`: its readiness wait is 0 by default). The warning names the client but is not a
/// command line: the model still comes from the command.
#[test]
fn a_vllm_0_33_log_without_temperature_keeps_its_command_line() {
    let path = "tests/data/vllm/bench_serve_optional.log";
    let text = read(path).replacen(
        "Starting initial single prompt test run...\n",
        "WARNING: vllm bench serve no longer sets temperature==0 (greedy) in requests by default. \
         The default will be determined on the server side and can be model/API specific. \
         For the old behavior, include --temperature=0.\n\
         Starting initial single prompt test run...\nSkipping endpoint ready check.\n",
        1,
    );
    assert!(text.contains("no longer sets temperature"));
    let got = import_text(&text, "v033.log", &ImportOptions::default()).unwrap();
    assert_eq!(got.records.len(), 2);
    let a = &got.records[0];
    assert_eq!(a.model, "meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(a.scenario_id(), "random-in1024-out128-n200-c32");
    assert_eq!(a.seed, Some(7));
    assert_matches_print(&text, a);
}

/// `perfgate run --metadata tensor_parallel_size=1` (vLLM's perf CI passes it) writes the pair
/// also as the top-level string `"1"`, as vLLM does; importing that JSON reads the count.
#[test]
fn perfgate_result_json_with_metadata_counts_imports() {
    let cfg = perfgate_fakeserver::FakeConfig {
        ttft: std::time::Duration::from_millis(1),
        itl: std::time::Duration::from_millis(1),
        ..Default::default()
    };
    let fake = perfgate_fakeserver::FakeServer::start_in_thread(cfg).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tok = crate::support::word_tokenizer_json(dir.path());
    let bin = env!("CARGO_BIN_EXE_perfgate");
    let run = std::process::Command::new(bin)
        .args(["run", "--base-url", &fake.url(), "--model", "fake-model"])
        .arg("--tokenizer")
        .arg(&tok)
        .args(["--dataset-name", "random", "--random-input-len", "8"])
        .args(["--random-output-len", "4", "--num-prompts", "2"])
        .args(["--metadata", "tensor_parallel_size=1", "gpu=H100"])
        .args([
            "--save-result",
            "--result-filename",
            "r.json",
            "--no-progress",
        ])
        .arg("--result-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let saved = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    assert!(saved.contains("\"tensor_parallel_size\":\"1\""), "{saved}");
    let got = import_text(&saved, "r.json", &ImportOptions::default()).unwrap();
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(r.tensor_parallel_size, Some(1));
    assert_eq!(r.metadata["gpu"], "H100");
    assert_eq!(r.completed, 2);
    // The command too.
    let out = dir.path().join("r.jsonl");
    let st = std::process::Command::new(bin)
        .arg("import")
        .arg(dir.path().join("r.json"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert_eq!(
        perfgate::record::read_jsonl(&out).unwrap()[0].tensor_parallel_size,
        Some(1)
    );
}

const EDITED: &str = "tests/data/vllm/sweep_edited_by_hand.log";

/// A sweep log edited by hand (tests/data/vllm/sweep_edited_by_hand.log): a `num_prompt:N`
/// header before each block, a block with a line printed twice (the same value: read once), a
/// block with a line printed twice with another value, and a `num_prompts: 8, 16` header
/// followed by three blocks. Without `--keep-going` the file is refused at its first bad block;
/// with it, every good block is imported and each bad one is listed with its line and why.
#[test]
fn keep_going_imports_the_good_blocks_of_a_hand_edited_sweep_log() {
    let text = read(EDITED);
    let err = import_text(&text, EDITED, &sweep_opts()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{EDITED}:64: `Median TTFT (ms)` appears twice")),
        "{err}"
    );
    let opts = ImportOptions {
        keep_going: true,
        ..sweep_opts()
    };
    let got = import_text(&text, EDITED, &opts).unwrap();
    let counts: Vec<u64> = got.records.iter().map(|r| r.params.num_prompts).collect();
    assert_eq!(counts, [1, 2, 8, 16]);
    for r in &got.records {
        assert_matches_print(&text, r);
        assert_eq!(r.params.random_input_len, Some(80));
    }
    assert_eq!(got.records[1].stats["mean_ttft_ms"], 26.27);
    assert!(
        got.warnings
            .iter()
            .any(|w| w.contains(":39: `Mean TTFT (ms)` printed twice")),
        "{:?}",
        got.warnings
    );
    let skipped: Vec<String> = got.skipped.iter().map(|e| e.to_string()).collect();
    assert_eq!(skipped.len(), 2, "{skipped:#?}");
    assert!(
        skipped[0].starts_with(&format!(
            "{EDITED}:64: `Median TTFT (ms)` appears twice in one result block with different values (line 63: `32.90`, here: `99.99`)"
        )),
        "{skipped:#?}"
    );
    assert!(
        skipped[1].starts_with(&format!(
            "{EDITED}:121: block 3 after the `num_prompts:` header of line 76, which lists only 2 counts"
        )),
        "{skipped:#?}"
    );

    // The command: the good blocks written, the bad ones listed, exit 1; nothing readable: 2.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
            .arg("import")
            .args(args)
            .args([
                "--model",
                "meta-llama/Llama-3.1-8B",
                "--dataset-name",
                "random",
                "-o",
            ])
            .arg(&out)
            .output()
            .unwrap()
    };
    let st = run(&[EDITED, "--keep-going"]);
    let stderr = String::from_utf8_lossy(&st.stderr);
    assert_eq!(st.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("perfgate: skipped: {EDITED}:64: ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("perfgate: skipped: {EDITED}:121: ")),
        "{stderr}"
    );
    assert_eq!(perfgate::record::read_jsonl(&out).unwrap().len(), 4);
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "nothing here\n").unwrap();
    let st = run(&[empty.to_str().unwrap(), "--keep-going"]);
    let stderr = String::from_utf8_lossy(&st.stderr);
    assert_eq!(st.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no benchmark results found"), "{stderr}");
    // Every block good: exit 0, as without the flag.
    let st = run(&[SWEEP, "--keep-going"]);
    assert_eq!(
        st.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
}

/// Sweep headers as people write them: singular, `=` or `:`, spaces or commas, brackets.
#[test]
fn sweep_header_spellings() {
    let text = read(SWEEP);
    for header in [
        "num_prompt: 1, 2, 4, 8, 16, 32",
        "num-prompts = 1 2 4 8 16 32",
        "num_prompts: [1, 2, 4, 8, 16, 32]",
    ] {
        let t = text
            .replace("num_prompts: 1, 2, 4, 8, 16, 32", header)
            .replace("seq_length: 80", "seq_len=80");
        let got = import_text(&t, "s.log", &sweep_opts()).unwrap();
        let counts: Vec<u64> = got.records.iter().map(|r| r.params.num_prompts).collect();
        assert_eq!(counts, [1, 2, 4, 8, 16, 32], "{header}");
        assert!(got
            .records
            .iter()
            .all(|r| r.params.random_input_len == Some(80)));
    }
}
