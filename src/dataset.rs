//! Prompt synthesis and dataset loading (random, sharegpt, fixed, jsonl), seeded and exact in
//! token counts for the given tokenizer.

use std::path::PathBuf;

use crate::record::RangeConvention;
use crate::tokenizer::Tokenize;

/// One request's prompt. For the chat endpoint the text becomes a single user message.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub text: String,
    /// Prompt length in tokens for the tokenizer used.
    pub input_len: u32,
    /// Requested output length (`max_tokens`).
    pub output_len: u32,
}

/// Which dataset (`--dataset-name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DatasetName {
    Random,
    Sharegpt,
    Fixed,
    Jsonl,
}

impl DatasetName {
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetName::Random => "random",
            DatasetName::Sharegpt => "sharegpt",
            DatasetName::Fixed => "fixed",
            DatasetName::Jsonl => "jsonl",
        }
    }
}

/// Everything needed to build the prompts of one scenario.
#[derive(Debug, Clone)]
pub struct DatasetSpec {
    pub name: DatasetName,
    pub path: Option<PathBuf>,
    pub num_prompts: usize,
    pub random_input_len: u32,
    pub random_output_len: u32,
    pub random_range_ratio: f64,
    pub range_convention: RangeConvention,
    pub sharegpt_output_len: Option<u32>,
    pub seed: u64,
}

/// The prompts, plus notes for the user (e.g. "file truncated: read 17,671 complete records").
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub prompts: Vec<Prompt>,
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{0}")]
    Invalid(String),
}

/// Build the prompts of a scenario.
pub fn build(_spec: &DatasetSpec, _tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    Err(DatasetError::Invalid(
        "datasets are not implemented yet".into(),
    ))
}
