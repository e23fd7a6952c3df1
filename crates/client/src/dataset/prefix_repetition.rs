//! vLLM's `prefix_repetition`: shared prefixes, each prompt one of them plus its own suffix.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::synth::Synth;
use super::{mix, with_prefix, Dataset, DatasetError, DatasetSpec, Prompt};
use crate::tokenizer::Tokenize;

pub(super) fn prefix_repetition(
    spec: &DatasetSpec,
    tok: &dyn Tokenize,
) -> Result<Dataset, DatasetError> {
    let pr = spec.prefix_repetition;
    if pr.num_prefixes == 0 || pr.suffix_len + pr.prefix_len == 0 || pr.output_len == 0 {
        return Err(DatasetError::Invalid(
            "prefix_repetition needs --prefix-repetition-num-prefixes >= 1, a prefix or suffix \
             of at least 1 token, and --prefix-repetition-output-len >= 1"
                .into(),
        ));
    }
    let n = spec.num_prompts;
    let synth = Synth::new(tok, spec.seed)?;
    let prefixes = if pr.prefix_len > 0 {
        let lens = vec![pr.prefix_len; pr.num_prefixes as usize];
        synth.exact_texts(&lens, mix(spec.seed, 0x5052_4546))?
    } else {
        vec![String::new(); pr.num_prefixes as usize]
    };
    let suffixes = if pr.suffix_len > 0 {
        synth.exact_texts(&vec![pr.suffix_len; n], spec.seed)?
    } else {
        vec![String::new(); n]
    };
    let mut prompts: Vec<Prompt> = suffixes
        .into_iter()
        .map(|text| Prompt {
            text,
            input_len: pr.prefix_len + pr.suffix_len,
            output_len: pr.output_len,
            ..Default::default()
        })
        .collect();
    // Prefix i % k for prompt i, then a seeded shuffle (vLLM shuffles too): the server sees
    // the prefixes interleaved, so a hit needs the cache to hold all k of them.
    let k = pr.num_prefixes as usize;
    let changed = with_prefix(&mut prompts, &prefixes, |i| i % k, tok)?;
    let mut rng = StdRng::seed_from_u64(mix(spec.seed, 0x5348_5546));
    for i in (1..prompts.len()).rev() {
        let j = rng.random_range(0..=i);
        prompts.swap(i, j);
    }
    let mut notes = vec![format!(
        "prefix_repetition: {n} prompts, {k} shared prefixes of {} tokens + unique suffixes of {} \
         tokens, output {} tokens, seed {}",
        pr.prefix_len, pr.suffix_len, pr.output_len, spec.seed
    )];
    if changed > 0 {
        notes.push(format!(
            "prefix_repetition: {changed} prompts encode to other than prefix + suffix tokens \
             when joined; their input lengths are the joined counts"
        ));
    }
    notes.extend(synth.note());
    Ok(Dataset { prompts, notes })
}
