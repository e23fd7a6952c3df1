//! Flags of `perfgate merge`.

use clap::Args;

#[derive(Debug, Args)]
pub struct MergeArgs {}
