//! The scenario's kinds: the dataset, the request rate and how a length range is read.

use std::fmt;

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
    /// Spec-Bench's `question.jsonl` (`--dataset-path`): each question's first turn, output
    /// length from --spec-bench-output-len, optionally one --spec-bench-category.
    #[value(name = "spec_bench", alias = "spec-bench")]
    SpecBench,
    /// BurstGPT's CSV (`--dataset-path`): random prompts of its GPT-4 rows' request and
    /// response token counts.
    Burstgpt,
    /// vLLM's spelling of a timed trace (`--dataset-path`): as `--trace`, with vLLM's
    /// `--timed-trace-sec-multiplier`.
    #[value(name = "timed_trace", alias = "timed-trace")]
    TimedTrace,
}

impl DatasetName {
    /// Whether `num_prompts` 0 (vLLM's `--num-prompts -1`) means every prompt of the file.
    pub fn reads_every_prompt(self) -> bool {
        matches!(self, DatasetName::Custom | DatasetName::SpecBench)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DatasetName::Random => "random",
            DatasetName::Sharegpt => "sharegpt",
            DatasetName::Fixed => "fixed",
            DatasetName::Jsonl => "jsonl",
            DatasetName::PrefixRepetition => "prefix_repetition",
            DatasetName::Custom => "custom",
            DatasetName::SpecBench => "spec_bench",
            DatasetName::Burstgpt => "burstgpt",
            DatasetName::TimedTrace => "timed_trace",
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
            "spec_bench" => DatasetName::SpecBench.into(),
            "burstgpt" => DatasetName::Burstgpt.into(),
            "timed_trace" => DatasetName::TimedTrace.into(),
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
