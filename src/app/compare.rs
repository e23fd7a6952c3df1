//! `perfgate compare`.

use super::Exit;
use crate::cli::compare::CompareArgs;

pub(crate) fn exec(_args: CompareArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("`perfgate compare` is not implemented yet")
}
