//! The one shape every measurement takes: a [`ScenarioResult`] record, keyed like vLLM's
//! `--save-result` JSON, plus the scenario identity ([`ScenarioParams`]) that matches records
//! across live runs, imported logs and baselines. Pure data; no I/O beyond JSON Lines helpers.

mod jsonl;
mod kinds;
mod metrics;
mod params;
mod request;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use jsonl::{
    parse_jsonl, parse_jsonl_with_warnings, read_jsonl, read_jsonl_with_warnings, record_keys,
    to_jsonl, ReadRecords, RecordError,
};
pub use kinds::{DatasetKind, DatasetName, RangeConvention, RequestRate};
pub use metrics::{
    check_metric_value, format_percentile, is_metric_key, is_stat_key, percentile_key, Direction,
    OUTCOME_METRICS,
};
pub use params::{Endpoint, RampUpStrategy};
pub use request::{Failure, FailureKind, RequestRecord};

/// The parameters that identify a scenario. Two results are the same scenario exactly when
/// their [`ScenarioParams::id`] is equal; position in a file never matters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct ScenarioParams {
    /// `random`, `sharegpt`, `fixed` or `jsonl` (or another name an imported log used).
    pub dataset_name: DatasetKind,
    pub num_prompts: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_input_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_output_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_range_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_convention: Option<RangeConvention>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharegpt_output_len: Option<u64>,
    #[serde(default)]
    pub request_rate: RequestRate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burstiness: Option<f64>,
    /// Written as `null` when unset, as vLLM does (its comparison scripts read the key).
    #[serde(default)]
    pub max_concurrency: Option<u64>,
    /// vLLM's `--random-prefix-len`: a shared prefix of this many tokens before every random
    /// prompt (added to `random_input_len`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_prefix_len: Option<u64>,
    /// `prefix_repetition` dataset: tokens of each shared prefix, of the unique suffix, how many
    /// distinct prefixes, and the output length (vLLM's `--prefix-repetition-*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_repetition_prefix_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_repetition_suffix_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_repetition_num_prefixes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_repetition_output_len: Option<u64>,
    /// `custom` dataset: the output length of every prompt (vLLM's `--custom-output-len`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_output_len: Option<u64>,
    /// `spec_bench` dataset: the output length of every prompt and the one category read
    /// (vLLM's `--spec-bench-output-len`, `--spec-bench-category`; unset: every category).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_bench_output_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_bench_category: Option<String>,
    /// A file dataset with fewer prompts than `num_prompts` runs the prompts it has instead of
    /// repeating them (vLLM's `--no-oversample`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_oversample: Option<bool>,
    /// Ramp-up of the request rate (vLLM's `--ramp-up-strategy`, `linear` or `exponential`)
    /// from `ramp_up_start_rps` to `ramp_up_end_rps` over the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_up_strategy: Option<RampUpStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_up_start_rps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_up_end_rps: Option<f64>,
    /// The API the requests go to: `completions` (`/v1/completions`, the default) or `chat`
    /// (`/v1/chat/completions`, the prompt as one user message, templated by the server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
    /// Sampling `temperature` of every request. Unset: the command's default (`check`/`ab`
    /// send 0, `perfgate run` sends none, as vLLM 0.33).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sampling fields sent with every request when set (unset: not sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition_penalty: Option<f64>,
    /// `ignore_eos` of every request. Unset: the command's default (`check`/`ab`: on;
    /// `perfgate run`: on for random and fixed prompts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_eos: Option<bool>,
    /// `chat_template_kwargs` of every chat request (e.g. `{enable_thinking = false}`); chat only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<JsonObject>,
    /// Fields merged into every request body last (they win over the fields above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<JsonObject>,
    /// A time budget in seconds: requests are issued (cycling through the `num_prompts` prompts)
    /// until it has passed, then the run drains. Unset: every prompt once (vLLM's way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
}

/// A JSON object, as request bodies and their parts are written.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// How the output token counts of a result were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputTokenSource {
    /// The server's `usage.completion_tokens`.
    Usage,
    /// Generated text re-tokenized by the client's tokenizer.
    Retokenized,
    /// Counted from the stream's chunks (one token per chunk assumed).
    Chunks,
    /// Copied from a log or file that did not say.
    Reported,
}

/// Failures of one kind: how many, and the first message seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorCount {
    pub count: u64,
    pub first_message: String,
}

/// Latency metrics that carry distribution statistics.
pub const LATENCY_METRICS: [&str; 4] = ["ttft", "tpot", "itl", "e2el"];

/// One scenario's result, keyed like vLLM's `--save-result` JSON plus perfgate's own fields.
///
/// The distribution statistics (`mean_ttft_ms`, `median_itl_ms`, `std_e2el_ms`, `p99_tpot_ms`,
/// `p99.9_ttft_ms`, …) live flattened in [`ScenarioResult::stats`] under vLLM's exact key names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct ScenarioResult {
    // ---- identity ----------------------------------------------------------------------
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// vLLM's `backend` (e.g. `vllm`, `sglang`, `lmdeploy`, `openai`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The serving engine (`vllm`, `sglang`, `lmdeploy`, `llama.cpp`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// The model as the run named it (vLLM writes it as `model_id`).
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_id: Option<String>,
    #[serde(flatten)]
    pub params: ScenarioParams,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// 0-based index of this run among the runs of the same scenario.
    #[serde(default)]
    pub run_index: u32,
    /// The engine launch the run was measured on: runs of one launch share its state (caches,
    /// compiled graphs, memory layout), so the statistics treat the launch, not the run, as the
    /// unit of replication. `None` (imports, older records): each run counts as its own launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_id: Option<String>,
    /// The recording session the launch belongs to: launches of one session share the
    /// machine's state of that time (other tenants, clocks, thermals, a rebuilt engine), so an
    /// offset between sessions does not shrink with more launches. Live mode sets one per
    /// perfgate invocation; `None` (imports, older records): the side's records form one session.
    /// Launch ids are unique within a session only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// 0-based index of the run inside its launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_in_launch: Option<u32>,
    /// `perfgate ab`: which build measured the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<Arm>,
    /// `perfgate ab`: the 0-based pair of launches (one per arm, back to back) the run belongs
    /// to; the paired statistics compare the arms within each pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<u32>,

    // ---- outcome ------------------------------------------------------------------------
    pub completed: u64,
    #[serde(default)]
    pub failed: u64,
    pub duration: f64,
    /// Input tokens: a live run takes the server's `usage.prompt_tokens` when every completed
    /// request reported it (the chat template's tokens included), else the prompts' lengths.
    pub total_input_tokens: u64,
    pub total_output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_output_tokens_retokenized: Option<u64>,
    /// perfgate's own: the prompts' lengths as the dataset built them (the client-side count),
    /// when `total_input_tokens` is the server's count. On chat they differ by the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_input_tokens_client: Option<u64>,
    pub request_throughput: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_goodput: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_throughput: Option<f64>,
    pub output_throughput: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_token_throughput: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens_per_s: Option<f64>,
    /// vLLM's "peak concurrent requests": the most requests active within one 1-second bucket
    /// (a request counts in every bucket from its send to its end), so requests that follow
    /// each other inside a second both count: it can exceed `--max-concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_requests: Option<u64>,
    /// perfgate's own: the most requests in flight at one instant (sent, not yet ended), which
    /// `--max-concurrency` bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight_requests: Option<u64>,
    /// SGLang's `Concurrency:` (mean requests in flight: total latency / duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<f64>,

    // ---- how the engine was launched (imports and live runs) ----------------------------
    /// The engine launch command as the source recorded it (e.g. the `docker run …` above a
    /// seed section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_parallel_size: Option<u32>,

    // ---- perfgate's own ----------------------------------------------------------------
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_source: Option<OutputTokenSource>,
    /// Failed requests by kind (`http_500`, `sse_error_event`, `malformed_event`, `timeout`, …),
    /// written as `errors_by_kind`: vLLM's `errors` is its per-request list (`--save-detailed`).
    /// Records written before the rename carry the counts as an `errors` object; they still read.
    #[serde(
        default,
        rename = "errors_by_kind",
        alias = "errors",
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "errors_by_kind"
    )]
    pub errors: BTreeMap<String, ErrorCount>,
    /// `--metadata KEY=VALUE` pairs of the run (vLLM also writes them as top-level keys of its
    /// result JSON; `perfgate run --save-result` does the same).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// Where the record came from: `run`, or `FILE:LINE` for an import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perfgate_version: Option<String>,
    /// Fields that the source did not print but an importer computed from what it did print
    /// (e.g. `duration` from an LMDeploy CSV's RPS). Empty for live runs and exact imports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<String>,

    /// Figures over the run's steady window, beside the whole-run ones (see [`crate::steady`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::steady::Steady>,
    /// perfgate's own: GPU, CPU and server telemetry sampled beside the run (absent when off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::telemetry::Telemetry>,

    /// Distribution statistics under vLLM's key names (`mean_ttft_ms`, `p99_itl_ms`, …).
    #[serde(flatten)]
    pub stats: BTreeMap<String, f64>,
}

impl ScenarioResult {
    /// A synthetic record, the one fixture of tests, examples and benches: `num_prompts` requests
    /// of a `random` scenario (`input_len` tokens in, `output_len` out, all at once), all
    /// completed, with the token totals filled in. Timings and latencies are the caller's.
    pub fn synthetic(model: &str, num_prompts: u64, input_len: u64, output_len: u64) -> Self {
        ScenarioResult {
            model: model.into(),
            params: ScenarioParams {
                dataset_name: DatasetName::Random.into(),
                num_prompts,
                random_input_len: Some(input_len),
                random_output_len: Some(output_len),
                request_rate: RequestRate::Inf,
                ..Default::default()
            },
            completed: num_prompts,
            total_input_tokens: input_len * num_prompts,
            total_output_tokens: output_len * num_prompts,
            ..Default::default()
        }
    }

    /// The scenario identity of this record.
    pub fn scenario_id(&self) -> String {
        self.params.id()
    }

    /// Success rate in [0, 1]: completed over attempted (completed + failed, or num_prompts if larger).
    pub fn success_rate(&self) -> f64 {
        let issued = self.completed + self.failed;
        let attempted = match self.issues_what_it_has() {
            true => issued,
            false => issued.max(self.params.num_prompts),
        };
        if attempted == 0 {
            return 0.0;
        }
        self.completed as f64 / attempted as f64
    }

    /// True when fewer requests succeeded than were asked for.
    pub fn is_incomplete(&self) -> bool {
        self.failed > 0 || (!self.issues_what_it_has() && self.completed < self.params.num_prompts)
    }

    /// Whether the run issues what it has rather than `num_prompts` requests: a time budget
    /// (as many as it allows), `no_oversample` (as many as the file holds).
    fn issues_what_it_has(&self) -> bool {
        self.params.duration_s.is_some() || self.params.no_oversample == Some(true)
    }

    /// Any named metric: a top-level numeric field or a flattened statistic.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let v = match name {
            "completed" => self.completed as f64,
            "failed" => self.failed as f64,
            "duration" => self.duration,
            "total_input_tokens" => self.total_input_tokens as f64,
            "total_output_tokens" => self.total_output_tokens as f64,
            "request_throughput" => self.request_throughput,
            "output_throughput" => self.output_throughput,
            "success_rate" => self.success_rate(),
            "request_goodput" => return self.request_goodput,
            "input_throughput" => return self.input_throughput,
            "total_token_throughput" => return self.total_token_throughput,
            "max_output_tokens_per_s" => return self.max_output_tokens_per_s,
            "max_concurrent_requests" => return self.max_concurrent_requests.map(|v| v as f64),
            "concurrency" => return self.concurrency,
            "total_output_tokens_retokenized" => {
                return self.total_output_tokens_retokenized.map(|v| v as f64)
            }
            other => return self.stats.get(other).copied(),
        };
        Some(v)
    }

    /// Every numeric metric the record holds, by name: the outcome fields that are present,
    /// then the distribution statistics (sorted). This is what a baseline stores per run.
    pub fn metrics(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        for name in OUTCOME_METRICS {
            if let Some(v) = self.metric(name) {
                out.push((name.to_string(), v));
            }
        }
        out.extend(self.stats.iter().map(|(k, v)| (k.clone(), *v)));
        out
    }
}

/// The by-kind error counts: an object of [`ErrorCount`]s. A list (vLLM's per-request `errors`,
/// one message or `""` per request) holds no kinds and reads as none.
fn errors_by_kind<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, ErrorCount>, D::Error> {
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) | Some(serde_json::Value::Array(_)) => {
            Ok(BTreeMap::new())
        }
        Some(v @ serde_json::Value::Object(_)) => {
            BTreeMap::<String, ErrorCount>::deserialize(v).map_err(serde::de::Error::custom)
        }
        Some(_) => Err(serde::de::Error::custom(
            "expected an object of {count, first_message} by kind, or vLLM's per-request list",
        )),
    }
}

/// The two builds of a `perfgate ab` comparison.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    /// The reference build (e.g. main's engine).
    Base,
    /// The build under test (e.g. the PR's engine).
    Candidate,
}

impl Arm {
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Base => "base",
            Arm::Candidate => "candidate",
        }
    }
}

#[cfg(test)]
mod tests;
