//! The gate: statistics that turn baseline and current records into verdicts, and the
//! [`Report`] structure every renderer (terminal, markdown, JSON) and the GitHub poster consume.
//! Settings live in [`config`], the look of a sequential check in [`look`], the numbers in
//! [`stats`], the row and top verdicts in [`verdict`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::Direction;

pub mod config;
pub mod look;
pub mod machine;
pub mod merge;
pub mod moderate;
pub mod noise;
pub mod paired;
pub mod plan;
pub mod replay;
pub mod stats;
pub mod verdict;

pub use config::{GateConfig, MetricGate};
pub use look::{Levels, Look};
pub use machine::{machine_note, Machine, MACHINE_SHIFT_LIMIT};
pub use noise::{Noise, NoiseSource};
pub use verdict::{
    compared, confirm, confirm_held_out, count, duplicate, evaluate, nothing_compared, Inputs,
    ScenarioError, Scope, ALL_MODELS, ENGINE_WIDE, UNCONFIRMED,
};

/// The verdict of one row (model × scenario × metric).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Shown to be within the tolerance (the bound of "worse" sits below δ).
    Pass,
    /// Shown to be worse than the tolerance (one-sided test against the shifted null).
    Regressed,
    /// Shown to be better than the tolerance.
    Improved,
    /// Neither shown: more launches needed.
    Inconclusive,
    /// The scenario or metric exists on one side only.
    Missing,
    /// The engine or infrastructure failed; no measurement.
    Error,
}

/// The verdict of a whole check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopVerdict {
    Pass,
    Fail,
    Inconclusive,
    Error,
}

/// One compared row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub model: String,
    /// The scenario id (`ScenarioParams::id`).
    pub scenario: String,
    pub metric: String,
    /// Gated rows decide the top verdict; the others are shown only.
    pub gated: bool,
    pub direction: Direction,
    /// Central baseline value (geometric mean of the runs), if any.
    pub baseline: Option<f64>,
    /// Central current value (geometric mean of the runs), if any.
    pub current: Option<f64>,
    /// (current / baseline − 1) × 100.
    pub change_pct: Option<f64>,
    /// Confidence/prediction interval of the change, in percent: [low, high].
    pub interval: Option<[f64; 2]>,
    /// Tolerance δ in percent used for this row.
    pub tolerance_pct: Option<f64>,
    /// Holm-adjusted one-sided p-value of "worse than the tolerance", when a test was done.
    pub p_value: Option<f64>,
    /// Runs on each side.
    pub n_baseline: usize,
    pub n_current: usize,
    /// Engine launches on each side (the unit of replication), when the row was tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<[usize; 2]>,
    /// The noise the row was judged with and where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// For an inconclusive row: the candidate launches that would likely decide it (the
    /// baseline as it is); absent when more baseline launches are needed first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches_needed: Option<u32>,
    pub verdict: Verdict,
    /// Why: the statistical method, or the error/missing reason and log tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The row's test before the multiple-comparison step (its oriented change, standard error
    /// and df), so that `perfgate merge` can decide a matrix's rows as one family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<verdict::Test>,
}

/// Counts of row verdicts (gated rows only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub pass: usize,
    pub regressed: usize,
    pub improved: usize,
    pub inconclusive: usize,
    pub missing: usize,
    pub error: usize,
}

impl Counts {
    /// `1 regressed, 2 inconclusive, 5 pass`: the non-zero counts, worst first, then the passes.
    pub fn describe(&self, sep: &str) -> String {
        let mut parts = Vec::new();
        for (n, word) in [
            (self.regressed, "regressed"),
            (self.error, "error"),
            (self.missing, "missing"),
            (self.inconclusive, "inconclusive"),
            (self.improved, "improved"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        parts.push(format!("{} pass", self.pass));
        parts.join(sep)
    }
}

/// Where one side's numbers came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Files the side was read from.
    pub sources: Vec<String>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub date: Option<String>,
    /// The SHA-256 (hex) of each results file read, by its name in `sources`: `baseline
    /// promote` promotes only results whose digest the report holds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sha256: BTreeMap<String, String>,
    /// The geometric mean of perfgate's calibration loop before the side's runs
    /// (`telemetry.calibration_ms`), where they measured one: how fast the machine was when it
    /// ran them ([`machine_note`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_ms: Option<f64>,
    /// The same on every CPU at once (`telemetry.calibration_all_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_all_ms: Option<f64>,
    /// The machines the side's runs named (`telemetry.platform`), each once, in order of first
    /// appearance ([`machine_note`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platforms: Vec<perfgate_record::telemetry::Platform>,
}

impl Side {
    /// Add a file read and the SHA-256 of its bytes.
    pub fn add_source(&mut self, path: String, sha256: String) {
        self.sha256.insert(path.clone(), sha256);
        if !self.sources.contains(&path) {
            self.sources.push(path);
        }
    }
}

/// The result of a check: the one structure all reports are rendered from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Which kind of report (one sticky PR comment per kind), e.g. `check`.
    pub kind: String,
    pub verdict: TopVerdict,
    pub counts: Counts,
    pub rows: Vec<Row>,
    pub baseline: Side,
    pub current: Side,
    /// The method in one sentence.
    pub method: String,
    pub perfgate_version: String,
    /// `perfgate ab`: the design and what it cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<AbSummary>,
    /// The gate settings the rows were decided under (`perfgate merge` decides a matrix's
    /// reports again as one family under them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<GateConfig>,
    /// The look of a sequential stored check (`check --rerun inconclusive`) its rows were
    /// decided at; absent for a single look. `perfgate merge` decides a matrix at its strictest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look: Option<Look>,
}

/// What a `perfgate ab` comparison did and cost: every report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbSummary {
    /// What the base arm ran: a ref, an image or a command, as the user labelled it.
    pub base: String,
    /// What the candidate arm ran.
    pub candidate: String,
    /// The arms' order within pairs: `abba`, or `random (seed S)`.
    pub order: String,
    /// Most launches a side per model (`--max-launches`).
    pub max_launches: u32,
    /// The time budget (`--max-minutes`), if one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_minutes: Option<f64>,
    /// Wall-clock minutes of the whole comparison (engine starts and stops included).
    pub wall_minutes: f64,
    /// GPU-minutes: each launch's wall time × the GPUs of its engine (tensor-parallel size).
    pub gpu_minutes: f64,
    /// Minutes of the time budget left, if one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minutes_left: Option<f64>,
    pub models: Vec<AbModel>,
}

/// One model of a `perfgate ab` comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbModel {
    pub model: String,
    /// Complete pairs (a launch of each arm).
    pub pairs: u32,
    /// Engine launches made, both arms.
    pub launches: u32,
    pub tensor_parallel_size: u32,
    pub wall_minutes: f64,
    pub gpu_minutes: f64,
    /// The model's verdict at its last look.
    pub verdict: TopVerdict,
    /// Why its launches stopped, in words.
    pub stopped: String,
}
