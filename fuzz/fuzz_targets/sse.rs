//! The SSE decoder: any bytes, split anywhere, give the same events as in one piece, never
//! panic, and never hold more than the event bound.
//! The body lives in `fuzz/bodies.rs`, which the integration tests also build and run.
#![no_main]

#[path = "../bodies.rs"]
#[allow(dead_code)] // each target calls one body
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::sse(data));
