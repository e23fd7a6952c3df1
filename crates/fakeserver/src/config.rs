//! What the fake server does: its knobs ([`FakeConfig`]) and the ways a request can go wrong
//! ([`Fault`]).

use std::time::Duration;

/// A way for a request to go wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fault {
    #[default]
    None,
    /// Answer HTTP 500 with a JSON error body.
    Http500,
    /// Stream `after` tokens, then an in-band `{"error": …}` event and `[DONE]`.
    ErrorEvent { after: u32 },
    /// Stream `after` tokens, then an event that is not JSON.
    Malformed { after: u32 },
    /// Stream `after` tokens, then break the connection mid-body.
    Close { after: u32 },
    /// Stream `after` tokens, then send nothing more (until the client gives up).
    Stall { after: u32 },
    /// Stream everything but end the body without `data: [DONE]`.
    NoDone,
}

impl Fault {
    /// Tokens streamed before the fault strikes (`u32::MAX`: it does not cut the stream).
    pub(super) fn after(self) -> u32 {
        match self {
            Fault::ErrorEvent { after }
            | Fault::Malformed { after }
            | Fault::Close { after }
            | Fault::Stall { after } => after,
            Fault::None | Fault::Http500 | Fault::NoDone => u32::MAX,
        }
    }
}

impl std::str::FromStr for Fault {
    type Err = String;
    /// `none`, `http500`, `error-event[:N]`, `malformed[:N]`, `close[:N]`, `stall[:N]`, `no-done`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, n) = match s.split_once(':') {
            Some((a, b)) => (a, b.parse::<u32>().map_err(|e| format!("{s}: {e}"))?),
            None => (s, 1),
        };
        Ok(match name {
            "none" => Fault::None,
            "http500" => Fault::Http500,
            "error-event" => Fault::ErrorEvent { after: n },
            "malformed" => Fault::Malformed { after: n },
            "close" => Fault::Close { after: n },
            "stall" => Fault::Stall { after: n },
            "no-done" => Fault::NoDone,
            _ => return Err(format!(
                "unknown fault `{s}` (none, http500, error-event[:N], malformed[:N], close[:N], stall[:N], no-done)"
            )),
        })
    }
}

/// Whose HTTP API the fake mimics where engines differ (tokenizer endpoints, `/v1/models`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FakeApi {
    /// llama.cpp's server: `/v1/models` carries `data[].meta.n_vocab`; `POST /tokenize` takes
    /// `{"content"}`, `POST /detokenize` answers `{"content"}`.
    #[default]
    LlamaCpp,
    /// vLLM's: `/v1/models` has `max_model_len` and no vocabulary size; `POST /tokenize` takes
    /// `{"prompt"}` (400 without it) and answers `{"count", "max_model_len", "tokens"}`;
    /// `POST /detokenize` answers `{"prompt"}`.
    Vllm,
    /// SGLang's: like vLLM's, but `POST /detokenize` answers `{"text"}`.
    Sglang,
}

impl std::str::FromStr for FakeApi {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "llama.cpp" | "llamacpp" => FakeApi::LlamaCpp,
            "vllm" => FakeApi::Vllm,
            "sglang" => FakeApi::Sglang,
            _ => return Err(format!("unknown API `{s}` (llama.cpp, vllm, sglang)")),
        })
    }
}

/// The fake's vocabulary size (ids of its one-token-per-word tokenizer are below it).
pub const FAKE_VOCAB: u32 = 50_000;

/// The server's behaviour.
///
/// *Paced* (`ttft` or `itl` non-zero): each token chunk is one write at its due time, like a real
/// engine. *Blast* (both zero, [`FakeConfig::blast`]): no delays, `events_per_write` chunks per
/// write, so the server outruns the client under test.
#[derive(Debug, Clone)]
pub struct FakeConfig {
    /// Delay from a request's arrival (the kernel's receive time of its first bytes) to its first
    /// token.
    pub ttft: Duration,
    /// Delay between successive tokens.
    pub itl: Duration,
    /// Tokens per SSE chunk (≥ 1); chunks then come every `itl × tokens_per_chunk`.
    pub tokens_per_chunk: u32,
    /// SSE chunks per socket write in blast mode (≥ 1); paced mode writes each chunk when due.
    pub events_per_write: u32,
    /// Send `usage` (completions: in the final chunk; chat: a separate `choices: []` chunk).
    pub usage: bool,
    pub fault: Fault,
    /// Apply the fault to every `fault_every`-th request (1 = all), counting from the first.
    pub fault_every: u64,
    /// The model name in `/v1/models`.
    pub model: String,
    /// `max_tokens` when a request does not say.
    pub default_max_tokens: u32,
    /// Whose tokenizer and model-list API to mimic.
    pub api: FakeApi,
    /// The context length: like vLLM, a request whose prompt + `max_tokens` exceeds it gets an
    /// output shortened to fit, silently (`finish_reason: length`, no error). `None`: unbounded.
    pub max_model_len: Option<u32>,
    /// Tokens a chat template adds to every chat prompt (counted in `usage.prompt_tokens`).
    pub chat_template_tokens: u32,
    /// LoRA adapters served beside the base model (vLLM's `--lora-modules`): listed at
    /// `/v1/models` with the base model as `parent`, and accepted as a request's `model`. With
    /// any, a request naming another model gets vLLM's 404.
    pub lora_modules: Vec<String>,
    /// Mimic vLLM's speculative-decoding counters at `/metrics`.
    pub spec_decode: Option<SpecDecode>,
    /// A `tokenizer.json` whose ids `/tokenize` answers with, as a real engine's does, instead
    /// of one id per whitespace-separated word: for clients that check their prompts' lengths
    /// against the server (vLLM 0.33's `vllm-rs bench serve`). The streams are unchanged.
    pub tokenizer_json: Option<std::path::PathBuf>,
}

/// The fake's speculative decoding: every step proposes `num_speculative_tokens` draft tokens
/// and accepts the first `accepted` of them, then adds one token of its own; a request's last
/// step stops at its output length. `/metrics` then shows vLLM's counters
/// (`vllm:spec_decode_num_drafts_total`, `…_num_draft_tokens_total`,
/// `…_num_accepted_tokens_total`, `…_num_accepted_tokens_per_pos_total{position}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecDecode {
    pub num_speculative_tokens: u32,
    pub accepted: u32,
}

impl SpecDecode {
    /// The counters of one request that generated `tokens` tokens: drafts, and the acceptances
    /// at each draft position.
    pub fn of_request(self, tokens: u64) -> (u64, Vec<u64>) {
        let k = self.num_speculative_tokens as usize;
        let a = u64::from(self.accepted.min(self.num_speculative_tokens));
        let (full, rem) = (tokens / (a + 1), tokens % (a + 1));
        let drafts = full + u64::from(rem > 0);
        let per_pos = (0..k as u64)
            .map(|p| {
                if p < a {
                    full + u64::from(rem > p + 1)
                } else {
                    0
                }
            })
            .collect();
        (drafts, per_pos)
    }
}

impl Default for FakeConfig {
    fn default() -> Self {
        FakeConfig {
            ttft: Duration::from_millis(50),
            itl: Duration::from_millis(10),
            tokens_per_chunk: 1,
            events_per_write: 1,
            usage: true,
            fault: Fault::None,
            fault_every: 1,
            model: "fake-model".into(),
            default_max_tokens: 16,
            api: FakeApi::LlamaCpp,
            max_model_len: None,
            chat_template_tokens: 0,
            lora_modules: Vec::new(),
            spec_decode: None,
            tokenizer_json: None,
        }
    }
}

impl FakeConfig {
    /// Paced: the first token `ttft` after a request arrives, then one every `itl`.
    pub fn paced(ttft: Duration, itl: Duration) -> FakeConfig {
        FakeConfig {
            ttft,
            itl,
            ..FakeConfig::default()
        }
    }

    /// Blast: no delays, `events_per_write` SSE chunks per write.
    pub fn blast(events_per_write: u32) -> FakeConfig {
        FakeConfig {
            ttft: Duration::ZERO,
            itl: Duration::ZERO,
            events_per_write,
            ..FakeConfig::default()
        }
    }

    pub(super) fn is_blast(&self) -> bool {
        self.ttft.is_zero() && self.itl.is_zero()
    }

    pub(super) fn sanitized(mut self) -> FakeConfig {
        self.tokens_per_chunk = self.tokens_per_chunk.max(1);
        self.events_per_write = self.events_per_write.max(1);
        self.fault_every = self.fault_every.max(1);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_decode_counts_each_request() {
        let s = SpecDecode {
            num_speculative_tokens: 3,
            accepted: 2,
        };
        // 7 tokens: steps of 3, 3, 1: drafts 3, accepted 2 + 2 + 0 at positions 0 and 1.
        assert_eq!(s.of_request(7), (3, vec![2, 2, 0]));
        assert_eq!(s.of_request(6), (2, vec![2, 2, 0]));
        assert_eq!(s.of_request(8), (3, vec![3, 2, 0]));
        assert_eq!(s.of_request(0), (0, vec![0, 0, 0]));
    }

    #[test]
    fn faults_parse() {
        assert_eq!(
            "stall:3".parse::<Fault>().unwrap(),
            Fault::Stall { after: 3 }
        );
        assert_eq!("http500".parse::<Fault>().unwrap(), Fault::Http500);
        assert_eq!("close".parse::<Fault>().unwrap(), Fault::Close { after: 1 });
        assert!("boom".parse::<Fault>().is_err());
    }
}
