//! vLLM's `spec_bench`: Spec-Bench's `question.jsonl` (`{"question_id", "category",
//! "turns": [..]}` per line). Each question's first turn is a prompt, sent as written; every
//! output asks for `spec_bench_output_len` tokens; `spec_bench_category` keeps one category.

use serde::Deserialize;

use super::{fill, line_of, need_path, read_file, Dataset, DatasetError, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;

pub(super) fn spec_bench(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    #[derive(Deserialize)]
    struct Line {
        #[serde(default)]
        category: Option<String>,
        turns: Vec<String>,
    }
    if spec.spec_bench_output_len == 0 {
        return Err(DatasetError::Invalid(
            "--spec-bench-output-len must be at least 1".into(),
        ));
    }
    let path = need_path(spec)?;
    let buf = read_file(path)?;
    let text = std::str::from_utf8(&buf).map_err(|e| DatasetError::Parse {
        path: path.to_path_buf(),
        line: line_of(&buf, e.valid_up_to()),
        msg: "not valid UTF-8".into(),
    })?;
    let want = spec.spec_bench_category.as_deref();
    let mut rows: Vec<(usize, String)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Line = serde_json::from_str(line).map_err(|e| DatasetError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            msg: format!("expected {{\"category\": string, \"turns\": [string, ..]}}: {e}"),
        })?;
        let category = row.category.unwrap_or_default();
        let keep = want.is_none_or(|c| c == category);
        seen.insert(category);
        let Some(first) = row.turns.into_iter().next().filter(|_| keep) else {
            continue;
        };
        rows.push((i + 1, first));
    }
    if rows.is_empty() {
        let which = want.map_or(String::new(), |c| format!(" in category `{c}`"));
        let known: Vec<&str> = seen.iter().map(String::as_str).collect();
        return Err(DatasetError::Invalid(format!(
            "{}: no questions{which} (categories in the file: {})",
            path.display(),
            known.join(", ")
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
                msg: "the first turn encodes to zero tokens".into(),
            });
        }
        prompts.push(Prompt {
            text: prompt.clone(),
            input_len: u32::try_from(n).unwrap_or(u32::MAX),
            output_len: spec.spec_bench_output_len,
            ..Default::default()
        });
    }
    let mut notes = vec![format!(
        "spec_bench: {} questions{} from {} in file order (first turns), output {} tokens",
        prompts.len(),
        want.map_or(String::new(), |c| format!(" of category `{c}`")),
        path.display(),
        spec.spec_bench_output_len
    )];
    let prompts = fill(spec, prompts, &mut notes);
    Ok(Dataset { prompts, notes })
}
