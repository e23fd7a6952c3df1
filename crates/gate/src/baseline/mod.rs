//! Baseline and suite files (TOML): per engine version, per model, per scenario, the value of
//! every run of every metric, plus how to launch the engine. A suite file has the same schema
//! with no `runs`/`metrics`. Baselines become [`ScenarioResult`] records (one per run) so that the
//! gate only ever sees records.

mod assemble;
mod calibrate;
pub mod promote;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::gate::GateConfig;
use crate::record::{Direction, ScenarioParams, ScenarioResult};
use crate::text::line_col;
use assemble::Assembler;
pub use calibrate::{arms_agree, calibration_sessions};
use perfgate_record::telemetry::{Platform, Telemetry};

/// The JSON Schema of a baseline or suite file (the parsed TOML document), generated from the
/// serde types so that it cannot drift from what [`Baseline::parse`] accepts. The committed
/// `schema/baseline.schema.json` is this text (a test checks it).
pub fn json_schema() -> String {
    let mut schema = schemars::schema_for!(Baseline);
    schema.insert(
        "$id".into(),
        "https://github.com/perfgate/perfgate/schema/baseline.schema.json".into(),
    );
    schema.insert("title".into(), "perfgate baseline".into());
    schema.insert(
        "description".into(),
        "One file per engine version: per model and scenario, the value of every run of every \
         metric, plus how the engine was launched. A suite file has the same schema without the \
         numbers. TOML on disk; this schema describes the parsed document. Unknown keys are errors."
            .into(),
    );
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub schema_version: u32,
    pub engine: EngineInfo,
    #[serde(default, skip_serializing_if = "Provenance::is_empty")]
    pub provenance: Provenance,
    /// Gate overrides (tolerances, gated metrics) for checks against this baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateConfig>,
    #[serde(default)]
    pub models: Vec<ModelBaseline>,
}

/// The engine a baseline was measured on, and how to launch it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EngineInfo {
    /// `vllm`, `sglang`, `lmdeploy`, `llama.cpp` or `custom`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Container image, e.g. `vllm/vllm-openai:v0.10.1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// How the engine was installed when not from an image (e.g. `pip install vllm==0.10.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<LaunchSpec>,
}

/// How to start the engine for one model. `command` is a template; placeholders such as
/// `{model}`, `{tp}`, `{port}`, `{image}`, `{served_model_name}` and `{extra_args}` are filled
/// in per model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchSpec {
    /// A built-in preset: `vllm-docker`, `vllm`, `sglang-docker`, `sglang`, `lmdeploy`,
    /// `llama.cpp`, or `custom` (then `command` is required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_timeout_s: Option<f64>,
}

/// Where the numbers came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Source files (imports) or `perfgate run` invocations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The git commit the measurements were promoted from (`git rev-parse HEAD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perfgate_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

impl Provenance {
    fn is_empty(&self) -> bool {
        *self == Provenance::default()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelBaseline {
    /// The model as runs name it (e.g. `Qwen/Qwen3-8B`).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_model_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_parallel_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_args: Vec<String>,
    /// Tokenizer for prompt synthesis (path, or `server`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
    /// The launch command exactly as the source recorded it, for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_command: Option<String>,
    /// Anything a reviewer should know about this model's runs (e.g. a launch command that
    /// names another model than the runs did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default)]
    pub scenarios: Vec<ScenarioBaseline>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioBaseline {
    /// `ScenarioParams::id()` of `params`; checked on load.
    pub id: String,
    pub params: ScenarioParams,
    /// Identity of each run (same order as every metric's `values`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunInfo>,
    /// Per metric: direction and the value of every run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricSeries>,
}

/// The non-numeric identity of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The engine launch this run belongs to (see `ScenarioResult::launch_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_id: Option<String>,
    /// The recording session of the launch (see `ScenarioResult::session_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// 0-based index of the run inside its launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_in_launch: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_source: Option<crate::record::OutputTokenSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perfgate_version: Option<String>,
    /// Metrics the source did not print but an importer computed (see `ScenarioResult::derived`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<String>,
    /// Failed requests by kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, crate::record::ErrorCount>,
    /// perfgate's calibration loop before the run (`telemetry.calibration_ms`): how fast the
    /// machine was, so that a check on another machine can say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_ms: Option<f64>,
    /// The same loop on every CPU at once (`telemetry.calibration_all_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_all_ms: Option<f64>,
    /// The machine the run measured on (`telemetry.platform`), so that a check on another
    /// machine can say what differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSeries {
    pub direction: Direction,
    pub values: Vec<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("{path}: {reason}")]
    Io {
        path: String,
        reason: std::io::Error,
    },
    #[error("{path}:{line}:{col}: {message}")]
    Parse {
        path: String,
        line: usize,
        col: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    /// Results that cannot be promoted (see [`promote`]).
    #[error("{0}")]
    Promote(String),
    /// Records that cannot calibrate a baseline (see [`calibration_sessions`]).
    #[error("{0}")]
    Calibration(String),
}

impl Provenance {
    /// Add the source files of `records` (their `source` without a `:LINE`), or `given` when
    /// the user named them, to the listed sources (each once).
    pub fn add_sources(&mut self, records: &[ScenarioResult], given: &[String]) {
        let sources: std::collections::BTreeSet<String> = if given.is_empty() {
            records
                .iter()
                .filter_map(|r| r.source.as_deref())
                .map(|s| match s.rsplit_once(':') {
                    Some((f, l)) if l.chars().all(|c| c.is_ascii_digit()) => f.to_string(),
                    _ => s.to_string(),
                })
                .collect()
        } else {
            given.iter().cloned().collect()
        };
        let mut listed: HashSet<String> = self.sources.iter().cloned().collect();
        for s in sources {
            if listed.insert(s.clone()) {
                self.sources.push(s);
            }
        }
    }
}

impl Baseline {
    /// Parse and validate a baseline (or suite) file's text.
    pub fn parse(text: &str, path: &str) -> Result<Baseline, BaselineError> {
        if text.trim().is_empty() {
            return Err(BaselineError::Invalid {
                path: path.into(),
                message: "the file is empty".into(),
            });
        }
        // A scenario field that is unknown or of the wrong type is named with its scenario (the
        // typed parse below would name a line only, or, for an unknown one, nothing).
        if let Ok(doc) = toml::from_str::<toml::Table>(text) {
            check_param_fields(&doc).map_err(|message| BaselineError::Invalid {
                path: path.into(),
                message,
            })?;
        }
        let b: Baseline = toml::from_str(text).map_err(|e| {
            let (line, col) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            BaselineError::Parse {
                path: path.into(),
                line,
                col,
                message: crate::text::shorten_quoted(e.message(), 80),
            }
        })?;
        b.validate(path)?;
        Ok(b)
    }

    /// Read and validate a baseline (or suite) file.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|reason| BaselineError::Io {
            path: p.clone(),
            reason,
        })?;
        Baseline::parse(&text, &p)
    }

    pub fn validate(&self, path: &str) -> Result<(), BaselineError> {
        let invalid = |message: String| BaselineError::Invalid {
            path: path.into(),
            message: crate::text::shorten_quoted(&message, 80),
        };
        if self.schema_version != SCHEMA_VERSION {
            return Err(invalid(format!(
                "schema_version {} is not supported (this perfgate reads {SCHEMA_VERSION})",
                self.schema_version
            )));
        }
        let mut models = std::collections::BTreeSet::new();
        for m in &self.models {
            if !models.insert(m.name.as_str()) {
                return Err(invalid(format!(
                    "model `{}` appears twice (its runs would count double); merge its scenarios into one [[models]] entry",
                    m.name
                )));
            }
            let mut seen = std::collections::BTreeSet::new();
            for s in &m.scenarios {
                if let Some(r) = s.params.random_range_ratio {
                    if !r.is_finite() || r < 0.0 {
                        return Err(invalid(format!(
                            "model `{}`, scenario `{}`: random_range_ratio must be a finite \
                             number ≥ 0, got {r}",
                            m.name, s.id
                        )));
                    }
                }
                if let Err(why) = s.params.check_request_fields() {
                    return Err(invalid(format!(
                        "model `{}`, scenario `{}`: {why}",
                        m.name, s.id
                    )));
                }
                let id = s.params.id();
                if s.id != id {
                    return Err(invalid(format!(
                        "model `{}`: scenario id `{}` does not match its params (expected `{id}`)",
                        m.name, s.id
                    )));
                }
                if !seen.insert(id.clone()) {
                    return Err(invalid(format!(
                        "model `{}`: scenario `{id}` appears twice",
                        m.name
                    )));
                }
                let n = s.runs.len();
                for (name, series) in &s.metrics {
                    if !crate::record::is_metric_key(name) {
                        return Err(invalid(format!(
                            "model `{}`, scenario `{id}`: unknown metric `{name}`",
                            m.name
                        )));
                    }
                    for v in &series.values {
                        if let Err(why) = crate::record::check_metric_value(name, *v) {
                            return Err(invalid(format!(
                                "model `{}`, scenario `{id}`, metric `{name}`: {why}",
                                m.name
                            )));
                        }
                    }
                    if series.values.len() != n {
                        return Err(invalid(format!(
                            "model `{}`, scenario `{id}`, metric `{name}`: {} values for {n} runs",
                            m.name,
                            series.values.len()
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// [`Baseline::to_toml`], checked to read back (as `path`) to this very baseline.
    pub fn to_checked_toml(&self, path: &str) -> Result<String, BaselineError> {
        let text = self.to_toml();
        if Baseline::parse(&text, path)? != *self {
            return Err(BaselineError::Invalid {
                path: path.into(),
                message: "internal error: the baseline does not round-trip".into(),
            });
        }
        Ok(text)
    }

    /// Runs recorded, over every model and scenario.
    pub fn run_count(&self) -> usize {
        let scenarios = self.models.iter().flat_map(|m| &m.scenarios);
        scenarios.map(|s| s.runs.len()).sum()
    }

    /// Render as TOML with a stable order (models, scenarios and runs as stored, metrics sorted
    /// by name), one inline table per metric so that a re-record gives a line-per-metric diff.
    pub fn to_toml(&self) -> String {
        let plain = toml::to_string(self).expect("baselines serialize");
        let mut doc: toml_edit::DocumentMut = plain.parse().expect("own TOML parses");
        if let Some(models) = doc
            .get_mut("models")
            .and_then(|m| m.as_array_of_tables_mut())
        {
            for m in models.iter_mut() {
                let Some(scenarios) = m
                    .get_mut("scenarios")
                    .and_then(|s| s.as_array_of_tables_mut())
                else {
                    continue;
                };
                for s in scenarios.iter_mut() {
                    let Some(metrics) = s.get_mut("metrics") else {
                        continue;
                    };
                    let Some(table) = metrics.as_table() else {
                        continue;
                    };
                    let mut fresh = toml_edit::Table::new();
                    for (k, item) in table.iter() {
                        if let Some(t) = item.as_table() {
                            let mut inline = t.clone().into_inline_table();
                            inline.fmt();
                            fresh.insert(k, toml_edit::value(inline));
                        }
                    }
                    *metrics = toml_edit::Item::Table(fresh);
                }
            }
        }
        let mut text = String::from(HEADER);
        text.push_str(&doc.to_string());
        text
    }

    /// The file without numbers (a suite): the models `keep` accepts, every scenario without
    /// runs or metrics. The base that measured runs are recorded into.
    pub fn skeleton(&self, keep: impl Fn(&str) -> bool) -> Baseline {
        let mut b = self.clone();
        b.models.retain(|m| keep(&m.name));
        for sc in b.models.iter_mut().flat_map(|m| m.scenarios.iter_mut()) {
            sc.runs.clear();
            sc.metrics.clear();
        }
        b
    }

    /// One record per run of every scenario of every model.
    pub fn to_records(&self) -> Vec<ScenarioResult> {
        let mut out = Vec::new();
        for m in &self.models {
            for s in &m.scenarios {
                for (i, run) in s.runs.iter().enumerate() {
                    let mut fields = serde_json::Map::new();
                    for (name, series) in &s.metrics {
                        if let Some(v) = series.values.get(i) {
                            fields.insert(name.clone(), number(*v));
                        }
                    }
                    let mut rec = record_from_fields(&m.name, &s.params, fields);
                    rec.run_index = i as u32;
                    rec.engine = Some(self.engine.name.clone());
                    rec.engine_version = self.engine.version.clone();
                    rec.launch_command = m.launch_command.clone();
                    rec.tensor_parallel_size = m.tensor_parallel_size;
                    rec.source = run.source.clone();
                    rec.date = run.date.clone();
                    rec.backend = run.backend.clone();
                    rec.seed = run.seed;
                    rec.launch_id = run.launch_id.clone();
                    rec.session_id = run.session_id.clone();
                    rec.run_in_launch = run.run_in_launch;
                    rec.output_token_source = run.output_token_source;
                    rec.tokenizer_id = run.tokenizer_id.clone();
                    rec.model_id = run.model_id.clone();
                    rec.perfgate_version = run.perfgate_version.clone();
                    rec.derived = run.derived.clone();
                    rec.errors = run.errors.clone();
                    let timed = run.calibration_ms.is_some() || run.calibration_all_ms.is_some();
                    rec.telemetry = (timed || run.platform.is_some()).then(|| Telemetry {
                        calibration_ms: run.calibration_ms,
                        calibration_all_ms: run.calibration_all_ms,
                        platform: run.platform.clone(),
                        ..Default::default()
                    });
                    out.push(rec);
                }
            }
        }
        out
    }

    /// Build a baseline from records: models and scenarios in order of first appearance, one
    /// run per record (appended after the runs of `base`, if given). A metric that some runs
    /// of a scenario lack is left out of that scenario (reported in the returned notes).
    pub fn from_records(
        records: &[ScenarioResult],
        engine: EngineInfo,
        provenance: Provenance,
        base: Option<&Baseline>,
    ) -> Result<(Baseline, Vec<String>), BaselineError> {
        let mut assembler = Assembler::new(base);
        for r in records {
            assembler.add(r, &engine)?;
        }
        assembler.finish(engine, provenance, base.and_then(|b| b.gate.clone()))
    }
}

/// The comment that opens every written baseline.
const HEADER: &str = "# perfgate baseline: per model and scenario, the value of every run of every metric.\n# Written by `perfgate baseline record`; see schema/baseline.schema.json.\n\n";

/// A JSON number that keeps integers integral (so `completed = 10000.0` becomes `10000`).
/// The fields a scenario's `params` table may hold: those of [`ScenarioParams`], read from its
/// schema so the list cannot drift.
fn param_fields() -> Vec<String> {
    let schema = schemars::schema_for!(ScenarioParams);
    schema
        .as_object()
        .and_then(|o| o.get("properties"))
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every `params` table of the file (`models[].scenarios[].params`): each key a field of
/// [`ScenarioParams`] of the right type. The message names the model, the scenario and the
/// field.
fn check_param_fields(doc: &toml::Table) -> Result<(), String> {
    let known = param_fields();
    let tables = |v: Option<&toml::Value>| -> Vec<toml::Table> {
        let items = v.and_then(|v| v.as_array()).cloned().unwrap_or_default();
        items
            .into_iter()
            .filter_map(|t| t.as_table().cloned())
            .collect()
    };
    for (mi, m) in tables(doc.get("models")).iter().enumerate() {
        let model = m
            .get("name")
            .and_then(|n| n.as_str())
            .map_or_else(|| format!("models[{mi}]"), |n| format!("model `{n}`"));
        for (si, sc) in tables(m.get("scenarios")).iter().enumerate() {
            let scenario = sc
                .get("id")
                .and_then(|n| n.as_str())
                .map_or_else(|| format!("scenarios[{si}]"), |n| format!("scenario `{n}`"));
            let Some(params) = sc.get("params").and_then(|p| p.as_table()) else {
                continue;
            };
            for (key, value) in params {
                if !known.iter().any(|k| k == key) {
                    return Err(format!(
                        "{model}, {scenario}: unknown field `{key}` in params (known: {})",
                        known.join(", ")
                    ));
                }
                // The field alone, beside the required ones, must read as its type.
                let mut one = toml::Table::new();
                one.insert("dataset_name".into(), "random".into());
                one.insert("num_prompts".into(), 1.into());
                one.insert(key.clone(), value.clone());
                if let Err(e) = toml::Value::Table(one).try_into::<ScenarioParams>() {
                    return Err(format!(
                        "{model}, {scenario}: params field `{key}`: {}",
                        e.message().trim()
                    ));
                }
            }
        }
    }
    Ok(())
}

fn number(v: f64) -> serde_json::Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Value::from(v)
    }
}

fn record_from_fields(
    model: &str,
    params: &ScenarioParams,
    mut fields: serde_json::Map<String, serde_json::Value>,
) -> ScenarioResult {
    fields.insert("model".into(), model.into());
    if let serde_json::Value::Object(p) = serde_json::to_value(params).expect("params serialize") {
        fields.extend(p);
    }
    for required in [
        "completed",
        "duration",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "output_throughput",
    ] {
        fields.entry(required).or_insert(serde_json::Value::from(0));
    }
    serde_json::from_value(serde_json::Value::Object(fields))
        .expect("baseline metrics form a valid record")
}

#[cfg(test)]
mod tests;
