//! Fitting where users already are: vLLM's `vllm bench serve` command lines run unchanged against
//! the fake server, the result JSON has the keys vLLM's comparison scripts read, completions and
//! man pages are current, every flag is described.

use std::path::Path;

use perfgate_fakeserver::FakeConfig;

use crate::support::*;

/// Published `vllm bench serve` command lines, in-scope for perfgate (text generation on the
/// completions or chat API with a local or synthetic dataset), with their source: vLLM 0.33's
/// benchmark CLI guide (`docs/benchmarking/cli.md`), its performance CI
/// (`run-performance-benchmarks.sh`), `benchmarks/auto_tune/auto_tune.sh`, vLLM's model recipes,
/// hardware vendors' guides and users' scripts. Prompt counts and lengths are made small; the
/// server (`$PORT`, or `127.0.0.1:$PORT` for a host), paths (`$SHAREGPT`, `$CUSTOM`,
/// `$SPECBENCH`, `$TRACE`, `$BURSTGPT`, `$TOKENIZER` and `$WORDS`, a custom file in that
/// tokenizer's words) and `$OUT` are filled in;
/// `vllm bench serve` becomes `perfgate run`; nothing else changes. Out of scope, and left out:
/// Hugging Face datasets (`--dataset-name hf`: downloads), multimodal and audio
/// (`random-mm`, `custom_image`, `custom_audio`, ShareGPT4V), the Responses API.
const VLLM_LINES: &[(&str, &str)] = &[
    (
        "docs: quick start, sharegpt",
        "vllm bench serve --backend vllm --model NousResearch/Hermes-3-Llama-3.1-8B \
         --endpoint /v1/completions --dataset-name sharegpt --dataset-path $SHAREGPT \
         --num-prompts 6 --port $PORT",
    ),
    (
        "docs: results visualization",
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
         --endpoint /v1/completions --dataset-name sharegpt --dataset-path $SHAREGPT \
         --num-prompts 4 --plot-timeline --timeline-itl-thresholds 2,5 --plot-dataset-stats \
         --save-result --result-dir $OUT --port $PORT",
    ),
    (
        "CI: perf benchmarks client command with --metadata and underscore spellings",
        "vllm bench serve --save-result --result-dir $OUT \
         --result-filename serving_llama8B_tp1_random_qps_inf.json --request-rate inf \
         --metadata tensor_parallel_size=1 --model meta-llama/Llama-3.1-8B-Instruct \
         --backend vllm --dataset_name random --random_input_len 24 --random_output_len 6 \
         --num_prompts 6 --ignore-eos --port $PORT",
    ),
    (
        "CI (cpu): sharegpt at a rate with a concurrency cap",
        "vllm bench serve --save-result --result-dir $OUT \
         --result-filename serving_llama8B_tp1_sharegpt_qps_1_concurrency_4.json \
         --request-rate 50 --max-concurrency 4 --metadata tensor_parallel_size=1 \
         --model meta-llama/Llama-3.1-8B-Instruct --backend vllm --dataset_name sharegpt \
         --dataset_path $SHAREGPT --num_prompts 6 --ignore-eos --port $PORT",
    ),
    (
        "docs: custom dataset",
        "vllm bench serve --port $PORT --save-result --save-detailed --backend vllm \
         --model meta-llama/Llama-3.1-8B-Instruct --endpoint /v1/completions \
         --dataset-name custom --dataset-path $CUSTOM --custom-skip-chat-template \
         --num-prompts 4 --max-concurrency 1 --temperature=0.3 --top-p=0.75 --result-dir $OUT",
    ),
    (
        "vLLM 0.33 docs: custom dataset, --skip-chat-template, --trust-remote-code",
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
         --endpoint /v1/completions --dataset-name custom --dataset-path $CUSTOM \
         --skip-chat-template --trust-remote-code --num-prompts 4 --max-concurrency 1 \
         --port $PORT",
    ),
    (
        "docs: sampling parameters",
        "vllm bench serve --backend vllm --model NousResearch/Hermes-3-Llama-3.1-8B \
         --endpoint /v1/completions --dataset-name sharegpt --dataset-path $SHAREGPT \
         --top-k 10 --top-p 0.9 --temperature 0.5 --num-prompts 4 --port $PORT",
    ),
    (
        "docs: prefix repetition",
        "vllm bench serve --backend openai --model meta-llama/Llama-3.1-8B-Instruct \
         --dataset-name prefix_repetition --num-prompts 6 --prefix-repetition-prefix-len 16 \
         --prefix-repetition-suffix-len 8 --prefix-repetition-num-prefixes 2 \
         --prefix-repetition-output-len 4 --port $PORT",
    ),
    (
        "docs: ramp-up",
        "vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random \
         --random-input-len 16 --random-output-len 4 --num-prompts 8 \
         --ramp-up-strategy linear --ramp-up-start-rps 50 --ramp-up-end-rps 400 \
         --host 127.0.0.1 --port $PORT",
    ),
    (
        "docs: spec bench, every category",
        "vllm bench serve --model meta-llama/Meta-Llama-3-8B-Instruct \
         --dataset-name spec_bench --dataset-path $SPECBENCH --num-prompts -1 --port $PORT",
    ),
    (
        "docs: spec bench, one category",
        "vllm bench serve --model meta-llama/Meta-Llama-3-8B-Instruct \
         --dataset-name spec_bench --dataset-path $SPECBENCH --num-prompts -1 \
         --spec-bench-category summarization --port $PORT",
    ),
    (
        "docs: timed trace replay",
        "vllm bench serve --model Qwen/Qwen3.5-2B --dataset-name=timed_trace --num-prompts 4 \
         --host 127.0.0.1 --port $PORT --dataset-path $TRACE --ignore-eos --self-timed \
         --timed-trace-chunk-hash-size 512 --timed-trace-sec-multiplier 0.001",
    ),
    (
        "auto_tune.sh: the request-rate inf probe",
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
         --dataset-name random --random-input-len 12 --random-output-len 4 \
         --random-prefix-len 4 --ignore-eos --disable-tqdm --request-rate inf \
         --percentile-metrics ttft,tpot,itl,e2el --goodput e2el:5000 --num-prompts 6 \
         --port $PORT",
    ),
    (
        "auto_tune.sh: the request-rate search",
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
         --dataset-name random --random-input-len 12 --random-output-len 4 \
         --random-prefix-len 4 --ignore-eos --disable-tqdm --request-rate 40 \
         --percentile-metrics ttft,tpot,itl,e2el --goodput e2el:5000 --num-prompts 6 \
         --port $PORT",
    ),
    (
        "auto_tune (user variant): concurrency sweep step",
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
         --dataset-name random --random-input-len 16 --random-output-len 4 --ignore-eos \
         --disable-tqdm --request-rate inf --max-concurrency 2 \
         --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95,99 \
         --goodput e2el:5000 --num-prompts 6 --random-prefix-len 4 --port $PORT",
    ),
    (
        "recipe: Qwen3-Next, prefixes of flags, no --num-prompts",
        "vllm bench serve --backend vllm --model Qwen/Qwen3-Next-80B-A3B-Instruct \
         --served-model-name qwen3-next --endpoint /v1/completions --dataset-name random \
         --random-input 16 --random-output 2 --max-concurrency 64 --port $PORT",
    ),
    (
        "recipe: Gemma 4, prompt-heavy",
        "vllm bench serve --model google/gemma-4-31B-it --dataset-name random \
         --random-input-len 32 --random-output-len 4 --request-rate 10000 --num-prompts 16 \
         --ignore-eos --port $PORT",
    ),
    (
        "ROCm guide: a small serving benchmark",
        "vllm bench serve --backend vllm --base-url http://127.0.0.1:$PORT \
         --model Qwen/Qwen3.8-27B-FP8 --dataset-name random --num-prompts 8 \
         --random-input-len 16 --random-output-len 4 --ignore-eos --request-rate inf \
         --max-concurrency 8 --seed 42",
    ),
    (
        "profiling guide: fixed input, batch 1",
        "vllm bench serve --backend vllm --base-url http://127.0.0.1:$PORT \
         --model cpu-selftime-test --dataset-name random --random-input-len 40 \
         --random-output-len 4 --random-range-ratio 0 --num-prompts 3 --max-concurrency 1 \
         --request-rate inf --ignore-eos --temperature 0",
    ),
    (
        "Ascend guide: argparse prefix --random-input, save to a folder",
        "vllm bench serve --model your_model_path --served-model-name qwen3 --port $PORT \
         --dataset-name random --random-input 16 --num-prompts 4 --request-rate 100 \
         --save-result --result-dir $OUT",
    ),
    (
        "NPU script: seed, burstiness, tokenizer path",
        "vllm bench serve --seed 42 --burstiness 1.0 --backend vllm --host 127.0.0.1 \
         --port $PORT --endpoint /v1/completions --model MODEL_NAME --tokenizer $TOKENIZER \
         --dataset-name random --num-prompts 4 --random-input-len 16 --random-output-len 4 \
         --ignore-eos",
    ),
    (
        "user script: chat smoke test on a custom file, no oversampling",
        "vllm bench serve --backend openai-chat --host 127.0.0.1 --port $PORT \
         --endpoint /v1/chat/completions --model Qwen3.5-27B --tokenizer $TOKENIZER \
         --dataset-name custom --dataset-path $WORDS --num-prompts 5 --no-oversample \
         --max-concurrency 1 --request-rate 100 --percentile-metrics ttft,tpot,itl,e2el \
         --metric-percentiles 50,95,99 --save-result --result-dir $OUT \
         --result-filename result.json",
    ),
    (
        "user script: SLA sweep, random, appended results",
        "vllm bench serve --model Qwen3-14B --host 127.0.0.1 --port $PORT --ignore-eos \
         --dataset-name random --num-prompt 4 --append-result --save-result \
         --result-filename result_sla.jsonl --max-concurrency 32 --random-input-len 16 \
         --random-output-len 4 --result-dir $OUT",
    ),
    (
        "user script: SLA sweep, BurstGPT",
        "vllm bench serve --model Qwen3-14B --host 127.0.0.1 --port $PORT --ignore-eos \
         --dataset-name burstgpt --num-prompt 4 --append-result --save-result \
         --result-filename result_sla.jsonl --max-concurrency 32 --dataset-path $BURSTGPT \
         --result-dir $OUT",
    ),
    (
        "user script: DeepSeek-R1 MXFP4 client",
        "vllm bench serve --host 127.0.0.1 --port $PORT \
         --model /data/pretrained-models/amd/DeepSeek-R1-MXFP4-Preview --dataset-name random \
         --random-input-len 24 --random-output-len 4 --max-concurrency 4 --num-prompts 8 \
         --percentile-metrics ttft,tpot,itl,e2el --ignore-eos --seed 123",
    ),
    (
        "docs: random with a shared prefix",
        "vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random \
         --random-prefix-len 8 --random-input-len 16 --random-output-len 4 --num-prompts 4 \
         --request-rate 100 --burstiness 0.5 --seed 42 --disable-tqdm --port $PORT",
    ),
    (
        "docs: profiling a run",
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct \
         --dataset-name sharegpt --dataset-path $SHAREGPT --profile --num-prompts 2 \
         --port $PORT",
    ),
    (
        "Gemma 4 guide: one long request",
        "vllm bench serve --dataset-name random --random-input-len 64 --random-output-len 6 \
         --num-prompts 1 --request-rate inf --port $PORT",
    ),
    (
        "Gemma 4 guide: QPS sweep step",
        "vllm bench serve --dataset-name random --random-input-len 64 --random-output-len 6 \
         --num-prompts 4 --request-rate 50 --seed 42 --port $PORT",
    ),
    (
        "disaggregated-serving script: one request at a rate",
        "vllm bench serve --port $PORT --seed 1764000000 --model Qwen/Qwen3-0.6B \
         --dataset-name random --random-input-len 40 --random-output-len 10 --num-prompts 1 \
         --request-rate 0.5",
    ),
    (
        "user script: sharegpt warm-up at a rate",
        "vllm bench serve --backend vllm --base-url http://127.0.0.1:$PORT \
         --model Qwen/Qwen3-8B --dataset-name sharegpt --dataset-path $SHAREGPT \
         --num-prompts 6 --request-rate 80",
    ),
    (
        "benchmark harness: percentiles, burstiness, named result",
        "vllm bench serve --backend openai --base-url http://127.0.0.1:$PORT \
         --dataset-name random --model Qwen/Qwen3-8B --seed 12345 --num-prompts 4 \
         --save-result --metric-percentiles \"25,75,99\" \
         --percentile-metrics \"ttft,tpot,itl,e2el\" --result-dir $OUT \
         --result-filename harness.json --burstiness 1.0",
    ),
];

/// perfgate's own lines, one per flag of vLLM 0.33 the published lines above leave out (chat,
/// the sampling flags, extra body and headers, 0.33's new spellings, no `--model`): run the
/// same way, counted apart from the published table.
const FLAG_LINES: &[(&str, &str)] = &[
    (
        "chat backend, sampling, extra body, headers, metadata, percentiles, goodput",
        "vllm bench serve --backend openai-chat --endpoint /v1/chat/completions \
         --base-url http://127.0.0.1:$PORT --model fake-model --dataset-name random \
         --random-input-len 16 --random-output-len 4 --num-prompts 3 --temperature 0.7 \
         --top-k -1 --min-p 0.1 --frequency-penalty -0.5 --presence-penalty 0.5 \
         --repetition-penalty 1.1 \
         --extra-body '{\"chat_template_kwargs\": {\"enable_thinking\": false}}' \
         --header X-Trace=abc X-Team=perf --metadata gpu=H100 run=nightly \
         --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 25,50,99 \
         --goodput ttft:5000 tpot:1000 --save-result --result-dir $OUT",
    ),
    (
        "vLLM 0.33: --input-len, --output-len, --label, --append-result",
        "vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --input-len 16 \
         --output-len 5 --num-prompts 3 --label nightly --append-result --result-dir $OUT \
         --port $PORT",
    ),
    (
        "vLLM 0.33: argparse prefixes, no --temperature, a request id prefix",
        "vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random \
         --random-input 16 --random-output 3 --num-prompt 2 --request-id-prefix run42- \
         --max-concurrency 1 --save-result --result-dir $OUT --port $PORT",
    ),
    (
        "no --model: the first model of /v1/models",
        "vllm bench serve --dataset-name random --random-input-len 16 --random-output-len 4 \
         --num-prompts 2 --ready-check-timeout-sec 5 --port $PORT --save-result \
         --result-filename nomodel.json --result-dir $OUT",
    ),
];

/// The lines of [`VLLM_LINES`] perfgate does not yet run unchanged, each with why. The table
/// test fails when one of them starts to pass (move it out of here) or another line fails.
const NOT_YET: &[(&str, &str)] = &[(
    "docs: profiling a run",
    "--profile needs the server's profiler endpoints",
)];

/// The files the lines name, written into `dir`: `(placeholder, path)` pairs.
fn write_fixtures(dir: &Path) -> Vec<(&'static str, String)> {
    let conv = |i: usize| {
        serde_json::json!({
            "id": format!("c{i}"),
            "conversations": [
                {"from": "human", "value": "the quick brown fox jumps over the lazy dog again"},
                {"from": "gpt", "value": "a cat and a dog sat on the mat and slept all day"},
            ]
        })
    };
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let all: Vec<_> = (0..12).map(conv).collect();
    let sharegpt = write("sharegpt.json", serde_json::to_string(&all).unwrap());
    let custom = write(
        "custom.jsonl",
        (0..4)
            .map(|i| format!("{{\"prompt\": \"tell me about the quick fox number {i}\"}}\n"))
            .collect(),
    );
    // Spec-Bench's question.jsonl: one question per line, its turns and category.
    let specbench = write(
        "question.jsonl",
        ["writing", "summarization", "qa", "summarization", "math"]
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let q = serde_json::json!({"question_id": i + 1, "category": c,
                    "turns": [format!("question {i} about {c}: say something short")]});
                format!("{q}\n")
            })
            .collect(),
    );
    // A Mooncake-format trace (milliseconds).
    let trace = write(
        "conversation_trace.jsonl",
        (0..6)
            .map(|i| {
                format!(
                    "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 3, \"hash_ids\": [{i}]}}\n",
                    i * 20,
                    12 + i
                )
            })
            .collect(),
    );
    // BurstGPT's CSV (the release's columns).
    let burstgpt = write(
        "BurstGPT_without_fails_2.csv",
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
         5,ChatGPT,20,4,24,Conversation log\n\
         45,GPT-4,30,6,36,Conversation log\n\
         118,ChatGPT,14,3,17,API log\n\
         160,ChatGPT,25,5,30,Conversation log\n\
         200,ChatGPT,18,2,20,Conversation log\n"
            .to_string(),
    );
    // A custom file in the words of the tokenizer below.
    let words = write(
        "words.jsonl",
        [
            "alpha beta",
            "gamma delta eps",
            "zeta eta tok alpha",
            "beta gamma",
        ]
        .iter()
        .map(|p| format!("{{\"prompt\": \"{p}\"}}\n"))
        .collect(),
    );
    let tokenizer = word_tokenizer_json(dir).display().to_string();
    vec![
        ("$SHAREGPT", sharegpt),
        ("$CUSTOM", custom),
        ("$WORDS", words),
        ("$SPECBENCH", specbench),
        ("$TRACE", trace),
        ("$BURSTGPT", burstgpt),
        ("$TOKENIZER", tokenizer),
    ]
}

fn words(line: &str, port: u16, out: &Path, files: &[(&str, String)]) -> Vec<String> {
    let mut line = line
        .replace("$PORT", &port.to_string())
        .replace("$OUT", &out.display().to_string());
    for (k, v) in files {
        line = line.replace(k, v);
    }
    let mut w = shell_words::split(&line).unwrap();
    assert_eq!(&w[..3], ["vllm", "bench", "serve"], "{line}");
    w.splice(..3, ["run".to_string()]);
    w
}

#[test]
fn vllm_command_lines_run_unchanged() {
    let server = fake(FakeConfig {
        ttft: ms(2),
        itl: ms(1),
        ..Default::default()
    });
    let port: u16 = server.url().rsplit(':').next().unwrap().parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = write_fixtures(dir.path());
    let mut failed = Vec::new();
    for (what, line) in VLLM_LINES.iter().chain(FLAG_LINES) {
        let out_dir = dir
            .path()
            .join(what.replace([' ', ':', ',', '-', '(', ')'], "_"));
        let args = words(line, port, &out_dir, &files);
        let out = perfgate().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            let last = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            failed.push((*what, last.to_string()));
            continue;
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("Serving Benchmark Result"),
            "{what}: {stdout}"
        );
        assert!(
            !stdout.contains("Failed requests:                         1"),
            "{what}"
        );

        let saved: Vec<serde_json::Value> = std::fs::read_dir(&out_dir)
            .map(|d| {
                d.map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "json"))
                    .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
                    .collect()
            })
            .unwrap_or_default();
        for v in &saved {
            assert_vllm_script_keys(what, v);
        }
        match *what {
            w if w.starts_with("CI:") => {
                assert_eq!(saved.len(), 1, "{what}");
                assert_eq!(saved[0]["tensor_parallel_size"], "1", "{what}");
                assert_eq!(saved[0]["metadata"]["tensor_parallel_size"], "1");
                assert_eq!(saved[0]["num_prompts"], 6);
                assert_eq!(saved[0]["random_input_len"], 24);
                assert!(out_dir
                    .join("serving_llama8B_tp1_random_qps_inf.json")
                    .exists());
            }
            "docs: custom dataset" => {
                let v = &saved[0];
                assert_eq!(v["dataset_name"], "custom");
                assert_eq!(v["custom_output_len"], 256);
                assert_eq!(v["max_concurrency"], 1);
                // --save-detailed: vLLM's per-request list, one "" per success.
                assert_eq!(v["errors"], serde_json::json!(["", "", "", ""]));
                // vLLM 0.33's per-request latencies and client queue times, in seconds.
                let secs = |k: &str| -> Vec<f64> {
                    let a = v[k].as_array().unwrap_or_else(|| panic!("{k}: {v}"));
                    a.iter().map(|x| x.as_f64().unwrap()).collect()
                };
                let (lat, queue) = (secs("latencies"), secs("queue_times"));
                assert!(lat.len() == 4 && lat.iter().all(|l| *l > 0.0), "{lat:?}");
                assert!(
                    queue.len() == 4 && queue.iter().all(|q| *q >= 0.0),
                    "{queue:?}"
                );
                let body = server.last_request().unwrap().body;
                assert_eq!(body["temperature"], 0.3);
                assert_eq!(body["top_p"], 0.75);
                assert!(body["prompt"]
                    .as_str()
                    .unwrap()
                    .starts_with("tell me about"));
            }
            "docs: prefix repetition" => {
                assert!(err.contains("2 shared prefixes of 16 tokens"), "{err}");
                let body = server.last_request().unwrap().body;
                assert_eq!(body["max_tokens"], 4);
            }
            w if w.starts_with("chat backend") => {
                let seen = server.last_request().unwrap();
                assert_eq!(seen.path, "/v1/chat/completions");
                let b = &seen.body;
                assert_eq!(b["temperature"], 0.7);
                assert_eq!(b["top_k"], -1);
                assert_eq!(b["min_p"], 0.1);
                assert_eq!(b["frequency_penalty"], -0.5);
                assert_eq!(b["presence_penalty"], 0.5);
                assert_eq!(b["repetition_penalty"], 1.1);
                assert_eq!(b["chat_template_kwargs"]["enable_thinking"], false);
                let header = |n: &str| {
                    seen.headers
                        .iter()
                        .find(|(k, _)| k == n)
                        .map(|(_, v)| v.clone())
                };
                assert_eq!(header("x-trace").as_deref(), Some("abc"));
                assert_eq!(header("x-team").as_deref(), Some("perf"));
                let v = &saved[0];
                assert_eq!(v["gpu"], "H100");
                assert_eq!(v["run"], "nightly");
                assert_eq!(v["metadata"]["gpu"], "H100");
                assert_eq!(v["backend"], "openai-chat");
                assert!(v["p25_e2el_ms"].is_number(), "{v}");
                assert!(v["request_goodput"].is_number(), "{v}");
                // The record reads back, the echoed metadata keys without a warning.
                let text = serde_json::to_string(v).unwrap() + "\n";
                let back = perfgate::record::parse_jsonl_with_warnings(&text, "r.json").unwrap();
                assert_eq!(back.records[0].metadata["run"], "nightly");
                // The per-request fields of --save-detailed are not record keys.
                assert!(back.warnings.is_empty(), "{:?}", back.warnings);
            }
            w if w.starts_with("vLLM 0.33 docs: custom") => {
                assert!(err.contains("--trust-remote-code ignored"), "{err}");
                let body = server.last_request().unwrap().body;
                assert!(body["prompt"]
                    .as_str()
                    .unwrap()
                    .starts_with("tell me about"));
            }
            w if w.starts_with("vLLM 0.33: --input-len") => {
                let v = &saved[0];
                assert_eq!(
                    (&v["random_input_len"], &v["random_output_len"]),
                    (&16.into(), &5.into())
                );
                assert_eq!(v["label"], "nightly");
                assert_eq!(v["endpoint_type"], "openai");
                assert!(v.get("request_goodput").is_some_and(|g| g.is_null()), "{v}");
                let name = std::fs::read_dir(&out_dir)
                    .unwrap()
                    .next()
                    .unwrap()
                    .unwrap();
                let name = name.file_name().into_string().unwrap();
                assert!(
                    name.starts_with("nightly-infqps-Llama-3.1-8B-Instruct-"),
                    "{name}"
                );
                assert_eq!(server.last_request().unwrap().body["max_tokens"], 5);
            }
            w if w.starts_with("vLLM 0.33: argparse") => {
                // One at a time, so the last request the server saw is the second one.
                let seen = server.last_request().unwrap();
                assert_eq!(seen.body["max_tokens"], 3);
                assert!(seen.body.get("temperature").is_none(), "{}", seen.body);
                let id = seen.headers.iter().find(|(k, _)| k == "x-request-id");
                assert_eq!(
                    id.map(|x| x.1.as_str()),
                    Some("run42-1"),
                    "{:?}",
                    seen.headers
                );
                assert_eq!(saved[0]["num_prompts"], 2);
                assert_eq!(saved[0]["random_input_len"], 16);
            }
            w if w.starts_with("no --model") => {
                assert!(err.contains("using `fake-model`"), "{err}");
                assert_eq!(saved[0]["model_id"], "fake-model");
            }
            "docs: spec bench, every category" => {
                assert!(err.contains("spec_bench: 5 questions"), "{err}");
                assert_eq!(server.last_request().unwrap().body["max_tokens"], 256);
            }
            "docs: spec bench, one category" => {
                assert!(
                    err.contains("2 questions of category `summarization`"),
                    "{err}"
                );
                let prompt = server.last_request().unwrap().body["prompt"].clone();
                assert!(
                    prompt.as_str().unwrap().contains("about summarization"),
                    "{prompt}"
                );
            }
            "docs: timed trace replay" => {
                assert!(err.contains("trace: 4 requests over 0.060 s"), "{err}");
                assert!(
                    err.contains("--timed-trace-chunk-hash-size ignored"),
                    "{err}"
                );
                assert_eq!(server.last_request().unwrap().body["max_tokens"], 3);
            }
            w if w.starts_with("user script: chat smoke test") => {
                assert!(
                    err.contains("running those 4 (--no-oversample) instead of 5"),
                    "{err}"
                );
                assert_eq!(saved[0]["completed"], 4, "{what}");
            }
            "user script: SLA sweep, BurstGPT" => {
                assert!(err.contains("burstgpt: 1 GPT-4 rows"), "{err}");
                assert!(err.contains("repeated them in order to reach 4"), "{err}");
                assert_eq!(server.last_request().unwrap().body["max_tokens"], 6);
            }
            "docs: ramp-up" => {
                assert_eq!(server.last_request().unwrap().body["max_tokens"], 4);
            }
            _ => {}
        }
    }
    let ran = VLLM_LINES.len()
        - failed
            .iter()
            .filter(|(w, _)| VLLM_LINES.iter().any(|l| l.0 == *w))
            .count();
    eprintln!(
        "published vLLM command lines run unchanged: {ran} of {}",
        VLLM_LINES.len()
    );
    for (what, why) in &failed {
        eprintln!("  not run: {what}: {why}");
    }
    let expected: Vec<&str> = NOT_YET.iter().map(|n| n.0).collect();
    let got: Vec<&str> = failed.iter().map(|f| f.0).collect();
    assert_eq!(
        got, expected,
        "lines that fail, against NOT_YET: {failed:#?}"
    );
    // The bar: at least 30 of the 32 published, in-scope lines run unchanged.
    assert!(ran >= 30, "{ran} of {}", VLLM_LINES.len());
}

/// The keys vLLM's `convert-results-json-to-markdown.py` takes from a serving result (its
/// `serving_column_mapping`, less what comes from the `.commands` file) and that
/// `compare-json-results.py` then compares; `max_concurrency` must be present even when unset.
fn assert_vllm_script_keys(what: &str, v: &serde_json::Value) {
    for key in [
        "date",
        "model_id",
        "completed",
        "request_throughput",
        "total_token_throughput",
        "output_throughput",
        "total_input_tokens",
        "total_output_tokens",
        "mean_ttft_ms",
        "median_ttft_ms",
        "p99_ttft_ms",
        "std_ttft_ms",
        "mean_tpot_ms",
        "median_tpot_ms",
        "p99_tpot_ms",
        "std_tpot_ms",
        "mean_itl_ms",
        "median_itl_ms",
        "p99_itl_ms",
        "std_itl_ms",
    ] {
        assert!(
            v.get(key).is_some_and(|x| !x.is_null()),
            "{what}: `{key}` missing in {v}"
        );
    }
    assert!(v.get("max_concurrency").is_some(), "{what}: {v}");
    assert!(
        v.get("errors").is_none_or(|e| e.is_array()),
        "{what}: `errors` must be vLLM's list: {v}"
    );
}

#[test]
fn unsupported_endpoints_and_bad_pairs_are_refused_up_front() {
    for (args, want) in [
        (
            vec!["run", "--model", "m", "--endpoint", "/v1/responses"],
            "/v1/completions, /v1/chat/completions",
        ),
        (
            vec!["run", "--model", "m", "--metadata", "novalue"],
            "--metadata `novalue`: expected KEY=VALUE",
        ),
        (
            vec!["run", "--model", "m", "--extra-body", "[1]"],
            "--extra-body must be a JSON object",
        ),
        (
            vec!["run", "--model", "m", "--header", "Bad Name=x"],
            "is not a valid header name",
        ),
        (
            vec!["run", "--ramp-up-strategy", "linear"],
            "--ramp-up-start-rps",
        ),
    ] {
        let out = perfgate().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn completions_and_man_pages_are_current() {
    let stale =
        "run `perfgate completions --dir contrib/completions && perfgate man --dir contrib/man`";
    for (shell, name) in perfgate::cli::COMPLETION_FILES {
        let committed = std::fs::read(Path::new("contrib/completions").join(name)).unwrap();
        assert!(
            committed == perfgate::cli::completions(shell),
            "{name} is stale: {stale}"
        );
    }
    let pages = perfgate::cli::man_pages();
    assert!(pages.len() >= 8);
    for (name, page) in &pages {
        let committed = std::fs::read(Path::new("contrib/man").join(name))
            .unwrap_or_else(|e| panic!("contrib/man/{name}: {e}: {stale}"));
        assert!(committed == *page, "{name} is stale: {stale}");
    }
    let main = String::from_utf8(pages[0].1.clone()).unwrap();
    assert!(main.contains(".TH perfgate 1"), "{main}");
    assert!(main.contains("Exit codes"), "{main}");
    let bash = String::from_utf8(perfgate::cli::completions(clap_complete::Shell::Bash)).unwrap();
    assert!(bash.contains("--ramp-up-strategy") && bash.contains("prefix_repetition"));
}

#[test]
fn help_shows_exit_codes_and_every_flag_is_described() {
    let out = perfgate().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for line in [
        "Exit codes:",
        "0  pass",
        "1  regression",
        "2  usage",
        "3  engine",
    ] {
        assert!(help.contains(line), "{help}");
    }
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path} --{id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut missing = Vec::new();
    walk(
        &<perfgate::cli::Cli as clap::CommandFactory>::command(),
        "perfgate",
        &mut missing,
    );
    assert!(
        missing.is_empty(),
        "flags without a description: {missing:#?}"
    );
}

#[test]
fn underscore_spellings_and_negative_numbers_parse() {
    let cli = perfgate::cli::parse_from([
        "perfgate",
        "run",
        "--dataset_name=prefix_repetition",
        "--num_prompts",
        "5",
        "--top-k",
        "-1",
        "--frequency_penalty",
        "-0.5",
        "--metadata",
        "a=1",
        "b=x_y",
    ])
    .unwrap();
    let perfgate::cli::Command::Run(a) = cli.command else {
        panic!("not run");
    };
    assert_eq!(a.dataset_name.as_str(), "prefix_repetition");
    assert_eq!(a.num_prompts, 5);
    assert_eq!(a.top_k, Some(-1));
    assert_eq!(a.frequency_penalty, Some(-0.5));
    assert_eq!(a.metadata, ["a=1", "b=x_y"]);
    assert!(a.model.is_none());
}

#[test]
fn a_missing_file_is_reported_once() {
    let out = perfgate()
        .args([
            "baseline",
            "record",
            "/nonexistent/r.jsonl",
            "-o",
            "/nonexistent/b.toml",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    assert!(err.contains("/nonexistent/r.jsonl"), "{err}");
}

/// vLLM 0.33's defaults and conveniences: `--append-result` adds a line per run, a request id
/// `bench-XXXXXXXX-N` by default, one line saying what the readiness check waits for, progress
/// lines when stderr is not a terminal.
#[test]
fn append_result_request_ids_readiness_and_progress_lines() {
    let server = fake(FakeConfig {
        ttft: ms(2),
        itl: ms(1),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all.json");
    let run = || {
        let out = perfgate()
            .args(["run", "--base-url", &server.url(), "--model", "fake-model"])
            .args([
                "--input-len",
                "8",
                "--output-len",
                "2",
                "--num-prompts",
                "2",
            ])
            .args(["--append-result", "--result-filename"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run();
    run();
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    let got = perfgate::import::import_text(&text, "all.json", &Default::default()).unwrap();
    assert_eq!(got.records.len(), 2);
    assert!(
        err.contains(&format!(
            "waiting up to 600 s for {}/v1/models",
            server.url()
        )),
        "{err}"
    );
    // stderr is a pipe here: progress comes as lines, the last one when the run ends.
    assert!(
        err.contains("perfgate: 2/2 requests done (0 failed)"),
        "{err}"
    );
    let seen = server.last_request().unwrap();
    let id = seen
        .headers
        .iter()
        .find(|(k, _)| k == "x-request-id")
        .unwrap();
    assert!(
        id.1.starts_with("bench-") && id.1.len() == "bench-12345678-1".len(),
        "{}",
        id.1
    );
}
