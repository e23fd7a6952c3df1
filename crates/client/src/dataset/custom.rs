//! vLLM's `custom`: `{"prompt": ..}` per line, every output `custom_output_len` tokens.

use serde::Deserialize;

use super::{counted, fill, json_lines, need_path, Dataset, DatasetError, DatasetSpec};
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
    let rows: Vec<(usize, Line)> = json_lines(path, "{\"prompt\": string}", spec.num_prompts)?;
    if rows.is_empty() {
        return Err(DatasetError::Invalid(format!(
            "{}: no prompts in the file",
            path.display()
        )));
    }
    let out = spec.custom_output_len;
    let rows = rows.into_iter().map(|(i, r)| (i, r.prompt, out)).collect();
    let prompts = counted(path, rows, tok, "the prompt")?;
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
