//! Flags of `perfgate run`.

use clap::Args;

#[derive(Debug, Args)]
pub struct RunArgs {}
