//! ShareGPT_V3 JSON read record by record, with vLLM's filters and seeded shuffle.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Deserialize;

use super::{
    line_of, need_path, read_file, Dataset, DatasetError, DatasetSpec, Prompt,
    SHAREGPT_MAX_PROMPT_LEN, SHAREGPT_MAX_TOTAL_LEN, SHAREGPT_MIN_LEN,
};
use crate::tokenizer::Tokenize;

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

pub(super) fn sharegpt(spec: &DatasetSpec, tok: &dyn Tokenize) -> Result<Dataset, DatasetError> {
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
    if prompts.len() < want && spec.no_oversample {
        notes.push(format!(
            "sharegpt: only {} prompts passed the filters; running those (--no-oversample) \
             instead of {}",
            thousands(prompts.len()),
            thousands(want)
        ));
    } else if prompts.len() < want {
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
