//! `perfgate compare A.toml B.toml`: two baselines side by side.

use super::Exit;
use crate::baseline::Baseline;
use crate::cli::compare::CompareArgs;
use crate::report::sidebyside::{self, ModelMap};

pub(crate) fn exec(args: CompareArgs) -> anyhow::Result<Exit> {
    let a = Baseline::load(&args.a)?;
    let b = Baseline::load(&args.b)?;
    let map = ModelMap::parse(&args.map)?;
    let table = sidebyside::compare(&a, &b, &map)?;
    for w in &table.unpaired {
        eprintln!("perfgate: note: {w}");
    }
    if args.markdown {
        print!("{}", sidebyside::render_markdown(&table));
    } else {
        print!("{}", sidebyside::render_terminal(&table));
    }
    Ok(Exit::Pass)
}
