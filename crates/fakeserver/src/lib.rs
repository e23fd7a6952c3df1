//! A fake OpenAI-compatible streaming server for tests, benchmarks and `perfgate fake-server`:
//! `/v1/completions` and `/v1/chat/completions` (SSE), `/health`, `/v1/models`, `/tokenize`,
//! `/detokenize` and `/metrics`, on 127.0.0.1, with knobs for time to first token, per-token
//! delay, tokens per chunk, chunks per write, usage on/off and faults (HTTP 500, in-band error
//! event, malformed JSON, mid-stream close, stall, missing `[DONE]`). It measures its own truth —
//! the TTFT from the kernel's receive time of a request to its first token write, and the gaps
//! between token writes — so tests and the client benchmark can hold a client's numbers
//! against it.
//!
//! One engine: HTTP/1.1 by hand on a raw `TcpStream`, one tokio thread of its own (which the
//! benchmark pins and prioritises), SSE bytes rendered once per connection and model, chunk
//! times from absolute deadlines so delays never drift. *Paced* mode writes each chunk when due;
//! *blast* mode (no delays) writes `events_per_write` chunks at a time, to outrun any client.
//! Every token is the text `" tok"`; a request gets exactly `max_tokens` tokens (as with
//! `ignore_eos`), unless `max_model_len` shortens it the way vLLM does. `api` picks whose
//! tokenizer endpoints and model list to mimic (llama.cpp's, vLLM's, SGLang's).
//!
//! A crate of its own, so the compiler keeps it apart from perfgate's internals: it shares only
//! [`perfgate_stamp`] (the kernel's receive times) with the measuring client, and tokenizes with
//! the reference `tokenizers` library (as real engines do), not with perfgate's own tokenizer,
//! so a test holding perfgate's token counts against `/tokenize` compares two implementations.
//!
//! Modules: `config` (knobs, [`Fault`]), `truth` (the measurements), `server` (the thread,
//! accept loop and handle), `routes` (one connection's requests, what connections share), `http` (request reading with
//! kernel receive times, response writing), `sse` (the rendered events), `stream` (one streamed
//! generation).

mod config;
mod http;
mod routes;
mod server;
mod sse;
mod stream;
mod truth;

pub use config::{FakeApi, FakeConfig, Fault, SpecDecode, FAKE_VOCAB};
pub use routes::SeenRequest;
pub use server::{serve_until_signal, FakeServer};
pub use truth::{percentile, Truth};
