//! Tokenizers behind the synchronous [`Tokenize`] trait, so that prompt synthesis stays plain
//! code: a Hugging Face `tokenizer.json` run in-process (pure Rust). The engine's own tokenizer
//! (`/tokenize`, an HTTP client) is an edge: `crate::client::tokenize`.

use std::path::{Path, PathBuf};

mod bytebpe;

#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("{0}")]
    Invalid(String),
    /// A tokenizer file that cannot be read or parsed.
    #[error("tokenizer {path}: {msg}")]
    File { path: PathBuf, msg: String },
    /// The engine's `/tokenize` or `/detokenize` failed.
    #[error("tokenizer server {url}: {msg}")]
    Server { url: String, msg: String },
}

/// What prompt synthesis and re-tokenization need from a tokenizer.
pub trait Tokenize: Send + Sync {
    /// Token ids of `text`, without special tokens.
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError>;
    /// Text of `ids`, skipping special tokens.
    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError>;
    /// Number of ids in the vocabulary.
    fn vocab_size(&self) -> usize;
    /// A short name for records (`tokenizer_id`), e.g. the file path or `server`.
    fn id(&self) -> String;

    /// [`Tokenize::encode`] of many texts, in order. Implementations may work in parallel.
    fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, TokenizerError> {
        texts.iter().map(|t| self.encode(t)).collect()
    }
    /// Token counts of many texts, in order: exact for counts up to `limit`; a text with more
    /// tokens gets some count above `limit` (implementations may stop counting there).
    fn count_batch(&self, texts: &[&str], limit: usize) -> Result<Vec<usize>, TokenizerError> {
        let _ = limit;
        Ok(self.encode_batch(texts)?.iter().map(Vec::len).collect())
    }
    /// [`Tokenize::decode`] of many id sequences, in order. Implementations may work in parallel.
    fn decode_batch(&self, seqs: &[&[u32]]) -> Result<Vec<String>, TokenizerError> {
        seqs.iter().map(|s| self.decode(s)).collect()
    }
    /// True when every call is a round trip to another process (the `server` tokenizer):
    /// callers then keep the number of calls small.
    fn is_remote(&self) -> bool {
        false
    }
}

/// The `tokenizer.json` of Hugging Face model `id` (`org/name`) in the local hub cache
/// (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`): the snapshot that
/// `refs/main` names, else any snapshot that has one. Nothing is downloaded.
pub fn hf_cached(id: &str) -> Option<PathBuf> {
    if id.is_empty() || id.starts_with('/') || id.starts_with('.') || id.matches('/').count() > 1 {
        return None;
    }
    let hub = std::env::var_os("HF_HUB_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HF_HOME").map(|h| Path::new(&h).join("hub")))
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/huggingface/hub"))
        })?;
    let repo = hub.join(format!("models--{}", id.replace('/', "--")));
    let snapshots = repo.join("snapshots");
    if let Ok(rev) = std::fs::read_to_string(repo.join("refs/main")) {
        let f = snapshots.join(rev.trim()).join("tokenizer.json");
        if f.is_file() {
            return Some(f);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(&snapshots)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("tokenizer.json"))
        .filter(|f| f.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// A Hugging Face `tokenizer.json`, run in-process: byte-level BPE files (Qwen, GPT-2 style) by
/// perfgate's own lean runner, which gives the `tokenizers` crate's ids at a fraction of its
/// time and memory; every other shape by the `tokenizers` crate.
pub struct HfTokenizer {
    inner: Inner,
    id: String,
}

enum Inner {
    Lean(Box<bytebpe::ByteBpe>),
    Crate(Box<tokenizers::Tokenizer>),
}

/// The model id of a file in a Hugging Face hub cache
/// (`…/models--ORG--NAME/snapshots/REV/tokenizer.json` → `ORG/NAME`), else `None`.
pub fn hub_id(path: &Path) -> Option<String> {
    let parts: Vec<&str> = path.iter().filter_map(|c| c.to_str()).collect();
    parts.windows(2).find_map(|w| {
        let repo = w[0].strip_prefix("models--")?;
        (w[1] == "snapshots" && !repo.is_empty()).then(|| repo.replacen("--", "/", 1))
    })
}

impl HfTokenizer {
    /// Load `path`: a `tokenizer.json` file or a directory that holds one.
    pub fn from_path(path: &Path) -> Result<Self, TokenizerError> {
        let file = if path.is_dir() {
            path.join("tokenizer.json")
        } else {
            path.to_path_buf()
        };
        let err = |msg: String| TokenizerError::File {
            path: file.clone(),
            msg,
        };
        let bytes = std::fs::read(&file).map_err(|e| {
            if path.is_dir() {
                err(format!(
                    "no readable tokenizer.json in this directory ({e})"
                ))
            } else {
                err(e.to_string())
            }
        })?;
        // A file of the Hugging Face cache is recorded under its model id, as vLLM records
        // `tokenizer_id`, not under a path of this machine.
        let id = hub_id(&file).unwrap_or_else(|| path.display().to_string());
        Self::from_bytes(&bytes, id).map_err(|e| err(e.to_string()))
    }

    /// Parse the JSON text of a `tokenizer.json`; `id` names it in records.
    pub fn from_bytes(bytes: &[u8], id: String) -> Result<Self, TokenizerError> {
        if let Some(lean) = bytebpe::ByteBpe::parse(bytes) {
            return Ok(Self {
                inner: Inner::Lean(Box::new(lean)),
                id,
            });
        }
        Self::from_bytes_with_crate(bytes, id)
    }

    /// [`HfTokenizer::from_bytes`] always through the `tokenizers` crate (the reference the
    /// lean runner is tested against).
    pub fn from_bytes_with_crate(bytes: &[u8], id: String) -> Result<Self, TokenizerError> {
        let mut inner = tokenizers::Tokenizer::from_bytes(bytes)
            .map_err(|e| TokenizerError::Invalid(format!("not a valid tokenizer.json: {e}")))?;
        // Counting tokens must never be capped or padded by the file's settings.
        inner
            .with_truncation(None)
            .map_err(|e| TokenizerError::Invalid(e.to_string()))?;
        inner.with_padding(None);
        Ok(Self::from_tokenizer(inner, id))
    }

    /// Wrap an already built tokenizer (tests build tiny ones in code).
    pub fn from_tokenizer(inner: tokenizers::Tokenizer, id: String) -> Self {
        Self {
            inner: Inner::Crate(Box::new(inner)),
            id,
        }
    }

    /// True when perfgate's own byte-level BPE runner serves this file (not the crate).
    pub fn is_lean(&self) -> bool {
        matches!(self.inner, Inner::Lean(_))
    }

    fn err(&self, e: impl std::fmt::Display) -> TokenizerError {
        TokenizerError::Invalid(format!("tokenizer {}: {e}", self.id))
    }
}

impl Tokenize for HfTokenizer {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let t = match &self.inner {
            Inner::Lean(b) => return Ok(b.encode(text)),
            Inner::Crate(t) => t,
        };
        let enc = t.encode_fast(text, false).map_err(|e| self.err(e))?;
        Ok(enc.get_ids().to_vec())
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        match &self.inner {
            Inner::Lean(b) => Ok(b.decode(ids)),
            Inner::Crate(t) => t.decode(ids, true).map_err(|e| self.err(e)),
        }
    }

    fn vocab_size(&self) -> usize {
        match &self.inner {
            Inner::Lean(b) => b.vocab_size(),
            Inner::Crate(t) => t.get_vocab_size(true),
        }
    }

    fn id(&self) -> String {
        self.id.clone()
    }

    fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, TokenizerError> {
        let t = match &self.inner {
            Inner::Lean(b) => return Ok(b.encode_batch(texts)),
            Inner::Crate(t) => t,
        };
        if texts.len() < 2 {
            return texts.iter().map(|t| self.encode(t)).collect();
        }
        let encs = t
            .encode_batch_fast(texts.to_vec(), false)
            .map_err(|e| self.err(e))?;
        Ok(encs.into_iter().map(|e| e.get_ids().to_vec()).collect())
    }

    fn count_batch(&self, texts: &[&str], limit: usize) -> Result<Vec<usize>, TokenizerError> {
        match &self.inner {
            Inner::Lean(b) => Ok(b.count_batch(texts, limit)),
            Inner::Crate(_) => Ok(self.encode_batch(texts)?.iter().map(Vec::len).collect()),
        }
    }

    fn decode_batch(&self, seqs: &[&[u32]]) -> Result<Vec<String>, TokenizerError> {
        let t = match &self.inner {
            Inner::Lean(b) => return Ok(b.decode_batch(seqs)),
            Inner::Crate(t) => t,
        };
        if seqs.len() < 2 {
            return seqs.iter().map(|s| self.decode(s)).collect();
        }
        t.decode_batch(seqs, true).map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hub_cache_file_is_named_by_its_model_id() {
        let hub =
            "/home/u/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/ab12/tokenizer.json";
        assert_eq!(hub_id(Path::new(hub)).as_deref(), Some("Qwen/Qwen3-8B"));
        let no_org = "/h/hub/models--gpt2/snapshots/r/tokenizer.json";
        assert_eq!(hub_id(Path::new(no_org)).as_deref(), Some("gpt2"));
        assert_eq!(hub_id(Path::new("/models/qwen/tokenizer.json")), None);
        assert_eq!(hub_id(Path::new("/x/models--a--b/blobs/f")), None);
        // Loaded from the cache, the record says the model id, not this machine's path.
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("models--org--m/snapshots/r1");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::write(snap.join("tokenizer.json"), TINY).unwrap();
        assert_eq!(HfTokenizer::from_path(&snap).unwrap().id(), "org/m");
    }

    /// A tiny whitespace WordLevel tokenizer.json, enough to exercise the file loader.
    const TINY: &str = r###"{
      "version": "1.0",
      "truncation": {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0},
      "padding": null,
      "added_tokens": [],
      "normalizer": null,
      "pre_tokenizer": {"type": "WhitespaceSplit"},
      "post_processor": null,
      "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": false},
      "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1, "b": 2, "c": 3}, "unk_token": "[UNK]"}
    }"###;

    #[test]
    fn loads_a_file_or_a_directory_and_ignores_truncation() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), TINY).unwrap();
        for spec in [dir.path().to_path_buf(), dir.path().join("tokenizer.json")] {
            let tok: Box<dyn Tokenize> = Box::new(HfTokenizer::from_path(&spec).unwrap());
            // The file asks for truncation at 2; counting must not be capped.
            assert_eq!(tok.encode("a b c a").unwrap(), vec![1, 2, 3, 1]);
            assert_eq!(tok.decode(&[3, 2]).unwrap(), "c b");
            assert_eq!(tok.vocab_size(), 4);
            assert_eq!(
                tok.encode_batch(&["a", "b c", "zzz"]).unwrap(),
                vec![vec![1], vec![2, 3], vec![0]]
            );
            assert_eq!(
                tok.decode_batch(&[&[1, 1], &[2]]).unwrap(),
                vec!["a a".to_string(), "b".to_string()]
            );
        }
    }

    #[test]
    fn a_missing_or_bad_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = HfTokenizer::from_path(dir.path()).err().unwrap();
        assert!(e.to_string().contains("tokenizer.json"), "{e}");
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{ not json").unwrap();
        let e = HfTokenizer::from_path(&bad).err().unwrap();
        assert!(e.to_string().contains("bad.json"), "{e}");
        assert!(e.to_string().contains("not a valid tokenizer.json"), "{e}");
    }
}
