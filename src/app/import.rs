//! `perfgate import`.

use super::Exit;
use crate::cli::import::ImportArgs;

pub(crate) fn exec(_args: ImportArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("`perfgate import` is not implemented yet")
}
