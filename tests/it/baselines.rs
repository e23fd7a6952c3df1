//! The committed baselines: reproducible byte for byte from the seeds, round-tripping to the
//! imported records, and readable by `baseline show` and `compare`.

use std::path::Path;
use std::process::Command;

use perfgate::baseline::Baseline;
use perfgate::import::{import_text, ImportOptions};
use perfgate::record::parse_jsonl;

const BIN: &str = env!("CARGO_BIN_EXE_perfgate");

const PAIRS: [(&str, &str); 3] = [
    ("000_91a68daabf788996.txt", "v0.10.1.toml"),
    ("001_6333425655433de6.txt", "sglang-v0.5.1.toml"),
    ("002_888d5a41793063a3.txt", "lmdeploy-v0.10.0.toml"),
];

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("perfgate runs");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn committed_baselines_regenerate_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("bash")
        .arg("scripts/regen-baselines.sh")
        .env("PERFGATE", BIN)
        .env("OUT", dir.path())
        .status()
        .expect("bash runs");
    assert!(status.success());
    for (_, toml) in PAIRS {
        let fresh = std::fs::read_to_string(dir.path().join(toml)).unwrap();
        let committed = std::fs::read_to_string(Path::new("baselines").join(toml)).unwrap();
        assert!(
            fresh == committed,
            "baselines/{toml} differs from what scripts/regen-baselines.sh produces; rerun it"
        );
    }
}

#[test]
fn show_json_equals_the_imported_records() {
    for (seed, toml) in PAIRS {
        let seed_path = format!("tests/data/seeds/{seed}");
        let text = std::fs::read_to_string(&seed_path).unwrap();
        let imported = import_text(&text, &seed_path, &ImportOptions::default())
            .unwrap()
            .records;
        let path = format!("baselines/{toml}");
        let (ok, stdout, stderr) = run(&["baseline", "show", "--json", &path]);
        assert!(ok, "{stderr}");
        let shown = parse_jsonl(&stdout, "stdout").unwrap();
        assert_eq!(shown.len(), 24);
        // Same records, grouped by model (the order of the seed).
        assert_eq!(shown, imported, "{toml}");
    }
}

#[test]
fn committed_baselines_say_how_to_launch() {
    let b = Baseline::load(Path::new("baselines/v0.10.1.toml")).unwrap();
    assert_eq!(b.engine.name, "vllm");
    assert_eq!(b.engine.version.as_deref(), Some("v0.10.1"));
    assert_eq!(b.engine.image.as_deref(), Some("vllm/vllm-openai:v0.10.1"));
    assert_eq!(
        b.engine.launch.as_ref().unwrap().preset.as_deref(),
        Some("vllm-docker")
    );
    assert_eq!(b.models.len(), 6);
    let m = &b.models[3];
    assert_eq!(m.name, "Qwen/Qwen3-235B-A22B");
    assert_eq!(m.tensor_parallel_size, Some(8));
    assert_eq!(m.extra_args, vec!["--host", "0.0.0.0"]);
    assert!(m
        .launch_command
        .as_deref()
        .unwrap()
        .starts_with("docker run"));
    assert_eq!(m.scenarios.len(), 4);
    assert_eq!(m.scenarios[0].runs.len(), 1);

    let s = Baseline::load(Path::new("baselines/sglang-v0.5.1.toml")).unwrap();
    assert_eq!(
        s.engine.launch.as_ref().unwrap().preset.as_deref(),
        Some("sglang-docker")
    );
    assert_eq!(s.models[4].scenarios[0].id, "sharegpt-n1000");

    let l = Baseline::load(Path::new("baselines/lmdeploy-v0.10.0.toml")).unwrap();
    assert_eq!(
        l.engine.launch.as_ref().unwrap().preset.as_deref(),
        Some("lmdeploy")
    );
    let big = l
        .models
        .iter()
        .find(|m| m.name == "openai/gpt-oss-120b")
        .unwrap();
    assert_eq!(big.tensor_parallel_size, Some(2));
    assert!(big.notes.as_deref().unwrap().contains("openai/gpt-oss-20b"));
    let fp8 = l
        .models
        .iter()
        .find(|m| m.name == "Qwen/Qwen3-235B-A22B-FP8")
        .unwrap();
    assert_eq!(
        fp8.extra_args,
        vec!["--enable-metrics", "--communicator", "cuda-ipc"]
    );
}

#[test]
fn unknown_keys_and_bad_files_are_errors() {
    let text = std::fs::read_to_string("baselines/v0.10.1.toml").unwrap();
    let bad = text.replacen("tensor_parallel_size = 1", "tensor_paralel_size = 1", 1);
    let err = Baseline::parse(&bad, "b.toml").unwrap_err().to_string();
    let line = bad
        .lines()
        .position(|l| l.starts_with("tensor_paralel_size"))
        .unwrap()
        + 1;
    assert!(
        err.starts_with(&format!(
            "b.toml:{line}:1: unknown field `tensor_paralel_size`"
        )),
        "{err}"
    );
    let bad = text.replacen("median_ttft_ms =", "median_ttf_ms =", 1);
    let err = Baseline::parse(&bad, "b.toml").unwrap_err().to_string();
    assert!(err.contains("unknown metric `median_ttf_ms`"), "{err}");
    let err = Baseline::parse("", "e.toml").unwrap_err().to_string();
    assert_eq!(err, "e.toml: the file is empty");
    let (ok, _, stderr) = run(&["baseline", "show", "Cargo.toml"]);
    assert!(!ok);
    assert!(
        stderr.contains("Cargo.toml:") && stderr.contains(":2: unknown field `workspace`"),
        "{stderr}"
    );
}

#[test]
fn compare_pairs_engines_and_maps_renamed_models() {
    let (ok, out, err) = run(&[
        "compare",
        "baselines/v0.10.1.toml",
        "baselines/sglang-v0.5.1.toml",
        "--markdown",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("| Qwen/Qwen3-8B | `sharegpt-n10000` | `output_throughput` | 3443.81 |"),
        "{out}"
    );
    // gpt-oss ShareGPT ran 10000 prompts on vLLM but 1000 on SGLang: not the same scenario.
    assert!(
        out.contains("scenario `sharegpt-n10000` is only in A"),
        "{out}"
    );

    let (ok, out, _) = run(&[
        "compare",
        "baselines/v0.10.1.toml",
        "baselines/lmdeploy-v0.10.0.toml",
    ]);
    assert!(ok);
    assert!(
        !out.contains("Qwen/Qwen3-8B "),
        "models with other names pair only via --map"
    );
    let (ok, out, err) = run(&[
        "compare",
        "baselines/v0.10.1.toml",
        "baselines/lmdeploy-v0.10.0.toml",
        "--map",
        "Qwen/Qwen3-8B=Qwen/Qwen3-8B-FP8",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("Qwen/Qwen3-8B ↔ Qwen/Qwen3-8B-FP8"), "{out}");
}

#[test]
fn schema_is_published_and_printed() {
    let (ok, out, _) = run(&["baseline", "schema"]);
    assert!(ok);
    let committed = std::fs::read_to_string("schema/baseline.schema.json").unwrap();
    assert_eq!(out, committed);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["title"], "perfgate baseline");
    assert_eq!(
        committed,
        perfgate::baseline::json_schema(),
        "schema/baseline.schema.json is stale: run `perfgate baseline schema > schema/baseline.schema.json`"
    );
}

/// Every shipped baseline and suite validates against the generated schema, and the schema
/// refuses what the parser refuses (an unknown key, a wrong type).
#[test]
fn every_shipped_baseline_and_suite_validates_against_the_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&perfgate::baseline::json_schema()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let mut checked = 0;
    for dir in ["baselines", "suites"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let doc: serde_json::Value = toml::from_str(&text).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&doc)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
            Baseline::parse(&text, &path.display().to_string()).unwrap();
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} files checked");
    let bad: serde_json::Value =
        toml::from_str("schema_version = 1\n[engine]\nname = \"vllm\"\nflavour = \"x\"\n").unwrap();
    assert!(!validator.is_valid(&bad));
    let bad: serde_json::Value =
        toml::from_str("schema_version = 1\n[engine]\nname = 3\n").unwrap();
    assert!(!validator.is_valid(&bad));
}

#[test]
fn calibrate_needs_two_sessions_and_prints_their_offset() {
    let dir = tempfile::tempdir().unwrap();
    // The GPU corpus: session A (rec, aa, aa1) and session B (l1 … l5) of one engine.
    let corpus = Path::new("tests/data/gpu-llamacpp-h100");
    let files = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .map(|n| corpus.join(format!("{n}.jsonl")).display().to_string())
            .collect()
    };
    let out = dir.path().join("cal.toml");
    let one = files(&["rec", "aa", "aa1"]);
    let mut args = vec!["baseline", "calibrate", "-o", out.to_str().unwrap()];
    args.extend(one.iter().map(String::as_str));
    let (ok, _, err) = run(&args);
    assert!(!ok);
    assert!(
        err.contains("≥ 2 recording sessions; the records hold 1"),
        "{err}"
    );
    assert!(!out.exists());

    let both = files(&["rec", "aa", "aa1", "l1", "l2", "l3", "l4", "l5"]);
    let mut args = vec!["baseline", "calibrate", "-o", out.to_str().unwrap()];
    args.extend(both.iter().map(String::as_str));
    let (ok, table, err) = run(&args);
    assert!(ok, "{err}");
    assert!(table.contains("between sessions (df)"), "{table}");
    // Each row: 2 sessions, 8 launches; the session offset has 1 df wherever it shows.
    assert!(table.contains("2/8/"), "{table}");
    assert!(table.contains("(1)"), "{table}");
    // The written baseline keeps the sessions: its noise table says the same.
    let (ok, again, _) = run(&["baseline", "noise", out.to_str().unwrap()]);
    assert!(ok);
    assert_eq!(again, table);
}
