//! Prompt preparation timing: perfgate's own `dataset::build` for 10,000 ShareGPT prompts and
//! 10,000 exact-length random prompts with the Qwen3 tokenizer, in process (tokenizer load included).

use std::path::PathBuf;
use std::time::Instant;

use perfgate::dataset::{build, DatasetName, DatasetSpec};
use perfgate::record::RangeConvention;

use crate::Env;

fn spec(name: DatasetName, path: Option<PathBuf>) -> DatasetSpec {
    DatasetSpec {
        name,
        path,
        num_prompts: 10_000,
        random_input_len: 1024,
        random_output_len: 128,
        random_range_ratio: 0.0,
        range_convention: RangeConvention::Vllm,
        sharegpt_output_len: None,
        seed: 1,
        ..Default::default()
    }
}

/// (label, seconds) rows.
pub fn measure(env: &Env) -> Result<Vec<(String, f64)>, String> {
    let mut rows = Vec::new();
    let tok_path = env.tokenizer_dir.join("tokenizer.json");
    let t = Instant::now();
    let tok = perfgate::client::tokenize::load(&tok_path.display().to_string(), "")
        .map_err(|e| e.to_string())?;
    let tok = tok.as_ref();
    let load = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let ds = build(&spec(DatasetName::Random, None), tok).map_err(|e| format!("random: {e}"))?;
    let secs = t.elapsed().as_secs_f64() + load;
    if ds.prompts.len() != 10_000 || ds.prompts.iter().any(|p| p.input_len != 1024) {
        return Err("random: expected 10,000 prompts of exactly 1024 tokens".into());
    }
    rows.push(("prompt prep s: 10,000 exact random prompts of 1024 tokens (Qwen3, tokenizer load included)".to_string(), secs));

    match std::env::var_os("PERFGATE_SHAREGPT") {
        None => eprintln!("PERFGATE_SHAREGPT is not set (.cache/env.sh from scripts/install-engine.sh sets it): ShareGPT prep not measured"),
        Some(p) => {
            let t = Instant::now();
            let ds = build(&spec(DatasetName::Sharegpt, Some(PathBuf::from(p))), tok).map_err(|e| format!("sharegpt: {e}"))?;
            let secs = t.elapsed().as_secs_f64() + load;
            rows.push((
                format!("prompt prep s: {} ShareGPT prompts loaded and tokenized (Qwen3, tokenizer load included)", ds.prompts.len()),
                secs,
            ));
        }
    }
    Ok(rows)
}
