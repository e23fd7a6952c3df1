//! perfgate's measuring client: the datasets prompts come from ([`dataset`]), the tokenizers
//! that size them ([`tokenizer`]), the streaming HTTP/1.1 client and its load generator
//! ([`client`]), and the figures of a run computed from its requests ([`metrics`], with the
//! per-request exports of [`export`]), ending in a [`record::ScenarioResult`].
//!
//! The compiler keeps its boundaries: it depends on `perfgate-record` and `perfgate-stamp`
//! only among perfgate's crates, so it cannot reach the gate, the engine's processes, the
//! renderers, GitHub or the flags. perfgate re-exports every module under its own name
//! (`perfgate::client`, …); the ARCHITECTURE.md code map describes each.

pub mod client;
pub mod dataset;
pub mod export;
pub mod metrics;
pub mod tokenizer;

// The record crate's modules under the names this code has always used (`crate::record`).
use perfgate_record::{record, redact, steady};
