//! Times prompt synthesis: `cargo run --release --example dataset_speed -- TOKENIZER [SHAREGPT]
//! [NUM_PROMPTS] [INPUT_LEN]`. Prints seconds for loading the tokenizer, building NUM_PROMPTS
//! (default 10,000) exact random prompts of INPUT_LEN (default 128) tokens, and (with a path)
//! NUM_PROMPTS ShareGPT prompts.

use std::time::Instant;

use perfgate::dataset::{build, DatasetName, DatasetSpec};
use perfgate::record::RangeConvention;

/// CPU seconds (user + system) this process has used so far, from /proc/self/stat.
fn cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(tok_path) = args.first() else {
        anyhow::bail!("usage: dataset_speed TOKENIZER [SHAREGPT] [NUM_PROMPTS] [INPUT_LEN]");
    };
    let n: usize = args
        .get(2)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10_000);
    let input_len: u32 = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(128);

    let (t, c) = (Instant::now(), cpu());
    let tok = perfgate::client::tokenize::load(tok_path, "")?;
    println!(
        "load tokenizer: {:.3} s wall, {:.2} s cpu",
        t.elapsed().as_secs_f64(),
        cpu() - c
    );

    let mut spec = DatasetSpec {
        name: DatasetName::Random,
        path: None,
        num_prompts: n,
        random_input_len: input_len,
        random_output_len: 128,
        random_range_ratio: 0.0,
        range_convention: RangeConvention::Vllm,
        sharegpt_output_len: None,
        seed: 0,
        ..Default::default()
    };
    let (t, c) = (Instant::now(), cpu());
    let ds = build(&spec, tok.as_ref())?;
    let tokens: u64 = ds.prompts.iter().map(|p| p.input_len as u64).sum();
    println!(
        "random: {} prompts, {tokens} tokens: {:.3} s wall, {:.2} s cpu",
        ds.prompts.len(),
        t.elapsed().as_secs_f64(),
        cpu() - c
    );

    if let Some(path) = args.get(1).filter(|p| !p.is_empty()) {
        spec.name = DatasetName::Sharegpt;
        spec.path = Some(path.into());
        let (t, c) = (Instant::now(), cpu());
        let ds = build(&spec, tok.as_ref())?;
        let tokens: u64 = ds.prompts.iter().map(|p| p.input_len as u64).sum();
        println!(
            "sharegpt: {} prompts, {tokens} input tokens: {:.3} s wall, {:.2} s cpu",
            ds.prompts.len(),
            t.elapsed().as_secs_f64(),
            cpu() - c
        );
        for note in &ds.notes {
            println!("  note: {note}");
        }
        // Again with another seed: the token counts are reused within the process.
        spec.seed = 1;
        let (t, c) = (Instant::now(), cpu());
        let ds = build(&spec, tok.as_ref())?;
        println!(
            "sharegpt again (seed 1, counts reused): {} prompts: {:.3} s wall, {:.2} s cpu",
            ds.prompts.len(),
            t.elapsed().as_secs_f64(),
            cpu() - c
        );
    }
    Ok(())
}
