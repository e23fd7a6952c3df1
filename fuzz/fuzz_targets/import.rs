//! The importers (format detection, vLLM JSON, SGLang JSONL, LMDeploy CSV, console logs,
//! perfgate JSONL) and the baseline TOML reader: any text imports or fails with an error,
//! never a panic.
//! The body lives in `fuzz/bodies.rs`, which the integration tests also build and run.
#![no_main]

#[path = "../bodies.rs"]
#[allow(dead_code)] // each target calls one body
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::import(data));
