//! `perfgate comment`.

use super::Exit;
use crate::cli::comment::CommentArgs;

pub(crate) fn exec(_args: CommentArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("`perfgate comment` is not implemented yet")
}
