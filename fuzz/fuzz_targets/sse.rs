//! The SSE decoder: any bytes, split anywhere, give the same events as in one piece, never
//! panic, and never hold more than the event bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfgate::client::sse::{decode_all, Decoder, MAX_EVENT};

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    // The first byte picks the split points.
    let (step, s) = (usize::from(data[0]).max(1), &data[1..]);
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
});
