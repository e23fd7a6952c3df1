//! vLLM's `custom`: `{"prompt": ..}` per line, every output `custom_output_len` tokens.

use serde::Deserialize;

use super::{fill, line_of, need_path, read_file, Dataset, DatasetError, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;

pub(super) fn custom(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    #[derive(Deserialize)]
    struct Line {
        prompt: String,
    }
    if spec.custom_output_len == 0 {
        return Err(DatasetError::Invalid(
            "--custom-output-len must be at least 1".into(),
        ));
    }
    let path = need_path(spec)?;
    let buf = read_file(path)?;
    let text = std::str::from_utf8(&buf).map_err(|e| DatasetError::Parse {
        path: path.to_path_buf(),
        line: line_of(&buf, e.valid_up_to()),
        msg: "not valid UTF-8".into(),
    })?;
    let mut rows: Vec<(usize, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Line = serde_json::from_str(line).map_err(|e| DatasetError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            msg: format!("expected {{\"prompt\": string}}: {e}"),
        })?;
        rows.push((i + 1, row.prompt));
        if spec.num_prompts > 0 && rows.len() >= spec.num_prompts {
            break;
        }
    }
    if rows.is_empty() {
        return Err(DatasetError::Invalid(format!(
            "{}: no prompts in the file",
            path.display()
        )));
    }
    let texts: Vec<&str> = rows.iter().map(|(_, p)| p.as_str()).collect();
    let counts = tok.count_batch(&texts, usize::MAX)?;
    let mut prompts = Vec::with_capacity(rows.len());
    for ((line, prompt), n) in rows.iter().zip(counts) {
        if n == 0 {
            return Err(DatasetError::Parse {
                path: path.to_path_buf(),
                line: *line,
                msg: "the prompt encodes to zero tokens".into(),
            });
        }
        prompts.push(Prompt {
            text: prompt.clone(),
            input_len: u32::try_from(n).unwrap_or(u32::MAX),
            output_len: spec.custom_output_len,
            ..Default::default()
        });
    }
    let mut notes = vec![format!(
        "custom: {} prompts from {} in file order, output {} tokens; prompts are sent as written \
         (no chat template is applied client-side; the chat endpoint applies the server's)",
        prompts.len(),
        path.display(),
        spec.custom_output_len
    )];
    let prompts = fill(spec, prompts, &mut notes);
    Ok(Dataset { prompts, notes })
}
