//! vLLM's `burstgpt`: the BurstGPT trace's CSV (`Timestamp, Model, Request tokens, Response
//! tokens, Total tokens, Log Type`). As vLLM reads it: the rows of model `GPT-4` with at least one
//! response token, drawn in a seeded order; each becomes a random prompt of exactly its
//! request tokens asking for its response tokens. (The timestamps are not replayed: the run's
//! `--request-rate` sets the arrivals.)

use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};

use super::{fill, mix, need_path, read_file, Dataset, DatasetError, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;

/// The model whose rows vLLM's reader keeps.
const MODEL: &str = "GPT-4";

pub(super) fn burstgpt(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    let path = need_path(spec)?;
    let buf = read_file(path)?;
    let at = |line: usize, msg: String| DatasetError::Parse {
        path: path.to_path_buf(),
        line,
        msg,
    };
    let mut reader = csv::ReaderBuilder::new().from_reader(buf.as_slice());
    let headers = reader
        .headers()
        .map_err(|e| at(1, format!("not a CSV header: {e}")))?
        .clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| {
                at(
                    1,
                    format!("no `{name}` column (BurstGPT's header names it)"),
                )
            })
    };
    let (model, input, output) = (
        col("Model")?,
        col("Request tokens")?,
        col("Response tokens")?,
    );
    let mut rows = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| at(line, format!("bad CSV row: {e}")))?;
        if rec.get(model).map(str::trim) != Some(MODEL) {
            continue;
        }
        let num = |c: usize, what: &str| -> Result<u32, DatasetError> {
            let v = rec.get(c).unwrap_or("").trim();
            v.parse::<u32>()
                .map_err(|_| at(line, format!("`{what}` must be a whole number, got `{v}`")))
        };
        let (n_in, n_out) = (
            num(input, "Request tokens")?,
            num(output, "Response tokens")?,
        );
        if n_in >= 1 && n_out >= 1 {
            rows.push((n_in, n_out));
        }
    }
    if rows.is_empty() {
        return Err(DatasetError::Invalid(format!(
            "{}: no {MODEL} rows with request and response tokens",
            path.display()
        )));
    }
    rows.shuffle(&mut StdRng::seed_from_u64(mix(spec.seed, 0xb0)));
    if spec.num_prompts > 0 {
        rows.truncate(spec.num_prompts);
    }
    let lens: Vec<u32> = rows.iter().map(|r| r.0).collect();
    let (texts, note) = super::exact_texts(tok, &lens, spec.seed)?;
    let prompts: Vec<Prompt> = texts
        .into_iter()
        .zip(&rows)
        .map(|(text, &(input_len, output_len))| Prompt {
            text,
            input_len,
            output_len,
            ..Default::default()
        })
        .collect();
    let mut notes = vec![format!(
        "burstgpt: {} {MODEL} rows of {} in a seeded order, random prompts of their token counts",
        prompts.len(),
        path.display()
    )];
    notes.extend(note);
    let prompts = fill(spec, prompts, &mut notes);
    Ok(Dataset { prompts, notes })
}
