//! Flags of `perfgate import`.

use clap::Args;

#[derive(Debug, Args)]
pub struct ImportArgs {}
