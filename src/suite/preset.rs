//! The built-in launch presets: their command templates, ports, images and cache resets.

use std::time::Duration;

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
    pub(super) fn served_name_flag(self) -> Option<&'static str> {
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
