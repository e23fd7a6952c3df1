//! Server-sent events framing: turns the byte chunks of a streaming HTTP body into events.
//!
//! Follows the WHATWG event-stream rules that matter for OpenAI-compatible servers: lines end in
//! `\n`, `\r\n` or `\r` (a `\r\n` pair may be split across chunks), `data:` lines of one event are
//! joined with `\n`, a blank line dispatches the event, `:` lines are comments, one space after
//! the colon is dropped, and a leading UTF-8 byte-order mark is skipped. The decoder never
//! allocates per event after warm-up: complete lines are read straight from the caller's chunk and
//! only the data of the event being built and an unfinished trailing line are kept in reusable
//! buffers.

/// One dispatched event, borrowed from the decoder until the callback returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// The `event:` field, empty when the server sent none (the default type `message`).
    pub event: &'a [u8],
    /// The joined `data:` lines, without the final newline.
    pub data: &'a [u8],
}

/// An owned copy of an [`Event`], for tests and callers that keep events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedEvent {
    pub event: Vec<u8>,
    pub data: Vec<u8>,
}

impl From<Event<'_>> for OwnedEvent {
    fn from(e: Event<'_>) -> Self {
        OwnedEvent {
            event: e.event.to_vec(),
            data: e.data.to_vec(),
        }
    }
}

/// The most one event may hold: its unfinished line, or its joined `data:` lines. A server that
/// sends more (one endless `data:` line, or `data:` lines without the blank line that ends the
/// event) is hostile or broken; the decoder refuses it instead of growing without bound. An
/// OpenAI stream's events are a few hundred bytes; logprob-heavy ones stay in the kilobytes.
pub const MAX_EVENT: usize = 8 << 20;

/// The stream broke the [`MAX_EVENT`] bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong;

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an SSE event longer than {} MiB", MAX_EVENT >> 20)
    }
}

/// Incremental SSE decoder. Feed it chunks in order with [`Decoder::feed`]; call
/// [`Decoder::finish`] when the body ends.
#[derive(Debug, Default)]
pub struct Decoder {
    /// An unfinished line carried over from the previous chunk.
    partial: Vec<u8>,
    /// Data lines of the event being built, each followed by `\n`.
    data: Vec<u8>,
    /// The event type of the event being built.
    event: Vec<u8>,
    /// Whether any `data:` field was seen for the event being built.
    has_data: bool,
    /// The previous chunk ended in `\r`: a `\n` at the start of the next one belongs to it.
    skip_lf: bool,
    /// Still looking for a byte-order mark at the start of the stream.
    at_start: bool,
    started: bool,
    /// An event outgrew [`MAX_EVENT`]; nothing more is decoded.
    too_long: bool,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Decode `chunk`, calling `on_event` for every event it completes. Fails (and stays failed)
    /// once an event outgrows [`MAX_EVENT`].
    pub fn feed(
        &mut self,
        mut chunk: &[u8],
        mut on_event: impl FnMut(Event<'_>),
    ) -> Result<(), TooLong> {
        if self.too_long {
            return Err(TooLong);
        }
        if !self.started {
            self.started = true;
            self.at_start = true;
        }
        if self.at_start {
            // Skip a UTF-8 BOM, which may itself arrive split.
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            let have = self.partial.len();
            let need = BOM.len() - have;
            let take = need.min(chunk.len());
            if BOM[have..have + take] == chunk[..take] {
                if take == need {
                    self.partial.clear();
                    chunk = &chunk[take..];
                    self.at_start = false;
                } else {
                    self.partial.extend_from_slice(&chunk[..take]);
                    return Ok(());
                }
            } else {
                // Not a BOM: whatever was held back is ordinary data.
                self.at_start = false;
            }
        }
        if self.skip_lf && !chunk.is_empty() {
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
            self.skip_lf = false;
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', chunk) {
            let line_end = pos;
            let mut next = pos + 1;
            if chunk[pos] == b'\r' {
                match chunk.get(pos + 1) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            if self.partial.is_empty() {
                self.line(&chunk[..line_end], &mut on_event);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..line_end]);
                self.line(&line, &mut on_event);
                line.clear();
                self.partial = line;
            }
            chunk = &chunk[next..];
        }
        if self.partial.len() + chunk.len() > MAX_EVENT {
            self.too_long = true;
        }
        if self.too_long {
            self.partial = Vec::new();
            self.data = Vec::new();
            return Err(TooLong);
        }
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// The body ended. An unfinished last line is processed and a pending event that has data is
    /// dispatched (servers that omit the final blank line lose nothing). Returns whether anything
    /// was pending.
    pub fn finish(&mut self, mut on_event: impl FnMut(Event<'_>)) -> bool {
        let mut pending = false;
        if self.too_long {
            return false;
        }
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, &mut on_event);
            pending = true;
        }
        if self.has_data {
            self.dispatch(&mut on_event);
            pending = true;
        }
        self.event.clear();
        self.skip_lf = false;
        pending
    }

    fn line(&mut self, line: &[u8], on_event: &mut impl FnMut(Event<'_>)) {
        if self.too_long {
            return;
        }
        if line.is_empty() {
            if self.has_data {
                self.dispatch(on_event);
            } else {
                self.event.clear();
            }
            return;
        }
        if line[0] == b':' {
            return; // comment
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() >= MAX_EVENT {
                    self.too_long = true;
                    return;
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {} // id, retry and unknown fields do not matter here
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(Event<'_>)) {
        let data = &self.data[..self.data.len().saturating_sub(1)];
        on_event(Event {
            event: &self.event,
            data,
        });
        self.data.clear();
        self.event.clear();
        self.has_data = false;
    }
}

/// Decode a whole byte string split into the given chunks (a test and tooling helper).
pub fn decode_all<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<OwnedEvent> {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    for c in chunks {
        if d.feed(c, |e| out.push(e.into())).is_err() {
            return out;
        }
    }
    d.finish(|e| out.push(e.into()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev(event: &str, data: &str) -> OwnedEvent {
        OwnedEvent {
            event: event.as_bytes().to_vec(),
            data: data.as_bytes().to_vec(),
        }
    }

    #[test]
    fn basic_openai_stream() {
        let s = b"data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n";
        assert_eq!(
            decode_all([&s[..]]),
            vec![ev("", "{\"a\":1}"), ev("", "{\"a\":2}"), ev("", "[DONE]")]
        );
    }

    #[test]
    fn crlf_cr_comments_fields_and_multiline() {
        let s =
            b": keep-alive\r\nevent: error\r\ndata: x\r\ndata:y\r\n\r\ndata: z\r\rid: 7\ndata\n\n";
        assert_eq!(
            decode_all([&s[..]]),
            vec![ev("error", "x\ny"), ev("", "z"), ev("", "")]
        );
    }

    #[test]
    fn blank_lines_without_data_do_not_dispatch() {
        let s = b"\n\nevent: ping\n\ndata: a\n\n";
        assert_eq!(decode_all([&s[..]]), vec![ev("", "a")]);
    }

    #[test]
    fn bom_is_skipped_even_when_split() {
        let s = b"\xEF\xBB\xBFdata: a\n\n";
        assert_eq!(decode_all([&s[..1], &s[1..2], &s[2..]]), vec![ev("", "a")]);
        // Without a BOM, the first bytes are data.
        assert_eq!(decode_all([&b"d"[..], b"ata: b\n\n"]), vec![ev("", "b")]);
    }

    #[test]
    fn finish_flushes_an_unterminated_event() {
        assert_eq!(decode_all([&b"data: [DONE]"[..]]), vec![ev("", "[DONE]")]);
        let mut d = Decoder::new();
        d.feed(b"data: a\n\n", |_| {}).unwrap();
        assert!(!d.finish(|_| panic!("nothing pending")));
    }

    #[test]
    fn an_endless_line_or_event_is_refused_not_buffered() {
        // One `data:` line that never ends, fed in 64 KiB reads.
        let mut d = Decoder::new();
        let block = vec![b'x'; 64 * 1024];
        d.feed(b"data: ", |_| {}).unwrap();
        let mut fed = 6;
        let err = loop {
            match d.feed(&block, |_| panic!("no event")) {
                Ok(()) => fed += block.len(),
                Err(e) => break e,
            }
            assert!(fed <= MAX_EVENT, "still buffering after {fed} bytes");
        };
        assert_eq!(err.to_string(), "an SSE event longer than 8 MiB");
        assert!(d.partial.capacity() == 0, "the buffer is released");
        assert_eq!(d.feed(b"\n\n", |_| panic!("stays failed")), Err(TooLong));
        assert!(!d.finish(|_| panic!("nothing after the failure")));

        // Complete `data:` lines that never reach the blank line ending the event.
        let mut d = Decoder::new();
        let line = format!("data: {}\n", "y".repeat(1000));
        let kept = 1001; // what one line adds to the event: its value and a newline
        let mut n = 0;
        while d.feed(line.as_bytes(), |_| panic!("no event")).is_ok() {
            n += 1;
            assert!(n * kept <= MAX_EVENT, "still buffering after {n} lines");
        }
        assert!(n * kept >= MAX_EVENT - kept, "refused too early: {n}");
    }

    #[test]
    fn endless_comments_use_no_memory() {
        let mut d = Decoder::new();
        let pings = b": ping\n".repeat(10_000);
        for _ in 0..200 {
            d.feed(&pings, |_| panic!("comments are not events"))
                .unwrap();
        }
        assert!(d.partial.is_empty() && d.data.is_empty());
    }

    #[test]
    fn split_crlf_is_one_line_end() {
        let s = b"data: a\r\n\r\ndata: b\r\n\r\n";
        for i in 0..s.len() {
            assert_eq!(
                decode_all([&s[..i], &s[i..]]),
                vec![ev("", "a"), ev("", "b")],
                "split at {i}"
            );
        }
    }

    fn stream_strategy() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            "[a-z{}\":, \\[\\]]{0,12}".prop_map(|s| format!("data: {s}")),
            "[a-z]{0,6}".prop_map(|s| format!("event: {s}")),
            "[a-z ]{0,6}".prop_map(|s| format!(":{s}")),
            Just(String::new()),
            Just("data:x".to_string()),
            Just("id: 1".to_string()),
        ];
        let eol = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
        (
            any::<bool>(),
            prop::collection::vec((line, eol), 0..24),
            any::<bool>(),
        )
            .prop_map(|(bom, lines, trailing)| {
                let mut s = Vec::new();
                if bom {
                    s.extend_from_slice(b"\xEF\xBB\xBF");
                }
                for (l, e) in lines {
                    s.extend_from_slice(l.as_bytes());
                    s.extend_from_slice(e.as_bytes());
                }
                if trailing {
                    s.extend_from_slice(b"data: tail");
                }
                s
            })
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_events(
            s in stream_strategy(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let whole = decode_all([&s[..]]);
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(s.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks = Vec::new();
            let mut prev = 0;
            for p in points {
                chunks.push(&s[prev..p]);
                prev = p;
            }
            chunks.push(&s[prev..]);
            prop_assert_eq!(decode_all(chunks.iter().copied()), whole.clone());
            // Byte by byte, too.
            prop_assert_eq!(decode_all(s.chunks(1)), whole);
        }
    }
}
