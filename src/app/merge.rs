//! `perfgate merge`.

use super::Exit;
use crate::cli::merge::MergeArgs;

pub(crate) fn exec(_args: MergeArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("`perfgate merge` is not implemented yet")
}
