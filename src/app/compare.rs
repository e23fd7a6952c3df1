//! `perfgate compare A.toml B.toml [C.toml…]`: baselines side by side (tables for each pair with
//! A; `--html` for the page with plots).

use super::Exit;
use crate::baseline::Baseline;
use crate::cli::compare::CompareArgs;
use crate::report::sidebyside::{self, ModelMap};

pub(crate) fn exec(args: CompareArgs) -> anyhow::Result<Exit> {
    let a = Baseline::load(&args.a)?;
    let map = ModelMap::parse(&args.map)?;
    if args.others.len() > 1 && args.html.is_none() {
        anyhow::bail!(
            "comparing {} baselines needs `--html OUT.html` (the tables compare two)",
            args.others.len() + 1
        );
    }
    if args.others.len() == 1 {
        let b = Baseline::load(&args.others[0])?;
        let table = sidebyside::compare(&a, &b, &map)?;
        for w in &table.unpaired {
            eprintln!("perfgate: note: {w}");
        }
        if args.markdown {
            print!("{}", sidebyside::render_markdown(&table));
        } else {
            print!("{}", sidebyside::render_terminal(&table));
        }
    }
    if let Some(out) = &args.html {
        let mut files = vec![args.a.clone()];
        files.extend(args.others.iter().cloned());
        super::report::write_compare_page(&files, &map, None, out)?;
    }
    Ok(Exit::Pass)
}
