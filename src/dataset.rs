//! Prompt synthesis and dataset loading (random, sharegpt, fixed, jsonl), seeded and exact in
//! token counts for the given tokenizer.
//!
//! * `random`: each prompt has exactly its drawn token count (lengths from
//!   [`RangeConvention::bounds`]). Text is built from a pool of "word" tokens that survive a
//!   decode/encode round trip on their own (found by probing the vocabulary), then counted
//!   again and adjusted (truncate or extend, re-encode) until the count is exact. Tokenizers without
//!   such words (e.g. SentencePiece-style decoders) fall back to random ids from the whole vocabulary.
//! * `fixed`: one such prompt of `random_input_len` tokens, repeated.
//! * `sharegpt`: ShareGPT_V3 JSON read record by record, so a truncated file yields every
//!   complete conversation; vLLM's filters and seeded shuffle. Counting stops past the
//!   filters' limits (a longer text fails them whatever its exact count).
//! * `jsonl`: `{"prompt": .., "output_len": ..}` per line.
//! * `prefix_repetition` (vLLM's): `num_prefixes` shared prefixes of `prefix_len` tokens, each
//!   prompt one of them plus its own `suffix_len`-token suffix, in a seeded shuffled order — the
//!   workload of prefix caching.
//! * `custom` (vLLM's): `{"prompt": ..}` per line, every output `custom_output_len` tokens.
//! * `random` with `random_prefix_len`: one shared random prefix before every prompt.
//!
//! Everything is deterministic for a given seed and tokenizer.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Deserialize;

pub use crate::record::DatasetName;
use crate::record::RangeConvention;
use crate::tokenizer::{Tokenize, TokenizerError};

/// One request's prompt. For the chat endpoint the text becomes a single user message (or the
/// last one after `history`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prompt {
    pub text: String,
    /// Prompt length in tokens for the tokenizer used.
    pub input_len: u32,
    /// Requested output length (`max_tokens`).
    pub output_len: u32,
    /// The `model` field of this request, when it is not the run's (a LoRA adapter, vLLM's
    /// `--lora-modules`).
    pub model: Option<String>,
    /// Earlier turns of a conversation, sent as chat messages before `text` (multi-turn).
    pub history: Vec<ChatMessage>,
    /// When the request is due, in seconds from the start of the run (a timed trace).
    pub arrival: Option<f64>,
}

/// One chat message of a conversation's history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

/// vLLM's dataset defaults (`vllm bench serve`), written here only: the flags of `perfgate run`,
/// [`DatasetSpec::default`] and a scenario that leaves a length unset all take them from here.
pub mod defaults {
    pub const NUM_PROMPTS: usize = 1000;
    pub const RANDOM_INPUT_LEN: u32 = 1024;
    pub const RANDOM_OUTPUT_LEN: u32 = 128;
    pub const PREFIX_REPETITION_PREFIX_LEN: u32 = 256;
    pub const PREFIX_REPETITION_SUFFIX_LEN: u32 = 256;
    pub const PREFIX_REPETITION_NUM_PREFIXES: u32 = 10;
    pub const PREFIX_REPETITION_OUTPUT_LEN: u32 = 128;
    pub const CUSTOM_OUTPUT_LEN: u32 = 256;
}

/// The `prefix_repetition` dataset's shape (default: vLLM's, [`defaults`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixRepetition {
    pub prefix_len: u32,
    pub suffix_len: u32,
    pub num_prefixes: u32,
    pub output_len: u32,
}

impl Default for PrefixRepetition {
    fn default() -> Self {
        PrefixRepetition {
            prefix_len: defaults::PREFIX_REPETITION_PREFIX_LEN,
            suffix_len: defaults::PREFIX_REPETITION_SUFFIX_LEN,
            num_prefixes: defaults::PREFIX_REPETITION_NUM_PREFIXES,
            output_len: defaults::PREFIX_REPETITION_OUTPUT_LEN,
        }
    }
}

/// Everything needed to build the prompts of one scenario.
#[derive(Debug, Clone)]
pub struct DatasetSpec {
    pub name: DatasetName,
    pub path: Option<PathBuf>,
    pub num_prompts: usize,
    pub random_input_len: u32,
    pub random_output_len: u32,
    pub random_range_ratio: f64,
    pub range_convention: RangeConvention,
    pub sharegpt_output_len: Option<u32>,
    pub seed: u64,
    /// `random`: a shared prefix of this many tokens before every prompt (vLLM's
    /// `--random-prefix-len`; 0: none).
    pub random_prefix_len: u32,
    pub prefix_repetition: PrefixRepetition,
    /// `custom`: the output length of every prompt (vLLM's `--custom-output-len`).
    pub custom_output_len: u32,
}

impl Default for DatasetSpec {
    fn default() -> Self {
        DatasetSpec {
            name: DatasetName::Random,
            path: None,
            num_prompts: defaults::NUM_PROMPTS,
            random_input_len: defaults::RANDOM_INPUT_LEN,
            random_output_len: defaults::RANDOM_OUTPUT_LEN,
            random_range_ratio: 0.0,
            range_convention: RangeConvention::Vllm,
            sharegpt_output_len: None,
            seed: 0,
            random_prefix_len: 0,
            prefix_repetition: PrefixRepetition::default(),
            custom_output_len: defaults::CUSTOM_OUTPUT_LEN,
        }
    }
}

/// The prompts, plus notes for the user (e.g. "file truncated: read 17,671 complete records").
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub prompts: Vec<Prompt>,
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {reason}")]
    Io {
        path: PathBuf,
        reason: std::io::Error,
    },
    /// Bad content at a place in a file (`line` is 1-based).
    #[error("{path}:{line}: {msg}")]
    Parse {
        path: PathBuf,
        line: usize,
        msg: String,
    },
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
}

/// vLLM's ShareGPT filters (`is_valid_sequence`).
pub const SHAREGPT_MIN_LEN: usize = 4;
pub const SHAREGPT_MAX_PROMPT_LEN: usize = 1024;
pub const SHAREGPT_MAX_TOTAL_LEN: usize = 2048;

/// Most prompts of one scenario.
pub const MAX_PROMPTS: usize = 1_000_000;
/// Longest prompt (and shared prefix or suffix), in tokens.
pub const MAX_INPUT_LEN: u32 = 10_000_000;
/// Longest output, in tokens.
pub const MAX_OUTPUT_LEN: u32 = 1_000_000;
/// Most prompt tokens one scenario synthesises (prompts × their longest length, prefixes
/// included): about 3 GB of text. Each bound above alone is fine; their product is not.
pub const MAX_PROMPT_TOKENS: u64 = 500_000_000;

/// Check the sizes a spec asks to synthesise before any memory is taken for them: each length
/// within its bound and the whole within [`MAX_PROMPT_TOKENS`], naming the flags.
pub fn check_size(spec: &DatasetSpec) -> Result<(), DatasetError> {
    let bad = |msg: String| Err(DatasetError::Invalid(msg));
    if spec.num_prompts == 0 || spec.num_prompts > MAX_PROMPTS {
        return bad(format!(
            "--num-prompts {} is outside [1, {MAX_PROMPTS}]",
            spec.num_prompts
        ));
    }
    let pr = spec.prefix_repetition;
    for (flag, v, hi) in [
        ("--random-input-len", spec.random_input_len, MAX_INPUT_LEN),
        ("--random-prefix-len", spec.random_prefix_len, MAX_INPUT_LEN),
        (
            "--random-output-len",
            spec.random_output_len,
            MAX_OUTPUT_LEN,
        ),
        (
            "--prefix-repetition-prefix-len",
            pr.prefix_len,
            MAX_INPUT_LEN,
        ),
        (
            "--prefix-repetition-suffix-len",
            pr.suffix_len,
            MAX_INPUT_LEN,
        ),
        (
            "--prefix-repetition-output-len",
            pr.output_len,
            MAX_OUTPUT_LEN,
        ),
        (
            "--prefix-repetition-num-prefixes",
            pr.num_prefixes,
            MAX_PROMPTS as u32,
        ),
        (
            "--custom-output-len",
            spec.custom_output_len,
            MAX_OUTPUT_LEN,
        ),
    ] {
        if v > hi {
            return bad(format!("{flag} {v} is above its limit {hi}"));
        }
    }
    let n = spec.num_prompts as u64;
    let (what, total) = match spec.name {
        DatasetName::Random | DatasetName::Fixed => {
            let len = u64::from(spec.random_input_len);
            let hi = if spec.name == DatasetName::Random {
                check_ratio(spec)?;
                spec.range_convention.bounds(len, spec.random_range_ratio).1
            } else {
                len
            };
            let prefix = u64::from(spec.random_prefix_len);
            (
                format!(
                    "--num-prompts {n} × (the longest --random-input-len draw {hi}{})",
                    if prefix > 0 {
                        format!(" + --random-prefix-len {prefix}")
                    } else {
                        String::new()
                    }
                ),
                n.saturating_mul(hi.saturating_add(prefix)),
            )
        }
        DatasetName::PrefixRepetition => {
            let (p, q, k) = (
                u64::from(pr.prefix_len),
                u64::from(pr.suffix_len),
                u64::from(pr.num_prefixes),
            );
            (
                format!(
                    "--num-prompts {n} × (--prefix-repetition-prefix-len {p} + \
                     --prefix-repetition-suffix-len {q}) + --prefix-repetition-num-prefixes {k} \
                     × {p}"
                ),
                n.saturating_mul(p + q).saturating_add(k.saturating_mul(p)),
            )
        }
        _ => return Ok(()),
    };
    if total > MAX_PROMPT_TOKENS {
        return bad(format!(
            "{what} is {total} prompt tokens to build; the limit is {MAX_PROMPT_TOKENS} \
             (about 3 GB of text): fewer prompts or shorter ones"
        ));
    }
    Ok(())
}

/// Build the prompts of a scenario.
pub fn build(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    if spec.num_prompts == 0 {
        return Err(DatasetError::Invalid(
            "num_prompts must be at least 1".into(),
        ));
    }
    check_size(spec)?;
    match spec.name {
        DatasetName::Random => random(spec, tok),
        DatasetName::Fixed => fixed(spec, tok),
        DatasetName::Sharegpt => sharegpt(spec, tok),
        DatasetName::Jsonl => jsonl(spec, tok),
        DatasetName::PrefixRepetition => prefix_repetition(spec, tok),
        DatasetName::Custom => custom(spec, tok),
    }
}

/// Put `prefix` before every prompt and count the joined texts again (the counts are what the
/// records report; they equal prefix + prompt for the word-token texts the synthesiser builds).
fn with_prefix(
    prompts: &mut [Prompt],
    prefixes: &[String],
    which: impl Fn(usize) -> usize,
    tok: &dyn Tokenize,
) -> Result<usize, DatasetError> {
    for (i, p) in prompts.iter_mut().enumerate() {
        p.text = format!("{}{}", prefixes[which(i)], p.text);
    }
    let texts: Vec<&str> = prompts.iter().map(|p| p.text.as_str()).collect();
    let counts = tok.count_batch(&texts, usize::MAX)?;
    let mut changed = 0;
    for (p, n) in prompts.iter_mut().zip(counts) {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        changed += usize::from(n != p.input_len);
        p.input_len = n;
    }
    Ok(changed)
}

fn prefix_repetition(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
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

fn custom(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
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
    let have = prompts.len();
    if have < spec.num_prompts {
        // vLLM oversamples too; in file order here, so the run stays reproducible.
        for i in have..spec.num_prompts {
            prompts.push(prompts[i % have].clone());
        }
        notes.push(format!(
            "custom: the file has {have} prompts; repeated them in order to reach {}",
            spec.num_prompts
        ));
    }
    Ok(Dataset { prompts, notes })
}

/// Draw `n` lengths uniformly from the inclusive range the convention gives.
fn draw_lens(rng: &mut StdRng, n: usize, len: u32, ratio: f64, conv: RangeConvention) -> Vec<u32> {
    let (lo, hi) = conv.bounds(len as u64, ratio);
    let hi = hi.min(u32::MAX as u64);
    (0..n)
        .map(|_| rng.random_range(lo.min(hi)..=hi) as u32)
        .collect()
}

fn check_ratio(spec: &DatasetSpec) -> Result<(), DatasetError> {
    let r = spec.random_range_ratio;
    let ok = match spec.range_convention {
        RangeConvention::Vllm => (0.0..1.0).contains(&r),
        RangeConvention::Sglang => r > 0.0 && r <= 1.0,
    };
    if !r.is_finite() || !ok {
        return Err(DatasetError::Invalid(format!(
            "random_range_ratio {r} is out of range for the {} convention ({})",
            spec.range_convention.as_str(),
            match spec.range_convention {
                RangeConvention::Vllm => "0 <= r < 1",
                RangeConvention::Sglang => "0 < r <= 1",
            }
        )));
    }
    Ok(())
}

fn random(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
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

fn fixed(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
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
struct Synth<'a> {
    tok: &'a dyn Tokenize,
    /// Word tokens (`" word"`) whose text encodes back to exactly that one id.
    pool: Vec<String>,
    vocab: u32,
}

/// Rounds of re-encode/adjust before giving up on a prompt.
const MAX_ROUNDS: usize = 24;

impl<'a> Synth<'a> {
    fn new(tok: &'a dyn Tokenize, seed: u64) -> Result<Self, DatasetError> {
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

    fn note(&self) -> Option<String> {
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
    fn exact_texts(&self, targets: &[u32], seed: u64) -> Result<Vec<String>, DatasetError> {
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

/// A per-item seed derived from the run seed (splitmix64 finaliser).
fn mix(seed: u64, i: u64) -> u64 {
    let mut z = seed ^ i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn need_path(spec: &DatasetSpec) -> Result<&Path, DatasetError> {
    spec.path.as_deref().ok_or_else(|| {
        DatasetError::Invalid(format!(
            "the {} dataset needs --dataset-path",
            spec.name.as_str()
        ))
    })
}

fn read_file(path: &Path) -> Result<Vec<u8>, DatasetError> {
    std::fs::read(path).map_err(|reason| DatasetError::Io {
        path: path.to_path_buf(),
        reason,
    })
}

/// The first two turns of one ShareGPT conversation, and how many turns it had.
#[derive(Debug, Default)]
struct Conversation {
    first_two: Vec<String>,
    turns: usize,
}

impl<'de> Deserialize<'de> for Conversation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Entry {
            #[serde(default)]
            conversations: Option<Turns>,
        }
        let e = Entry::deserialize(d)?;
        Ok(e.conversations.map(|t| t.0).unwrap_or_default())
    }
}

/// `conversations`: keeps the first two turns' `value`, skips the rest without allocating.
struct Turns(Conversation);

impl<'de> Deserialize<'de> for Turns {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Turn {
            #[serde(default)]
            value: Option<String>,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Turns;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of turns")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Turns, A::Error> {
                let mut c = Conversation::default();
                while c.turns < 2 {
                    match seq.next_element::<Turn>()? {
                        Some(t) => {
                            c.first_two.push(t.value.unwrap_or_default());
                            c.turns += 1;
                        }
                        None => return Ok(Turns(c)),
                    }
                }
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    c.turns += 1;
                }
                Ok(Turns(c))
            }
        }
        d.deserialize_seq(V)
    }
}

/// What reading a ShareGPT file gave.
#[derive(Debug)]
struct ShareGptFile {
    conversations: Vec<Conversation>,
    /// `Some(byte offset)` where the file was cut, if it was.
    truncated_at: Option<usize>,
}

fn line_of(buf: &[u8], offset: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &buf[..offset.min(buf.len())]).count()
}

fn skip_ws(buf: &[u8], mut pos: usize) -> usize {
    while pos < buf.len() && buf[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

/// Read a JSON array of conversations record by record; a cut-off end is not an error.
fn read_sharegpt(path: &Path, buf: &[u8]) -> Result<ShareGptFile, DatasetError> {
    let perr = |offset: usize, msg: String| DatasetError::Parse {
        path: path.to_path_buf(),
        line: line_of(buf, offset),
        msg,
    };
    let mut pos = skip_ws(buf, 0);
    if buf.get(pos) != Some(&b'[') {
        return Err(perr(pos, "expected a JSON array of conversations".into()));
    }
    pos = skip_ws(buf, pos + 1);
    let mut conversations = Vec::new();
    if buf.get(pos) == Some(&b']') {
        return Ok(ShareGptFile {
            conversations,
            truncated_at: None,
        });
    }
    loop {
        if pos >= buf.len() {
            return Ok(ShareGptFile {
                conversations,
                truncated_at: Some(buf.len()),
            });
        }
        let mut stream =
            serde_json::Deserializer::from_slice(&buf[pos..]).into_iter::<Conversation>();
        match stream.next() {
            Some(Ok(c)) => conversations.push(c),
            Some(Err(e)) if e.is_eof() => {
                return Ok(ShareGptFile {
                    conversations,
                    truncated_at: Some(buf.len()),
                })
            }
            Some(Err(e)) => {
                let line = line_of(buf, pos) + e.line().saturating_sub(1);
                return Err(DatasetError::Parse {
                    path: path.to_path_buf(),
                    line,
                    msg: format!("conversation {}: {e}", conversations.len() + 1),
                });
            }
            None => {
                return Ok(ShareGptFile {
                    conversations,
                    truncated_at: Some(buf.len()),
                })
            }
        }
        pos = skip_ws(buf, pos + stream.byte_offset());
        match buf.get(pos) {
            Some(b',') => pos = skip_ws(buf, pos + 1),
            Some(b']') => {
                return Ok(ShareGptFile {
                    conversations,
                    truncated_at: None,
                })
            }
            None => {
                return Ok(ShareGptFile {
                    conversations,
                    truncated_at: Some(buf.len()),
                })
            }
            Some(&c) => {
                return Err(perr(
                    pos,
                    format!(
                        "expected `,` or `]` after conversation {}, found `{}`",
                        conversations.len(),
                        c as char
                    ),
                ))
            }
        }
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Token counts of ShareGPT texts (by conversation index) already counted in this process.
///
/// Counting stops past what vLLM's filters can accept: a prompt count above
/// [`SHAREGPT_MAX_PROMPT_LEN`] or a completion count above [`SHAREGPT_MAX_TOTAL_LEN`] is stored
/// as that limit + 1 and means "longer than the limit", which fails the filters either way.
#[derive(Debug, Default)]
struct LenMemo {
    prompt: HashMap<usize, u32>,
    completion: HashMap<usize, u32>,
}

impl LenMemo {
    /// Count the texts whose count is not known yet, in one batch.
    fn fill<'t>(
        &mut self,
        tok: &dyn Tokenize,
        items: impl Iterator<Item = (usize, &'t str)>,
        completion: bool,
    ) -> Result<(), DatasetError> {
        let (map, limit) = if completion {
            (&mut self.completion, SHAREGPT_MAX_TOTAL_LEN)
        } else {
            (&mut self.prompt, SHAREGPT_MAX_PROMPT_LEN)
        };
        let todo: Vec<(usize, &str)> = items.filter(|(i, _)| !map.contains_key(i)).collect();
        if todo.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = todo.iter().map(|(_, t)| *t).collect();
        for ((i, _), n) in todo.iter().zip(tok.count_batch(&texts, limit)?) {
            map.insert(*i, n.min(limit + 1) as u32);
        }
        Ok(())
    }
}

/// Same file (path, size, modification time) and same local tokenizer.
type MemoKey = (PathBuf, u64, Option<std::time::SystemTime>, String);

/// Scenarios that share a ShareGPT file (one per request rate, say) tokenize it once per
/// process. Not for the `server` tokenizer: its id does not say which engine answered.
static SHAREGPT_LENS: OnceLock<Mutex<HashMap<MemoKey, LenMemo>>> = OnceLock::new();

fn memo_key(path: &Path, tok: &dyn Tokenize) -> Option<MemoKey> {
    if tok.is_remote() {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    let canon = std::fs::canonicalize(path).ok()?;
    Some((canon, meta.len(), meta.modified().ok(), tok.id()))
}

fn take_memo(key: &MemoKey) -> LenMemo {
    let lock = SHAREGPT_LENS.get_or_init(Default::default);
    let mut map = lock.lock().unwrap_or_else(|e| e.into_inner());
    map.remove(key).unwrap_or_default()
}

fn put_memo(key: MemoKey, memo: LenMemo) {
    let lock = SHAREGPT_LENS.get_or_init(Default::default);
    let mut map = lock.lock().unwrap_or_else(|e| e.into_inner());
    map.insert(key, memo);
}

fn sharegpt(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
    let path = need_path(spec)?;
    let buf = read_file(path)?;
    let file = read_sharegpt(path, &buf)?;
    drop(buf);
    let mut notes = Vec::new();
    let read = file.conversations.len();
    match file.truncated_at {
        Some(at) => notes.push(format!(
            "sharegpt: {} is truncated (cut at byte {}): read the {} complete conversations \
             before the cut and ignored the rest",
            path.display(),
            thousands(at),
            thousands(read)
        )),
        None => notes.push(format!(
            "sharegpt: read {} conversations from {}",
            thousands(read),
            path.display()
        )),
    }
    // vLLM: keep conversations with at least two turns, then shuffle with the seed.
    let mut pairs: Vec<(usize, String, String)> = file
        .conversations
        .into_iter()
        .enumerate()
        .filter(|(_, c)| c.turns >= 2 && c.first_two.len() >= 2)
        .map(|(i, mut c)| {
            let completion = c.first_two.pop().unwrap_or_default();
            let prompt = c.first_two.pop().unwrap_or_default();
            (i, prompt, completion)
        })
        .collect();
    let with_two = pairs.len();
    let mut rng = StdRng::seed_from_u64(spec.seed);
    rand::seq::SliceRandom::shuffle(pairs.as_mut_slice(), &mut rng);

    let memo_key = memo_key(path, tok);
    let mut memo = memo_key.as_ref().map(take_memo).unwrap_or_default();
    let want = spec.num_prompts;
    let fixed_out = spec.sharegpt_output_len;
    let mut prompts: Vec<Prompt> = Vec::with_capacity(want);
    let (mut examined, mut skipped) = (0usize, 0usize);
    let mut next = 0usize;
    while prompts.len() < want && next < pairs.len() {
        let need = want - prompts.len();
        let take = (need + need / 8 + 64).min(pairs.len() - next);
        let chunk = &pairs[next..next + take];
        next += take;
        memo.fill(tok, chunk.iter().map(|(i, p, _)| (*i, p.as_str())), false)?;
        if fixed_out.is_none() {
            memo.fill(tok, chunk.iter().map(|(i, _, c)| (*i, c.as_str())), true)?;
        }
        for (i, prompt, _) in chunk {
            if prompts.len() >= want {
                break;
            }
            examined += 1;
            let in_len = memo.prompt[i] as usize;
            let out_len = match fixed_out {
                Some(n) => n as usize,
                None => memo.completion[i] as usize,
            };
            if !sharegpt_valid(in_len, out_len, fixed_out.is_some()) {
                skipped += 1;
                continue;
            }
            prompts.push(Prompt {
                text: prompt.clone(),
                input_len: in_len as u32,
                output_len: out_len as u32,
                ..Default::default()
            });
        }
    }
    if let Some(key) = memo_key {
        put_memo(key, memo);
    }
    let _ = write!(
        notes[0],
        "; {} with at least two turns; examined {} after a seeded shuffle (seed {}), \
         skipped {} by vLLM's length filters",
        thousands(with_two),
        thousands(examined),
        spec.seed,
        thousands(skipped)
    );
    if prompts.is_empty() {
        return Err(DatasetError::Invalid(format!(
            "{}: no conversation passed the filters (prompt >= {SHAREGPT_MIN_LEN} and <= \
             {SHAREGPT_MAX_PROMPT_LEN} tokens, output >= {SHAREGPT_MIN_LEN}, total <= \
             {SHAREGPT_MAX_TOTAL_LEN})",
            path.display()
        )));
    }
    if prompts.len() < want {
        let have = prompts.len();
        for _ in have..want {
            let p = prompts[rng.random_range(0..have)].clone();
            prompts.push(p);
        }
        notes.push(format!(
            "sharegpt: only {} prompts passed the filters; oversampled to {} by seeded \
             random repetition",
            thousands(have),
            thousands(want)
        ));
    }
    Ok(Dataset { prompts, notes })
}

/// vLLM's `is_valid_sequence` with its defaults.
pub fn sharegpt_valid(prompt_len: usize, output_len: usize, fixed_output: bool) -> bool {
    let prompt_too_short = prompt_len < SHAREGPT_MIN_LEN;
    let output_too_short = !fixed_output && output_len < SHAREGPT_MIN_LEN;
    let prompt_too_long = prompt_len > SHAREGPT_MAX_PROMPT_LEN;
    let combined_too_long = prompt_len + output_len > SHAREGPT_MAX_TOTAL_LEN;
    !(prompt_too_short || output_too_short || prompt_too_long || combined_too_long)
}

fn jsonl(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::HfTokenizer;
    use std::collections::HashMap;

    /// A whitespace WordLevel tokenizer over `n` words `w0 .. w{n-1}` (+ `[UNK]` = 0).
    fn word_level(n: usize) -> HfTokenizer {
        let mut vocab: HashMap<String, u32> = HashMap::new();
        vocab.insert("[UNK]".into(), 0);
        for i in 0..n {
            vocab.insert(format!("w{i}"), i as u32 + 1);
        }
        let model = tokenizers::models::wordlevel::WordLevel::builder()
            .vocab(vocab.into_iter().collect())
            .unk_token("[UNK]".into())
            .build()
            .unwrap();
        let mut t = tokenizers::Tokenizer::new(model);
        t.with_pre_tokenizer(Some(
            tokenizers::pre_tokenizers::whitespace::WhitespaceSplit,
        ));
        HfTokenizer::from_tokenizer(t, "word-level".into())
    }

    /// A tokenizer whose decode/encode is not a round trip: characters `a` and `b`, and `aa`
    /// as one merged token. Random ids like [a, a] come back as one token.
    struct Merging;

    impl Tokenize for Merging {
        fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
            let b = text.as_bytes();
            let (mut i, mut out) = (0, Vec::new());
            while i < b.len() {
                if b[i] == b'a' && b.get(i + 1) == Some(&b'a') {
                    out.push(2);
                    i += 2;
                } else {
                    out.push(if b[i] == b'a' { 0 } else { 1 });
                    i += 1;
                }
            }
            Ok(out)
        }
        fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
            Ok(ids
                .iter()
                .map(|&i| ["a", "b", "aa"][i as usize])
                .collect::<String>())
        }
        fn vocab_size(&self) -> usize {
            3
        }
        fn id(&self) -> String {
            "merging".into()
        }
    }

    fn spec(name: DatasetName) -> DatasetSpec {
        DatasetSpec {
            name,
            path: None,
            num_prompts: 50,
            random_input_len: 40,
            random_output_len: 16,
            random_range_ratio: 0.0,
            range_convention: RangeConvention::Vllm,
            sharegpt_output_len: None,
            seed: 7,
            ..Default::default()
        }
    }

    fn check_exact(ds: &Dataset, tok: &dyn Tokenize) {
        for p in &ds.prompts {
            assert_eq!(
                tok.encode(&p.text).unwrap().len(),
                p.input_len as usize,
                "{p:?}"
            );
        }
    }

    #[test]
    fn random_prompts_have_exactly_the_drawn_lengths() {
        let tok = word_level(500);
        let mut s = spec(DatasetName::Random);
        s.random_range_ratio = 0.5;
        let ds = build(&s, &tok).unwrap();
        assert_eq!(ds.prompts.len(), 50);
        check_exact(&ds, &tok);
        let (lo, hi) = RangeConvention::Vllm.bounds(40, 0.5);
        let (olo, ohi) = RangeConvention::Vllm.bounds(16, 0.5);
        assert!(ds
            .prompts
            .iter()
            .all(|p| (lo..=hi).contains(&(p.input_len as u64))
                && (olo..=ohi).contains(&(p.output_len as u64))));
        // Lengths really vary.
        let distinct: std::collections::BTreeSet<u32> =
            ds.prompts.iter().map(|p| p.input_len).collect();
        assert!(distinct.len() > 5, "{distinct:?}");
    }

    #[test]
    fn random_converges_when_decode_and_encode_disagree() {
        let ds = build(&spec(DatasetName::Random), &Merging).unwrap();
        assert!(ds.prompts.iter().all(|p| p.input_len == 40));
        check_exact(&ds, &Merging);
        assert!(
            ds.notes.iter().any(|n| n.contains("whole")),
            "{:?}",
            ds.notes
        );
    }

    #[test]
    fn random_is_deterministic_for_a_seed_and_differs_across_seeds() {
        let tok = word_level(500);
        let s = spec(DatasetName::Random);
        let a = build(&s, &tok).unwrap().prompts;
        let b = build(&s, &tok).unwrap().prompts;
        assert_eq!(a, b);
        let mut s2 = s.clone();
        s2.seed = 8;
        assert_ne!(a, build(&s2, &tok).unwrap().prompts);
        // Prompts differ from each other (no cache-friendly repetition).
        assert_ne!(a[0].text, a[1].text);
    }

    #[test]
    fn sglang_ratio_one_means_exactly_the_length() {
        let tok = word_level(100);
        let mut s = spec(DatasetName::Random);
        s.range_convention = RangeConvention::Sglang;
        s.random_range_ratio = 1.0;
        let ds = build(&s, &tok).unwrap();
        assert!(ds
            .prompts
            .iter()
            .all(|p| p.input_len == 40 && p.output_len == 16));
        s.random_range_ratio = 0.0;
        assert!(build(&s, &tok).is_err());
    }

    #[test]
    fn fixed_repeats_one_exact_prompt() {
        let tok = word_level(100);
        let mut s = spec(DatasetName::Fixed);
        s.random_input_len = 80;
        s.num_prompts = 5;
        let ds = build(&s, &tok).unwrap();
        assert_eq!(ds.prompts.len(), 5);
        assert!(ds.prompts.iter().all(|p| *p == ds.prompts[0]));
        assert_eq!(ds.prompts[0].input_len, 80);
        assert_eq!(ds.prompts[0].output_len, 16);
        check_exact(&ds, &tok);
    }

    fn conv(turns: &[&str]) -> String {
        let t: Vec<String> = turns
            .iter()
            .enumerate()
            .map(|(i, v)| {
                format!(
                    r#"{{"from": "{}", "value": {}}}"#,
                    if i % 2 == 0 { "human" } else { "gpt" },
                    serde_json::to_string(v).unwrap()
                )
            })
            .collect();
        format!(r#"{{"id": "x", "conversations": [{}]}}"#, t.join(", "))
    }

    fn words(n: usize) -> String {
        (0..n)
            .map(|i| format!("w{}", i % 50))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn sharegpt_reads_complete_records_of_a_cut_file_and_filters_like_vllm() {
        let tok = word_level(100);
        let records = [
            conv(&[&words(10), &words(20)]),          // ok: 10 + 20
            conv(&[&words(10)]),                      // one turn: skipped before filtering
            conv(&[&words(3), &words(20)]),           // prompt too short
            conv(&[&words(10), &words(3)]),           // output too short
            conv(&[&words(1025), &words(5)]),         // prompt too long
            conv(&[&words(1000), &words(1049)]),      // total 2049 too long
            conv(&[&words(1024), &words(1024), "x"]), // ok at the limits, three turns
        ];
        let full = format!("[\n{}\n]", records.join(",\n"));
        let cut = format!("[\n{},\n{}", records.join(",\n"), &records[0][..30]);
        let dir = tempfile::tempdir().unwrap();
        for (name, body, truncated) in [("full.json", &full, false), ("cut.json", &cut, true)] {
            let path = dir.path().join(name);
            std::fs::write(&path, body).unwrap();
            let mut s = spec(DatasetName::Sharegpt);
            s.path = Some(path);
            s.num_prompts = 2;
            let ds = build(&s, &tok).unwrap();
            let mut lens: Vec<(u32, u32)> = ds
                .prompts
                .iter()
                .map(|p| (p.input_len, p.output_len))
                .collect();
            lens.sort();
            assert_eq!(lens, vec![(10, 20), (1024, 1024)]);
            check_exact(&ds, &tok);
            assert_eq!(
                ds.notes[0].contains("truncated"),
                truncated,
                "{:?}",
                ds.notes
            );
            assert!(
                ds.notes[0].contains(" 7 complete") || !truncated,
                "{:?}",
                ds.notes
            );
            // More prompts than pass the filters: oversampled, and said so.
            s.num_prompts = 5;
            let ds = build(&s, &tok).unwrap();
            assert_eq!(ds.prompts.len(), 5);
            assert!(ds.notes.iter().any(|n| n.contains("oversampled")));
            // A fixed output length replaces the reference answer and its minimum.
            s.num_prompts = 4;
            s.sharegpt_output_len = Some(2);
            let ds = build(&s, &tok).unwrap();
            let mut ins: Vec<u32> = ds.prompts.iter().map(|p| p.input_len).collect();
            ins.sort();
            assert_eq!(ins, vec![10, 10, 1000, 1024]);
            assert!(ds.prompts.iter().all(|p| p.output_len == 2));
        }
    }

    #[test]
    fn sharegpt_shuffle_is_seeded() {
        let tok = word_level(100);
        let records: Vec<String> = (0..40).map(|i| conv(&[&words(5 + i), &words(5)])).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, format!("[{}]", records.join(","))).unwrap();
        let mut s = spec(DatasetName::Sharegpt);
        s.path = Some(path);
        s.num_prompts = 10;
        let a = build(&s, &tok).unwrap().prompts;
        assert_eq!(a, build(&s, &tok).unwrap().prompts);
        s.seed += 1;
        assert_ne!(a, build(&s, &tok).unwrap().prompts);
    }

    /// Counts the texts it encodes.
    struct Counting(HfTokenizer, std::sync::atomic::AtomicUsize);

    impl Tokenize for Counting {
        fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.0.encode(text)
        }
        fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
            self.0.decode(ids)
        }
        fn vocab_size(&self) -> usize {
            self.0.vocab_size()
        }
        fn id(&self) -> String {
            "counting".into()
        }
    }

    #[test]
    fn sharegpt_counts_are_reused_across_builds_of_the_same_file() {
        let tok = Counting(word_level(100), Default::default());
        let records: Vec<String> = (0..30).map(|i| conv(&[&words(5 + i), &words(6)])).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memo.json");
        std::fs::write(&path, format!("[{}]", records.join(","))).unwrap();
        let mut s = spec(DatasetName::Sharegpt);
        s.path = Some(path);
        s.num_prompts = 30;
        let first = build(&s, &tok).unwrap().prompts;
        let encoded = tok.1.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(encoded, 60, "every prompt and answer once");
        // Another seed (another order) over the same file: nothing is encoded again.
        s.seed = 99;
        let second = build(&s, &tok).unwrap().prompts;
        assert_eq!(tok.1.load(std::sync::atomic::Ordering::SeqCst), encoded);
        let key = |p: &Prompt| (p.input_len, p.output_len, p.text.clone());
        let (mut a, mut b): (Vec<_>, Vec<_>) = (
            first.iter().map(key).collect(),
            second.iter().map(key).collect(),
        );
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }

    #[test]
    fn sharegpt_syntax_errors_name_the_line() {
        let tok = word_level(10);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        let good = conv(&["a", "b"]);
        std::fs::write(&path, format!("[\n{good},\n{good}\n{{\"oops\": }}]")).unwrap();
        let mut s = spec(DatasetName::Sharegpt);
        s.path = Some(path);
        let e = build(&s, &tok).unwrap_err().to_string();
        assert!(e.contains("bad.json:4"), "{e}");
        std::fs::write(s.path.as_ref().unwrap(), "{}").unwrap();
        let e = build(&s, &tok).unwrap_err().to_string();
        assert!(e.contains("bad.json:1") && e.contains("array"), "{e}");
    }

    #[test]
    fn jsonl_reads_prompts_and_names_file_and_line_on_errors() {
        let tok = word_level(100);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        std::fs::write(
            &path,
            "{\"prompt\": \"w1 w2 w3\", \"output_len\": 7}\n\n{\"prompt\": \"w4\", \"output_len\": 2, \"extra\": 1}\n",
        )
        .unwrap();
        let mut s = spec(DatasetName::Jsonl);
        s.path = Some(path.clone());
        s.num_prompts = 3;
        let ds = build(&s, &tok).unwrap();
        let got: Vec<(u32, u32)> = ds
            .prompts
            .iter()
            .map(|p| (p.input_len, p.output_len))
            .collect();
        assert_eq!(got, vec![(3, 7), (1, 2), (3, 7)]);
        assert!(ds.notes.iter().any(|n| n.contains("repeated")));

        std::fs::write(
            &path,
            "{\"prompt\": \"w1\", \"output_len\": 1}\n{\"prompt\": \"w1\"}\n",
        )
        .unwrap();
        let e = build(&s, &tok).unwrap_err().to_string();
        assert!(e.contains("p.jsonl:2") && e.contains("output_len"), "{e}");
        std::fs::write(&path, "not json\n").unwrap();
        let e = build(&s, &tok).unwrap_err().to_string();
        assert!(e.contains("p.jsonl:1"), "{e}");
        s.path = Some(dir.path().join("missing.jsonl"));
        let e = build(&s, &tok).unwrap_err().to_string();
        assert!(e.contains("missing.jsonl"), "{e}");
        s.path = None;
        assert!(build(&s, &tok)
            .unwrap_err()
            .to_string()
            .contains("--dataset-path"));
    }

    #[test]
    fn vllm_filter_boundaries() {
        assert!(sharegpt_valid(4, 4, false));
        assert!(!sharegpt_valid(3, 4, false));
        assert!(!sharegpt_valid(4, 3, false));
        assert!(sharegpt_valid(4, 1, true));
        assert!(sharegpt_valid(1024, 1024, false));
        assert!(!sharegpt_valid(1025, 4, false));
        assert!(!sharegpt_valid(1000, 1049, false));
    }
}
