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
        cmd.contains("python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp 8"),
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
