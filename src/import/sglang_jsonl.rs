//! SGLang `bench_serving` JSON Lines (`--output-file`, one object appended per run). Keys follow
//! vLLM's except the end-to-end latency (`mean_e2e_latency_ms` → `mean_e2el_ms`) and
//! `total_throughput`; `--random-range-ratio` is read in SGLang's convention.

use super::vllm_json::{parse_objects, Flavor};
use super::{ImportError, ImportOptions, Imported};

pub fn parse(text: &str, path: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    parse_objects(text, path, opts, Flavor::Sglang)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RangeConvention;

    #[test]
    fn sglang_keys_map_to_record_keys() {
        let line = r#"{"backend": "sglang", "dataset_name": "random", "request_rate": "inf", "max_concurrency": null, "sharegpt_output_len": null, "random_input_len": 1024, "random_output_len": 1024, "random_range_ratio": 1.0, "duration": 779.02, "completed": 2000, "total_input_tokens": 2048000, "total_output_tokens": 2048000, "total_output_tokens_retokenized": 2046480, "request_throughput": 2.57, "input_throughput": 2628.95, "output_throughput": 2628.95, "mean_e2e_latency_ms": 434396.74, "median_e2e_latency_ms": 459512.65, "std_e2e_latency_ms": 1.5, "p99_e2e_latency_ms": 800000.5, "mean_ttft_ms": 347054.59, "median_ttft_ms": 374471.24, "std_ttft_ms": 2.25, "p99_ttft_ms": 752993.18, "mean_tpot_ms": 85.38, "median_tpot_ms": 84.43, "std_tpot_ms": 0.5, "p99_tpot_ms": 116.35, "mean_itl_ms": 85.41, "median_itl_ms": 58.48, "std_itl_ms": 3.0, "p95_itl_ms": 200.5, "p99_itl_ms": 271.11, "concurrency": 1115.21, "accept_length": null}"#;
        let opts = ImportOptions {
            model: Some("Qwen/Qwen3-8B".into()),
            num_prompts: Some(2000),
            ..Default::default()
        };
        let got = parse(&format!("{line}\n{line}\n"), "s.jsonl", &opts).unwrap();
        assert_eq!(got.records.len(), 2);
        let r = &got.records[0];
        assert_eq!(r.stats["mean_e2el_ms"], 434396.74);
        assert_eq!(r.stats["p95_itl_ms"], 200.5);
        assert_eq!(r.total_output_tokens_retokenized, Some(2046480));
        assert_eq!(r.concurrency, Some(1115.21));
        assert_eq!(r.params.range_convention, Some(RangeConvention::Sglang));
        assert_eq!(r.scenario_id(), "random-in1024-out1024-n2000");
        assert_eq!(got.records[1].source.as_deref(), Some("s.jsonl:2"));
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    }

    #[test]
    fn without_num_prompts_the_flag_is_required() {
        let line = r#"{"backend": "sglang", "model_id": "m", "dataset_name": "sharegpt", "duration": 1.0, "completed": 10, "total_input_tokens": 1, "total_output_tokens": 1, "request_throughput": 1.0, "output_throughput": 1.0, "median_e2e_latency_ms": 3.0}"#;
        let err = parse(line, "s.jsonl", &ImportOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.jsonl:1: the result has no `num_prompts`; pass `--num-prompts`"
        );
    }
}
