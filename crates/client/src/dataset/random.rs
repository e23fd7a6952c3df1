//! `random`: token-exact texts of drawn lengths, optionally after one shared random prefix.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::synth::Synth;
use super::{check_ratio, mix, with_prefix, Dataset, DatasetError, DatasetSpec, Prompt};
use crate::record::RangeConvention;
use crate::tokenizer::Tokenize;

/// Draw `n` lengths uniformly from the inclusive range the convention gives.
fn draw_lens(rng: &mut StdRng, n: usize, len: u32, ratio: f64, conv: RangeConvention) -> Vec<u32> {
    let (lo, hi) = conv.bounds(len as u64, ratio);
    let hi = hi.min(u32::MAX as u64);
    (0..n)
        .map(|_| rng.random_range(lo.min(hi)..=hi) as u32)
        .collect()
}

pub(super) fn random(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    if spec.random_input_len == 0 {
        return Err(DatasetError::Invalid(
            "random_input_len must be at least 1".into(),
        ));
    }
    check_ratio(spec)?;
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let n = spec.num_prompts;
    let (ratio, conv) = (spec.random_range_ratio, spec.range_convention);
    let input_lens = draw_lens(&mut rng, n, spec.random_input_len, ratio, conv);
    let output_lens = draw_lens(&mut rng, n, spec.random_output_len, ratio, conv);
    let synth = Synth::new(tok, spec.seed)?;
    let texts = synth.exact_texts(&input_lens, spec.seed)?;
    let mut prompts: Vec<Prompt> = texts
        .into_iter()
        .zip(input_lens.iter().zip(&output_lens))
        .map(|(text, (&input_len, &output_len))| Prompt {
            text,
            input_len: input_len + spec.random_prefix_len,
            output_len,
            ..Default::default()
        })
        .collect();
    let mut prefix_note = None;
    if spec.random_prefix_len > 0 {
        let prefix = synth.exact_texts(&[spec.random_prefix_len], mix(spec.seed, 0x5052_4546))?;
        let changed = with_prefix(&mut prompts, &prefix, |_| 0, tok)?;
        prefix_note = Some(format!(
            "random: a shared prefix of {} tokens before every prompt{}",
            spec.random_prefix_len,
            if changed > 0 {
                format!(" ({changed} joined prompts encode to another count; theirs is used)")
            } else {
                String::new()
            }
        ));
    }
    let (ilo, ihi) = conv.bounds(spec.random_input_len as u64, ratio);
    let (olo, ohi) = conv.bounds(spec.random_output_len as u64, ratio);
    let mut notes = vec![format!(
        "random: {n} prompts, input {ilo}..={ihi} tokens, output {olo}..={ohi} tokens \
         ({} convention, ratio {ratio}), seed {}",
        conv.as_str(),
        spec.seed
    )];
    notes.extend(prefix_note);
    notes.extend(synth.note());
    Ok(Dataset { prompts, notes })
}
