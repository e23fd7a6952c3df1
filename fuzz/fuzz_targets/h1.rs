//! The HTTP/1.1 response head parser and the body framing (chunked, length, close): any bytes,
//! split anywhere, never panic, stay within the head bound, and decode to the same body bytes
//! whatever the split.
//! The body lives in `fuzz/bodies.rs`, which the integration tests also build and run.
#![no_main]

#[path = "../bodies.rs"]
#[allow(dead_code)] // each target calls one body
mod bodies;

libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::h1(data));
