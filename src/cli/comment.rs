//! Flags of `perfgate comment`.

use clap::Args;

#[derive(Debug, Args)]
pub struct CommentArgs {}
