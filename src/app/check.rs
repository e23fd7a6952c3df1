//! `perfgate check`.

use super::Exit;
use crate::cli::check::CheckArgs;

pub(crate) fn exec(_args: CheckArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("`perfgate check` is not implemented yet")
}
