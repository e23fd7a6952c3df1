//! Tokenizers: a Hugging Face `tokenizer.json` (pure Rust), or the engine's own `/tokenize` and
//! `/detokenize` endpoints.

#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("{0}")]
    Invalid(String),
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
}
