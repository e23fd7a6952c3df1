//! Flags of `perfgate run` (named and meant as in `vllm bench serve`) and of the hidden
//! `perfgate fake-server`.

use std::path::PathBuf;

use clap::Args;

use super::num;

use crate::dataset::DatasetName;
use crate::record::{RampUpStrategy, RangeConvention, RequestRate};

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
    /// Number of prompts to send.
    #[arg(long, default_value_t = 1000, value_parser = num::prompts)]
    pub num_prompts: usize,
    /// Prompt length in tokens (random, fixed).
    #[arg(long, default_value_t = 1024, value_parser = num::input_len)]
    pub random_input_len: u32,
    /// Output length in tokens (random, fixed).
    #[arg(long, default_value_t = 128, value_parser = num::output_len)]
    pub random_output_len: u32,
    /// Length spread; read per --range-convention.
    #[arg(long, default_value_t = 0.0, value_parser = num::range_ratio)]
    pub random_range_ratio: f64,
    /// Tokens of a shared random prefix before every random prompt (added to its length).
    #[arg(long, default_value_t = 0)]
    pub random_prefix_len: u32,
    /// vllm: lengths in [L(1−r), L(1+r)]; sglang (and LMDeploy): [max(rL, 1), L].
    #[arg(long, value_enum, default_value = "vllm")]
    pub range_convention: RangeConvention,
    /// Output length for sharegpt prompts (default: the reference answer's length).
    #[arg(long, value_parser = num::output_len)]
    pub sharegpt_output_len: Option<u32>,
    /// prefix_repetition: tokens of each shared prefix.
    #[arg(long, default_value_t = 256)]
    pub prefix_repetition_prefix_len: u32,
    /// prefix_repetition: tokens of each prompt's unique suffix.
    #[arg(long, default_value_t = 256)]
    pub prefix_repetition_suffix_len: u32,
    /// prefix_repetition: how many distinct prefixes the prompts share.
    #[arg(long, default_value_t = 10)]
    pub prefix_repetition_num_prefixes: u32,
    /// prefix_repetition: output length in tokens.
    #[arg(long, default_value_t = 128)]
    pub prefix_repetition_output_len: u32,
    /// custom: output length in tokens of every prompt.
    #[arg(long, default_value_t = 256)]
    pub custom_output_len: u32,
    /// custom: accepted for vLLM compatibility; perfgate never applies a chat template
    /// client-side (the chat endpoint applies the server's).
    #[arg(long)]
    pub custom_skip_chat_template: bool,
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
    #[arg(long, requires = "ramp_up_strategy")]
    pub ramp_up_start_rps: Option<f64>,
    /// Request rate of the last request under --ramp-up-strategy.
    #[arg(long, requires = "ramp_up_strategy")]
    pub ramp_up_end_rps: Option<f64>,
    /// At most this many requests in flight.
    #[arg(long, value_parser = num::concurrency)]
    pub max_concurrency: Option<usize>,
    /// Requests sent and discarded before the measured run.
    #[arg(long, default_value_t = 0, value_parser = num::warmups)]
    pub num_warmups: usize,
    /// Seed of the dataset and the arrival schedule.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Ask the server to ignore EOS (default: on for random and fixed prompts, off otherwise).
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub ignore_eos: Option<bool>,
    /// Sampling temperature sent with every request (default 0: greedy).
    #[arg(long, default_value_t = 0.0, value_parser = num::temperature)]
    pub temperature: f64,
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
    /// Wait up to this many seconds for the server to answer before the run (0: do not wait).
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
    /// Directory for the result file (default: current directory).
    #[arg(long)]
    pub result_dir: Option<PathBuf>,
    /// Result file name (default: BACKEND-RATEqps[-concurrencyN]-MODEL-DATE.json).
    #[arg(long)]
    pub result_filename: Option<String>,
    /// Add per-request arrays (input_lens, output_lens, ttfts, itls, generated_texts, errors, …).
    #[arg(long)]
    pub save_detailed: bool,
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
    #[arg(long, default_value = "none")]
    pub fault: String,
    /// Apply the fault to every N-th request.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub fault_every: u64,
    /// The model name the server lists and answers as.
    #[arg(long, default_value = "fake-model")]
    pub model: String,
}
