//! Helpers for the run and fault tests: a fake server on its own thread, hand-made prompts,
//! a one-token-per-word tokenizer, a runtime with a hard timeout so no test can hang.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use perfgate::client::load::RunConfig;
use perfgate::dataset::Prompt;
use perfgate::tokenizer::{Tokenize, TokenizerError};
use perfgate_fakeserver::{FakeConfig, FakeServer};

/// One token per whitespace-separated word; ids are positions in a tiny vocabulary.
pub struct WordTok;

const VOCAB: [&str; 8] = [
    "tok", "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta",
];

impl Tokenize for WordTok {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        Ok(text
            .split_whitespace()
            .map(|w| VOCAB.iter().position(|v| *v == w).unwrap_or(0) as u32)
            .collect())
    }
    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        Ok(ids
            .iter()
            .map(|&i| VOCAB[i as usize % VOCAB.len()])
            .collect::<Vec<_>>()
            .join(" "))
    }
    fn vocab_size(&self) -> usize {
        VOCAB.len()
    }
    fn id(&self) -> String {
        "words".into()
    }
}

/// `n` prompts of `input` words asking for `output` tokens each.
pub fn prompts(n: usize, input: u32, output: u32) -> Vec<Prompt> {
    (0..n)
        .map(|i| Prompt {
            text: (0..input)
                .map(|j| VOCAB[(i + j as usize) % VOCAB.len()])
                .collect::<Vec<_>>()
                .join(" "),
            input_len: input,
            output_len: output,
            ..Default::default()
        })
        .collect()
}

/// Tests that measure time against a fake server, and tests that run the real (CPU-hungry)
/// llama.cpp engine, run one at a time, so they do not compete for the (two) cores.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Take the lock that keeps timing tests and real-engine tests apart; hold it for the test.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A fake server on its own thread and runtime, held together with the lock that keeps timing
/// tests apart. Keep it alive for the whole test.
pub struct Fake {
    pub server: FakeServer,
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl std::ops::Deref for Fake {
    type Target = FakeServer;
    fn deref(&self) -> &FakeServer {
        &self.server
    }
}

pub fn fake(cfg: FakeConfig) -> Fake {
    let serial = serial();
    Fake {
        server: FakeServer::start_in_thread(cfg).expect("fake server starts"),
        _serial: serial,
    }
}

pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// A run configuration for the fake server at `url`.
pub fn config(url: &str) -> RunConfig {
    let mut c = RunConfig::new(url, "fake-model");
    c.client.ignore_eos = true;
    c
}

pub fn with_tokenizer(mut c: RunConfig) -> RunConfig {
    c.tokenizer = Some(Arc::new(WordTok));
    c
}

/// Run `fut` on a two-thread runtime; fail the test (never hang) after `secs` seconds.
pub fn block_on<F: Future>(secs: u64, fut: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(secs), fut)
            .await
            .unwrap_or_else(|_| panic!("test did not finish within {secs} s"))
    })
}

/// The `perfgate` binary built for this test run.
pub fn perfgate() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
}

/// Write a tiny word-level `tokenizer.json` (the words of [`WordTok`]) into `dir`.
pub fn word_tokenizer_json(dir: &std::path::Path) -> std::path::PathBuf {
    let mut vocab = serde_json::Map::new();
    for (i, w) in VOCAB.iter().enumerate() {
        vocab.insert((*w).into(), i.into());
    }
    // No unknown-token entry: every id decodes to a word that encodes back to itself, so the
    // random dataset's decode/re-encode loop is exact at once.
    let tok = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    });
    let path = dir.join("tokenizer.json");
    std::fs::write(&path, tok.to_string()).unwrap();
    path
}
