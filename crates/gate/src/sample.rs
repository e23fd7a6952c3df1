//! A small, fixed report shared by the renderers' snapshot tests, and the records it is made
//! of (the gate's own tests use them too). Built with the `sample` feature or in tests only.

use crate::baseline::{
    Baseline, EngineInfo, MetricSeries, ModelBaseline, Provenance, ScenarioBaseline,
};
use crate::gate::{evaluate, GateConfig, Inputs, ScenarioError, Side};
use crate::record::{Direction, ScenarioParams, ScenarioResult};

/// One scenario's record: `n` prompts of 1024 in / 128 out, throughput and latencies scaled.
pub fn record(model: &str, n: u64, scale_thr: f64, scale_lat: f64) -> ScenarioResult {
    let mut r = ScenarioResult {
        engine: Some("vllm".into()),
        duration: 100.0 / scale_thr,
        request_throughput: n as f64 / 100.0 * scale_thr,
        output_throughput: 1280.0 * n as f64 / 1000.0 * scale_thr,
        ..ScenarioResult::synthetic(model, n, 1024, 128)
    };
    for (k, v) in [
        ("median_ttft_ms", 850.0),
        ("p99_ttft_ms", 2400.0),
        ("median_tpot_ms", 21.5),
        ("p99_tpot_ms", 40.25),
        ("median_itl_ms", 20.75),
        ("mean_e2el_ms", 3900.0),
        ("mean_ttft_ms", 900.0),
    ] {
        r.stats.insert(k.into(), v * scale_lat);
    }
    r
}

/// `record` for launch `launch` of a side, with a ±1 % launch-to-launch wiggle, on a steady
/// machine (perfgate's calibration loop timed at 10 ms before every run, as a live check
/// records it; without loop times the gate would assume larger session offsets).
fn launch(model: &str, n: u64, thr: f64, lat: f64, launch: &str, i: usize) -> ScenarioResult {
    let w = 1.0 + 0.01 * (i as f64 - 1.0);
    let mut r = record(model, n, thr * w, lat / w);
    r.launch_id = Some(launch.into());
    r.run_index = i as u32;
    r.telemetry = Some(perfgate_record::telemetry::Telemetry {
        calibration_ms: Some(10.0),
        ..Default::default()
    });
    r
}

/// Two models, three launches a side; model B's second scenario 20 % slower; model A lacks
/// a scenario; model C's engine failed.
pub fn report() -> crate::gate::Report {
    let side = |tag: &str, spec: &[(&str, u64, f64, f64)]| -> Vec<ScenarioResult> {
        (0..3)
            .flat_map(|i| {
                spec.iter()
                    .map(move |(m, n, t, l)| launch(m, *n, *t, *l, &format!("{tag}{i}"), i))
            })
            .collect()
    };
    let base = side(
        "B",
        &[
            ("org/model-a", 100, 1.0, 1.0),
            ("org/model-a", 200, 1.0, 1.0),
            ("org/model-b", 100, 1.0, 1.0),
            ("org/model-b", 200, 1.0, 1.0),
        ],
    );
    let cur = side(
        "C",
        &[
            ("org/model-a", 100, 1.01, 0.99),
            ("org/model-b", 100, 1.0, 1.0),
            ("org/model-b", 200, 0.8, 1.25),
        ],
    );
    let errors = vec![ScenarioError {
        model: "org/model-c".into(),
        scenario: "random-in1024-out128-n100".into(),
        message: "engine exited with status 1".into(),
    }];
    evaluate(Inputs {
        errors: &errors,
        base_side: Side {
            sources: vec!["base.toml".into()],
            engine_version: Some("v0.10.1".into()),
            ..Default::default()
        },
        cur_side: Side {
            sources: vec!["cur.jsonl".into()],
            engine_version: Some("v0.10.2".into()),
            ..Default::default()
        },
        ..Inputs::new(&base, &cur, &GateConfig::default())
    })
}

/// A baseline `vllm vX` with one model, one scenario, output throughput `thr` over `runs`.
pub fn baseline(version: &str, date: Option<&str>, thr: &[f64]) -> Baseline {
    let params = ScenarioParams {
        dataset_name: "random".into(),
        num_prompts: 100,
        random_input_len: Some(1024),
        random_output_len: Some(128),
        ..Default::default()
    };
    let mut metrics = std::collections::BTreeMap::new();
    metrics.insert(
        "output_throughput".to_string(),
        MetricSeries {
            direction: Direction::Higher,
            values: thr.to_vec(),
        },
    );
    metrics.insert(
        "median_ttft_ms".to_string(),
        MetricSeries {
            direction: Direction::Lower,
            values: thr.iter().map(|t| 1e6 / t).collect(),
        },
    );
    Baseline {
        schema_version: 1,
        engine: EngineInfo {
            name: "vllm".into(),
            version: Some(version.into()),
            ..Default::default()
        },
        provenance: Provenance {
            date: date.map(str::to_string),
            ..Default::default()
        },
        gate: None,
        models: vec![ModelBaseline {
            name: "org/m".into(),
            scenarios: vec![ScenarioBaseline {
                id: params.id(),
                params,
                runs: thr.iter().map(|_| Default::default()).collect(),
                metrics,
            }],
            ..Default::default()
        }],
    }
}

/// A ±1.3 % wiggle, one per release.
const WIGGLE: [f64; 10] = [
    1.000, 1.013, 0.989, 1.006, 0.992, 1.011, 0.995, 1.009, 0.990, 1.004,
];

/// Ten baselines `vllm v0.1.0` … `v0.10.0`, throughput 2000 × wiggle × `factor(release)`, given
/// newest first (a history sorts them).
pub fn release_series(factor: impl Fn(usize) -> f64) -> Vec<(String, Baseline)> {
    // Given out of order on purpose: the history sorts by version.
    let mut v: Vec<(String, Baseline)> = (0..10)
        .map(|i| {
            (
                format!("b{i}.toml"),
                baseline(
                    &format!("v0.{}.0", i + 1),
                    None,
                    &[2000.0 * WIGGLE[i] * factor(i)],
                ),
            )
        })
        .collect();
    v.reverse();
    v
}
