//! The records the integration tests gate, import and report: one run of one scenario
//! ([`record`]), a seed-like suite of 6 models × 4 scenarios ([`seed_records`], and
//! [`baseline_of`] for its baseline file), the same measured on several engine launches
//! ([`on_launches`]), and any record made faster or slower ([`scaled`]). Built on
//! `ScenarioResult::synthetic` where the shape allows; every value is deterministic.

use std::collections::BTreeMap;

use perfgate::baseline::{
    Baseline, EngineInfo, MetricSeries, ModelBaseline, RunInfo, ScenarioBaseline, SCHEMA_VERSION,
};
use perfgate::record::{self, Direction, RequestRate, ScenarioParams, ScenarioResult};

/// One run of a 200-request `random` scenario of `model` (1024 tokens in, 128 out) by vLLM, its
/// throughputs × `thr` and latencies × `lat`; run `run` is 0.2 % faster per index, so runs differ.
pub fn record(model: &str, run: u32, thr: f64, lat: f64) -> ScenarioResult {
    let n = 200;
    let jitter = 1.0 + 0.002 * run as f64;
    let mut r = ScenarioResult {
        engine: Some("vllm".into()),
        run_index: run,
        duration: 100.0 / (thr * jitter),
        request_throughput: n as f64 / 100.0 * thr * jitter,
        output_throughput: 256.0 * thr * jitter,
        ..ScenarioResult::synthetic(model, n, 1024, 128)
    };
    for (k, v) in [
        ("median_ttft_ms", 850.0),
        ("p99_ttft_ms", 2400.0),
        ("median_tpot_ms", 21.5),
        ("p99_tpot_ms", 40.25),
        ("median_itl_ms", 20.75),
        ("mean_e2el_ms", 3900.0),
    ] {
        r.stats.insert(k.into(), v * lat / jitter);
    }
    r
}

/// Throughputs × `thr`, duration ÷ `thr`, every latency statistic × `lat`.
pub fn scaled(r: &ScenarioResult, thr: f64, lat: f64) -> ScenarioResult {
    let mut r = r.clone();
    r.output_throughput *= thr;
    r.request_throughput *= thr;
    r.total_token_throughput = r.total_token_throughput.map(|v| v * thr);
    r.duration /= thr;
    for v in r.stats.values_mut() {
        *v *= lat;
    }
    r
}

const MODELS: [&str; 6] = [
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-235B-A22B",
    "openai/gpt-oss-20b",
    "openai/gpt-oss-120b",
];

/// Dataset name, number of prompts, (input, output) lengths for random data.
type ScenarioSpec<'a> = (&'a str, u64, Option<(u64, u64)>);

/// Seed-like records: 6 models × 4 scenarios, one run each.
pub fn seed_records() -> Vec<ScenarioResult> {
    let scenarios: [ScenarioSpec<'_>; 4] = [
        ("random", 2000, Some((1024, 1024))),
        ("random", 2000, Some((2048, 128))),
        ("random", 1000, Some((128, 2048))),
        ("sharegpt", 10000, None),
    ];
    let mut out = Vec::new();
    for (mi, model) in MODELS.iter().enumerate() {
        for (si, (ds, n, lens)) in scenarios.iter().enumerate() {
            let speed = 1.0 / (1.0 + mi as f64 * 0.7) * (1.0 + si as f64 * 0.3);
            let out_tokens = lens.map_or(2_000_000, |(_, o)| o * n);
            let duration = 600.0 / speed;
            let mut r = ScenarioResult {
                model: model.to_string(),
                engine: Some("vllm".into()),
                engine_version: Some("v0.10.1".into()),
                params: ScenarioParams {
                    dataset_name: (*ds).into(),
                    num_prompts: *n,
                    random_input_len: lens.map(|l| l.0),
                    random_output_len: lens.map(|l| l.1),
                    random_range_ratio: lens.map(|_| 1.0),
                    range_convention: lens.map(|_| record::RangeConvention::Sglang),
                    request_rate: RequestRate::Inf,
                    ..Default::default()
                },
                completed: *n,
                duration,
                total_input_tokens: lens.map_or(2_500_000, |(i, _)| i * n),
                total_output_tokens: out_tokens,
                request_throughput: *n as f64 / duration,
                output_throughput: out_tokens as f64 / duration,
                total_token_throughput: Some(2.0 * out_tokens as f64 / duration),
                ..Default::default()
            };
            for (metric, base) in [
                ("ttft", 90_000.0),
                ("tpot", 60.0),
                ("itl", 58.0),
                ("e2el", 200_000.0),
            ] {
                let v = base / speed;
                r.stats.insert(format!("mean_{metric}_ms"), v * 1.05);
                r.stats.insert(format!("median_{metric}_ms"), v);
                r.stats.insert(format!("std_{metric}_ms"), v * 0.3);
                r.stats.insert(format!("p99_{metric}_ms"), v * 2.1);
            }
            out.push(r);
        }
    }
    out
}

/// A baseline file holding `recs` (one run each).
pub fn baseline_of(recs: &[ScenarioResult]) -> Baseline {
    let mut models: Vec<ModelBaseline> = Vec::new();
    for r in recs {
        let idx = match models.iter().position(|m| m.name == r.model) {
            Some(i) => i,
            None => {
                models.push(ModelBaseline {
                    name: r.model.clone(),
                    ..Default::default()
                });
                models.len() - 1
            }
        };
        let mut metrics = BTreeMap::new();
        let mut put = |k: &str, v: f64| {
            metrics.insert(
                k.to_string(),
                MetricSeries {
                    direction: Direction::of(k),
                    values: vec![v],
                },
            );
        };
        for k in [
            "completed",
            "failed",
            "duration",
            "total_input_tokens",
            "total_output_tokens",
            "request_throughput",
            "output_throughput",
            "total_token_throughput",
        ] {
            put(k, r.metric(k).unwrap());
        }
        for (k, v) in &r.stats {
            put(k, *v);
        }
        models[idx].scenarios.push(ScenarioBaseline {
            id: r.scenario_id(),
            params: r.params.clone(),
            runs: vec![RunInfo {
                source: Some("seed.txt:1".into()),
                ..Default::default()
            }],
            metrics,
        });
    }
    Baseline {
        schema_version: SCHEMA_VERSION,
        engine: EngineInfo {
            name: "vllm".into(),
            version: Some("v0.10.1".into()),
            ..Default::default()
        },
        provenance: Default::default(),
        gate: None,
        models,
    }
}

/// `recs` measured on `n` engine launches (ids `{tag}0`, `{tag}1`, …), each launch ±1 % off the
/// others, deterministically, all in one session (the between-session term has its own tests
/// in `decision.rs`); the records' own sources are dropped.
pub fn on_launches(recs: &[ScenarioResult], tag: &str, n: usize) -> Vec<ScenarioResult> {
    (0..n)
        .flat_map(|i| {
            let w = 1.0 + 0.01 * ((i % 3) as f64 - 1.0);
            recs.iter().map(move |r| {
                let mut r = scaled(r, w, 1.0 / w);
                r.source = None;
                r.launch_id = Some(format!("{tag}{i}"));
                r.session_id = Some("s".into());
                r.run_index = i as u32;
                r.run_in_launch = Some(0);
                r
            })
        })
        .collect()
}
