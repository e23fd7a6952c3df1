//! vLLM's `spec_bench`: Spec-Bench's `question.jsonl` (`{"question_id", "category",
//! "turns": [..]}` per line). Each question's first turn is a prompt, sent as written; every
//! output asks for `spec_bench_output_len` tokens; `spec_bench_category` keeps one category.

use serde::Deserialize;

use super::{counted, fill, json_lines, need_path, Dataset, DatasetError, DatasetSpec};
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
    let lines: Vec<(usize, Line)> =
        json_lines(path, "{\"category\": string, \"turns\": [string, ..]}", 0)?;
    let want = spec.spec_bench_category.as_deref();
    let out = spec.spec_bench_output_len;
    let mut rows = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (line, row) in lines {
        let category = row.category.unwrap_or_default();
        let keep = want.is_none_or(|c| c == category);
        seen.insert(category);
        if let Some(first) = row.turns.into_iter().next().filter(|_| keep) {
            rows.push((line, first, out));
        }
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
    let prompts = counted(path, rows, tok, "the first turn")?;
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
