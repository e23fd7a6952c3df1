//! `perfgate import`: read each file, detect its format, import it, write JSON Lines.

use super::Exit;
use crate::cli::import::ImportArgs;
use crate::import::{self, ImportOptions};
use crate::record::to_jsonl;

pub(crate) fn exec(args: ImportArgs) -> anyhow::Result<Exit> {
    let opts = ImportOptions {
        model: args.model,
        engine: args.engine,
        engine_version: args.engine_version,
        dataset_name: args.dataset_name,
        num_prompts: args.num_prompts,
        random_input_len: args.random_input_len,
        random_output_len: args.random_output_len,
        random_range_ratio: args.random_range_ratio,
        range_convention: args.range_convention,
    };
    let mut records = Vec::new();
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
    }
    import::number_runs(&mut records);
    let text = to_jsonl(&records);
    match &args.output {
        Some(out) => crate::atomic::write(out, text)?,
        None => print!("{text}"),
    }
    Ok(Exit::Pass)
}
