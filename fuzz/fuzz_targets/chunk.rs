//! The JSON chunk reader (the fast path, its template path and the serde fallback): any bytes
//! parse or fail without a panic, and a second parse of the same bytes agrees with the first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfgate::client::chunk;

fuzz_target!(|data: &[u8]| {
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
});
