//! The suite: turns a baseline or suite file (same schema, with or without numbers) into a plan —
//! per model, the rendered engine launch command (from a preset template or a custom one), how to
//! probe readiness and stop the engine, and the scenarios to run (`crate::report::dryrun` renders
//! it for `--dry-run`). Pure: no processes, no network.

mod command;
mod preset;

pub use command::{
    docker_container, render, shell_quote, with_owner_label, without_template_flags, Vars,
    CONTAINER_PREFIX, OWNER_LABEL,
};
pub use preset::{honours_keep_alive, CacheReset, Preset, PRESETS};

use std::collections::BTreeMap;
use std::time::Duration;

use crate::baseline::{Baseline, LaunchSpec, ModelBaseline};
use crate::record::{RequestRate, ScenarioParams};

/// How a launched engine is stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopMethod {
    /// SIGTERM to the process group, a grace period, then SIGKILL.
    ProcessGroup,
    /// `docker stop NAME` first, then the process group as above (the `docker run` client).
    Docker { container: String },
}

/// Command-line overrides of what the file says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `--engine-cmd`: a command template replacing the preset's (placeholders still apply).
    pub engine_cmd: Option<String>,
    /// `--engine-image`: the image for docker presets.
    pub engine_image: Option<String>,
    /// `--port`.
    pub port: Option<u16>,
    /// `--start-timeout`.
    pub start_timeout: Option<Duration>,
    /// `--models a,b`: only these models (matched by name or served name).
    pub models: Vec<String>,
    /// `--tokenizer`: for every model.
    pub tokenizer: Option<String>,
    /// `--base-url`: do not launch; use this server.
    pub base_url: Option<String>,
}

/// How to launch (or reach) the engine for one model.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    pub preset: Preset,
    /// The rendered shell command (run with `sh -c`), or `None` when `--base-url` skips launching.
    pub command: Option<String>,
    pub env: BTreeMap<String, String>,
    pub port: u16,
    /// Where requests go, e.g. `http://127.0.0.1:8000`.
    pub base_url: String,
    pub start_timeout: Duration,
    pub stop: StopMethod,
}

/// Everything to do for one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPlan {
    /// The model as baselines and records name it.
    pub name: String,
    /// The name to send in requests and to expect in `/v1/models`.
    pub served_model_name: String,
    pub tensor_parallel_size: u32,
    pub tokenizer: Option<String>,
    pub launch: LaunchPlan,
    pub scenarios: Vec<ScenarioPlan>,
}

/// One scenario of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioPlan {
    pub id: String,
    pub params: ScenarioParams,
    /// The dataset seed (the baseline's recorded seed, else 0). Every run uses the same one.
    pub seed: u64,
}

/// The whole plan of a live check.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub engine: String,
    pub engine_version: Option<String>,
    pub models: Vec<ModelPlan>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SuiteError {
    #[error("unknown engine preset `{0}` (known: vllm-docker, vllm, sglang-docker, sglang, lmdeploy, llama.cpp, custom)")]
    UnknownPreset(String),
    #[error("engine `{0}` has no launch preset and no command: set `[engine.launch] preset` or `command` in the file, or pass --engine-cmd or --base-url")]
    NoLaunch(String),
    #[error("preset `custom` needs a command: set `[engine.launch] command` or pass --engine-cmd")]
    CustomWithoutCommand,
    #[error("unknown placeholder `{{{name}}}` in the engine command template (known: model, served_model_name, tp, port, image, container, extra_args)")]
    UnknownPlaceholder { name: String },
    #[error("--models: no model named `{0}` in the file (it has: {1})")]
    NoSuchModel(String, String),
    #[error("the file names no models")]
    NoModels,
    #[error("model `{0}` has no scenarios")]
    NoScenarios(String),
}

/// Build the plan of a live check from a baseline or suite file and the command-line overrides.
pub fn plan(baseline: &Baseline, ov: &Overrides) -> Result<Plan, SuiteError> {
    let eng = &baseline.engine;
    let launch = EngineLaunch::resolve(baseline, ov)?;
    let models = select_models(baseline, ov)?
        .into_iter()
        .map(|m| model_plan(m, &launch, ov))
        .collect::<Result<_, _>>()?;
    Ok(Plan {
        engine: eng.name.clone(),
        engine_version: eng.version.clone(),
        models,
    })
}

/// What the file and the overrides say about launching the engine, the same for every model.
struct EngineLaunch {
    spec: LaunchSpec,
    preset: Preset,
    /// The command template, or `None` when `--base-url` skips launching and nothing names one.
    template: Option<String>,
    /// Whether the template is the preset's own (then the models' arguments lose the flags it
    /// already passes).
    from_preset: bool,
    image: Option<String>,
    port: u16,
    start_timeout: Duration,
}

impl EngineLaunch {
    fn resolve(baseline: &Baseline, ov: &Overrides) -> Result<Self, SuiteError> {
        let eng = &baseline.engine;
        let launch = eng.launch.clone().unwrap_or_default();
        let preset = match &launch.preset {
            Some(p) => Preset::parse(p).ok_or_else(|| SuiteError::UnknownPreset(p.clone()))?,
            None if launch.command.is_some() || ov.engine_cmd.is_some() => {
                Preset::infer(&eng.name, eng.image.is_some()).unwrap_or(Preset::Custom)
            }
            None if ov.base_url.is_some() => {
                Preset::infer(&eng.name, eng.image.is_some()).unwrap_or(Preset::Custom)
            }
            None => Preset::infer(&eng.name, eng.image.is_some())
                .ok_or_else(|| SuiteError::NoLaunch(eng.name.clone()))?,
        };
        let from_preset = ov.engine_cmd.is_none() && launch.command.is_none();
        let template = ov
            .engine_cmd
            .clone()
            .or_else(|| launch.command.clone())
            .or_else(|| preset.template());
        let template = match (template, &ov.base_url) {
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) => return Err(SuiteError::CustomWithoutCommand),
        };
        let image = ov
            .engine_image
            .clone()
            .or_else(|| eng.image.clone())
            .or_else(|| {
                preset
                    .image_repo()
                    .map(|repo| format!("{repo}:{}", eng.version.as_deref().unwrap_or("latest")))
            });
        let port = ov
            .port
            .or(launch.port)
            .unwrap_or_else(|| preset.default_port());
        let start_timeout = ov
            .start_timeout
            .or_else(|| {
                launch
                    .start_timeout_s
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .map(Duration::from_secs_f64)
            })
            .unwrap_or_else(|| preset.default_start_timeout());
        Ok(EngineLaunch {
            spec: launch,
            preset,
            template,
            from_preset,
            image,
            port,
            start_timeout,
        })
    }
}

/// The models to run: all of the file's, or those `--models` names (by name, served name or the
/// name's last part), in the order named.
fn select_models<'a>(
    baseline: &'a Baseline,
    ov: &Overrides,
) -> Result<Vec<&'a ModelBaseline>, SuiteError> {
    if baseline.models.is_empty() {
        return Err(SuiteError::NoModels);
    }
    if ov.models.is_empty() {
        return Ok(baseline.models.iter().collect());
    }
    let mut out = Vec::new();
    for want in &ov.models {
        let m = baseline
            .models
            .iter()
            .find(|m| {
                m.name == *want
                    || m.served_model_name.as_deref() == Some(want.as_str())
                    || m.name.rsplit('/').next() == Some(want.as_str())
            })
            .ok_or_else(|| {
                let names: Vec<&str> = baseline.models.iter().map(|m| m.name.as_str()).collect();
                SuiteError::NoSuchModel(want.clone(), names.join(", "))
            })?;
        out.push(m);
    }
    Ok(out)
}

/// The plan of one model: its launch command rendered, its scenarios in the file's order.
fn model_plan(
    m: &ModelBaseline,
    eng: &EngineLaunch,
    ov: &Overrides,
) -> Result<ModelPlan, SuiteError> {
    if m.scenarios.is_empty() {
        return Err(SuiteError::NoScenarios(m.name.clone()));
    }
    let preset = eng.preset;
    let served = m
        .served_model_name
        .clone()
        .unwrap_or_else(|| m.name.clone());
    let tp = m.tensor_parallel_size.unwrap_or(1);
    let mut extra: Vec<String> = Vec::new();
    if let (Some(flag), Some(s)) = (preset.served_name_flag(), &m.served_model_name) {
        extra.push(flag.to_string());
        extra.push(s.clone());
    }
    match (&eng.template, eng.from_preset) {
        (Some(t), true) => extra.extend(without_template_flags(t, &m.extra_args)),
        _ => extra.extend(m.extra_args.iter().cloned()),
    }
    let (command, stop, base_url) = match (&ov.base_url, &eng.template) {
        (Some(url), _) => (
            None,
            StopMethod::ProcessGroup,
            url.trim_end_matches('/').to_string(),
        ),
        (None, Some(t)) => {
            let vars = Vars {
                model: &m.name,
                served_model_name: &served,
                tp,
                port: eng.port,
                image: eng.image.as_deref().unwrap_or(""),
                container: preset.container().unwrap_or("perfgate-engine"),
                extra_args: &extra,
            };
            let cmd = render(t, &vars)?;
            let stop = match docker_container(&cmd) {
                Some(container) => StopMethod::Docker { container },
                None => StopMethod::ProcessGroup,
            };
            (Some(cmd), stop, format!("http://127.0.0.1:{}", eng.port))
        }
        (None, None) => return Err(SuiteError::CustomWithoutCommand),
    };
    let scenarios = m
        .scenarios
        .iter()
        .map(|s| ScenarioPlan {
            id: s.params.id(),
            params: s.params.clone(),
            seed: s.runs.iter().find_map(|r| r.seed).unwrap_or(0),
        })
        .collect();
    Ok(ModelPlan {
        name: m.name.clone(),
        served_model_name: served,
        tensor_parallel_size: tp,
        tokenizer: ov.tokenizer.clone().or_else(|| m.tokenizer.clone()),
        launch: LaunchPlan {
            preset,
            command,
            env: preset
                .default_env()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .chain(eng.spec.env.clone())
                .collect(),
            port: eng.port,
            base_url,
            start_timeout: eng.start_timeout,
            stop,
        },
        scenarios,
    })
}

/// The `perfgate run` command line that measures one scenario the way the live check does.
pub fn run_command(base_url: &str, model: &ModelPlan, s: &ScenarioPlan) -> String {
    let p = &s.params;
    let mut a: Vec<String> = vec![
        "perfgate run".into(),
        format!("--base-url {base_url}"),
        format!("--model {}", shell_quote(&model.served_model_name)),
    ];
    if let Some(t) = &model.tokenizer {
        a.push(format!("--tokenizer {}", shell_quote(t)));
    }
    a.push(format!("--dataset-name {}", p.dataset_name));
    a.push(format!("--num-prompts {}", p.num_prompts));
    if let Some(v) = p.random_input_len {
        a.push(format!("--random-input-len {v}"));
    }
    if let Some(v) = p.random_output_len {
        a.push(format!("--random-output-len {v}"));
    }
    if let Some(v) = p.random_range_ratio {
        a.push(format!("--random-range-ratio {v:?}"));
    }
    if let Some(c) = p.range_convention {
        a.push(format!("--range-convention {}", c.as_str()));
    }
    if let Some(v) = p.sharegpt_output_len {
        a.push(format!("--sharegpt-output-len {v}"));
    }
    a.push(format!("--request-rate {}", p.request_rate));
    if let (RequestRate::PerSecond(_), Some(b)) = (p.request_rate, p.burstiness) {
        a.push(format!("--burstiness {b}"));
    }
    if let Some(c) = p.max_concurrency {
        a.push(format!("--max-concurrency {c}"));
    }
    a.push(format!("--seed {}", s.seed));
    a.extend(request_flags(p));
    a.join(" ")
}

/// The `perfgate run` flags of a scenario's request fields (endpoint, sampling, `ignore_eos`;
/// `chat_template_kwargs` and `extra_body` as one `--extra-body`): the same body on the wire.
fn request_flags(p: &ScenarioParams) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(e) = p.endpoint {
        a.push(format!("--endpoint {}", e.path()));
    }
    let floats = [
        ("temperature", p.temperature),
        ("top-p", p.top_p),
        ("min-p", p.min_p),
        ("frequency-penalty", p.frequency_penalty),
        ("presence-penalty", p.presence_penalty),
        ("repetition-penalty", p.repetition_penalty),
    ];
    for (flag, v) in floats {
        if let Some(v) = v {
            a.push(format!("--{flag}={v}"));
        }
    }
    if let Some(k) = p.top_k {
        a.push(format!("--top-k={k}"));
    }
    if let Some(i) = p.ignore_eos {
        a.push(format!("--ignore-eos {i}"));
    }
    let mut body = crate::record::JsonObject::new();
    if let Some(o) = &p.chat_template_kwargs {
        body.insert("chat_template_kwargs".into(), o.clone().into());
    }
    if let Some(o) = &p.extra_body {
        body.extend(o.clone());
    }
    if !body.is_empty() {
        let text = serde_json::Value::Object(body).to_string();
        a.push(format!("--extra-body {}", shell_quote(&text)));
    }
    a
}

/// A file-name-safe form of a model name (`Qwen/Qwen3-8B` → `Qwen_Qwen3-8B`).
/// Names over 200 characters are cut with a hash suffix ([`crate::text::file_name_part`]).
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match s.len() > 200 {
        true => format!(
            "{}~{}",
            &s[..191],
            &crate::text::sha256_hex(name.as_bytes())[..8]
        ),
        false => s,
    }
}

/// The order of scenarios in run `run_index`: run 0 keeps the file's order; later runs use a
/// fresh permutation drawn from a seed derived from the run index (reproducible).
pub fn run_order(n: usize, run_index: u32) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    if run_index == 0 || n < 2 {
        return idx;
    }
    // SplitMix64 driven Fisher–Yates: small, deterministic, no RNG dependency in a pure module.
    let mut state =
        0x9E37_79B9_7F4A_7C15u64 ^ u64::from(run_index).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
    idx
}

#[cfg(test)]
mod tests;
