//! Flags of `perfgate run` (named and meant as in `vllm bench serve`) and of the hidden
//! `perfgate fake-server`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::num;

use crate::client::load;
use crate::client::ClientConfig;
use crate::dataset::{defaults, DatasetName};
use crate::metrics::{self, Metric, MetricsConfig};
use crate::record::{Endpoint, RampUpStrategy, RangeConvention, RequestRate, ScenarioParams};
use crate::runner::single::{Extras, ResultName};
use crate::runner::RunSettings;
use crate::tokenizer::Tokenize;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Server base URL (default: http://HOST:PORT).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Server host, when --base-url is not given.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Server port, when --base-url is not given.
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// API endpoint: /v1/completions or /v1/chat/completions (the streaming APIs perfgate measures).
    #[arg(long, default_value = "/v1/completions")]
    pub endpoint: String,
    /// Backend label recorded in the result (vLLM's `backend`).
    #[arg(long, default_value = "openai")]
    pub backend: String,
    /// Model name (recorded as `model` / `model_id`); default: the first model the server lists
    /// at /v1/models.
    #[arg(long)]
    pub model: Option<String>,
    /// The `model` field sent to the server, when it differs from --model.
    #[arg(long)]
    pub served_model_name: Option<String>,
    /// A tokenizer.json file or a directory holding one; or `server` to use the server's
    /// /tokenize and /detokenize. Defaults to --model.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Dataset: random, sharegpt, fixed, jsonl, prefix_repetition or custom.
    #[arg(long, value_enum, default_value = "random")]
    pub dataset_name: DatasetName,
    /// Dataset file (sharegpt JSON; jsonl of {prompt, output_len}; custom: jsonl of {prompt}).
    #[arg(long)]
    pub dataset_path: Option<PathBuf>,
    /// Number of prompts to send (`-1`: every prompt of a custom or spec_bench file, as vLLM).
    #[arg(long, allow_negative_numbers = true, default_value_t = defaults::NUM_PROMPTS, value_parser = num::prompts)]
    pub num_prompts: usize,
    /// Time budget in seconds: issue requests, cycling through the --num-prompts prompts, until
    /// it has passed, then let those in flight finish (perfgate's own; vLLM has none). Needs
    /// --max-concurrency or a finite --request-rate.
    #[arg(long, value_parser = num::secs)]
    pub duration_s: Option<f64>,
    /// Prompt length in tokens (random, fixed).
    #[arg(long, default_value_t = defaults::RANDOM_INPUT_LEN, value_parser = num::input_len)]
    pub random_input_len: u32,
    /// Output length in tokens (random, fixed).
    #[arg(long, default_value_t = defaults::RANDOM_OUTPUT_LEN, value_parser = num::output_len)]
    pub random_output_len: u32,
    /// Length spread; read per --range-convention.
    #[arg(long, default_value_t = 0.0, value_parser = num::range_ratio)]
    pub random_range_ratio: f64,
    /// Tokens of a shared random prefix before every random prompt (added to its length).
    #[arg(long, default_value_t = 0, value_parser = num::len_or_zero)]
    pub random_prefix_len: u32,
    /// vllm: lengths in [L(1−r), L(1+r)]; sglang (and LMDeploy): [max(rL, 1), L].
    #[arg(long, value_enum, default_value = "vllm")]
    pub range_convention: RangeConvention,
    /// Output length for sharegpt prompts (default: the reference answer's length).
    #[arg(long, value_parser = num::output_len)]
    pub sharegpt_output_len: Option<u32>,
    /// prefix_repetition: tokens of each shared prefix.
    #[arg(long, default_value_t = defaults::PREFIX_REPETITION_PREFIX_LEN, value_parser = num::len_or_zero)]
    pub prefix_repetition_prefix_len: u32,
    /// prefix_repetition: tokens of each prompt's unique suffix.
    #[arg(long, default_value_t = defaults::PREFIX_REPETITION_SUFFIX_LEN, value_parser = num::len_or_zero)]
    pub prefix_repetition_suffix_len: u32,
    /// prefix_repetition: how many distinct prefixes the prompts share.
    #[arg(long, default_value_t = defaults::PREFIX_REPETITION_NUM_PREFIXES, value_parser = num::prefixes)]
    pub prefix_repetition_num_prefixes: u32,
    /// prefix_repetition: output length in tokens.
    #[arg(long, default_value_t = defaults::PREFIX_REPETITION_OUTPUT_LEN, value_parser = num::output_len)]
    pub prefix_repetition_output_len: u32,
    /// custom: output length in tokens of every prompt.
    #[arg(long, default_value_t = defaults::CUSTOM_OUTPUT_LEN, value_parser = num::output_len)]
    pub custom_output_len: u32,
    /// custom: accepted for vLLM compatibility (vLLM 0.33 spells it `--skip-chat-template`);
    /// perfgate never applies a chat template client-side (the chat endpoint applies the
    /// server's).
    #[arg(long, alias = "skip-chat-template")]
    pub custom_skip_chat_template: bool,
    /// spec_bench: output length in tokens of every prompt.
    #[arg(long, default_value_t = defaults::SPEC_BENCH_OUTPUT_LEN, value_parser = num::output_len)]
    pub spec_bench_output_len: u32,
    /// spec_bench: read only the questions of this category (e.g. `summarization`).
    #[arg(long, value_name = "CATEGORY")]
    pub spec_bench_category: Option<String>,
    /// custom, jsonl, sharegpt, spec_bench, burstgpt: when the file has fewer prompts than
    /// --num-prompts, run those instead of repeating them.
    #[arg(long)]
    pub no_oversample: bool,
    /// timed_trace: seconds per unit of the trace's timestamps (vLLM's default 1; Mooncake's
    /// traces are in milliseconds: 0.001).
    #[arg(long, default_value_t = 1.0, value_parser = num::time_unit)]
    pub timed_trace_sec_multiplier: f64,
    /// timed_trace: vLLM's tokens per hash id, for rebuilding shared prefixes. Accepted and
    /// ignored (with a note): perfgate sends each request a prompt of its own.
    #[arg(long, value_name = "TOKENS")]
    pub timed_trace_chunk_hash_size: Option<u64>,
    /// timed_trace: vLLM's switch for sending at the trace's own times. Accepted: perfgate
    /// always sends a trace's requests at their times.
    #[arg(long)]
    pub self_timed: bool,
    /// Requests per second (`inf`: all at once; otherwise gamma/Poisson arrivals).
    #[arg(long, default_value = "inf", value_parser = num::rate)]
    pub request_rate: RequestRate,
    /// Gamma shape of the arrival gaps (1 = Poisson; lower is burstier).
    #[arg(long, default_value_t = 1.0, value_parser = num::burstiness)]
    pub burstiness: f64,
    /// Ramp the request rate up over the run from --ramp-up-start-rps to --ramp-up-end-rps
    /// (instead of --request-rate).
    #[arg(long, value_enum, requires_all = ["ramp_up_start_rps", "ramp_up_end_rps"])]
    pub ramp_up_strategy: Option<RampUpStrategy>,
    /// Request rate of the first request under --ramp-up-strategy.
    #[arg(long, requires = "ramp_up_strategy", value_parser = num::rps)]
    pub ramp_up_start_rps: Option<f64>,
    /// Request rate of the last request under --ramp-up-strategy.
    #[arg(long, requires = "ramp_up_strategy", value_parser = num::rps)]
    pub ramp_up_end_rps: Option<f64>,
    /// At most this many requests in flight.
    #[arg(long, value_parser = num::concurrency)]
    pub max_concurrency: Option<u64>,
    /// Requests sent and discarded before the measured run.
    #[arg(long, default_value_t = 0, value_parser = num::warmups)]
    pub num_warmups: usize,
    /// Seed of the dataset and the arrival schedule.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Ask the server to ignore EOS (default: on for random and fixed prompts, off otherwise).
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub ignore_eos: Option<bool>,
    /// Sampling temperature sent with every request (default: not sent, the server decides, as
    /// vLLM 0.33's client; `--temperature 0` for greedy).
    #[arg(long, value_parser = num::temperature)]
    pub temperature: Option<f64>,
    /// Sampling `top_p` sent with every request (default: not sent).
    #[arg(long)]
    pub top_p: Option<f64>,
    /// Sampling `top_k` sent with every request (default: not sent).
    #[arg(long)]
    pub top_k: Option<i64>,
    /// Sampling `min_p` sent with every request (default: not sent).
    #[arg(long)]
    pub min_p: Option<f64>,
    /// `frequency_penalty` sent with every request (default: not sent).
    #[arg(long)]
    pub frequency_penalty: Option<f64>,
    /// `presence_penalty` sent with every request (default: not sent).
    #[arg(long)]
    pub presence_penalty: Option<f64>,
    /// `repetition_penalty` sent with every request (default: not sent).
    #[arg(long)]
    pub repetition_penalty: Option<f64>,
    /// A JSON object merged into every request body, e.g. '{"cache_prompt": false}'.
    #[arg(long)]
    pub extra_body: Option<String>,
    /// Extra HTTP headers as KEY=VALUE (repeatable; several after one flag).
    #[arg(long, num_args = 1..)]
    pub header: Vec<String>,
    /// KEY=VALUE pairs written into the result JSON and the record (repeatable; several after
    /// one flag).
    #[arg(long, num_args = 1..)]
    pub metadata: Vec<String>,
    /// Wait up to this many seconds for the server to answer before the run (0: do not wait;
    /// vLLM 0.33's default). perfgate waits 600 s by default and says so.
    #[arg(long, default_value_t = 600)]
    pub ready_check_timeout_sec: u64,
    /// Comma-separated metrics to report statistics for: ttft, tpot, itl, e2el.
    #[arg(long, default_value = "ttft,tpot,itl")]
    pub percentile_metrics: String,
    /// Comma-separated percentiles, e.g. 50,90,99.
    #[arg(long, default_value = "99")]
    pub metric_percentiles: String,
    /// Service-level objectives for goodput, e.g. `--goodput ttft:500 tpot:50`.
    #[arg(long, num_args = 1..)]
    pub goodput: Vec<String>,
    /// Write the result JSON.
    #[arg(long)]
    pub save_result: bool,
    /// Append the result JSON to the file (a new line) instead of replacing it; implies
    /// `--save-result`.
    #[arg(long)]
    pub append_result: bool,
    /// The result's label: the `label` key of the result JSON and the prefix of its default
    /// file name (default: `--backend`).
    #[arg(long)]
    pub label: Option<String>,
    /// General input length: sets `--random-input-len` (as vLLM's `--input-len`).
    #[arg(long, value_parser = num::input_len)]
    pub input_len: Option<u32>,
    /// General output length: sets `--random-output-len`, `--sharegpt-output-len`,
    /// `--custom-output-len` and `--prefix-repetition-output-len` (as vLLM's `--output-len`).
    #[arg(long, value_parser = num::output_len)]
    pub output_len: Option<u32>,
    /// Each request's `x-request-id` header: this prefix and the request's index (default:
    /// `bench-` and 8 random hex digits and `-`, as vLLM).
    #[arg(long)]
    pub request_id_prefix: Option<String>,
    /// LoRA adapters the server was started with: each request names one of them as its
    /// `model` (vLLM's flag; several after one flag).
    #[arg(long, num_args = 1..)]
    pub lora_modules: Vec<String>,
    /// How requests are spread over --lora-modules: random (seeded by --seed) or round-robin.
    #[arg(long, value_enum, default_value = "random")]
    pub lora_assignment: LoraAssignmentArg,
    /// Replay a timed trace instead of the dataset: JSON Lines of {timestamp (ms),
    /// input_length, output_length}, as Mooncake's traces; each request is sent at its time
    /// with a random prompt of its length (see docs/workloads.md).
    #[arg(long, conflicts_with_all = ["dataset_path", "ramp_up_strategy"])]
    pub trace: Option<PathBuf>,
    /// Play the ShareGPT dataset's conversations turn by turn on the chat endpoint: each turn
    /// is sent after the previous answer, with the conversation so far (--num-prompts counts
    /// conversations; see docs/workloads.md).
    #[arg(long, conflicts_with = "trace")]
    pub multi_turn: bool,
    /// --multi-turn: at most this many turns of each conversation.
    #[arg(long, requires = "multi_turn", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_turns: Option<u64>,
    /// Accepted for vLLM compatibility and ignored (with a note): perfgate reads tokenizer.json
    /// files and never runs a model's code.
    #[arg(long)]
    pub trust_remote_code: bool,
    /// Accepted for vLLM compatibility and ignored (with a note): perfgate reads the
    /// tokenizer's `tokenizer.json` (or the server's `/tokenize`) whatever the mode.
    #[arg(long, value_name = "MODE")]
    pub tokenizer_mode: Option<String>,
    /// Accepted for vLLM compatibility and ignored (with a note): perfgate draws no request
    /// timeline; `--save-detailed-format csv` writes each request's times for one.
    #[arg(long)]
    pub plot_timeline: bool,
    /// With `--plot-timeline` in vLLM: the ITL colour thresholds. Accepted and ignored.
    #[arg(long, value_name = "MS,MS")]
    pub timeline_itl_thresholds: Option<String>,
    /// Accepted for vLLM compatibility and ignored (with a note): the result JSON's
    /// `input_lens` / `output_lens` (`--save-detailed`) hold the dataset's lengths.
    #[arg(long)]
    pub plot_dataset_stats: bool,
    /// Directory for the result file (default: current directory).
    #[arg(long)]
    pub result_dir: Option<PathBuf>,
    /// Result file name (default: BACKEND-RATEqps[-concurrencyN]-MODEL-DATE.json).
    #[arg(long)]
    pub result_filename: Option<String>,
    /// Add per-request arrays (input_lens, output_lens, ttfts, itls, latencies, queue_times,
    /// generated_texts, errors, …).
    #[arg(long)]
    pub save_detailed: bool,
    /// Where `--save-detailed` puts the per-request data, comma-separated: `json` (vLLM's
    /// arrays in the result JSON), `jsonl` and `csv` (one row per request, in the files
    /// RESULT.requests.jsonl and RESULT.requests.csv beside the result file). Implies
    /// `--save-detailed`; the files are written even without `--save-result`.
    #[arg(long)]
    pub save_detailed_format: Option<String>,
    /// Per-request timeout in seconds (default: none).
    #[arg(long, value_parser = num::secs)]
    pub request_timeout: Option<f64>,
    /// A fresh connection per request (as vLLM's and SGLang's clients do) instead of reusing
    /// connections opened before the run. Needed for llama.cpp's server, which announces
    /// keep-alive but closes the connection after a streamed response.
    #[arg(long)]
    pub no_keep_alive: bool,
    /// Re-tokenize every generated text and report total_output_tokens_retokenized.
    #[arg(long)]
    pub retokenize: bool,
    /// No progress bar.
    #[arg(long, alias = "disable-tqdm")]
    pub no_progress: bool,
    /// No telemetry beside the run. On by default: `nvidia-smi` when on PATH, the CPU's load,
    /// clocks and steal time, and the server's /metrics gauges, sampled on a thread of their
    /// own, plus a 0.2 s calibration loop timed before the run; written under the result's
    /// `telemetry` key.
    #[arg(long)]
    pub no_telemetry: bool,
    /// Seconds between telemetry samples.
    #[arg(long, default_value_t = 1.0, value_name = "SECS", value_parser = num::secs)]
    pub telemetry_interval: f64,
}

/// `perfgate fake-server`: a fake OpenAI streaming server for demos and benchmarks.
#[derive(Debug, Clone, Args)]
pub struct FakeServerArgs {
    /// Port on 127.0.0.1 (0: any free port; the URL is printed).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Time to the first token, in milliseconds.
    #[arg(long, default_value_t = 50.0, value_parser = num::millis)]
    pub ttft_ms: f64,
    /// Time between chunks, in milliseconds.
    #[arg(long, default_value_t = 10.0, value_parser = num::millis)]
    pub itl_ms: f64,
    /// Tokens per streamed chunk.
    #[arg(long, default_value_t = 1, value_parser = num::output_len)]
    pub tokens_per_chunk: u32,
    /// Do not send usage.
    #[arg(long)]
    pub no_usage: bool,
    /// none, http500, error-event[:N], malformed[:N], close[:N], stall[:N], no-done.
    // The text is the flag's help, where `[:N]` is plain text, not a rustdoc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, default_value = "none")]
    pub fault: String,
    /// Apply the fault to every N-th request.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub fault_every: u64,
    /// The model name the server lists and answers as.
    #[arg(long, default_value = "fake-model")]
    pub model: String,
    /// Whose tokenizer endpoints and model list to mimic: llama.cpp, vllm, sglang.
    #[arg(long, default_value = "llama.cpp")]
    pub api: String,
    /// A context length: outputs that would run past it are shortened silently, as vLLM does.
    #[arg(long)]
    pub max_model_len: Option<u32>,
    /// Tokens a chat template adds to every chat prompt's usage.prompt_tokens.
    #[arg(long, default_value_t = 0)]
    pub chat_template_tokens: u32,
    /// LoRA adapters to list at /v1/models and accept as a request's `model` (as vLLM's
    /// `--lora-modules`); with any, other model names get vLLM's 404.
    #[arg(long, num_args = 1..)]
    pub lora_modules: Vec<String>,
}

impl RunArgs {
    /// The server's base URL: `--base-url`, else `http://HOST:PORT`.
    pub fn base_url(&self) -> String {
        crate::runner::single::base_url(self.base_url.as_deref(), &self.host, self.port)
    }

    /// The metrics, percentiles and goodput targets these flags ask for.
    pub fn metrics_config(&self) -> Result<MetricsConfig, String> {
        let percentile_metrics = self
            .percentile_metrics
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.parse::<Metric>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("--percentile-metrics: {e}"))?;
        Ok(MetricsConfig {
            percentile_metrics,
            percentiles: metrics::parse_percentiles(&self.metric_percentiles)
                .map_err(|e| e.to_string())?,
            goodput: metrics::parse_goodput(&self.goodput).map_err(|e| e.to_string())?,
            detailed: self.save_detailed || self.save_detailed_format.is_some(),
        })
    }

    /// `--save-detailed-format`: whether the result JSON gets the per-request arrays, and the
    /// per-request files to write.
    pub fn detailed_formats(&self) -> Result<(bool, Vec<crate::export::Format>), String> {
        match &self.save_detailed_format {
            None => Ok((self.save_detailed, Vec::new())),
            Some(s) => {
                crate::export::parse_formats(s).map_err(|e| format!("--save-detailed-format: {e}"))
            }
        }
    }

    /// Whether the result JSON is written (`--save-result`, `--append-result`, a file name or
    /// directory).
    pub fn saves_result(&self) -> bool {
        self.save_result
            || self.append_result
            || self.result_filename.is_some()
            || self.result_dir.is_some()
    }

    /// The checks of the workload flags that need no server: the per-request export formats,
    /// the LoRA adapters, and multi-turn's chat endpoint.
    pub fn check_workload(&self) -> Result<(), String> {
        self.detailed_formats()?;
        crate::workload::lora::check(&self.lora_modules)?;
        if self.multi_turn && !self.endpoint.contains("chat") {
            return Err(
                "--multi-turn sends the conversation as chat messages: pass \
                        --endpoint /v1/chat/completions"
                    .into(),
            );
        }
        if self.dataset_name == DatasetName::TimedTrace {
            if self.dataset_path.is_none() {
                return Err("--dataset-name timed_trace needs --dataset-path (the trace)".into());
            }
            if self.trace.is_some() || self.multi_turn {
                return Err(
                    "--dataset-name timed_trace is a trace already: drop --trace / --multi-turn"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// Notes about flags accepted for vLLM compatibility that perfgate does not act on. (The
    /// flags' own parsers check each value; [`RunArgs::params`] checks the scenario.)
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.trust_remote_code {
            notes.push(
                "--trust-remote-code ignored: perfgate reads tokenizer.json files and runs no \
                 model code"
                    .to_string(),
            );
        }
        if self.timed_trace_chunk_hash_size.is_some() {
            notes.push(
                "--timed-trace-chunk-hash-size ignored: perfgate does not rebuild a trace's \
                 shared prefixes; each request gets a prompt of its own"
                    .to_string(),
            );
        }
        if let Some(mode) = &self.tokenizer_mode {
            notes.push(format!(
                "--tokenizer-mode {mode} ignored: perfgate reads the tokenizer's tokenizer.json \
                 (or the server's /tokenize)"
            ));
        }
        if self.plot_timeline || self.timeline_itl_thresholds.is_some() {
            notes.push(
                "--plot-timeline ignored: perfgate draws no request timeline; \
                 --save-detailed-format csv writes each request's start and end times"
                    .to_string(),
            );
        }
        if self.plot_dataset_stats {
            notes.push(
                "--plot-dataset-stats ignored: --save-detailed writes every request's input and \
                 output length (input_lens, output_lens)"
                    .to_string(),
            );
        }
        notes
    }

    /// The workload flags: trace, multi-turn conversations, LoRA adapters.
    pub fn workload(&self) -> crate::runner::workload::Workload<'_> {
        let timed = self.dataset_name == DatasetName::TimedTrace;
        crate::runner::workload::Workload {
            // `--trace` is in milliseconds; vLLM's `timed_trace` says its unit.
            trace: match timed {
                true => self.dataset_path.as_deref(),
                false => self.trace.as_deref(),
            },
            trace_unit_s: match timed {
                true => self.timed_trace_sec_multiplier,
                false => 1e-3,
            },
            lora_modules: &self.lora_modules,
            lora_assignment: self.lora_assignment.into(),
            multi_turn: self.multi_turn,
            max_turns: self.max_turns.map(|n| n as usize),
        }
    }

    /// Where `--save-result` writes.
    pub fn result_name(&self) -> ResultName<'_> {
        ResultName {
            filename: self.result_filename.as_deref(),
            dir: self.result_dir.as_deref(),
            backend: self.label.as_deref().unwrap_or(&self.backend),
            request_rate: self.request_rate.to_string(),
            max_concurrency: self.max_concurrency,
            model: self.model.as_deref().unwrap_or_default(),
        }
    }

    /// What `--metadata` and `--header` add to a run.
    pub fn extras(&self) -> Result<Extras, String> {
        let mut metadata = std::collections::BTreeMap::new();
        for kv in &self.metadata {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("--metadata `{kv}`: expected KEY=VALUE"))?;
            if k.trim().is_empty() {
                return Err(format!("--metadata `{kv}`: empty key"));
            }
            metadata.insert(k.trim().to_string(), v.trim().to_string());
        }
        let headers = self
            .header
            .iter()
            .map(|h| crate::client::parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Extras { metadata, headers })
    }

    /// The scenario these flags describe: built here once, and checked
    /// ([`load::check_scenario`], the check every scenario gets), with the flag's name in the
    /// message. `perfgate run` runs exactly this; a suite scenario with the same fields sends the
    /// same requests.
    pub fn params(&self) -> Result<ScenarioParams, String> {
        crate::client::check_endpoint(&self.endpoint)?;
        let extra_body = match &self.extra_body {
            None => None,
            Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::Object(m)) => Some(m),
                Ok(_) => return Err(format!("--extra-body must be a JSON object, got `{text}`")),
                Err(e) => return Err(format!("--extra-body is not valid JSON: {e}")),
            },
        };
        let a = self;
        // vLLM's `--input-len` / `--output-len` set the dataset-specific lengths.
        let input_len = a.input_len.unwrap_or(a.random_input_len);
        let out = |flag: u32| a.output_len.unwrap_or(flag);
        let random_like = matches!(a.dataset_name, DatasetName::Random | DatasetName::Fixed);
        if a.num_prompts == 0 && !a.dataset_name.reads_every_prompt() {
            return Err(format!(
                "--num-prompts -1 (every prompt of the file) is for the custom and spec_bench \
                 datasets, not {}",
                a.dataset_name.as_str()
            ));
        }
        let spec_bench = a.dataset_name == DatasetName::SpecBench;
        let (prefix_rep, custom) = match a.dataset_name {
            DatasetName::PrefixRepetition => (true, false),
            DatasetName::Custom => (false, true),
            _ => (false, false),
        };
        let ramp = a
            .ramp_up_strategy
            .filter(|_| a.ramp_up_start_rps.is_some() && a.ramp_up_end_rps.is_some());
        let params = ScenarioParams {
            dataset_name: a.dataset_name.into(),
            num_prompts: a.num_prompts as u64,
            random_input_len: random_like.then_some(u64::from(input_len)),
            random_output_len: random_like.then_some(u64::from(out(a.random_output_len))),
            random_range_ratio: random_like.then_some(a.random_range_ratio),
            range_convention: random_like.then_some(a.range_convention),
            sharegpt_output_len: match a.dataset_name {
                DatasetName::Sharegpt => a.output_len.or(a.sharegpt_output_len),
                _ => a.sharegpt_output_len,
            }
            .map(u64::from),
            request_rate: a.request_rate,
            burstiness: Some(a.burstiness),
            max_concurrency: a.max_concurrency,
            random_prefix_len: (random_like && a.random_prefix_len > 0)
                .then_some(u64::from(a.random_prefix_len)),
            prefix_repetition_prefix_len: prefix_rep
                .then_some(a.prefix_repetition_prefix_len.into()),
            prefix_repetition_suffix_len: prefix_rep
                .then_some(a.prefix_repetition_suffix_len.into()),
            prefix_repetition_num_prefixes: prefix_rep
                .then_some(a.prefix_repetition_num_prefixes.into()),
            prefix_repetition_output_len: prefix_rep
                .then_some(out(a.prefix_repetition_output_len).into()),
            custom_output_len: custom.then_some(out(a.custom_output_len).into()),
            spec_bench_output_len: spec_bench.then_some(out(a.spec_bench_output_len).into()),
            spec_bench_category: a.spec_bench_category.clone().filter(|_| spec_bench),
            no_oversample: a.no_oversample.then_some(true),
            ramp_up_strategy: ramp,
            ramp_up_start_rps: ramp.and(a.ramp_up_start_rps),
            ramp_up_end_rps: ramp.and(a.ramp_up_end_rps),
            endpoint: (Endpoint::of_path(&a.endpoint) == Endpoint::Chat).then_some(Endpoint::Chat),
            temperature: a.temperature,
            top_p: a.top_p,
            top_k: a.top_k,
            min_p: a.min_p,
            frequency_penalty: a.frequency_penalty,
            presence_penalty: a.presence_penalty,
            repetition_penalty: a.repetition_penalty,
            ignore_eos: a.ignore_eos,
            chat_template_kwargs: None,
            extra_body,
            duration_s: a.duration_s,
        };
        // A field's message names the flag that set it.
        const FIELDS: [&str; 9] = [
            "max_concurrency",
            "request_rate",
            "temperature",
            "top_p",
            "top_k",
            "min_p",
            "frequency_penalty",
            "presence_penalty",
            "repetition_penalty",
        ];
        load::check_scenario(&params).map_err(|e| match e.split_once(' ') {
            Some((field, rest)) if FIELDS.contains(&field) => {
                format!("--{} {rest}", field.replace('_', "-"))
            }
            Some(("extra_body", rest)) => format!("--extra-body {rest}"),
            Some(("duration_s", rest)) => format!("--duration-s {rest}"),
            _ => e,
        })?;
        Ok(params)
    }

    /// How `perfgate run` reaches the server (`headers`: [`RunArgs::extras`]), and its defaults
    /// of the request fields a scenario leaves unset (no `temperature`: vLLM 0.33 sends none).
    /// `model` is the model the run names.
    pub fn client_config(&self, model: &str, headers: Vec<(String, String)>) -> ClientConfig {
        ClientConfig {
            base_url: self.base_url(),
            endpoint: self.endpoint.clone(),
            model: self
                .served_model_name
                .clone()
                .unwrap_or_else(|| model.to_string()),
            temperature: None,
            ignore_eos: false,
            request_timeout: self.request_timeout.map(Duration::from_secs_f64),
            extra_body: serde_json::Map::new(),
            headers,
            request_id_prefix: Some(
                self.request_id_prefix
                    .clone()
                    .unwrap_or_else(|| format!("bench-{:08x}-", rand::random::<u32>())),
            ),
            keep_alive: !self.no_keep_alive,
        }
    }

    /// What is not the scenario: the client ([`RunArgs::client_config`]), the command's
    /// defaults, what to measure and how the record names itself. With [`RunArgs::params`] it
    /// makes the run ([`crate::runner::scenario_run`]).
    pub fn settings(
        &self,
        client: ClientConfig,
        metrics: MetricsConfig,
        tokenizer: Option<Arc<dyn Tokenize>>,
    ) -> RunSettings {
        RunSettings {
            client,
            ignore_eos: None,
            num_warmups: self.num_warmups,
            metrics,
            retokenize: self.retokenize,
            tokenizer,
            model: self.model.clone().unwrap_or_default(),
            backend: self.backend.clone(),
            dataset_path: self.dataset_path.clone(),
        }
    }
}

/// `--lora-assignment`'s values (the flag's side of [`crate::workload::lora::LoraAssignment`], so
/// the core module stays free of clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LoraAssignmentArg {
    /// Each request takes an adapter drawn at random (seeded).
    #[default]
    Random,
    /// Request i takes adapter i mod n.
    RoundRobin,
}

impl From<LoraAssignmentArg> for crate::workload::lora::LoraAssignment {
    fn from(a: LoraAssignmentArg) -> Self {
        match a {
            LoraAssignmentArg::Random => Self::Random,
            LoraAssignmentArg::RoundRobin => Self::RoundRobin,
        }
    }
}
