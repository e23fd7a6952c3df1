//! Flags of `perfgate baseline …`.

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {}
