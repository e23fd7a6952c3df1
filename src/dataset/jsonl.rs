//! `jsonl`: `{"prompt": .., "output_len": ..}` per line.

use serde::Deserialize;

use super::{line_of, need_path, read_file, Dataset, DatasetError, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;

pub(super) fn jsonl(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    #[derive(Deserialize)]
    struct Line {
        prompt: String,
        output_len: u32,
    }
    let path = need_path(spec)?;
    let buf = read_file(path)?;
    let text = std::str::from_utf8(&buf).map_err(|e| DatasetError::Parse {
        path: path.to_path_buf(),
        line: line_of(&buf, e.valid_up_to()),
        msg: "not valid UTF-8".into(),
    })?;
    let mut rows: Vec<(usize, Line)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Line = serde_json::from_str(line).map_err(|e| DatasetError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            msg: format!("expected {{\"prompt\": string, \"output_len\": integer}}: {e}"),
        })?;
        if row.prompt.is_empty() {
            return Err(DatasetError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                msg: "empty prompt".into(),
            });
        }
        if row.output_len == 0 {
            return Err(DatasetError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                msg: "output_len must be at least 1".into(),
            });
        }
        rows.push((i + 1, row));
        if rows.len() >= spec.num_prompts {
            break;
        }
    }
    if rows.is_empty() {
        return Err(DatasetError::Invalid(format!(
            "{}: no prompts in the file",
            path.display()
        )));
    }
    let texts: Vec<&str> = rows.iter().map(|(_, r)| r.prompt.as_str()).collect();
    let counts = tok.count_batch(&texts, usize::MAX)?;
    let mut prompts = Vec::with_capacity(spec.num_prompts);
    for ((line, row), n) in rows.iter().zip(counts) {
        if n == 0 {
            return Err(DatasetError::Parse {
                path: path.to_path_buf(),
                line: *line,
                msg: "the prompt encodes to zero tokens".into(),
            });
        }
        prompts.push(Prompt {
            text: row.prompt.clone(),
            input_len: n as u32,
            output_len: row.output_len,
            ..Default::default()
        });
    }
    let mut notes = vec![format!(
        "jsonl: {} prompts from {} in file order",
        prompts.len(),
        path.display()
    )];
    let have = prompts.len();
    if have < spec.num_prompts {
        for i in have..spec.num_prompts {
            prompts.push(prompts[i % have].clone());
        }
        notes.push(format!(
            "jsonl: the file has {have} prompts; repeated them in order to reach {}",
            spec.num_prompts
        ));
    }
    Ok(Dataset { prompts, notes })
}
