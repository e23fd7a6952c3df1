//! The one shape every measurement takes: a [`ScenarioResult`] record, keyed like vLLM's
//! `--save-result` JSON, plus the scenario identity ([`ScenarioParams`]) that matches records
//! across live runs, imported logs and baselines. Pure data; no I/O beyond JSON Lines helpers.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How `--random-range-ratio` is read.
///
/// * `vllm`: lengths are drawn from `[L·(1−r), L·(1+r)]` (r = 0 means exactly L).
/// * `sglang`: lengths are drawn from `[max(r·L, 1), L]` (r = 1 means exactly L); LMDeploy agrees.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
#[derive(clap::ValueEnum, schemars::JsonSchema)]
pub enum RangeConvention {
    #[default]
    Vllm,
    Sglang,
}

impl RangeConvention {
    /// Inclusive token-length bounds for a nominal length `len` and ratio `ratio`.
    pub fn bounds(self, len: u64, ratio: f64) -> (u64, u64) {
        let l = len as f64;
        match self {
            RangeConvention::Vllm => {
                let lo = (l * (1.0 - ratio)).floor().max(0.0) as u64;
                let hi = (l * (1.0 + ratio)).floor() as u64;
                (lo.max(if len > 0 { 1 } else { 0 }).min(hi), hi)
            }
            RangeConvention::Sglang => {
                let lo = ((l * ratio).floor() as u64).max(1).min(len.max(1));
                (lo, len)
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RangeConvention::Vllm => "vllm",
            RangeConvention::Sglang => "sglang",
        }
    }
}

/// A request rate: `inf` (all at once) or requests per second. Serialized like vLLM does:
/// the string `"inf"` or a number.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum RequestRate {
    #[default]
    Inf,
    PerSecond(f64),
}

impl RequestRate {
    pub fn is_inf(self) -> bool {
        matches!(self, RequestRate::Inf)
    }
}

impl fmt::Display for RequestRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestRate::Inf => f.write_str("inf"),
            RequestRate::PerSecond(r) => write!(f, "{r}"),
        }
    }
}

impl std::str::FromStr for RequestRate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("infinity") {
            return Ok(RequestRate::Inf);
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_infinite() && v > 0.0 => Ok(RequestRate::Inf),
            Ok(v) if v > 0.0 && v.is_finite() => Ok(RequestRate::PerSecond(v)),
            _ => Err(format!(
                "request rate must be `inf` or a positive number, got `{s}`"
            )),
        }
    }
}

impl schemars::JsonSchema for RequestRate {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RequestRate".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Requests per second, or \"inf\" (all at once).",
            "anyOf": [
                { "const": "inf" },
                { "type": "number", "exclusiveMinimum": 0 }
            ]
        })
    }
}

impl Serialize for RequestRate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestRate::Inf => s.serialize_str("inf"),
            RequestRate::PerSecond(r) => s.serialize_f64(*r),
        }
    }
}

impl<'de> Deserialize<'de> for RequestRate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Num(v) if v.is_infinite() => Ok(RequestRate::Inf),
            Raw::Num(v) if v > 0.0 => Ok(RequestRate::PerSecond(v)),
            Raw::Num(v) => Err(serde::de::Error::custom(format!(
                "request_rate must be positive or \"inf\", got {v}"
            ))),
            Raw::Str(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Which dataset (`--dataset-name`); names as vLLM spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DatasetName {
    /// Random tokens of exact lengths.
    #[default]
    Random,
    /// ShareGPT conversations (`--dataset-path`).
    Sharegpt,
    /// One random prompt, repeated.
    Fixed,
    /// `{"prompt", "output_len"}` per line (`--dataset-path`).
    Jsonl,
    /// Shared prefixes with unique suffixes (prefix caching).
    #[value(name = "prefix_repetition", alias = "prefix-repetition")]
    PrefixRepetition,
    /// vLLM's custom JSONL: `{"prompt"}` per line, output length from --custom-output-len.
    Custom,
}

impl DatasetName {
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetName::Random => "random",
            DatasetName::Sharegpt => "sharegpt",
            DatasetName::Fixed => "fixed",
            DatasetName::Jsonl => "jsonl",
            DatasetName::PrefixRepetition => "prefix_repetition",
            DatasetName::Custom => "custom",
        }
    }
}

/// The dataset a scenario names: one perfgate can synthesise ([`DatasetName`]), or another name
/// an imported log used (`sonnet`, `burstgpt`, …), kept verbatim. Serialised as the bare name,
/// exactly as `dataset_name` always was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum DatasetKind {
    Known(DatasetName),
    Other(String),
}

impl DatasetKind {
    pub fn as_str(&self) -> &str {
        match self {
            DatasetKind::Known(d) => d.as_str(),
            DatasetKind::Other(s) => s,
        }
    }

    /// The dataset to synthesise, or `None` for a name perfgate cannot build prompts for.
    pub fn known(&self) -> Option<DatasetName> {
        match self {
            DatasetKind::Known(d) => Some(*d),
            DatasetKind::Other(_) => None,
        }
    }

    /// Whether the scenario's lengths come from `random_input_len`/`random_output_len`.
    pub fn uses_random_lens(&self) -> bool {
        matches!(
            self,
            DatasetKind::Known(DatasetName::Random | DatasetName::Fixed)
        )
    }
}

impl Default for DatasetKind {
    /// The empty name (as a default `ScenarioParams` always had).
    fn default() -> Self {
        DatasetKind::Other(String::new())
    }
}

impl schemars::JsonSchema for DatasetKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DatasetKind".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}

impl From<DatasetName> for DatasetKind {
    fn from(d: DatasetName) -> Self {
        DatasetKind::Known(d)
    }
}

impl From<String> for DatasetKind {
    fn from(s: String) -> Self {
        match s.as_str() {
            "random" => DatasetName::Random.into(),
            "sharegpt" => DatasetName::Sharegpt.into(),
            "fixed" => DatasetName::Fixed.into(),
            "jsonl" => DatasetName::Jsonl.into(),
            "prefix_repetition" => DatasetName::PrefixRepetition.into(),
            "custom" => DatasetName::Custom.into(),
            _ => DatasetKind::Other(s),
        }
    }
}

impl From<&str> for DatasetKind {
    fn from(s: &str) -> Self {
        s.to_string().into()
    }
}

impl From<DatasetKind> for String {
    fn from(d: DatasetKind) -> Self {
        match d {
            DatasetKind::Other(s) => s,
            known => known.as_str().to_string(),
        }
    }
}

impl PartialEq<str> for DatasetKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for DatasetKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for DatasetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
}

/// A JSON object, as request bodies and their parts are written.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// The streaming API a scenario measures.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Endpoint {
    /// `/v1/completions`: the prompt as text.
    #[default]
    Completions,
    /// `/v1/chat/completions`: the prompt as one user message.
    Chat,
}

impl Endpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Completions => "completions",
            Endpoint::Chat => "chat",
        }
    }

    /// The path of the API on an OpenAI-compatible server.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Completions => "/v1/completions",
            Endpoint::Chat => "/v1/chat/completions",
        }
    }

    /// The API an endpoint path (`--endpoint`) names: `…/chat/completions` is chat.
    pub fn of_path(path: &str) -> Endpoint {
        match path.trim_end_matches('/').ends_with("chat/completions") {
            true => Endpoint::Chat,
            false => Endpoint::Completions,
        }
    }
}

/// The sampling fields of [`ScenarioParams`] as request fields, in the order they are sent
/// (after `temperature`).
const SAMPLING_KEYS: [&str; 6] = [
    "top_p",
    "top_k",
    "min_p",
    "frequency_penalty",
    "presence_penalty",
    "repetition_penalty",
];

/// How the request rate ramps up over a run (vLLM's `--ramp-up-strategy`): the rate of request
/// `i` of `n` is `start + (end − start)·i/(n−1)` (linear) or `start·(end/start)^(i/(n−1))`
/// (exponential); each gap is then drawn as for a fixed rate.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RampUpStrategy {
    Linear,
    Exponential,
}

impl RampUpStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            RampUpStrategy::Linear => "linear",
            RampUpStrategy::Exponential => "exponential",
        }
    }

    /// The rate of request `i` of `n`, in requests per second.
    pub fn rate(self, start: f64, end: f64, i: usize, n: usize) -> f64 {
        let progress = if n > 1 {
            i as f64 / (n - 1) as f64
        } else {
            0.0
        };
        match self {
            RampUpStrategy::Linear => start + (end - start) * progress,
            RampUpStrategy::Exponential => start * (end / start).powf(progress),
        }
    }
}

impl ScenarioParams {
    /// A stable, human-readable identity, e.g. `sharegpt-n10000`, `random-in1024-out1024-n2000`,
    /// `random-in900..1100-out128-n500-c64-r4`. Length ranges are normalised through the range
    /// convention, so SGLang's ratio 1.0 and vLLM's ratio 0.0 name the same scenario.
    pub fn id(&self) -> String {
        let mut s = self.dataset_name.to_string();
        let (ratio, conv) = (
            self.random_range_ratio.unwrap_or(0.0),
            self.range_convention.unwrap_or_default(),
        );
        let len = |l: u64| {
            let (lo, hi) = conv.bounds(l, ratio);
            if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo}..{hi}")
            }
        };
        if self.dataset_name.uses_random_lens() {
            if let Some(i) = self.random_input_len {
                s.push_str(&format!("-in{}", len(i)));
            }
            if let Some(o) = self.random_output_len {
                s.push_str(&format!("-out{}", len(o)));
            }
        }
        if self.dataset_name == "sharegpt" {
            if let Some(o) = self.sharegpt_output_len {
                s.push_str(&format!("-out{o}"));
            }
        }
        if self.dataset_name.uses_random_lens() {
            if let Some(p) = self.random_prefix_len.filter(|p| *p > 0) {
                s.push_str(&format!("-prefix{p}"));
            }
        }
        if self.dataset_name == "prefix_repetition" {
            let part = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
            s.push_str(&format!(
                "-prefix{}x{}-suffix{}-out{}",
                part(self.prefix_repetition_prefix_len),
                part(self.prefix_repetition_num_prefixes),
                part(self.prefix_repetition_suffix_len),
                part(self.prefix_repetition_output_len),
            ));
        }
        if self.dataset_name == "custom" {
            if let Some(o) = self.custom_output_len {
                s.push_str(&format!("-out{o}"));
            }
        }
        s.push_str(&format!("-n{}", self.num_prompts));
        if let Some(c) = self.max_concurrency {
            s.push_str(&format!("-c{c}"));
        }
        let ramp = match (
            self.ramp_up_strategy,
            self.ramp_up_start_rps,
            self.ramp_up_end_rps,
        ) {
            (Some(k), Some(a), Some(b)) => Some(format!("-ramp{}{a}..{b}", &k.as_str()[..3])),
            _ => None,
        };
        if let RequestRate::PerSecond(r) = self.request_rate {
            s.push_str(&format!("-r{r}"));
        }
        if let Some(ramp) = &ramp {
            s.push_str(ramp);
        }
        if !self.request_rate.is_inf() || ramp.is_some() {
            if let Some(b) = self.burstiness.filter(|b| *b != 1.0) {
                s.push_str(&format!("-b{b}"));
            }
        }
        s.push_str(&self.request_id_part());
        s
    }

    /// The part of [`ScenarioParams::id`] that names what each request asks for beyond its
    /// prompt: empty for a completions scenario with the live check's defaults (every scenario
    /// written before these fields existed), so older baselines keep their ids. A value equal
    /// to that default (`temperature` 0, `ignore_eos` on: what `--temperature 0 --ignore-eos`
    /// in vLLM's CI command lines says) adds nothing either, so such results still meet the
    /// baselines imported from logs that did not record them.
    fn request_id_part(&self) -> String {
        let mut s = String::new();
        if self.endpoint == Some(Endpoint::Chat) {
            s.push_str("-chat");
        }
        let floats = [
            ("temp", self.temperature.filter(|t| *t != 0.0)),
            ("topp", self.top_p),
            ("minp", self.min_p),
            ("freqpen", self.frequency_penalty),
            ("prespen", self.presence_penalty),
            ("reppen", self.repetition_penalty),
        ];
        for (tag, v) in floats {
            if let Some(v) = v {
                s.push_str(&format!("-{tag}{v}"));
            }
        }
        if let Some(k) = self.top_k {
            s.push_str(&format!("-topk{k}"));
        }
        if self.ignore_eos == Some(false) {
            s.push_str("-eos");
        }
        // Objects are named by a digest of their canonical JSON (keys sorted): the record holds
        // them whole.
        let digest = |o: &JsonObject| {
            let text = canonical_json(&serde_json::Value::Object(o.clone())).to_string();
            crate::text::sha256_hex(text.as_bytes())[..8].to_string()
        };
        if let Some(o) = &self.chat_template_kwargs {
            s.push_str(&format!("-ctk{}", digest(o)));
        }
        if let Some(o) = &self.extra_body {
            s.push_str(&format!("-body{}", digest(o)));
        }
        s
    }

    /// The sampling fields that are set (`top_p`, `top_k`, …; `temperature` is the client's),
    /// then `chat_template_kwargs`, then `extra_body` (which wins where it names a field too):
    /// what the scenario adds to every request body.
    pub fn body_fields(&self) -> JsonObject {
        let mut m = JsonObject::new();
        let values = [
            self.top_p.map(serde_json::Value::from),
            self.top_k.map(serde_json::Value::from),
            self.min_p.map(serde_json::Value::from),
            self.frequency_penalty.map(serde_json::Value::from),
            self.presence_penalty.map(serde_json::Value::from),
            self.repetition_penalty.map(serde_json::Value::from),
        ];
        for (key, v) in SAMPLING_KEYS.iter().zip(values) {
            if let Some(v) = v {
                m.insert((*key).to_string(), v);
            }
        }
        if let Some(o) = &self.chat_template_kwargs {
            m.insert("chat_template_kwargs".into(), o.clone().into());
        }
        if let Some(o) = &self.extra_body {
            m.extend(o.clone());
        }
        m
    }

    /// The checks of the request fields (endpoint, sampling, `extra_body`); the message names
    /// the field. Run by every path that makes a scenario: a suite or baseline file on load,
    /// `perfgate run`'s flags, a library caller's [`crate::runner::scenario_run`].
    pub fn check_request_fields(&self) -> Result<(), String> {
        let inf = f64::INFINITY;
        let ranges = [
            (
                "temperature",
                self.temperature,
                0.0,
                inf,
                "a finite number ≥ 0",
            ),
            ("top_p", self.top_p, f64::MIN_POSITIVE, 1.0, "in (0, 1]"),
            ("min_p", self.min_p, 0.0, 1.0, "in [0, 1]"),
            (
                "frequency_penalty",
                self.frequency_penalty,
                -2.0,
                2.0,
                "in [-2, 2]",
            ),
            (
                "presence_penalty",
                self.presence_penalty,
                -2.0,
                2.0,
                "in [-2, 2]",
            ),
            (
                "repetition_penalty",
                self.repetition_penalty,
                f64::MIN_POSITIVE,
                inf,
                "a finite number > 0",
            ),
        ];
        for (field, v, lo, hi, what) in ranges {
            if let Some(v) = v.filter(|v| !v.is_finite() || *v < lo || *v > hi) {
                return Err(format!("{field} must be {what}, got {v}"));
            }
        }
        if let Some(k) = self.top_k.filter(|k| *k < -1) {
            return Err(format!("top_k must be -1 (off) or more, got {k}"));
        }
        if self.chat_template_kwargs.is_some() && self.endpoint != Some(Endpoint::Chat) {
            return Err(
                "chat_template_kwargs needs endpoint = \"chat\" (a completions request has no \
                 chat template)"
                    .into(),
            );
        }
        let owned = ["model", "prompt", "messages", "stream"];
        if let Some(k) = self
            .extra_body
            .iter()
            .flat_map(|o| o.keys())
            .find(|k| owned.contains(&k.as_str()))
        {
            return Err(format!(
                "extra_body must not set `{k}`: perfgate writes it (the measured stream depends \
                 on it)"
            ));
        }
        Ok(())
    }
}

/// `v` with every object's keys in sorted order, so equal objects print equal.
fn canonical_json(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let sorted: JsonObject = keys
                .into_iter()
                .map(|k| (k.clone(), canonical_json(&o[k])))
                .collect();
            serde_json::Value::Object(sorted)
        }
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(canonical_json).collect())
        }
        other => other.clone(),
    }
}

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
        let attempted = (self.completed + self.failed).max(self.params.num_prompts);
        if attempted == 0 {
            return 0.0;
        }
        self.completed as f64 / attempted as f64
    }

    /// True when fewer requests succeeded than were asked for.
    pub fn is_incomplete(&self) -> bool {
        self.failed > 0 || self.completed < self.params.num_prompts
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

/// The outcome metrics of a record (everything numeric except the flattened statistics),
/// in vLLM's `--save-result` order. `success_rate` is derived and not listed.
pub const OUTCOME_METRICS: [&str; 14] = [
    "completed",
    "failed",
    "duration",
    "total_input_tokens",
    "total_output_tokens",
    "total_output_tokens_retokenized",
    "request_throughput",
    "request_goodput",
    "input_throughput",
    "output_throughput",
    "total_token_throughput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "concurrency",
];

/// Is `name` a metric a baseline may store (an outcome metric or a statistic key)?
pub fn is_metric_key(name: &str) -> bool {
    OUTCOME_METRICS.contains(&name) || is_stat_key(name)
}

/// Whether `v` is a possible value of metric `name`: finite and not negative everywhere; above
/// zero where zero cannot be measured (a TTFT or end-to-end latency statistic other than its
/// spread, the duration, the throughputs). A zero there would be a broken record, and on the
/// gate's log scale it is minus infinity. The error says what is wrong, not which key (the caller
/// names it with its place).
pub fn check_metric_value(name: &str, v: f64) -> Result<(), String> {
    if !v.is_finite() {
        return Err(format!("{v} is not a finite number"));
    }
    if v < 0.0 {
        return Err(format!("{v} is negative"));
    }
    let must_be_positive = matches!(
        name,
        "duration" | "request_throughput" | "output_throughput" | "total_token_throughput"
    ) || (is_stat_key(name)
        && (name.ends_with("_ttft_ms") || name.ends_with("_e2el_ms"))
        && !name.starts_with("std_")
        && !name.starts_with("min_"));
    if must_be_positive && v == 0.0 {
        return Err("0 is not a possible value (it must be above zero)".into());
    }
    Ok(())
}

/// Is `key` a distribution statistic key in vLLM's naming (`mean_ttft_ms`, `p99.9_itl_ms`, …)?
pub fn is_stat_key(key: &str) -> bool {
    let Some(rest) = key.strip_suffix("_ms") else {
        return false;
    };
    let Some((stat, metric)) = rest.rsplit_once('_') else {
        return false;
    };
    if !LATENCY_METRICS.contains(&metric) {
        return false;
    }
    match stat {
        "mean" | "median" | "std" | "min" | "max" => true,
        p => p
            .strip_prefix('p')
            .and_then(|n| n.parse::<f64>().ok())
            .is_some_and(|n| (0.0..=100.0).contains(&n)),
    }
}

/// The key of percentile `p` of `metric`, formatted as vLLM does (`p99_ttft_ms`, `p99.9_ttft_ms`).
pub fn percentile_key(p: f64, metric: &str) -> String {
    format!("p{}_{metric}_ms", format_percentile(p))
}

/// `99.0` → `99`, `99.9` → `99.9` (vLLM prints `int(p)` when p is whole).
pub fn format_percentile(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
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

/// Every top-level key a record may have besides the statistics (`mean_ttft_ms`, …): the fields
/// of [`ScenarioResult`] and of the flattened [`ScenarioParams`] as serde names them (read from
/// their derived JSON Schema, so a new field is known without a list to update), and the old
/// name `errors` of the by-kind counts.
pub fn record_keys() -> &'static std::collections::BTreeSet<String> {
    static KEYS: std::sync::OnceLock<std::collections::BTreeSet<String>> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let schema = schemars::schema_for!(ScenarioResult);
        let mut keys: std::collections::BTreeSet<String> = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        keys.insert("errors".into());
        keys
    })
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}:{line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path}: {reason}")]
    Io {
        path: String,
        reason: std::io::Error,
    },
}

/// Records read from JSON Lines, with what was ignored on the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadRecords {
    pub records: Vec<ScenarioResult>,
    /// One line per unknown key (its first line and how many lines had it): unknown keys are
    /// ignored, so that a record written by a newer perfgate or extended by hand still reads.
    pub warnings: Vec<String>,
    /// The SHA-256 (hex) of the bytes read: a check's report keeps it per results file and
    /// `baseline promote` compares it with the file it promotes.
    pub sha256: String,
}

/// Parse JSON Lines of records. Blank lines are skipped; every other line must be a record.
/// Unknown keys are ignored (see [`parse_jsonl_with_warnings`] for the warnings).
pub fn parse_jsonl(text: &str, path: &str) -> Result<Vec<ScenarioResult>, RecordError> {
    parse_jsonl_with_warnings(text, path).map(|r| r.records)
}

/// Parse JSON Lines of records. A line that is not a JSON object, a key whose value has the
/// wrong type and a missing required key are errors naming the file, line and key; a key that
/// is neither a record field nor a statistic (`p99_ttft_ms`, …) is ignored with a warning.
pub fn parse_jsonl_with_warnings(text: &str, path: &str) -> Result<ReadRecords, RecordError> {
    let mut out = ReadRecords::default();
    // unknown key -> (first line, lines)
    let mut unknown: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        // The key by name, a wrong value cut short (serde quotes it whole).
        let at = |message: String| RecordError::Parse {
            path: path.to_string(),
            line: i + 1,
            message: crate::redact::shorten(&message, 240),
        };
        let value: serde_json::Value =
            serde_json::from_str(t).map_err(|e| at(format!("not valid JSON: {e}")))?;
        let serde_json::Value::Object(mut map) = value else {
            return Err(at("a record must be a JSON object".into()));
        };
        let metadata = map.get("metadata").cloned();
        typed_echoes(&mut map, metadata.as_ref());
        map.retain(|k, v| {
            if record_keys().contains(k) || is_stat_key(k) {
                return true;
            }
            // Keys of vLLM's result JSON that `perfgate run --save-result` writes too and a
            // record does not keep.
            if k == "endpoint_type" || k == "label" {
                return false;
            }
            // `--save-result` repeats the metadata as top-level keys, as vLLM does.
            let echoed = metadata
                .as_ref()
                .and_then(|m| m.get(k))
                .is_some_and(|m| m == v);
            if !echoed {
                let e = unknown.entry(k.clone()).or_insert((i + 1, 0));
                e.1 += 1;
            }
            false
        });
        for (k, v) in &map {
            if is_stat_key(k) && !v.is_number() {
                return Err(at(format!("`{k}`: expected a number, got {}", kind_of(v))));
            }
        }
        let rec = record_from_map(map).map_err(at)?;
        for (key, v) in rec.metrics() {
            if let Err(m) = check_metric_value(&key, v) {
                return Err(at(format!("`{key}`: {m}")));
            }
        }
        out.records.push(rec);
    }
    for (key, (first, lines)) in unknown {
        let more = if lines > 1 {
            format!(" (and {} more lines)", lines - 1)
        } else {
            String::new()
        };
        out.warnings.push(format!(
            "{path}:{first}: unknown field `{key}` ignored{more}"
        ));
    }
    Ok(out)
}

/// `--metadata tensor_parallel_size=1` is echoed as the top-level string `"1"` (vLLM writes its
/// metadata values as strings): where such an echo lands on a record field that the string
/// does not fit (a count), the value the string spells (`1`) takes its place when that fits.
fn typed_echoes(
    map: &mut serde_json::Map<String, serde_json::Value>,
    metadata: Option<&serde_json::Value>,
) {
    let Some(serde_json::Value::Object(meta)) = metadata else {
        return;
    };
    for (k, m) in meta {
        let Some(text) = m.as_str() else { continue };
        if !record_keys().contains(k) || map.get(k) != Some(m) || field_fits(k, m) {
            continue;
        }
        if let Ok(typed) = serde_json::from_str::<serde_json::Value>(text.trim()) {
            if !typed.is_object() && !typed.is_array() && field_fits(k, &typed) {
                map.insert(k.clone(), typed);
            }
        }
    }
}

/// A minimal valid record, to try one key's value on.
fn skeleton() -> serde_json::Value {
    serde_json::json!({
        "model": "m", "dataset_name": "random", "num_prompts": 1, "completed": 1,
        "duration": 1.0, "total_input_tokens": 1, "total_output_tokens": 1,
        "request_throughput": 1.0, "output_throughput": 1.0
    })
}

/// Whether `k: v` alone is a valid value of the record field `k`.
fn field_fits(k: &str, v: &serde_json::Value) -> bool {
    let mut s = skeleton();
    if let Some(obj) = s.as_object_mut() {
        obj.insert(k.to_string(), v.clone());
    }
    serde_json::from_value::<ScenarioResult>(s).is_ok()
}

/// A short description of a JSON value for messages: `string "l6"`, `an object`, …
fn kind_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(b) => format!("{b}"),
        serde_json::Value::Number(n) => format!("number {n}"),
        serde_json::Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            format!("string {short:?}")
        }
        serde_json::Value::Array(_) => "a list".into(),
        serde_json::Value::Object(_) => "an object".into(),
    }
}

/// Deserialize one record; a type error names the key that caused it (serde's own message for a
/// flattened struct does not).
fn record_from_map(
    map: serde_json::Map<String, serde_json::Value>,
) -> Result<ScenarioResult, String> {
    let whole = serde_json::Value::Object(map.clone());
    let err = match serde_json::from_value::<ScenarioResult>(whole) {
        Ok(r) => return Ok(r),
        Err(e) => e.to_string(),
    };
    if err.starts_with("missing field") {
        return Err(err);
    }
    // Find the key: each one alone on a minimal valid record.
    let mut skeleton = skeleton();
    for (k, v) in &map {
        let obj = skeleton.as_object_mut().expect("an object");
        let before = obj.insert(k.clone(), v.clone());
        let res = serde_json::from_value::<ScenarioResult>(skeleton.clone());
        let obj = skeleton.as_object_mut().expect("an object");
        match before {
            Some(b) => obj.insert(k.clone(), b),
            None => obj.remove(k),
        };
        if let Err(e) = res {
            return Err(format!("`{k}`: {e} (got {})", kind_of(v)));
        }
    }
    Err(err)
}

/// Read a JSON Lines file of records (unknown keys ignored; see [`read_jsonl_with_warnings`]).
pub fn read_jsonl(path: &std::path::Path) -> Result<Vec<ScenarioResult>, RecordError> {
    read_jsonl_with_warnings(path).map(|r| r.records)
}

/// Read a JSON Lines file of records, with the warnings about ignored keys.
pub fn read_jsonl_with_warnings(path: &std::path::Path) -> Result<ReadRecords, RecordError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|reason| RecordError::Io {
        path: p.clone(),
        reason,
    })?;
    let mut read = parse_jsonl_with_warnings(&text, &p)?;
    read.sha256 = crate::text::sha256_hex(text.as_bytes());
    Ok(read)
}

/// Render records as JSON Lines (one compact object per line, trailing newline).
pub fn to_jsonl(records: &[ScenarioResult]) -> String {
    let mut s = String::new();
    for r in records {
        s.push_str(&serde_json::to_string(r).expect("records serialize"));
        s.push('\n');
    }
    s
}

/// Why a request failed. Every kind is counted separately, with the first message kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// The server answered with a non-2xx status.
    Http(u16),
    /// The stream carried an in-band `error` (an `event: error` or a JSON object with `error`).
    ErrorEvent,
    /// A data event that is not JSON, or JSON of an unexpected shape.
    MalformedEvent,
    /// The request could not be sent (refused, reset before a response, bad URL).
    Connection,
    /// The connection broke while the body was streaming.
    ConnectionReset,
    /// `--request-timeout` elapsed.
    Timeout,
    /// With `ignore_eos`, the server generated fewer tokens than `max_tokens` (its
    /// `usage.completion_tokens`): vLLM shortens an output that would run past the context,
    /// without an error. The run did not measure what it asked for.
    ShortOutput,
    /// The body ended cleanly but without `data: [DONE]`.
    NoDone,
    /// The stream ended (`[DONE]`) without one chunk carrying text: nothing to time a first token
    /// by. Counting it a success would put a TTFT of 0 into the statistics.
    NoOutput,
    /// The response broke a size bound: a head over 64 KiB (interim `1xx` included) or an SSE
    /// event over 8 MiB.
    TooLarge,
    /// More text chunks (or text bytes) than `max_tokens` can produce, past a margin: the stream
    /// was cut there (an engine that ignores `max_tokens`, or a server streaming without end).
    OverMaxTokens,
    /// `usage.completion_tokens` the request cannot have: above `max_tokens`, or 0 for a response
    /// that carried text. The engine's count is not taken.
    ImplausibleUsage,
    /// On a reused keep-alive connection, more bytes followed the response: what was read may be
    /// a response the server sent without a request, so it is not counted as this one's answer.
    UnsolicitedResponse,
}

impl FailureKind {
    /// The key in [`ScenarioResult::errors`].
    pub fn key(self) -> String {
        match self {
            FailureKind::Http(s) => format!("http_{s}"),
            FailureKind::ErrorEvent => "sse_error_event".into(),
            FailureKind::MalformedEvent => "malformed_event".into(),
            FailureKind::Connection => "connection_error".into(),
            FailureKind::ConnectionReset => "connection_reset".into(),
            FailureKind::Timeout => "timeout".into(),
            FailureKind::ShortOutput => "short_output".into(),
            FailureKind::NoDone => "stream_ended_without_done".into(),
            FailureKind::NoOutput => "no_output_tokens".into(),
            FailureKind::TooLarge => "response_too_large".into(),
            FailureKind::OverMaxTokens => "output_over_max_tokens".into(),
            FailureKind::ImplausibleUsage => "implausible_usage".into(),
            FailureKind::UnsolicitedResponse => "unsolicited_response".into(),
        }
    }
}

/// A failed request's kind and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

/// What one request measured. Times are offsets from the start of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestRecord {
    /// Position of the prompt in the scenario.
    pub index: u32,
    /// Prompt length in tokens (from the dataset).
    pub input_len: u32,
    /// The requested `max_tokens`.
    pub max_tokens: u32,
    /// When the request was due. Latencies are measured from here (no coordinated omission).
    pub scheduled: Duration,
    /// When the request was handed to the connection.
    pub sent: Duration,
    /// When the first chunk carrying text arrived.
    pub first_token: Option<Duration>,
    /// When the stream ended (`[DONE]` read) or the request failed.
    pub end: Duration,
    /// Gaps between successive text-bearing chunks, in nanoseconds.
    pub itl_ns: Vec<u64>,
    /// Number of text-bearing chunks.
    pub chunks: u32,
    /// `usage.completion_tokens`, when the server sent usage.
    pub usage_output_tokens: Option<u32>,
    /// `usage.prompt_tokens`, when the server sent usage.
    pub usage_prompt_tokens: Option<u32>,
    /// The generated text.
    pub text: String,
    pub finish_reason: Option<String>,
    pub failure: Option<Failure>,
    /// The request's own `model` (a LoRA adapter), when it was not the run's.
    pub model: Option<String>,
    /// The conversation and turn (from 0) of a multi-turn run.
    pub turn: Option<(u32, u32)>,
}

impl RequestRecord {
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// Time to first token, seconds, from the scheduled send time; `None` when no token arrived.
    pub fn ttft(&self) -> Option<f64> {
        self.first_token
            .map(|t| t.saturating_sub(self.scheduled).as_secs_f64())
    }

    /// End-to-end latency, seconds, from the scheduled send time.
    pub fn e2el(&self) -> f64 {
        self.end.saturating_sub(self.scheduled).as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
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

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Higher,
    Lower,
}

impl Direction {
    /// The natural direction of a metric by its name: throughputs, counts of successes and
    /// goodput are better higher; latencies, durations and failures are better lower.
    pub fn of(metric: &str) -> Direction {
        if metric.ends_with("_ms")
            || matches!(metric, "failed" | "duration")
            || metric.starts_with("error")
        {
            Direction::Lower
        } else {
            Direction::Higher
        }
    }
}

#[cfg(test)]
mod direction_tests {
    use super::Direction;

    #[test]
    fn directions() {
        assert_eq!(Direction::of("p99_ttft_ms"), Direction::Lower);
        assert_eq!(Direction::of("failed"), Direction::Lower);
        assert_eq!(Direction::of("output_throughput"), Direction::Higher);
        assert_eq!(Direction::of("completed"), Direction::Higher);
    }
}

#[cfg(test)]
mod request_field_tests {
    use super::*;

    fn plain() -> ScenarioParams {
        ScenarioParams {
            dataset_name: "random".into(),
            num_prompts: 8,
            random_input_len: Some(32),
            random_output_len: Some(16),
            max_concurrency: Some(2),
            ..Default::default()
        }
    }

    #[test]
    fn request_fields_name_the_scenario_and_the_defaults_add_nothing() {
        let p = plain();
        assert_eq!(p.id(), "random-in32-out16-n8-c2");
        // Today's record of a plain scenario: none of the new keys.
        let json = serde_json::to_string(&p).unwrap();
        for key in [
            "endpoint",
            "temperature",
            "top_p",
            "ignore_eos",
            "extra_body",
        ] {
            assert!(!json.contains(key), "{key}: {json}");
        }
        // The live check's defaults written out name the same scenario.
        let same = ScenarioParams {
            temperature: Some(0.0),
            ignore_eos: Some(true),
            endpoint: Some(Endpoint::Completions),
            ..plain()
        };
        assert_eq!(same.id(), p.id());
        let chat = ScenarioParams {
            endpoint: Some(Endpoint::Chat),
            temperature: Some(0.7),
            top_p: Some(0.8),
            top_k: Some(20),
            repetition_penalty: Some(1.1),
            ignore_eos: Some(false),
            ..plain()
        };
        assert_eq!(
            chat.id(),
            "random-in32-out16-n8-c2-chat-temp0.7-topp0.8-reppen1.1-topk20-eos"
        );
        // Objects are named by their content, whatever the order of their keys.
        let body = |text: &str| ScenarioParams {
            extra_body: serde_json::from_str(text).unwrap(),
            ..plain()
        };
        let a = body(r#"{"seed": 1, "stop": ["x"]}"#);
        assert_eq!(a.id(), body(r#"{"stop": ["x"], "seed": 1}"#).id());
        assert_ne!(a.id(), body(r#"{"seed": 2, "stop": ["x"]}"#).id());
        assert!(
            a.id().starts_with("random-in32-out16-n8-c2-body"),
            "{}",
            a.id()
        );
    }

    #[test]
    fn the_body_fields_come_in_order_and_extra_body_wins() {
        let p = ScenarioParams {
            endpoint: Some(Endpoint::Chat),
            top_p: Some(0.5),
            chat_template_kwargs: serde_json::json!({"enable_thinking": false})
                .as_object()
                .cloned(),
            extra_body: serde_json::json!({"top_p": 0.9, "seed": 3})
                .as_object()
                .cloned(),
            ..plain()
        };
        let b = serde_json::Value::Object(p.body_fields());
        assert_eq!(
            b,
            serde_json::json!({
                "top_p": 0.9, "chat_template_kwargs": {"enable_thinking": false}, "seed": 3
            })
        );
        assert_eq!(p.check_request_fields(), Ok(()));
    }

    #[test]
    fn out_of_range_or_misplaced_request_fields_are_named() {
        type Case = (fn(&mut ScenarioParams), &'static str);
        let cases: [Case; 6] = [
            (|p| p.top_p = Some(0.0), "top_p must be in (0, 1], got 0"),
            (|p| p.min_p = Some(1.5), "min_p must be in [0, 1], got 1.5"),
            (
                |p| p.temperature = Some(f64::NAN),
                "temperature must be a finite number",
            ),
            (
                |p| p.top_k = Some(-2),
                "top_k must be -1 (off) or more, got -2",
            ),
            (
                |p| p.chat_template_kwargs = Some(JsonObject::new()),
                "chat_template_kwargs needs endpoint = \"chat\"",
            ),
            (
                |p| p.extra_body = serde_json::json!({"stream": false}).as_object().cloned(),
                "extra_body must not set `stream`",
            ),
        ];
        for (set, says) in cases {
            let mut p = plain();
            set(&mut p);
            let err = p.check_request_fields().unwrap_err();
            assert!(err.starts_with(says), "{err}");
        }
    }
}
