//! The JSON chunk reader (the fast path, its template path and the serde fallback): any bytes
//! parse or fail without a panic, and a second parse of the same bytes agrees with the first.
//! The body lives in `fuzz/bodies.rs`, which the integration tests also build and run.
#![no_main]

#[path = "../bodies.rs"]
#[allow(dead_code)] // each target calls one body
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::chunk(data));
