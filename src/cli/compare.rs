//! Flags of `perfgate compare`.

use clap::Args;

#[derive(Debug, Args)]
pub struct CompareArgs {}
