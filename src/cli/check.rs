//! Flags of `perfgate check`.

use clap::Args;

#[derive(Debug, Args)]
pub struct CheckArgs {}
