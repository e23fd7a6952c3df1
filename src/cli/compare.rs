//! Flags of `perfgate compare`.

use std::path::PathBuf;

use clap::Args;

/// Compare two baselines side by side: per model and scenario, the headline metrics of each
/// and their ratio B/A.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first baseline (A).
    pub a: PathBuf,
    /// The second baseline (B).
    pub b: PathBuf,
    /// Pair a model of A with a differently named model of B (`A_MODEL=B_MODEL`); repeatable.
    /// Models are otherwise paired only by identical names.
    #[arg(long = "map", value_name = "A=B")]
    pub map: Vec<String>,
    /// Print a markdown table instead of the terminal table.
    #[arg(long)]
    pub markdown: bool,
}
