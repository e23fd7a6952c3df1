//! `jsonl`: `{"prompt": .., "output_len": ..}` per line.

use serde::Deserialize;

use super::{counted, fill, json_lines, need_path, Dataset, DatasetError, DatasetSpec};
use crate::tokenizer::Tokenize;

pub(super) fn jsonl(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    #[derive(Deserialize)]
    struct Line {
        prompt: String,
        output_len: u32,
    }
    let path = need_path(spec)?;
    let rows: Vec<(usize, Line)> = json_lines(
        path,
        "{\"prompt\": string, \"output_len\": integer}",
        spec.num_prompts,
    )?;
    for (line, row) in &rows {
        let bad = |msg: &str| {
            Err(DatasetError::Parse {
                path: path.to_path_buf(),
                line: *line,
                msg: msg.into(),
            })
        };
        if row.prompt.is_empty() {
            return bad("empty prompt");
        }
        if row.output_len == 0 {
            return bad("output_len must be at least 1");
        }
    }
    if rows.is_empty() {
        return Err(DatasetError::Invalid(format!(
            "{}: no prompts in the file",
            path.display()
        )));
    }
    let rows = rows
        .into_iter()
        .map(|(i, r)| (i, r.prompt, r.output_len))
        .collect();
    let prompts = counted(path, rows, tok, "the prompt")?;
    let mut notes = vec![format!(
        "jsonl: {} prompts from {} in file order",
        prompts.len(),
        path.display()
    )];
    let prompts = fill(spec, prompts, &mut notes);
    Ok(Dataset { prompts, notes })
}
