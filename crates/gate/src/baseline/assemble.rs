//! Building a baseline from records: [`Assembler`] takes the records one at a time (placing
//! each run under its model and scenario) and then finishes the baseline.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{
    Baseline, BaselineError, EngineInfo, MetricSeries, ModelBaseline, Provenance, RunInfo,
    ScenarioBaseline, SCHEMA_VERSION,
};
use crate::record::{Direction, ScenarioParams, ScenarioResult};

/// The runs of one scenario, each with its metric values.
type Runs = Vec<(RunInfo, BTreeMap<String, f64>)>;
/// The scenarios of one model: id, parameters, runs.
type Scenarios = Vec<(String, ScenarioParams, Runs)>;
/// What tells two runs apart: source, date, launch, session.
type RunKey = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn run_key(x: &RunInfo) -> RunKey {
    (
        x.source.clone(),
        x.date.clone(),
        x.launch_id.clone(),
        x.session_id.clone(),
    )
}

fn invalid(message: String) -> BaselineError {
    BaselineError::Invalid {
        path: "records".into(),
        message,
    }
}

/// A baseline being assembled from records: models and scenarios in order of first appearance,
/// one run per record.
pub(super) struct Assembler {
    /// Each model without its scenarios, and its scenarios so far.
    models: Vec<(ModelBaseline, Scenarios)>,
    // Where each model and each (model, scenario) sits, and the runs already recorded, so every
    // record is placed by a look-up, not a scan.
    model_at: HashMap<String, usize>,
    scenario_at: HashMap<(usize, String), usize>,
    recorded: HashSet<(usize, usize, RunKey)>,
    notes: Vec<String>,
}

impl Assembler {
    /// An assembler that starts from the runs of `base`, if given (new runs go after them).
    pub(super) fn new(base: Option<&Baseline>) -> Self {
        let mut a = Assembler {
            models: Vec::new(),
            model_at: HashMap::new(),
            scenario_at: HashMap::new(),
            recorded: HashSet::new(),
            notes: Vec::new(),
        };
        for m in base.map_or(&[][..], |b| &b.models) {
            let mut scenarios: Scenarios = Vec::new();
            for s in &m.scenarios {
                let runs = s
                    .runs
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let vals = s
                            .metrics
                            .iter()
                            .filter_map(|(k, v)| v.values.get(i).map(|x| (k.clone(), *x)))
                            .collect();
                        (r.clone(), vals)
                    })
                    .collect();
                scenarios.push((s.id.clone(), s.params.clone(), runs));
            }
            let mut head = m.clone();
            head.scenarios.clear();
            let mi = a.models.len();
            a.model_at.entry(m.name.clone()).or_insert(mi);
            for (si, (id, _, runs)) in scenarios.iter().enumerate() {
                a.scenario_at.entry((mi, id.clone())).or_insert(si);
                for run in runs.iter() {
                    a.recorded.insert((mi, si, run_key(&run.0)));
                }
            }
            a.models.push((head, scenarios));
        }
        a
    }

    /// Place one record's run under its model and scenario. The record must be of `engine`,
    /// and agree with the model's other runs on the launch command and tensor parallel size.
    pub(super) fn add(
        &mut self,
        r: &ScenarioResult,
        engine: &EngineInfo,
    ) -> Result<(), BaselineError> {
        if let Some(e) = r.engine.as_deref().filter(|e| *e != engine.name) {
            return Err(invalid(format!(
                "{}: the record's engine `{e}` is not the baseline's `{}`",
                r.source.as_deref().unwrap_or(&r.model),
                engine.name
            )));
        }
        if let (Some(v), Some(ev)) = (r.engine_version.as_deref(), engine.version.as_deref()) {
            if v != ev {
                return Err(invalid(format!(
                    "{}: the record's engine version `{v}` is not the baseline's `{ev}`",
                    r.source.as_deref().unwrap_or(&r.model)
                )));
            }
        }
        let mi = self.model_index(&r.model);
        let (model, scenarios) = &mut self.models[mi];
        merge_model_facts(model, r)?;
        let id = r.scenario_id();
        let si = match self.scenario_at.get(&(mi, id.clone())) {
            Some(&i) => i,
            None => {
                self.scenario_at.insert((mi, id.clone()), scenarios.len());
                scenarios.push((id.clone(), r.params.clone(), Vec::new()));
                scenarios.len() - 1
            }
        };
        let run = RunInfo {
            source: r.source.clone(),
            date: r.date.clone(),
            backend: r.backend.clone(),
            seed: r.seed,
            launch_id: r.launch_id.clone(),
            session_id: r.session_id.clone(),
            run_in_launch: r.run_in_launch,
            output_token_source: r.output_token_source,
            tokenizer_id: r.tokenizer_id.clone(),
            model_id: r.model_id.clone(),
            perfgate_version: r.perfgate_version.clone(),
            derived: r.derived.clone(),
            errors: r.errors.clone(),
            calibration_ms: r.telemetry.as_ref().and_then(|t| t.calibration_ms),
            calibration_all_ms: r.telemetry.as_ref().and_then(|t| t.calibration_all_ms),
            platform: r.telemetry.as_ref().and_then(|t| t.platform.clone()),
        };
        let fresh = self.recorded.insert((mi, si, run_key(&run)));
        if run.source.is_some() && !fresh {
            self.notes.push(format!(
                "model `{}`, scenario `{id}`: a run from {} is already recorded; added again",
                r.model,
                run.source.as_deref().unwrap_or_default()
            ));
        }
        scenarios[si]
            .2
            .push((run, r.metrics().into_iter().collect()));
        Ok(())
    }

    /// The index of `model`, added (with nothing known about it yet) if new.
    fn model_index(&mut self, model: &str) -> usize {
        match self.model_at.get(model) {
            Some(&i) => i,
            None => {
                self.model_at.insert(model.to_string(), self.models.len());
                self.models.push((
                    ModelBaseline {
                        name: model.to_string(),
                        ..Default::default()
                    },
                    Vec::new(),
                ));
                self.models.len() - 1
            }
        }
    }

    /// The baseline (checked as a file would be) and the notes: a metric that some runs of a
    /// scenario lack is left out of that scenario, with a note.
    pub(super) fn finish(
        mut self,
        engine: EngineInfo,
        provenance: Provenance,
        gate: Option<crate::gate::GateConfig>,
    ) -> Result<(Baseline, Vec<String>), BaselineError> {
        let mut out_models = Vec::new();
        for (mut model, scenarios) in std::mem::take(&mut self.models) {
            for (id, params, runs) in scenarios {
                let metrics = self.complete_metrics(&model.name, &id, &runs);
                model.scenarios.push(ScenarioBaseline {
                    id,
                    params,
                    runs: runs.into_iter().map(|(r, _)| r).collect(),
                    metrics,
                });
            }
            out_models.push(model);
        }
        let b = Baseline {
            schema_version: SCHEMA_VERSION,
            engine,
            provenance,
            gate,
            models: out_models,
        };
        b.validate("records")?;
        Ok((b, self.notes))
    }

    /// The metrics of one scenario that every run has, in order of first appearance.
    fn complete_metrics(
        &mut self,
        model: &str,
        id: &str,
        runs: &Runs,
    ) -> BTreeMap<String, MetricSeries> {
        let mut names: Vec<String> = Vec::new();
        let mut named: HashSet<&str> = HashSet::new();
        for (_, vals) in runs {
            for k in vals.keys() {
                if named.insert(k) {
                    names.push(k.clone());
                }
            }
        }
        let mut metrics = BTreeMap::new();
        for name in names {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|(_, v)| v.get(&name).copied())
                .collect();
            if values.len() != runs.len() {
                self.notes.push(format!(
                    "model `{model}`, scenario `{id}`: metric `{name}` is missing from some runs and was left out"
                ));
                continue;
            }
            metrics.insert(
                name.clone(),
                MetricSeries {
                    direction: Direction::of(&name),
                    values,
                },
            );
        }
        metrics
    }
}

/// Take the launch command and tensor parallel size of a model's record into the model, or
/// refuse a record that disagrees with the runs before it.
fn merge_model_facts(model: &mut ModelBaseline, r: &ScenarioResult) -> Result<(), BaselineError> {
    if let Some(cmd) = &r.launch_command {
        match &model.launch_command {
            None => {
                let l = crate::launch::parse(cmd);
                model.launch_command = Some(cmd.clone());
                model.extra_args = l.extra_args.clone();
                if let Some(other) = l.model.as_deref().filter(|m| *m != r.model) {
                    model.notes = Some(format!(
                        "The recorded launch command names `{other}`, but the runs' own arguments name `{}`; the runs are recorded under `{}`.",
                        r.model, r.model
                    ));
                }
            }
            Some(c) if c != cmd => {
                return Err(invalid(format!(
                    "model `{}`: runs were launched with different commands:\n  {c}\n  {cmd}",
                    r.model
                )));
            }
            _ => {}
        }
    }
    if let Some(tp) = r.tensor_parallel_size {
        match model.tensor_parallel_size {
            None => model.tensor_parallel_size = Some(tp),
            Some(t) if t != tp => {
                return Err(invalid(format!(
                    "model `{}`: runs used tensor parallel sizes {t} and {tp}",
                    r.model
                )));
            }
            _ => {}
        }
    }
    Ok(())
}
