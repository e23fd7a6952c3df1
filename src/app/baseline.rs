//! `perfgate baseline …`.

use super::Exit;
use crate::cli::baseline::BaselineCommand;

pub(crate) fn exec(cmd: BaselineCommand) -> anyhow::Result<Exit> {
    match cmd {}
}
