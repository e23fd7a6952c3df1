//! Flags of `perfgate import`.

use std::path::PathBuf;

use clap::Args;

use crate::import::ImportOptions;
use crate::record::RangeConvention;

/// Import benchmark results as JSON Lines records. The format of each file is detected:
/// console logs (SGLang/LMDeploy or vLLM style), vLLM `--save-result` JSON, SGLang JSONL,
/// LMDeploy CSV, or perfgate JSONL. What the files say wins over these flags, which only fill
/// in what a file does not say.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write the records here instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The model, for files that do not name it.
    #[arg(long)]
    pub model: Option<String>,
    /// The serving engine (`vllm`, `sglang`, `lmdeploy`, …), when the file does not say.
    #[arg(long)]
    pub engine: Option<String>,
    /// The engine version (e.g. `v0.10.1`), when the file does not say.
    #[arg(long)]
    pub engine_version: Option<String>,
    /// The dataset (`random`, `sharegpt`, …), for results whose arguments are not in the file.
    #[arg(long)]
    pub dataset_name: Option<String>,
    /// The number of prompts, for results whose arguments are not in the file.
    #[arg(long)]
    pub num_prompts: Option<u64>,
    /// The prompt length, for random-dataset results whose arguments are not in the file.
    #[arg(long)]
    pub random_input_len: Option<u64>,
    /// The output length, for random-dataset results whose arguments are not in the file.
    #[arg(long)]
    pub random_output_len: Option<u64>,
    /// The length spread, for random-dataset results whose arguments are not in the file.
    #[arg(long, value_parser = super::num::range_ratio)]
    pub random_range_ratio: Option<f64>,
    /// How `--random-range-ratio` was read by the tool that ran (default: from the format).
    #[arg(long, value_enum)]
    pub range_convention: Option<RangeConvention>,
    /// Import every result that can be read and list the others (file:line: why) instead of
    /// refusing a file at its first bad result; exit 0 when none was bad, 1 when some were
    /// (the others are written), 2 when none could be read.
    #[arg(long)]
    pub keep_going: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

impl ImportArgs {
    /// What the flags tell the importers.
    pub fn options(&self) -> ImportOptions {
        ImportOptions {
            model: self.model.clone(),
            engine: self.engine.clone(),
            engine_version: self.engine_version.clone(),
            dataset_name: self.dataset_name.clone(),
            num_prompts: self.num_prompts,
            random_input_len: self.random_input_len,
            random_output_len: self.random_output_len,
            random_range_ratio: self.random_range_ratio,
            range_convention: self.range_convention,
            keep_going: self.keep_going,
        }
    }
}
