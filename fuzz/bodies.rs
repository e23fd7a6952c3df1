//! The fuzz targets' bodies, one function per target. `fuzz_targets/*.rs` hand them to libFuzzer;
//! the test command builds the same file into the integration tests (`tests/it/fuzz.rs`) and runs
//! every body on seed inputs and on random bytes, so a target that no longer compiles, or a seed
//! that panics, fails the tests without a nightly toolchain or libFuzzer.

use perfgate::client::chunk;
use perfgate::client::h1::{parse_head, Body, Framing, MAX_HEAD};
use perfgate::client::sse::{decode_all, Decoder, MAX_EVENT};
use perfgate::import::{import_text, ImportOptions};

/// The SSE decoder: any bytes, split anywhere, give the same events as in one piece, never panic,
/// and never hold more than the event bound. The first byte picks the split points.
pub fn sse(data: &[u8]) {
    let Some((&first, s)) = data.split_first() else {
        return;
    };
    let step = usize::from(first).max(1);
    let whole = decode_all([s]);
    let split = decode_all(s.chunks(step));
    assert_eq!(whole, split);
    let mut d = Decoder::new();
    for c in s.chunks(step) {
        if d.feed(c, |e| assert!(e.data.len() < MAX_EVENT)).is_err() {
            break;
        }
    }
    d.finish(|_| {});
}

/// The JSON chunk reader (the fast path, its template path and the serde fallback): any bytes
/// parse or fail without a panic, and a second parse of the same bytes agrees with the first.
pub fn chunk(data: &[u8]) {
    let mut s = chunk::Stream::new();
    let first = s.parse(data).map(|p| format!("{p:?}"));
    // A second parse of the same bytes (the template path after a first plain event) agrees.
    let again = s.parse(data).map(|p| format!("{p:?}"));
    assert_eq!(first.is_ok(), again.is_ok());
    if let (Ok(a), Ok(b)) = (first, again) {
        assert_eq!(a, b);
    }
    if let Some(f) = chunk::fast(data) {
        let _ = format!("{f:?}");
    }
}

/// Feeds `parts` to a body decoder: its verdict, the body bytes and whether it saw the end.
fn decode(framing: Framing, parts: &[&[u8]]) -> (Result<(), String>, Vec<u8>, bool) {
    let mut b = Body::new(framing);
    let mut out = Vec::new();
    for p in parts {
        if let Err(e) = b.feed(p, |s| out.extend_from_slice(s)) {
            return (Err(e), out, b.done());
        }
    }
    (Ok(()), out, b.done())
}

/// Decodes `body` in one piece and in `step`-byte pieces: the same verdict, and when both
/// succeed, the same bytes and end.
fn same_whatever_the_split(framing: Framing, body: &[u8], step: usize) {
    let parts: Vec<&[u8]> = body.chunks(step).collect();
    let (r1, o1, d1) = decode(framing, &[body]);
    let (r2, o2, d2) = decode(framing, &parts);
    assert_eq!(r1.is_ok(), r2.is_ok());
    if r1.is_ok() {
        assert_eq!((o1, d1), (o2, d2));
    }
}

/// The HTTP/1.1 response head parser and the body framing (chunked, length, close): any bytes,
/// split anywhere, never panic, stay within the head bound, and decode to the same body bytes
/// whatever the split. The first byte picks the split points.
pub fn h1(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let (step, s) = (usize::from(data[0]).max(1), &data[1..]);
    match parse_head(s) {
        Ok(Some((h, n))) => {
            assert!(n <= s.len() && n <= MAX_HEAD);
            same_whatever_the_split(h.framing, &s[n..], step);
        }
        Ok(None) => assert!(s.len() <= MAX_HEAD + 64 * 1024),
        Err(_) => {}
    }
    // The chunked decoder on raw bytes too.
    same_whatever_the_split(Framing::Chunked, s, step);
}

/// The importers (format detection, vLLM JSON, SGLang JSONL, LMDeploy CSV, console logs,
/// perfgate JSONL) and the baseline TOML reader: any text imports or fails with an error, never
/// a panic.
pub fn import(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let opts = ImportOptions {
        model: Some("m".into()),
        num_prompts: Some(10),
        ..Default::default()
    };
    let _ = import_text(text, "f.json", &opts);
    let _ = import_text(text, "f.csv", &opts);
    let _ = perfgate::record::parse_jsonl(text, "r.jsonl");
    let _ = perfgate::baseline::Baseline::parse(text, "b.toml");
}
