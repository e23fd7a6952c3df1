//! The suite: turns a baseline or suite file (same schema, with or without numbers) into a plan —
//! per model, the rendered engine launch command (from a preset template or a custom one), how to
//! probe readiness and stop the engine, and the scenarios to run (`crate::report::dryrun` renders
//! it for `--dry-run`). Pure: no processes, no network.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::baseline::{Baseline, ModelBaseline};
use crate::record::{RequestRate, ScenarioParams};

/// A built-in way to launch an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// `docker run … vllm/vllm-openai:<version> --model M --tensor-parallel-size TP` (the seeds' command).
    VllmDocker,
    /// `vllm serve M --tensor-parallel-size TP` (`$PERFGATE_VLLM` instead of `vllm` when set,
    /// e.g. the CPU venv of scripts/install-vllm.sh), with `VLLM_SERVER_DEV_MODE=1`.
    Vllm,
    /// `docker run … lmsysorg/sglang:<version> python3 -m sglang.launch_server …`.
    SglangDocker,
    /// `python3 -m sglang.launch_server --model-path M --tp TP`.
    Sglang,
    /// `lmdeploy serve api_server M --tp TP --enable-metrics`.
    Lmdeploy,
    /// The project's llama.cpp launcher (`scripts/llamacpp-server.py`) for the CPU engine.
    LlamaCpp,
    /// A user-given command template.
    Custom,
}

/// Whether the engine's HTTP server keeps streamed connections open as it announces. llama.cpp's
/// does not: it closes the connection after a streamed response, so a client that reuses it fails
/// requests the server never saw. Keyed by the engine (the server software), not by the preset
/// (the launch method), so that `--engine-cmd` or `--base-url` do not change it.
pub fn honours_keep_alive(engine: &str) -> bool {
    !matches!(
        engine.trim().to_ascii_lowercase().as_str(),
        "llama.cpp" | "llamacpp" | "llama-cpp"
    )
}

/// How a live run resets an engine's caches before each measured scenario, so that a scenario
/// never reuses the prefix cache an earlier one (or the warm-up) filled. Keyed by the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheReset {
    /// `POST` this path: vLLM's `/reset_prefix_cache`, SGLang's `/flush_cache`.
    Endpoint(&'static str),
    /// `"cache_prompt": false` in every request body (llama.cpp's server has no reset endpoint).
    PerRequest,
    /// The engine offers no reset (LMDeploy, custom engines).
    Unavailable,
    /// `--no-cache-reset`.
    Off,
}

impl CacheReset {
    pub fn for_engine(engine: &str) -> CacheReset {
        match engine.trim().to_ascii_lowercase().as_str() {
            "vllm" => CacheReset::Endpoint("/reset_prefix_cache"),
            "sglang" => CacheReset::Endpoint("/flush_cache"),
            "llama.cpp" | "llamacpp" | "llama-cpp" => CacheReset::PerRequest,
            _ => CacheReset::Unavailable,
        }
    }

    /// One line for the dry-run plan and the engine-metrics log.
    pub fn describe(self) -> String {
        match self {
            CacheReset::Endpoint(p) => format!("POST {p} before each scenario"),
            CacheReset::PerRequest => "\"cache_prompt\": false in every request".into(),
            CacheReset::Unavailable => "none (the engine offers no cache reset)".into(),
            CacheReset::Off => "none (--no-cache-reset)".into(),
        }
    }
}

/// Every preset, in the order the docs list them.
pub const PRESETS: [Preset; 7] = [
    Preset::VllmDocker,
    Preset::Vllm,
    Preset::SglangDocker,
    Preset::Sglang,
    Preset::Lmdeploy,
    Preset::LlamaCpp,
    Preset::Custom,
];

const HF_MOUNT: &str = "${HF_HOME:-$HOME/.cache/huggingface}";

impl Preset {
    /// Parse a preset name as written in `[engine.launch] preset = "…"`.
    pub fn parse(name: &str) -> Option<Preset> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "vllm-docker" => Preset::VllmDocker,
            "vllm" => Preset::Vllm,
            "sglang-docker" => Preset::SglangDocker,
            "sglang" => Preset::Sglang,
            "lmdeploy" => Preset::Lmdeploy,
            "llama.cpp" | "llamacpp" | "llama-cpp" => Preset::LlamaCpp,
            "custom" => Preset::Custom,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Preset::VllmDocker => "vllm-docker",
            Preset::Vllm => "vllm",
            Preset::SglangDocker => "sglang-docker",
            Preset::Sglang => "sglang",
            Preset::Lmdeploy => "lmdeploy",
            Preset::LlamaCpp => "llama.cpp",
            Preset::Custom => "custom",
        }
    }

    /// The engine's own default port.
    pub fn default_port(self) -> u16 {
        match self {
            Preset::VllmDocker | Preset::Vllm | Preset::Custom => 8000,
            Preset::SglangDocker | Preset::Sglang => 30000,
            Preset::Lmdeploy => 23333,
            Preset::LlamaCpp => 8080,
        }
    }

    /// How long loading may take before the start is declared failed.
    pub fn default_start_timeout(self) -> Duration {
        match self {
            Preset::LlamaCpp => Duration::from_secs(120),
            Preset::Custom => Duration::from_secs(600),
            // Large models (235B at TP 8) load for many minutes; first runs also compile graphs.
            _ => Duration::from_secs(1800),
        }
    }

    /// Environment variables the preset sets (a file's `[engine.launch.env]` overrides them).
    /// vLLM serves `POST /reset_prefix_cache`, which a live run calls before each scenario, only
    /// in its development mode; the server of this preset listens on 127.0.0.1 only. (The
    /// docker preset listens on 0.0.0.0, where the development endpoints should not be open.)
    pub fn default_env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Preset::Vllm => &[("VLLM_SERVER_DEV_MODE", "1")],
            _ => &[],
        }
    }

    /// The image repository of a docker preset.
    pub fn image_repo(self) -> Option<&'static str> {
        match self {
            Preset::VllmDocker => Some("vllm/vllm-openai"),
            Preset::SglangDocker => Some("lmsysorg/sglang"),
            _ => None,
        }
    }

    /// The docker container name (docker presets only).
    pub fn container(self) -> Option<&'static str> {
        match self {
            Preset::VllmDocker => Some("perfgate-vllm"),
            Preset::SglangDocker => Some("perfgate-sglang"),
            _ => None,
        }
    }

    /// The flag that sets the name the server lists in `/v1/models`, if the engine has one.
    fn served_name_flag(self) -> Option<&'static str> {
        match self {
            Preset::VllmDocker | Preset::Vllm => Some("--served-model-name"),
            Preset::SglangDocker | Preset::Sglang => Some("--served-model-name"),
            Preset::Lmdeploy => Some("--model-name"),
            // The llama.cpp launcher always gets `--alias {served_model_name}`.
            Preset::LlamaCpp | Preset::Custom => None,
        }
    }

    /// The command template. Placeholders: `{model}`, `{served_model_name}`, `{tp}`, `{port}`,
    /// `{image}`, `{container}`, `{extra_args}` (empty, or a space and the quoted arguments).
    pub fn template(self) -> Option<String> {
        let docker = |env: &str, rest: &str| {
            format!(
                "docker run --runtime nvidia --gpus all \\\n    \
                 -v {HF_MOUNT}:/root/.cache/huggingface_hub \\\n    \
                 --env \"HF_HOME=/root/.cache/huggingface_hub\" \\\n{env}    \
                 --env \"TRANSFORMERS_OFFLINE=1\" \\\n    \
                 -p {{port}}:{{port}} \\\n    \
                 --net host \\\n    \
                 --ipc=host --rm --name {{container}} \\\n    \
                 {{image}} \\\n    {rest}"
            )
        };
        Some(match self {
            Preset::VllmDocker => docker(
                "    --env \"VLLM_LOGGING_LEVEL=ERROR\" \\\n",
                "--model {model} --tensor-parallel-size {tp} \\\n    \
                 --host 0.0.0.0 --port {port}{extra_args}",
            ),
            Preset::Vllm => "\"${PERFGATE_VLLM:-vllm}\" serve {model} --tensor-parallel-size {tp} \
                             --host 127.0.0.1 --port {port}{extra_args}"
                .to_string(),
            Preset::SglangDocker => docker(
                "",
                "python3 -m sglang.launch_server --model-path {model} --tp {tp} \
                 --host 0.0.0.0 --port {port} --enable-metrics{extra_args}",
            ),
            Preset::Sglang => "python3 -m sglang.launch_server --model-path {model} --tp {tp} \
                               --host 127.0.0.1 --port {port} --enable-metrics{extra_args}"
                .to_string(),
            Preset::Lmdeploy => "lmdeploy serve api_server {model} --tp {tp} \
                                 --server-port {port} --enable-metrics{extra_args}"
                .to_string(),
            Preset::LlamaCpp => "\"${PERFGATE_LLAMACPP_PYTHON:-python3}\" \
                \"${PERFGATE_LLAMACPP_LAUNCHER:-scripts/llamacpp-server.py}\" \
                --model \"${PERFGATE_MODEL:?set PERFGATE_MODEL to the GGUF file (scripts/install-engine.sh)}\" \
                --alias {served_model_name} --host 127.0.0.1 --port {port} \
                --ctx 4096 --parallel 4 --threads 1 --metrics{extra_args}"
                .to_string(),
            Preset::Custom => return None,
        })
    }

    /// The preset implied by an engine name when a baseline has no `[engine.launch]`.
    pub fn infer(engine: &str, has_image: bool) -> Option<Preset> {
        Some(match (engine.to_ascii_lowercase().as_str(), has_image) {
            ("vllm", true) => Preset::VllmDocker,
            ("vllm", false) => Preset::Vllm,
            ("sglang", true) => Preset::SglangDocker,
            ("sglang", false) => Preset::Sglang,
            ("lmdeploy", _) => Preset::Lmdeploy,
            ("llama.cpp" | "llamacpp" | "llama-cpp", _) => Preset::LlamaCpp,
            _ => return None,
        })
    }
}

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

    if baseline.models.is_empty() {
        return Err(SuiteError::NoModels);
    }
    let selected: Vec<&ModelBaseline> = if ov.models.is_empty() {
        baseline.models.iter().collect()
    } else {
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
                    let names: Vec<&str> =
                        baseline.models.iter().map(|m| m.name.as_str()).collect();
                    SuiteError::NoSuchModel(want.clone(), names.join(", "))
                })?;
            out.push(m);
        }
        out
    };

    let mut models = Vec::new();
    for m in selected {
        if m.scenarios.is_empty() {
            return Err(SuiteError::NoScenarios(m.name.clone()));
        }
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
        match (&template, from_preset) {
            (Some(t), true) => extra.extend(without_template_flags(t, &m.extra_args)),
            _ => extra.extend(m.extra_args.iter().cloned()),
        }
        let (command, stop, base_url) = match (&ov.base_url, &template) {
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
                    port,
                    image: image.as_deref().unwrap_or(""),
                    container: preset.container().unwrap_or("perfgate-engine"),
                    extra_args: &extra,
                };
                let cmd = render(t, &vars)?;
                let stop = match docker_container(&cmd) {
                    Some(container) => StopMethod::Docker { container },
                    None => StopMethod::ProcessGroup,
                };
                (Some(cmd), stop, format!("http://127.0.0.1:{port}"))
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
        models.push(ModelPlan {
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
                    .chain(launch.env.clone())
                    .collect(),
                port,
                base_url,
                start_timeout,
                stop,
            },
            scenarios,
        });
    }
    Ok(Plan {
        engine: eng.name.clone(),
        engine_version: eng.version.clone(),
        models,
    })
}

/// A model's extra arguments minus the flags the preset's template already passes (with their
/// values): imported launch commands repeat `--host 0.0.0.0` or `--enable-metrics`.
pub fn without_template_flags(template: &str, extra: &[String]) -> Vec<String> {
    let words = template.replace('{', " {");
    let has = |flag: &str| {
        words
            .split_whitespace()
            .any(|w| w == flag || w.starts_with(&format!("{flag}=")))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < extra.len() {
        let a = &extra[i];
        let flag = a.split('=').next().unwrap_or(a);
        if a.starts_with("--") && has(flag) {
            let takes_value =
                !a.contains('=') && extra.get(i + 1).is_some_and(|v| !v.starts_with('-'));
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

/// The values a command template is filled with.
#[derive(Debug, Clone)]
pub struct Vars<'a> {
    pub model: &'a str,
    pub served_model_name: &'a str,
    pub tp: u32,
    pub port: u16,
    pub image: &'a str,
    pub container: &'a str,
    pub extra_args: &'a [String],
}

/// Fill a command template. Values are shell-quoted where needed; `{{` and `}}` are literal
/// braces, and shell parameter expansions such as `${HF_HOME:-…}` are left alone.
pub fn render(template: &str, v: &Vars<'_>) -> Result<String, SuiteError> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        // `${…}` is the shell's, not ours.
        if tail.starts_with('{') && out.ends_with('$') {
            let close = tail.find('}').map_or(tail.len(), |c| c + 1);
            out.push_str(&tail[..close]);
            rest = &tail[close..];
            continue;
        }
        if let Some(after) = tail.strip_prefix('}') {
            out.push('}');
            rest = after;
            continue;
        }
        let Some(close) = tail.find('}') else {
            out.push_str(tail);
            rest = "";
            break;
        };
        let name = &tail[1..close];
        let value = match name {
            "model" => shell_quote(v.model),
            "served_model_name" => shell_quote(v.served_model_name),
            "tp" => v.tp.to_string(),
            "port" => v.port.to_string(),
            "image" => shell_quote(v.image),
            "container" => shell_quote(v.container),
            "extra_args" => v
                .extra_args
                .iter()
                .map(|a| format!(" {}", shell_quote(a)))
                .collect(),
            other => {
                return Err(SuiteError::UnknownPlaceholder {
                    name: other.to_string(),
                })
            }
        };
        out.push_str(&value);
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Quote a word for `sh` only when it needs it.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | '%' | '+' | '=' | ',')
        });
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The prefix of the container names perfgate owns: only such a container is stopped and
/// removed by name (`docker stop`, `docker rm -f`).
pub const CONTAINER_PREFIX: &str = "perfgate-";

/// The label of every container perfgate starts by a name it owns: `perfgate.owner=<pid>` of the
/// perfgate that started it. Only a container carrying it (and perfgate's name) is stopped and
/// removed: a container of the same name that perfgate did not start is left alone.
pub const OWNER_LABEL: &str = "perfgate.owner";

/// `cmd` with `--label perfgate.owner=<owner>` added right after its `docker run` (unchanged
/// without one).
pub fn with_owner_label(cmd: &str, owner: &str) -> String {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in cmd.char_indices().chain(std::iter::once((cmd.len(), ' '))) {
        let sep = c.is_whitespace() || c == '\\';
        match (sep, start) {
            (true, Some(s)) => {
                words.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    let at = words
        .windows(2)
        .find(|w| &cmd[w[0].0..w[0].1] == "docker" && &cmd[w[1].0..w[1].1] == "run")
        .map(|w| w[1].1);
    match at {
        Some(end) => format!(
            "{} --label {OWNER_LABEL}={owner}{}",
            &cmd[..end],
            &cmd[end..]
        ),
        None => cmd.to_string(),
    }
}

/// `docker run` options that take no value (the others take the next word, unless written
/// `--opt=value`): enough to find where the image, and so the engine's own arguments, begin.
const DOCKER_FLAGS: [&str; 16] = [
    "--rm",
    "-d",
    "--detach",
    "-i",
    "--interactive",
    "-t",
    "--tty",
    "-it",
    "-ti",
    "--init",
    "--privileged",
    "--read-only",
    "-P",
    "--publish-all",
    "--no-healthcheck",
    "--oom-kill-disable",
];

/// The container name of a rendered `docker run … --name NAME … IMAGE …` command when perfgate
/// owns it: given as a `docker run` option (before the image: a `--name` among the engine's
/// arguments is the engine's) and starting with [`CONTAINER_PREFIX`]. Any other container is
/// left alone: the engine's process group is stopped instead.
pub fn docker_container(cmd: &str) -> Option<String> {
    let words: Vec<&str> = cmd
        .split(|c: char| c.is_whitespace() || c == '\\')
        .filter(|w| !w.is_empty())
        .collect();
    let run_at = words
        .windows(2)
        .position(|w| w[0] == "docker" && w[1] == "run")?;
    let rest = &words[run_at + 2..];
    let mut i = 0;
    let mut name = None;
    while i < rest.len() {
        let w = rest[i];
        if !w.starts_with('-') {
            break; // the image: what follows is the engine's
        }
        if w == "--name" {
            name = rest
                .get(i + 1)
                .map(|n| n.trim_matches(['\'', '"']).to_string());
            i += 2;
        } else if let Some(n) = w.strip_prefix("--name=") {
            name = Some(n.trim_matches(['\'', '"']).to_string());
            i += 1;
        } else if w.contains('=') || DOCKER_FLAGS.contains(&w) {
            i += 1;
        } else {
            i += 2;
        }
    }
    name.filter(|n| n.starts_with(CONTAINER_PREFIX))
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
mod tests {
    use super::*;

    #[test]
    fn llama_cpp_does_not_honour_keep_alive() {
        assert!(!honours_keep_alive("llama.cpp"));
        assert!(!honours_keep_alive("LlamaCpp"));
        assert!(honours_keep_alive("vllm"));
        assert!(honours_keep_alive("custom"));
    }

    fn seeds_like(preset: &str, engine: &str, version: &str, image: Option<&str>) -> Baseline {
        let image_line = image.map_or(String::new(), |i| format!("image = \"{i}\"\n"));
        let mut text = format!(
            "schema_version = 1\n[engine]\nname = \"{engine}\"\nversion = \"{version}\"\n{image_line}\
             [engine.launch]\npreset = \"{preset}\"\n"
        );
        for (m, tp) in [("Qwen/Qwen3-8B", 1), ("Qwen/Qwen3-235B-A22B", 8)] {
            text.push_str(&format!(
                "[[models]]\nname = \"{m}\"\ntensor_parallel_size = {tp}\n\
                 [[models.scenarios]]\nid = \"sharegpt-n10000\"\n\
                 [models.scenarios.params]\ndataset_name = \"sharegpt\"\nnum_prompts = 10000\n\
                 [[models.scenarios]]\nid = \"random-in1024-out1024-n2000\"\n\
                 [models.scenarios.params]\ndataset_name = \"random\"\nnum_prompts = 2000\n\
                 random_input_len = 1024\nrandom_output_len = 1024\nrandom_range_ratio = 1.0\n\
                 range_convention = \"sglang\"\n"
            ));
        }
        Baseline::parse(&text, "t.toml").unwrap()
    }

    #[test]
    fn vllm_docker_renders_the_seed_command() {
        let b = seeds_like(
            "vllm-docker",
            "vllm",
            "v0.10.1",
            Some("vllm/vllm-openai:v0.10.1"),
        );
        let p = plan(&b, &Overrides::default()).unwrap();
        let cmd = p.models[1].launch.command.as_deref().unwrap();
        assert!(
            cmd.starts_with("docker run --runtime nvidia --gpus all \\\n"),
            "{cmd}"
        );
        assert!(cmd.contains("--env \"VLLM_LOGGING_LEVEL=ERROR\""), "{cmd}");
        assert!(cmd.contains("-p 8000:8000"), "{cmd}");
        assert!(
            cmd.contains("--ipc=host --rm --name perfgate-vllm"),
            "{cmd}"
        );
        assert!(cmd.contains("    vllm/vllm-openai:v0.10.1 \\\n"), "{cmd}");
        assert!(
            cmd.contains("--model Qwen/Qwen3-235B-A22B --tensor-parallel-size 8"),
            "{cmd}"
        );
        assert!(
            cmd.contains("${HF_HOME:-$HOME/.cache/huggingface}:/root/"),
            "{cmd}"
        );
        assert_eq!(
            p.models[1].launch.stop,
            StopMethod::Docker {
                container: "perfgate-vllm".into()
            }
        );
        assert_eq!(p.models[0].launch.base_url, "http://127.0.0.1:8000");
        assert_eq!(p.models[0].scenarios.len(), 2);
    }

    #[test]
    fn image_override_and_default_image_from_version() {
        let b = seeds_like("vllm-docker", "vllm", "v0.11.0", None);
        let p = plan(&b, &Overrides::default()).unwrap();
        assert!(p.models[0]
            .launch
            .command
            .as_deref()
            .unwrap()
            .contains("vllm/vllm-openai:v0.11.0"));
        let ov = Overrides {
            engine_image: Some("ghcr.io/me/vllm:pr-123".into()),
            ..Default::default()
        };
        let p = plan(&b, &ov).unwrap();
        assert!(p.models[0]
            .launch
            .command
            .as_deref()
            .unwrap()
            .contains("    ghcr.io/me/vllm:pr-123 \\\n"));
    }

    #[test]
    fn engine_cmd_override_and_process_group_stop() {
        let b = seeds_like("vllm-docker", "vllm", "v0.10.1", None);
        let ov = Overrides {
            engine_cmd: Some("./my-vllm serve {model} --tp {tp} --port {port}{extra_args}".into()),
            port: Some(9001),
            ..Default::default()
        };
        let p = plan(&b, &ov).unwrap();
        assert_eq!(
            p.models[1].launch.command.as_deref(),
            Some("./my-vllm serve Qwen/Qwen3-235B-A22B --tp 8 --port 9001")
        );
        assert_eq!(p.models[1].launch.stop, StopMethod::ProcessGroup);
        assert_eq!(p.models[1].launch.base_url, "http://127.0.0.1:9001");
    }

    #[test]
    fn base_url_skips_launching() {
        let b = seeds_like("vllm-docker", "vllm", "v0.10.1", None);
        let ov = Overrides {
            base_url: Some("http://127.0.0.1:1234/".into()),
            ..Default::default()
        };
        let p = plan(&b, &ov).unwrap();
        assert_eq!(p.models[0].launch.command, None);
        assert_eq!(p.models[0].launch.base_url, "http://127.0.0.1:1234");
    }

    #[test]
    fn models_filter_and_errors() {
        let b = seeds_like("sglang-docker", "sglang", "v0.5.1-cu126", None);
        let ov = Overrides {
            models: vec!["Qwen3-235B-A22B".into()],
            ..Default::default()
        };
        let p = plan(&b, &ov).unwrap();
        assert_eq!(p.models.len(), 1);
        assert_eq!(p.models[0].launch.port, 30000);
        let cmd = p.models[0].launch.command.clone().unwrap();
        assert!(cmd.contains("lmsysorg/sglang:v0.5.1-cu126"), "{cmd}");
        assert!(
            cmd.contains(
                "python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp 8"
            ),
            "{cmd}"
        );
        let ov = Overrides {
            models: vec!["nope".into()],
            ..Default::default()
        };
        let err = plan(&b, &ov).unwrap_err().to_string();
        assert_eq!(
            err,
            "--models: no model named `nope` in the file (it has: Qwen/Qwen3-8B, Qwen/Qwen3-235B-A22B)"
        );
        let mut b2 = b.clone();
        b2.engine.launch.as_mut().unwrap().preset = Some("tgi".into());
        assert!(plan(&b2, &Overrides::default())
            .unwrap_err()
            .to_string()
            .starts_with("unknown engine preset `tgi`"));
        b2.engine.launch.as_mut().unwrap().preset = Some("custom".into());
        assert_eq!(
            plan(&b2, &Overrides::default()).unwrap_err(),
            SuiteError::CustomWithoutCommand
        );
    }

    #[test]
    fn lmdeploy_extra_args_are_kept() {
        let mut b = seeds_like("lmdeploy", "lmdeploy", "v0.10.0", None);
        b.models[1].extra_args = vec!["--communicator".into(), "cuda-ipc".into()];
        b.models[1].tensor_parallel_size = Some(4);
        let p = plan(&b, &Overrides::default()).unwrap();
        assert_eq!(
            p.models[1].launch.command.as_deref(),
            Some("lmdeploy serve api_server Qwen/Qwen3-235B-A22B --tp 4 --server-port 23333 --enable-metrics --communicator cuda-ipc")
        );
    }

    #[test]
    fn flags_the_template_passes_are_not_repeated() {
        let t = "serve {model} --host 0.0.0.0 --port {port} --enable-metrics{extra_args}";
        let extra: Vec<String> = [
            "--host",
            "0.0.0.0",
            "--enable-metrics",
            "--communicator",
            "cuda-ipc",
            "--port=1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            without_template_flags(t, &extra),
            vec!["--communicator", "cuda-ipc"]
        );
    }

    #[test]
    fn render_quotes_and_keeps_shell_expansions() {
        let extra = vec!["--flag".to_string(), "a b".to_string()];
        let v = Vars {
            model: "it's",
            served_model_name: "m",
            tp: 2,
            port: 1,
            image: "i",
            container: "c",
            extra_args: &extra,
        };
        assert_eq!(
            render("x ${HOME:-/tmp} {model} {{lit}} {tp}{extra_args}", &v).unwrap(),
            "x ${HOME:-/tmp} 'it'\\''s' {lit} 2 --flag 'a b'"
        );
        assert_eq!(
            render("{nope}", &v).unwrap_err(),
            SuiteError::UnknownPlaceholder {
                name: "nope".into()
            }
        );
    }

    #[test]
    fn the_owner_label_goes_right_after_docker_run() {
        assert_eq!(
            with_owner_label("docker run --rm \\\n  --name perfgate-x img --name y", "42"),
            "docker run --label perfgate.owner=42 --rm \\\n  --name perfgate-x img --name y"
        );
        assert_eq!(
            with_owner_label("echo docker; docker   run img", "7"),
            "echo docker; docker   run --label perfgate.owner=7 img"
        );
        assert_eq!(with_owner_label("vllm serve m", "7"), "vllm serve m");
    }

    #[test]
    fn docker_container_is_found() {
        assert_eq!(
            docker_container("docker run --rm \\\n  --name perfgate-vllm img --model m").as_deref(),
            Some("perfgate-vllm")
        );
        assert_eq!(
            docker_container("docker run --gpus all -p 8000:8000 --name=perfgate-x img").as_deref(),
            Some("perfgate-x")
        );
        assert_eq!(docker_container("vllm serve m --name x"), None);
    }

    #[test]
    fn only_a_perfgate_container_named_before_the_image_is_stopped_by_name() {
        // `--name` among the engine's arguments (after the image) is not docker's.
        assert_eq!(
            docker_container("docker run --rm --gpus all img --name perfgate-db"),
            None
        );
        assert_eq!(
            docker_container("docker run --rm -v /a:/b img serve --name=perfgate-db"),
            None
        );
        // A container perfgate does not own is never `docker rm -f`'d by name.
        assert_eq!(docker_container("docker run --rm --name prod-db img"), None);
    }

    #[test]
    fn the_run_command_carries_the_request_fields() {
        let sp = ScenarioPlan {
            id: String::new(),
            params: ScenarioParams {
                dataset_name: "random".into(),
                num_prompts: 2,
                endpoint: Some(crate::record::Endpoint::Chat),
                temperature: Some(0.5),
                top_k: Some(-1),
                ignore_eos: Some(false),
                chat_template_kwargs: serde_json::json!({"enable_thinking": false})
                    .as_object()
                    .cloned(),
                extra_body: serde_json::json!({"seed": 1}).as_object().cloned(),
                ..Default::default()
            },
            seed: 0,
        };
        let b = seeds_like("vllm", "vllm", "v1", None);
        let p = plan(&b, &Overrides::default()).unwrap();
        let cmd = run_command("http://h:1", &p.models[0], &sp);
        assert!(
            cmd.ends_with(
                " --seed 0 --endpoint /v1/chat/completions --temperature=0.5 --top-k=-1 \
                 --ignore-eos false --extra-body \
                 '{\"chat_template_kwargs\":{\"enable_thinking\":false},\"seed\":1}'"
            ),
            "{cmd}"
        );
    }

    #[test]
    fn run_order_is_a_reproducible_permutation() {
        assert_eq!(run_order(4, 0), vec![0, 1, 2, 3]);
        for r in 1..6 {
            let mut o = run_order(6, r);
            assert_eq!(o, run_order(6, r));
            o.sort();
            assert_eq!(o, (0..6).collect::<Vec<_>>());
        }
        assert!((1..6).any(|r| run_order(6, r) != run_order(6, 0)));
    }
}
