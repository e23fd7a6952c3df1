//! `fixed`: one token-exact prompt of `random_input_len` tokens, repeated.

use super::synth::Synth;
use super::{Dataset, DatasetError, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;

pub(super) fn fixed(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    if spec.random_input_len == 0 {
        return Err(DatasetError::Invalid(
            "random_input_len must be at least 1 for the fixed dataset".into(),
        ));
    }
    let synth = Synth::new(tok, spec.seed)?;
    let text = synth
        .exact_texts(&[spec.random_input_len], spec.seed)?
        .pop()
        .unwrap_or_default();
    let prompt = Prompt {
        text,
        input_len: spec.random_input_len,
        output_len: spec.random_output_len,
        ..Default::default()
    };
    let mut notes = vec![format!(
        "fixed: one prompt of {} tokens repeated {} times, output {} tokens, seed {}",
        spec.random_input_len, spec.num_prompts, spec.random_output_len, spec.seed
    )];
    notes.extend(synth.note());
    Ok(Dataset {
        prompts: vec![prompt; spec.num_prompts],
        notes,
    })
}
