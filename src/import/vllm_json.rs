//! vLLM `--save-result` JSON: one object per run, or many appended (`--append-result` writes
//! them one per line). The keys are already perfgate's record keys; the scenario parameters
//! that vLLM does not save (`dataset_name`, `random_input_len`, …) come from `--metadata`
//! entries when present, else from the import flags. Also holds the JSON mapping shared with
//! [`super::sglang_jsonl`].

use serde_json::{Map, Value};

use super::{ImportError, ImportOptions, Imported};
use crate::record::{
    is_stat_key, OutputTokenSource, RangeConvention, RequestRate, ScenarioParams, ScenarioResult,
};

/// Which tool wrote the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Vllm,
    Sglang,
}

/// Per-request arrays and bookkeeping keys that are not part of a record.
const SKIPPED_KEYS: [&str; 17] = [
    "endpoint_type",
    "label",
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "latencies",
    "start_times",
    "queue_times",
    "generated_texts",
    "errors",
    "rtfx",
    "accept_length",
    "total_input_text_tokens",
    "total_input_vision_tokens",
    "ramp_up_strategy",
    "tag",
];

pub fn parse(text: &str, path: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    parse_objects(text, path, opts, Flavor::Vllm)
}

/// Parse a stream of JSON objects (concatenated, one per line, or pretty-printed).
pub fn parse_objects(
    text: &str,
    path: &str,
    opts: &ImportOptions,
    flavor: Flavor,
) -> Result<Imported, ImportError> {
    let mut out = Imported::default();
    super::nan_only_in_statistics(text, path)?;
    let text = &*super::python_json(text);
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let lines = crate::text::LineIndex::new(text);
    loop {
        let start = text.len() - text[stream.byte_offset()..].trim_start().len();
        let line = lines.line(start);
        match stream.next() {
            None => break,
            Some(Err(e)) => {
                return Err(ImportError::at(
                    path,
                    e.line(),
                    format!("invalid JSON: {e}"),
                ));
            }
            Some(Ok(Value::Object(obj))) => {
                match record(&obj, flavor, path, line, opts, &mut out.warnings) {
                    Ok(r) => out.records.push(r),
                    Err(e) => out.skip(e, opts)?,
                }
            }
            Some(Ok(_)) => {
                return Err(ImportError::at(
                    path,
                    line,
                    "expected a JSON object (one result)",
                ));
            }
        }
    }
    Ok(out)
}

/// A value for a message: at most 60 characters of it.
fn shown(v: &Value) -> String {
    crate::redact::shorten(&v.to_string(), 60)
}

fn as_f64(v: &Value, key: &str, path: &str, line: usize) -> Result<f64, ImportError> {
    v.as_f64().ok_or_else(|| {
        ImportError::at(
            path,
            line,
            format!("`{key}`: `{}` is not a number", shown(v)),
        )
    })
}

fn as_u64(v: &Value, key: &str, path: &str, line: usize) -> Result<u64, ImportError> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| {
        ImportError::at(
            path,
            line,
            format!("`{key}`: `{}` is not a whole number", shown(v)),
        )
    })
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Map one result object to a record.
pub fn record(
    obj: &Map<String, Value>,
    flavor: Flavor,
    path: &str,
    line: usize,
    opts: &ImportOptions,
    warnings: &mut Vec<String>,
) -> Result<ScenarioResult, ImportError> {
    let rd = Fields { obj, path, line };
    let model = rd
        .get("model_id")
        .or_else(|| rd.get("model"))
        .and_then(as_text)
        .or_else(|| opts.model.clone())
        .ok_or(ImportError::NoModel {
            path: path.into(),
            line,
        })?;
    let dataset_name = rd
        .get("dataset_name")
        .and_then(as_text)
        .or_else(|| opts.dataset_name.clone())
        .ok_or_else(|| {
            ImportError::at(path, line, "the result does not name its dataset (no `dataset_name`; vLLM saves it only through `--metadata dataset_name=…`); pass `--dataset-name`")
        })?;
    let completed = rd.need_u("completed")?;
    let failed = rd.u("failed")?.unwrap_or(0);
    let num_prompts = match rd.u("num_prompts")?.or(opts.num_prompts) {
        Some(n) => n,
        None if rd.get("failed").is_some() => completed + failed,
        None => {
            return Err(ImportError::at(
                path,
                line,
                "the result has no `num_prompts`; pass `--num-prompts`",
            ))
        }
    };
    let params = rd.params(dataset_name, num_prompts, flavor, opts)?;
    let mut r = rd.outcome(model, params, completed, failed)?;
    r.engine = opts
        .engine
        .clone()
        .or_else(|| rd.get("engine").and_then(as_text))
        .or_else(|| {
            r.backend
                .as_deref()
                .and_then(super::known_engine)
                .map(str::to_string)
        });
    r.engine_version = opts
        .engine_version
        .clone()
        .or_else(|| rd.get("engine_version").and_then(as_text));
    rd.stats(&mut r, warnings)?;
    Ok(r)
}

/// One result object being read, with where it is (for messages).
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    path: &'a str,
    line: usize,
}

impl Fields<'_> {
    /// The value of `k`, unless it is absent or `null`.
    fn get(&self, k: &str) -> Option<&Value> {
        self.obj.get(k).filter(|v| !v.is_null())
    }

    fn f(&self, k: &str) -> Result<Option<f64>, ImportError> {
        self.get(k)
            .map(|v| as_f64(v, k, self.path, self.line))
            .transpose()
    }

    fn u(&self, k: &str) -> Result<Option<u64>, ImportError> {
        self.get(k)
            .map(|v| as_u64(v, k, self.path, self.line))
            .transpose()
    }

    fn missing(&self, k: &str) -> ImportError {
        ImportError::at(self.path, self.line, format!("the result has no `{k}`"))
    }

    fn need_f(&self, k: &str) -> Result<f64, ImportError> {
        self.f(k)?.ok_or_else(|| self.missing(k))
    }

    fn need_u(&self, k: &str) -> Result<u64, ImportError> {
        self.u(k)?.ok_or_else(|| self.missing(k))
    }

    /// The scenario parameters besides the dataset name and the prompt count.
    fn params(
        &self,
        dataset_name: String,
        num_prompts: u64,
        flavor: Flavor,
        opts: &ImportOptions,
    ) -> Result<ScenarioParams, ImportError> {
        let mut params = ScenarioParams {
            dataset_name: dataset_name.clone().into(),
            num_prompts,
            max_concurrency: self.u("max_concurrency")?,
            ..Default::default()
        };
        if let Some(rate) = self.get("request_rate") {
            let t = as_text(rate).unwrap_or_default();
            params.request_rate = t.parse::<RequestRate>().map_err(|m| {
                ImportError::at(self.path, self.line, format!("`request_rate`: {m}"))
            })?;
        }
        if !params.request_rate.is_inf() {
            params.burstiness = self.f("burstiness")?;
        }
        if dataset_name == "random" {
            params.random_input_len = self.u("random_input_len")?.or(opts.random_input_len);
            params.random_output_len = self.u("random_output_len")?.or(opts.random_output_len);
            params.random_range_ratio = self.f("random_range_ratio")?.or(opts.random_range_ratio);
            let from_file = self
                .get("range_convention")
                .and_then(as_text)
                .and_then(|c| match c.as_str() {
                    "vllm" => Some(RangeConvention::Vllm),
                    "sglang" => Some(RangeConvention::Sglang),
                    _ => None,
                });
            params.range_convention =
                Some(from_file.or(opts.range_convention).unwrap_or(match flavor {
                    Flavor::Vllm => RangeConvention::Vllm,
                    Flavor::Sglang => RangeConvention::Sglang,
                }));
        }
        if dataset_name == "sharegpt" {
            params.sharegpt_output_len = self.u("sharegpt_output_len")?;
        }
        Ok(params)
    }

    /// The record with its identity, scenario and outcome metrics (no statistics yet).
    fn outcome(
        &self,
        model: String,
        params: ScenarioParams,
        completed: u64,
        failed: u64,
    ) -> Result<ScenarioResult, ImportError> {
        let (path, line) = (self.path, self.line);
        Ok(ScenarioResult {
            date: self.get("date").and_then(as_text),
            backend: self.get("backend").and_then(as_text),
            model,
            model_id: self.get("model_id").and_then(as_text),
            tokenizer_id: self.get("tokenizer_id").and_then(as_text),
            params,
            seed: self.u("seed")?,
            completed,
            failed,
            duration: self.need_f("duration")?,
            total_input_tokens: self.need_u("total_input_tokens")?,
            total_output_tokens: self.need_u("total_output_tokens")?,
            total_output_tokens_retokenized: self.u("total_output_tokens_retokenized")?,
            request_throughput: self.need_f("request_throughput")?,
            request_goodput: self.f("request_goodput")?,
            input_throughput: self.f("input_throughput")?,
            output_throughput: self.need_f("output_throughput")?,
            total_token_throughput: self
                .f("total_token_throughput")?
                .or(self.f("total_throughput")?),
            max_output_tokens_per_s: self.f("max_output_tokens_per_s")?,
            max_concurrent_requests: self.u("max_concurrent_requests")?,
            concurrency: self.f("concurrency")?,
            // vLLM's perf CI passes `--metadata tensor_parallel_size=N`: a string in the JSON.
            tensor_parallel_size: self
                .u("tensor_parallel_size")?
                .map(|n| {
                    u32::try_from(n).map_err(|_| {
                        ImportError::at(
                            path,
                            line,
                            format!("`tensor_parallel_size`: {n} is too large"),
                        )
                    })
                })
                .transpose()?,
            source: Some(format!("{path}:{line}")),
            output_token_source: Some(OutputTokenSource::Reported),
            ..Default::default()
        })
    }

    /// Put the distribution statistics into `r` (SGLang's `*_e2e_latency_ms` under vLLM's
    /// names) and warn once about the keys that are not part of a record.
    fn stats(&self, r: &mut ScenarioResult, warnings: &mut Vec<String>) -> Result<(), ImportError> {
        let (path, line) = (self.path, self.line);
        let mut ignored = Vec::new();
        for (k, v) in self.obj {
            let stat = match k.strip_suffix("_e2e_latency_ms") {
                Some(stat) => format!("{stat}_e2el_ms"),
                None => k.clone(),
            };
            if is_stat_key(&stat) {
                if !v.is_null() {
                    r.stats.insert(stat, as_f64(v, k, path, line)?);
                }
            } else if !USED_KEYS.contains(&k.as_str())
                && !crate::record::OUTCOME_METRICS.contains(&k.as_str())
                && !SKIPPED_KEYS.contains(&k.as_str())
                && k != "ramp_up_end_rps"
            {
                ignored.push(k.as_str());
            }
        }
        if !ignored.is_empty() {
            warnings.push(format!(
                "{path}:{line}: keys not part of a record were ignored: {}",
                ignored.join(", ")
            ));
        }
        Ok(())
    }
}

/// Identity and extra keys [`record`] reads; the outcome metrics are `record::OUTCOME_METRICS`.
const USED_KEYS: [&str; 22] = [
    "date",
    "tensor_parallel_size",
    "backend",
    "model",
    "model_id",
    "tokenizer_id",
    "dataset_name",
    "num_prompts",
    "max_concurrency",
    "request_rate",
    "burstiness",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "range_convention",
    "sharegpt_output_len",
    "seed",
    "total_throughput",
    "concurrency",
    "engine",
    "engine_version",
    "ramp_up_start_rps",
];

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"{"date": "20250820-101500", "endpoint_type": "vllm", "backend": "vllm", "label": null, "model_id": "Qwen/Qwen3-8B", "tokenizer_id": "Qwen/Qwen3-8B", "num_prompts": 200, "dataset_name": "random", "random_input_len": 1024, "random_output_len": 128, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 64, "duration": 41.3361902, "completed": 198, "failed": 2, "total_input_tokens": 202752, "total_output_tokens": 25344, "request_throughput": 4.790054981, "request_goodput": null, "output_throughput": 613.1270376, "total_token_throughput": 5518.143379, "max_output_tokens_per_s": 1344.0, "max_concurrent_requests": 64, "mean_ttft_ms": 1234.5678901234, "median_ttft_ms": 1100.25, "std_ttft_ms": 300.125, "p99_ttft_ms": 2900.0625, "mean_tpot_ms": 45.1, "median_tpot_ms": 44.9, "std_tpot_ms": 3.2, "p99_tpot_ms": 60.7, "mean_itl_ms": 45.3, "median_itl_ms": 40.2, "std_itl_ms": 10.1, "p99_itl_ms": 120.4, "input_lens": [1, 2]}"#;

    #[test]
    fn one_object_exactly() {
        let got = parse(ONE, "r.json", &ImportOptions::default()).unwrap();
        assert_eq!(got.records.len(), 1);
        let r = &got.records[0];
        assert_eq!(r.model, "Qwen/Qwen3-8B");
        assert_eq!(r.scenario_id(), "random-in1024-out128-n200-c64");
        assert_eq!(r.completed, 198);
        assert_eq!(r.failed, 2);
        assert_eq!(r.duration, 41.3361902);
        assert_eq!(r.stats["mean_ttft_ms"], 1234.5678901234);
        assert_eq!(r.max_concurrent_requests, Some(64));
        assert_eq!(r.request_goodput, None);
        assert_eq!(r.source.as_deref(), Some("r.json:1"));
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    }

    #[test]
    fn appended_objects_and_pretty_printing() {
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<Value>(ONE).unwrap()).unwrap();
        let text = format!("{ONE}\n{pretty}\n");
        let got = parse(&text, "r.json", &ImportOptions::default()).unwrap();
        assert_eq!(got.records.len(), 2);
        assert_eq!(got.records[1].source.as_deref(), Some("r.json:2"));
        assert_eq!(got.records[0].stats, got.records[1].stats);
    }

    #[test]
    fn bad_values_name_the_line() {
        let text = format!(
            "{ONE}\n{}",
            ONE.replace("\"duration\": 41.3361902", "\"duration\": \"fast\"")
        );
        let err = parse(&text, "r.json", &ImportOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "r.json:2: `duration`: `\"fast\"` is not a number"
        );
        let err = parse("{\"completed\": 1,", "t.json", &ImportOptions::default()).unwrap_err();
        assert!(
            err.to_string().starts_with("t.json:1: invalid JSON"),
            "{err}"
        );
    }

    #[test]
    fn metadata_tensor_parallel_size_is_read_as_a_count() {
        let text = ONE.replace(
            "\"input_lens\"",
            "\"tensor_parallel_size\": \"2\", \"input_lens\"",
        );
        let got = parse(&text, "r.json", &ImportOptions::default()).unwrap();
        assert_eq!(got.records[0].tensor_parallel_size, Some(2));
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    }

    #[test]
    fn missing_model_needs_the_flag() {
        let text = ONE.replace("\"model_id\": \"Qwen/Qwen3-8B\", ", "");
        let err = parse(&text, "r.json", &ImportOptions::default()).unwrap_err();
        assert!(matches!(err, ImportError::NoModel { .. }));
        assert!(err.to_string().contains("pass `--model`"), "{err}");
    }
}
