//! Flags of `perfgate merge`.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Per-model reports (from `perfgate check --json` in matrix jobs).
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    /// Where to write the merged report.
    #[arg(short, long, value_name = "MERGED.json")]
    pub output: PathBuf,
}
