//! `perfgate import`: read each file, detect its format, import it, write JSON Lines.

use super::Exit;
use crate::cli::import::ImportArgs;
use crate::import::{self, ImportError};
use crate::record::to_jsonl;

pub(crate) fn exec(args: ImportArgs) -> anyhow::Result<Exit> {
    let opts = args.options();
    let (mut records, mut skipped) = (Vec::new(), Vec::<ImportError>::new());
    for file in &args.files {
        let path = file.display().to_string();
        let text = import::read_file(file, &path)?;
        let format = import::detect(&text, &path);
        let imported = import::import_text(&text, &path, &opts)?;
        if !args.quiet {
            for w in &imported.warnings {
                eprintln!("perfgate: warning: {w}");
            }
            eprintln!(
                "perfgate: {path}: {} records ({})",
                imported.records.len(),
                format.name()
            );
        }
        records.extend(imported.records);
        skipped.extend(imported.skipped);
    }
    import::number_runs(&mut records);
    for e in &skipped {
        eprintln!("perfgate: skipped: {e}");
    }
    anyhow::ensure!(!records.is_empty(), "no result could be imported");
    let text = to_jsonl(&records);
    match &args.output {
        Some(out) => crate::atomic::write(out, text)?,
        None => print!("{text}"),
    }
    Ok(if skipped.is_empty() {
        Exit::Pass
    } else {
        Exit::Regression
    })
}
