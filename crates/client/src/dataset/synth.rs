//! Token-exact text synthesis: pool words that round-trip alone, adjusted until exact.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{mix, DatasetError};
use crate::tokenizer::Tokenize;

/// Random texts of exactly `lens` tokens each (as the `random` dataset makes them), for
/// workloads that bring their own lengths (a timed trace). Returns the texts and a note when
/// the tokenizer needed the fallback.
pub fn exact_texts(
    tok: &dyn Tokenize,
    lens: &[u32],
    seed: u64,
) -> Result<(Vec<String>, Option<String>), DatasetError> {
    let synth = Synth::new(tok, seed)?;
    let texts = synth.exact_texts(lens, seed)?;
    Ok((texts, synth.note()))
}

/// Token-exact text synthesis for one tokenizer.
pub(super) struct Synth<'a> {
    tok: &'a dyn Tokenize,
    /// Word tokens (`" word"`) whose text encodes back to exactly that one id.
    pool: Vec<String>,
    vocab: u32,
}

/// Rounds of re-encode/adjust before giving up on a prompt.
const MAX_ROUNDS: usize = 24;

impl<'a> Synth<'a> {
    pub(super) fn new(tok: &'a dyn Tokenize, seed: u64) -> Result<Self, DatasetError> {
        let vocab = u32::try_from(tok.vocab_size()).unwrap_or(u32::MAX);
        if vocab == 0 {
            return Err(DatasetError::Invalid(format!(
                "tokenizer {} has an empty vocabulary",
                tok.id()
            )));
        }
        let pool = word_pool(tok, seed)?;
        Ok(Self { tok, pool, vocab })
    }

    pub(super) fn note(&self) -> Option<String> {
        if self.pool.is_empty() {
            Some(format!(
                "random text: no round-trip word tokens in tokenizer {}; random ids from the whole \
                 vocabulary, adjusted until exact",
                self.tok.id()
            ))
        } else {
            None
        }
    }

    /// `k` random tokens' worth of text: pool words, or decoded random ids.
    fn fresh_ids(&self, rng: &mut StdRng, k: usize) -> Vec<u32> {
        (0..k).map(|_| rng.random_range(0..self.vocab)).collect()
    }

    fn pool_text(&self, rng: &mut StdRng, k: usize, out: &mut String) {
        for _ in 0..k {
            out.push_str(&self.pool[rng.random_range(0..self.pool.len())]);
        }
    }

    /// One text per target, each encoding to exactly its target count.
    pub(super) fn exact_texts(
        &self,
        targets: &[u32],
        seed: u64,
    ) -> Result<Vec<String>, DatasetError> {
        let mut rngs: Vec<StdRng> = (0..targets.len())
            .map(|i| StdRng::seed_from_u64(mix(seed, i as u64)))
            .collect();
        let mut texts: Vec<String> = vec![String::new(); targets.len()];
        if self.pool.is_empty() {
            let ids: Vec<Vec<u32>> = targets
                .iter()
                .zip(rngs.iter_mut())
                .map(|(&t, rng)| self.fresh_ids(rng, t as usize))
                .collect();
            texts = self.decode_all(&ids)?;
        } else {
            for ((&t, rng), text) in targets.iter().zip(rngs.iter_mut()).zip(texts.iter_mut()) {
                self.pool_text(rng, t as usize, text);
            }
        }
        let mut pending: Vec<usize> = (0..targets.len()).collect();
        for round in 0..MAX_ROUNDS {
            if pending.is_empty() {
                break;
            }
            // Count first (cheap, and stops past the longest target); only texts that missed
            // their target are encoded again, for the ids to adjust with.
            let batch: Vec<&str> = pending.iter().map(|&i| texts[i].as_str()).collect();
            let limit = pending
                .iter()
                .map(|&i| targets[i] as usize)
                .max()
                .unwrap_or(0)
                + 1;
            let counts = self.tok.count_batch(&batch, limit)?;
            let missed: Vec<usize> = pending
                .iter()
                .zip(counts)
                .filter(|&(&i, n)| n != targets[i] as usize)
                .map(|(&i, _)| i)
                .collect();
            let batch: Vec<&str> = missed.iter().map(|&i| texts[i].as_str()).collect();
            let encoded = if batch.is_empty() {
                Vec::new()
            } else {
                self.tok.encode_batch(&batch)?
            };
            let mut next = Vec::new();
            let mut to_decode: Vec<(usize, Vec<u32>)> = Vec::new();
            for (&i, mut ids) in missed.iter().zip(encoded) {
                let target = targets[i] as usize;
                if ids.len() == target {
                    continue;
                }
                next.push(i);
                let rng = &mut rngs[i];
                if round >= MAX_ROUNDS / 2 && !self.pool.is_empty() {
                    // Stubborn text: start again from pool words only.
                    texts[i].clear();
                    self.pool_text(rng, target, &mut texts[i]);
                } else if ids.len() > target {
                    ids.truncate(target);
                    to_decode.push((i, ids));
                } else if !self.pool.is_empty() {
                    self.pool_text(rng, target - ids.len(), &mut texts[i]);
                } else {
                    let extra = self.fresh_ids(rng, target - ids.len());
                    ids.extend(extra);
                    to_decode.push((i, ids));
                }
            }
            if !to_decode.is_empty() {
                let seqs: Vec<Vec<u32>> = to_decode.iter().map(|(_, ids)| ids.clone()).collect();
                for ((i, _), text) in to_decode.iter().zip(self.decode_all(&seqs)?) {
                    texts[*i] = text;
                }
            }
            pending = next;
        }
        if let Some(&i) = pending.first() {
            return Err(DatasetError::Invalid(format!(
                "could not synthesise a prompt of exactly {} tokens with tokenizer {} \
                 after {MAX_ROUNDS} rounds",
                targets[i],
                self.tok.id()
            )));
        }
        Ok(texts)
    }

    fn decode_all(&self, seqs: &[Vec<u32>]) -> Result<Vec<String>, DatasetError> {
        let refs: Vec<&[u32]> = seqs.iter().map(|s| s.as_slice()).collect();
        Ok(self.tok.decode_batch(&refs)?)
    }
}

/// A word piece worth keeping: a space, then 2 to 12 ASCII letters.
fn is_word_piece(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 3 && b.len() <= 13 && b[0] == b' ' && b[1..].iter().all(u8::is_ascii_alphabetic)
}

/// Probe (a seeded sample of) the vocabulary for word tokens that round-trip alone.
fn word_pool(tok: &dyn Tokenize, seed: u64) -> Result<Vec<String>, DatasetError> {
    let vocab = tok.vocab_size();
    let (budget, want, chunk) = if tok.is_remote() {
        (vocab.min(2048), 256, 512)
    } else {
        (vocab.min(65_536), 2048, 4096)
    };
    let mut rng = StdRng::seed_from_u64(mix(seed, u64::MAX));
    let candidates = rand::seq::index::sample(&mut rng, vocab, budget).into_vec();
    let mut pool = Vec::new();
    for ids in candidates.chunks(chunk) {
        let singles: Vec<[u32; 1]> = ids.iter().map(|&i| [i as u32]).collect();
        let refs: Vec<&[u32]> = singles.iter().map(|s| s.as_slice()).collect();
        let texts = tok.decode_batch(&refs)?;
        let words: Vec<(u32, String)> = ids
            .iter()
            .zip(texts)
            .filter(|(_, t)| is_word_piece(t))
            .map(|(&i, t)| (i as u32, t))
            .collect();
        let strs: Vec<&str> = words.iter().map(|(_, t)| t.as_str()).collect();
        let back = tok.encode_batch(&strs)?;
        for ((id, text), ids) in words.into_iter().zip(back) {
            if ids == [id] {
                pool.push(text);
            }
        }
        if pool.len() >= want {
            break;
        }
    }
    // A handful of words would make monotonous prompts; prefer the general path then.
    if pool.len() < 16 {
        pool.clear();
    }
    Ok(pool)
}
