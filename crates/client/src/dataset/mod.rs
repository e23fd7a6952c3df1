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
//! * `spec_bench` (vLLM's): Spec-Bench's `question.jsonl`, each question's first turn.
//! * `burstgpt` (vLLM's): BurstGPT's CSV, random prompts of its GPT-4 rows' token counts.
//!
//! The file datasets (`custom`, `jsonl`, `spec_bench`, `burstgpt`) repeat their prompts in order to reach
//! `num_prompts` unless `no_oversample`; `custom` and `spec_bench` take `num_prompts` 0 (vLLM's
//! `--num-prompts -1`) as every prompt of the file.
//!
//! Everything is deterministic for a given seed and tokenizer.

mod burstgpt;
mod custom;
mod fixed;
mod jsonl;
mod prefix_repetition;
mod random;
mod sharegpt;
mod spec_bench;
mod synth;

pub use sharegpt::sharegpt_valid;
pub use synth::exact_texts;

use std::path::{Path, PathBuf};

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
    pub const SPEC_BENCH_OUTPUT_LEN: u32 = 256;
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
    /// `spec_bench`: the output length of every prompt, and the one category to read.
    pub spec_bench_output_len: u32,
    pub spec_bench_category: Option<String>,
    /// File datasets: run the prompts the file has rather than repeating them up to
    /// `num_prompts` (vLLM's `--no-oversample`).
    pub no_oversample: bool,
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
            spec_bench_output_len: defaults::SPEC_BENCH_OUTPUT_LEN,
            spec_bench_category: None,
            no_oversample: false,
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
    if spec.num_prompts == 0 {
        // 0 is every prompt of the file (its own size bounds it), where that means something.
        if !spec.name.reads_every_prompt() {
            return bad(format!(
                "num_prompts must be at least 1 (-1, every prompt of the file, is for the custom \
                 and spec_bench datasets; this is {})",
                spec.name.as_str()
            ));
        }
    } else if spec.num_prompts > MAX_PROMPTS {
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
    check_size(spec)?;
    match spec.name {
        DatasetName::Random => random::random(spec, tok),
        DatasetName::Fixed => fixed::fixed(spec, tok),
        DatasetName::Sharegpt => sharegpt::sharegpt(spec, tok),
        DatasetName::Jsonl => jsonl::jsonl(spec, tok),
        DatasetName::PrefixRepetition => prefix_repetition::prefix_repetition(spec, tok),
        DatasetName::Custom => custom::custom(spec, tok),
        DatasetName::SpecBench => spec_bench::spec_bench(spec, tok),
        DatasetName::Burstgpt => burstgpt::burstgpt(spec, tok),
        DatasetName::TimedTrace => Err(DatasetError::Invalid(
            "timed_trace is replayed by `perfgate run` (--dataset-name timed_trace or --trace); \
             a suite scenario cannot use it yet"
                .into(),
        )),
    }
}

/// `prompts` read from a file dataset, brought to the `num_prompts` of `spec`: every one when
/// that is 0 (`--num-prompts -1`), cut to it, or repeated in order to reach it unless
/// `no_oversample` (then the run has fewer prompts, and a note says so).
fn fill(spec: &DatasetSpec, mut prompts: Vec<Prompt>, notes: &mut Vec<String>) -> Vec<Prompt> {
    let want = spec.num_prompts;
    let have = prompts.len();
    let kind = spec.name.as_str();
    if want == 0 || want == have {
        return prompts;
    }
    if want < have {
        prompts.truncate(want);
    } else if spec.no_oversample {
        notes.push(format!(
            "{kind}: the file has {have} prompts; running those {have} (--no-oversample) instead \
             of {want}"
        ));
    } else {
        // vLLM oversamples too; in file order here, so the run stays reproducible.
        for i in have..want {
            prompts.push(prompts[i % have].clone());
        }
        notes.push(format!(
            "{kind}: the file has {have} prompts; repeated them in order to reach {want}"
        ));
    }
    prompts
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

/// A per-item seed derived from the run seed (splitmix64 finaliser).
fn mix(seed: u64, i: u64) -> u64 {
    let mut z = seed ^ i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The non-blank lines of the JSON Lines file at `path`, each read as a `T` with its 1-based
/// line number, up to `limit` rows (0: every row). A file that is not UTF-8, or a line that is
/// not a `T`, is refused with its line and `expected`, the shape a line should have.
fn json_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
    expected: &str,
    limit: usize,
) -> Result<Vec<(usize, T)>, DatasetError> {
    let buf = read_file(path)?;
    let text = std::str::from_utf8(&buf).map_err(|e| DatasetError::Parse {
        path: path.to_path_buf(),
        line: line_of(&buf, e.valid_up_to()),
        msg: "not valid UTF-8".into(),
    })?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: T = serde_json::from_str(line).map_err(|e| DatasetError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            msg: format!("expected {expected}: {e}"),
        })?;
        rows.push((i + 1, row));
        if limit > 0 && rows.len() >= limit {
            break;
        }
    }
    Ok(rows)
}

/// Prompts from texts read at lines of `path` (`(line, text, output_len)`), each counted with
/// `tok`; a text of no tokens is refused with its line (`what` names it: "the prompt").
fn counted(
    path: &Path,
    rows: Vec<(usize, String, u32)>,
    tok: &dyn Tokenize,
    what: &str,
) -> Result<Vec<Prompt>, DatasetError> {
    let texts: Vec<&str> = rows.iter().map(|(_, t, _)| t.as_str()).collect();
    let counts = tok.count_batch(&texts, usize::MAX)?;
    let mut prompts = Vec::with_capacity(rows.len());
    for ((line, text, output_len), n) in rows.into_iter().zip(counts) {
        if n == 0 {
            return Err(DatasetError::Parse {
                path: path.to_path_buf(),
                line,
                msg: format!("{what} encodes to zero tokens"),
            });
        }
        prompts.push(Prompt {
            text,
            input_len: u32::try_from(n).unwrap_or(u32::MAX),
            output_len,
            ..Default::default()
        });
    }
    Ok(prompts)
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

fn line_of(buf: &[u8], offset: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &buf[..offset.min(buf.len())]).count()
}

#[cfg(test)]
mod tests;
