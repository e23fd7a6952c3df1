//! Engine launch commands as logs record them (`docker run … vllm/vllm-openai:v0.10.1 --model X
//! --tensor-parallel-size 2`, `python3 -m sglang.launch_server --model-path X --tp 2`,
//! `lmdeploy serve api_server X --tp 2`): which engine, model, image, tensor-parallel size, and
//! the remaining engine arguments, so a baseline can say how to start the engine again.

use crate::text::shell_words;

/// What a launch command says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    /// `vllm`, `sglang`, `lmdeploy` or `llama.cpp`, when recognised.
    pub engine: Option<String>,
    /// `vllm-docker`, `vllm`, `sglang-docker`, `sglang`, `lmdeploy`, `llama.cpp`.
    pub preset: Option<String>,
    pub image: Option<String>,
    pub model: Option<String>,
    pub tensor_parallel_size: Option<u32>,
    /// Engine arguments other than the model and the tensor-parallel size.
    pub extra_args: Vec<String>,
}

/// `docker run` options that take a value in the next word.
const DOCKER_VALUE_OPTS: [&str; 32] = [
    "-v",
    "--volume",
    "-e",
    "--env",
    "--env-file",
    "-p",
    "--publish",
    "--name",
    "--runtime",
    "--gpus",
    "--net",
    "--network",
    "--ipc",
    "--shm-size",
    "-w",
    "--workdir",
    "--entrypoint",
    "-u",
    "--user",
    "--mount",
    "--device",
    "--ulimit",
    "--cpus",
    "-m",
    "--memory",
    "--platform",
    "-l",
    "--label",
    "--add-host",
    "--cap-add",
    "--security-opt",
    "--restart",
];

/// Is this line (possibly joined from continuation lines) an engine launch command?
pub fn is_launch_command(cmd: &str) -> bool {
    let c = cmd.trim_start();
    c.starts_with("docker run")
        || c.starts_with("podman run")
        || c.contains("sglang.launch_server")
        || c.contains("lmdeploy serve api_server")
        || c.starts_with("vllm serve")
        || c.contains("vllm.entrypoints.openai.api_server")
        || c.starts_with("llama-server")
}

/// Is the command a template (`--model ${MODEL_REPO_ID}`, `api_server $MODEL_REPO_ID`) rather
/// than a concrete launch? Other shell variables (`-v $HF_HOME:/root/...`) are fine.
pub fn is_template(cmd: &str) -> bool {
    parse(cmd).model.is_none_or(|m| m.contains('$'))
}

/// Take a launch command apart.
pub fn parse(cmd: &str) -> Launch {
    let words = shell_words(cmd);
    let mut l = Launch::default();
    let mut rest: &[String] = &words;
    let mut docker = false;
    if words.len() >= 2 && (words[0] == "docker" || words[0] == "podman") && words[1] == "run" {
        docker = true;
        let mut i = 2;
        while i < words.len() {
            let w = &words[i];
            if w.starts_with('-') {
                if !w.contains('=') && DOCKER_VALUE_OPTS.contains(&w.as_str()) {
                    i += 1;
                }
                i += 1;
                continue;
            }
            break;
        }
        if i < words.len() {
            l.image = Some(words[i].clone());
            rest = &words[i + 1..];
        } else {
            rest = &[];
        }
    }
    // Strip the program that starts the engine and find the model.
    let mut args: Vec<String> = Vec::new();
    let mut j = 0;
    let find = |needle: &str, rest: &[String]| rest.iter().position(|w| w == needle);
    if let Some(p) = find("sglang.launch_server", rest) {
        l.engine = Some("sglang".into());
        j = p + 1;
    } else if rest.len() >= 3
        && rest[0] == "lmdeploy"
        && rest[1] == "serve"
        && rest[2] == "api_server"
    {
        l.engine = Some("lmdeploy".into());
        j = 3;
        if rest.len() > 3 && !rest[3].starts_with('-') {
            l.model = Some(rest[3].clone());
            j = 4;
        }
    } else if rest.len() >= 2 && rest[0] == "vllm" && rest[1] == "serve" {
        l.engine = Some("vllm".into());
        j = 2;
        if rest.len() > 2 && !rest[2].starts_with('-') {
            l.model = Some(rest[2].clone());
            j = 3;
        }
    } else if let Some(p) = find("vllm.entrypoints.openai.api_server", rest) {
        l.engine = Some("vllm".into());
        j = p + 1;
    } else if !rest.is_empty() && rest[0].ends_with("llama-server") {
        l.engine = Some("llama.cpp".into());
        j = 1;
    } else if docker {
        let image = l.image.as_deref().unwrap_or("");
        if image.contains("vllm") {
            l.engine = Some("vllm".into());
        } else if image.contains("sglang") {
            l.engine = Some("sglang".into());
        } else if image.contains("lmdeploy") {
            l.engine = Some("lmdeploy".into());
        }
    }
    let mut k = j;
    while k < rest.len() {
        let w = rest[k].as_str();
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with('-') => (n, Some(v.to_string())),
            _ => (w, None),
        };
        let takes = |k: usize| inline.clone().or_else(|| rest.get(k + 1).cloned());
        match name {
            "--model" | "--model-path" => {
                l.model = takes(k);
                k += if inline.is_some() { 1 } else { 2 };
            }
            "-m" if l.engine.as_deref() == Some("llama.cpp") => {
                l.model = takes(k);
                k += if inline.is_some() { 1 } else { 2 };
            }
            "--tensor-parallel-size" | "--tp" | "--tp-size" | "-tp" => {
                l.tensor_parallel_size = takes(k).and_then(|v| v.parse().ok());
                k += if inline.is_some() { 1 } else { 2 };
            }
            _ => {
                args.push(rest[k].clone());
                k += 1;
            }
        }
    }
    l.extra_args = args;
    l.preset = l.engine.as_deref().map(|e| match (e, docker) {
        ("vllm", true) => "vllm-docker".to_string(),
        ("sglang", true) => "sglang-docker".to_string(),
        (e, _) => e.to_string(),
    });
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_docker() {
        let cmd = "docker run --runtime nvidia --gpus all \\\n    -v $HF_HOME:/root/.cache/huggingface_hub \\\n    --env \"HF_HOME=/root/.cache/huggingface_hub\" \\\n    -p 8000:8000 \\\n    --net host \\\n    --ipc=host --rm --name vllm \\\n    vllm/vllm-openai:v0.10.1 \\\n    --model Qwen/Qwen3-32B --tensor-parallel-size 2 \\\n    --host 0.0.0.0";
        let l = parse(cmd);
        assert_eq!(l.image.as_deref(), Some("vllm/vllm-openai:v0.10.1"));
        assert_eq!(l.engine.as_deref(), Some("vllm"));
        assert_eq!(l.preset.as_deref(), Some("vllm-docker"));
        assert_eq!(l.model.as_deref(), Some("Qwen/Qwen3-32B"));
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.extra_args, vec!["--host", "0.0.0.0"]);
        assert!(is_launch_command(cmd));
        assert!(!is_template(cmd));
        assert!(is_template(
            &cmd.replace("Qwen/Qwen3-32B", "${MODEL_REPO_ID}")
        ));
    }

    #[test]
    fn sglang_docker_and_lmdeploy() {
        let l = parse("docker run --gpus all --ipc=host --rm --name sglang lmsysorg/sglang:v0.5.1-cu126 python3 -m sglang.launch_server --model-path openai/gpt-oss-120b --tp 2 --host 0.0.0.0");
        assert_eq!(l.engine.as_deref(), Some("sglang"));
        assert_eq!(l.preset.as_deref(), Some("sglang-docker"));
        assert_eq!(l.image.as_deref(), Some("lmsysorg/sglang:v0.5.1-cu126"));
        assert_eq!(l.model.as_deref(), Some("openai/gpt-oss-120b"));
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.extra_args, vec!["--host", "0.0.0.0"]);

        let l = parse("lmdeploy serve api_server Qwen/Qwen3-235B-A22B-FP8 --tp 4 --enable-metrics --communicator cuda-ipc");
        assert_eq!(l.preset.as_deref(), Some("lmdeploy"));
        assert_eq!(l.model.as_deref(), Some("Qwen/Qwen3-235B-A22B-FP8"));
        assert_eq!(l.tensor_parallel_size, Some(4));
        assert_eq!(
            l.extra_args,
            vec!["--enable-metrics", "--communicator", "cuda-ipc"]
        );
        assert!(is_template(
            "lmdeploy serve api_server $MODEL_REPO_ID --tp $TP"
        ));
    }
}
