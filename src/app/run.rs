//! `perfgate run`.

use super::Exit;
use crate::cli::run::RunArgs;

pub(crate) fn exec(_args: RunArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("`perfgate run` is not implemented yet")
}
