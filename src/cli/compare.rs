//! Flags of `perfgate compare`.

use std::path::PathBuf;

use clap::Args;

/// Compare baselines side by side: per model and scenario, the headline metrics of each and
/// their ratio to the first (A). More than two files need `--html` (the tables pair A with each).
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first baseline (A).
    pub a: PathBuf,
    /// The second baseline (B), and any further ones.
    #[arg(required = true, num_args = 1..)]
    pub others: Vec<PathBuf>,
    /// Pair a model of A with a differently named model of B (`A_MODEL=B_MODEL`); repeatable.
    /// Models are otherwise paired only by identical names.
    #[arg(long = "map", value_name = "A=B")]
    pub map: Vec<String>,
    /// Print a markdown table instead of the terminal table.
    #[arg(long)]
    pub markdown: bool,
    /// Also write the side by side as a self-contained HTML page with plots.
    #[arg(long, value_name = "OUT.html", value_parser = super::report_file)]
    pub html: Option<PathBuf>,
}
