//! The HTTP/1.1 response head parser and the body framing (chunked, length, close): any bytes,
//! split anywhere, never panic, stay within the head bound, and decode to the same body bytes
//! whatever the split.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfgate::client::h1::{parse_head, Body, Framing, MAX_HEAD};

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

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (step, s) = (usize::from(data[0]).max(1), &data[1..]);
    match parse_head(s) {
        Ok(Some((h, n))) => {
            assert!(n <= s.len() && n <= MAX_HEAD);
            let body = &s[n..];
            let parts: Vec<&[u8]> = body.chunks(step).collect();
            let (r1, o1, d1) = decode(h.framing, &[body]);
            let (r2, o2, d2) = decode(h.framing, &parts);
            assert_eq!(r1.is_ok(), r2.is_ok());
            if r1.is_ok() {
                assert_eq!((o1, d1), (o2, d2));
            }
        }
        Ok(None) => assert!(s.len() <= MAX_HEAD + 64 * 1024),
        Err(_) => {}
    }
    // The chunked decoder on raw bytes too.
    let parts: Vec<&[u8]> = s.chunks(step).collect();
    let (r1, o1, d1) = decode(Framing::Chunked, &[s]);
    let (r2, o2, d2) = decode(Framing::Chunked, &parts);
    assert_eq!(r1.is_ok(), r2.is_ok());
    if r1.is_ok() {
        assert_eq!((o1, d1), (o2, d2));
    }
});
