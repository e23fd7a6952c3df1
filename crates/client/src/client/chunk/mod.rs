//! The fields perfgate needs from one OpenAI streaming chunk (`choices[0].text`,
//! `choices[0].delta.content` / `reasoning_content`, `choices[0].finish_reason`, `usage`), read
//! by a single pass over the bytes that builds nothing else.
//!
//! A general JSON parser spends most of a load client's CPU per token: a 200-byte vLLM chunk
//! takes serde_json several hundred nanoseconds, most of it for fields nobody reads (`id`,
//! `model`, `created`, `logprobs`). [`fast`] walks the same bytes once, checking the JSON grammar
//! as it goes, and keeps borrowed slices of the few fields that matter.
//!
//! It only ever answers for the plain case. Anything else — an `error` member, `"object":
//! "error"`, duplicate keys, a field of an unexpected type, a usage count that is not a plain
//! integer, nesting deeper than [`MAX_DEPTH`], or bytes that are not JSON — gives `None`, and the
//! caller parses the event with serde, whose answer (including its error message) then stands.
//! Tests check on generated and corrupted chunks that whenever [`fast`] answers, serde gives
//! the same fields, and that it never accepts what serde rejects.

mod reference;

use std::borrow::Cow;

pub use reference::parse_serde;

/// Nesting the fast path follows before it hands over to serde.
pub const MAX_DEPTH: usize = 64;

/// What one chunk says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Fields<'a> {
    /// The first choice, when `choices` is a non-empty array.
    pub choice: Option<Choice<'a>>,
    /// `usage`, when present and not null: (completion_tokens, prompt_tokens).
    pub usage: Option<(Option<u32>, Option<u32>)>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Choice<'a> {
    pub text: Option<Cow<'a, str>>,
    pub content: Option<Cow<'a, str>>,
    pub reasoning_content: Option<Cow<'a, str>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

/// The fields of a plain chunk, or `None`: "parse this one with serde".
pub fn fast(data: &[u8]) -> Option<Fields<'_>> {
    scan(data).map(|(f, _)| f)
}

/// [`fast`], plus where the text of a plain token event sits (see [`Template`]).
fn scan(data: &[u8]) -> Option<(Fields<'_>, Option<Template>)> {
    let mut p = Scan {
        b: data,
        i: 0,
        text_span: None,
    };
    let f = p.chunk()?;
    p.ws();
    if p.i != data.len() {
        return None;
    }
    let t = p.text_span.and_then(|span| Template::new(data, span, &f));
    Some((f, t))
}

/// Parses the events of one stream. Servers send the same bytes for every token event of a
/// stream except the token's text, so after one plain event has been scanned, an event that has
/// exactly its bytes before and after the text, and a text that is a plain JSON string body (no
/// quote, backslash or control character; valid UTF-8), is that event with another text: the
/// JSON grammar is unchanged by swapping one string's content, so no other field can differ.
/// That check is two comparisons and one scan of the text.
#[derive(Debug, Default)]
pub struct Stream {
    template: Option<Template>,
}

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Parse one data event: the template, the fast scanner, or serde (whose error stands).
    pub fn parse<'a>(&mut self, data: &'a [u8]) -> Result<Parsed<'a>, serde_json::Error> {
        if let Some(f) = self.template.as_ref().and_then(|t| t.apply(data)) {
            return Ok(Parsed::Fields(f));
        }
        match scan(data) {
            Some((f, t)) => {
                if t.is_some() {
                    self.template = t;
                }
                Ok(Parsed::Fields(f))
            }
            None => parse_serde(data),
        }
    }
}

/// A plain token event: one text field (`text`, or `delta.content`), no finish reason, no usage.
#[derive(Debug, Clone)]
struct Template {
    bytes: Vec<u8>,
    /// The text's string body is `bytes[start..end]` (between its quotes).
    start: usize,
    end: usize,
    chat: bool,
}

impl Template {
    fn new(data: &[u8], (start, end): (usize, usize), f: &Fields<'_>) -> Option<Template> {
        let c = f.choice.as_ref()?;
        if f.usage.is_some() || c.finish_reason.is_some() || c.reasoning_content.is_some() {
            return None;
        }
        let chat = match (&c.text, &c.content) {
            (Some(_), None) => false,
            (None, Some(_)) => true,
            _ => return None,
        };
        Some(Template {
            bytes: data.to_vec(),
            start,
            end,
            chat,
        })
    }

    fn apply<'a>(&self, data: &'a [u8]) -> Option<Fields<'a>> {
        let (pre, post) = (&self.bytes[..self.start], &self.bytes[self.end..]);
        if data.len() < pre.len() + post.len() || !data.starts_with(pre) || !data.ends_with(post) {
            return None;
        }
        let mid = &data[pre.len()..data.len() - post.len()];
        if mid.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20) {
            return None;
        }
        let text = Some(Cow::Borrowed(std::str::from_utf8(mid).ok()?));
        let mut choice = Choice::default();
        if self.chat {
            choice.content = text;
        } else {
            choice.text = text;
        }
        Some(Fields {
            choice: Some(choice),
            usage: None,
        })
    }
}

/// What a data event says: its fields, or an in-band error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed<'a> {
    Fields(Fields<'a>),
    /// An `error` member or `"object": "error"`: the message.
    Error(String),
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Body of the text string just read by [`Scan::text_string`], when it had no escapes.
    text_span: Option<(usize, usize)>,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string token: its raw bytes between the quotes and whether it holds escapes.
    fn raw_string(&mut self) -> Option<(&'a [u8], bool)> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped = false;
        let mut ascii = true;
        loop {
            let c = *self.b.get(self.i)?;
            match c {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    let e = *self.b.get(self.i + 1)?;
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                        b'u' => {
                            let hex = self.b.get(self.i + 2..self.i + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.i += 6;
                        }
                        _ => return None,
                    }
                }
                0..=0x1f => return None,
                0x80.. => {
                    ascii = false;
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        let raw = &self.b[start..self.i];
        self.i += 1;
        if !ascii {
            std::str::from_utf8(raw).ok()?;
        }
        Some((raw, escaped))
    }

    fn string(&mut self) -> Option<Cow<'a, str>> {
        let (raw, escaped) = self.raw_string()?;
        if escaped {
            unescape(raw).map(Cow::Owned)
        } else {
            // Checked above (ASCII or valid UTF-8).
            std::str::from_utf8(raw).ok().map(Cow::Borrowed)
        }
    }

    /// [`Scan::opt_string`] for a text field, noting where a plain string's body is.
    fn text_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.ws();
        let at = self.i;
        let v = self.opt_string()?;
        if let Some(Cow::Borrowed(_)) = v {
            self.text_span = Some((at + 1, self.i - 1));
        }
        Some(v)
    }

    /// `null` or a string.
    fn opt_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            Some(None)
        } else {
            self.string().map(Some)
        }
    }

    /// `null` or a plain non-negative integer that fits a u32.
    fn opt_u32(&mut self) -> Option<Option<u32>> {
        match self.peek()? {
            b'n' => {
                self.literal(b"null")?;
                Some(None)
            }
            b'0'..=b'9' => {
                let start = self.i;
                while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
                let digits = &self.b[start..self.i];
                if digits.len() > 1 && digits[0] == b'0' {
                    return None;
                }
                if matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E')) {
                    return None; // serde refuses a float for a u32: let it say so
                }
                std::str::from_utf8(digits).ok()?.parse().ok().map(Some)
            }
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.ws();
        (self.b.get(self.i..self.i + word.len())? == word).then(|| self.i += word.len())
    }

    fn number(&mut self) -> Option<()> {
        self.ws();
        let digits = |s: &mut Self| {
            let start = s.i;
            while s.b.get(s.i).is_some_and(u8::is_ascii_digit) {
                s.i += 1;
            }
            s.i - start
        };
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let start = self.i;
        let n = digits(self);
        if n == 0 || (n > 1 && self.b[start] == b'0') {
            return None;
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return None;
            }
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return None;
            }
        }
        Some(())
    }

    /// Skip any JSON value, checking its grammar.
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.raw_string().map(drop),
            b'{' => {
                self.i += 1;
                if self.peek()? == b'}' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.raw_string()?;
                    self.eat(b':')?;
                    self.skip(depth + 1)?;
                    match self.peek()? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.skip(depth + 1)?;
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// The members of an object, each handed to `member` with its (unescaped) key; `member`
    /// reads the value. Duplicate keys are left to serde (it refuses some, keeps others).
    fn object(
        &mut self,
        keys: &[&[u8]],
        mut member: impl FnMut(&mut Self, Option<usize>) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        let mut seen = 0u64;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let (key, escaped) = self.raw_string()?;
            if escaped {
                return None; // an escaped key might spell a field name: serde decides
            }
            self.eat(b':')?;
            let idx = keys.iter().position(|k| *k == key);
            if let Some(k) = idx {
                if seen & (1 << k) != 0 {
                    return None;
                }
                seen |= 1 << k;
            }
            member(self, idx)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn chunk(&mut self) -> Option<Fields<'a>> {
        let mut f = Fields::default();
        const KEYS: &[&[u8]] = &[b"choices", b"usage", b"error", b"object", b"message"];
        self.object(KEYS, |s, k| match k {
            Some(0) => {
                f.choice = s.choices()?;
                Some(())
            }
            Some(1) => {
                f.usage = s.usage()?;
                Some(())
            }
            Some(2) => s.literal(b"null"), // an error member: serde's path reports it
            Some(3) => match s.opt_string()? {
                Some(o) if o == "error" => None,
                _ => Some(()),
            },
            Some(4) => s.opt_string().map(drop),
            _ => s.skip(1),
        })?;
        Some(f)
    }

    /// `null`, or an array whose first element is a choice object (the rest is skipped).
    fn choices(&mut self) -> Option<Option<Choice<'a>>> {
        match self.peek()? {
            b'n' => {
                self.literal(b"null")?;
                Some(None)
            }
            b'[' => {
                self.i += 1;
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(None);
                }
                let first = self.choice()?;
                loop {
                    match self.peek()? {
                        b',' => {
                            self.i += 1;
                            self.skip(2)?;
                        }
                        b']' => {
                            self.i += 1;
                            return Some(Some(first));
                        }
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    fn choice(&mut self) -> Option<Choice<'a>> {
        let mut c = Choice::default();
        const KEYS: &[&[u8]] = &[b"text", b"delta", b"finish_reason"];
        self.object(KEYS, |s, k| match k {
            Some(0) => {
                c.text = s.text_string()?;
                Some(())
            }
            Some(1) => {
                if s.peek()? == b'n' {
                    return s.literal(b"null");
                }
                const DKEYS: &[&[u8]] = &[b"content", b"reasoning_content"];
                s.object(DKEYS, |s, k| match k {
                    Some(0) => {
                        c.content = s.text_string()?;
                        Some(())
                    }
                    Some(1) => {
                        c.reasoning_content = s.opt_string()?;
                        Some(())
                    }
                    _ => s.skip(3),
                })
            }
            Some(2) => {
                c.finish_reason = s.opt_string()?;
                Some(())
            }
            _ => s.skip(2),
        })?;
        Some(c)
    }

    /// `null` or an object with the token counts.
    fn usage(&mut self) -> Option<Option<(Option<u32>, Option<u32>)>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(None);
        }
        let (mut completion, mut prompt) = (None, None);
        const KEYS: &[&[u8]] = &[b"completion_tokens", b"prompt_tokens"];
        self.object(KEYS, |s, k| match k {
            Some(0) => {
                completion = s.opt_u32()?;
                Some(())
            }
            Some(1) => {
                prompt = s.opt_u32()?;
                Some(())
            }
            _ => s.skip(2),
        })?;
        Some(Some((completion, prompt)))
    }
}

/// Decode the escapes of a JSON string body (already checked by the scanner).
fn unescape(raw: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let e = *raw.get(i + 1)?;
        i += 2;
        let simple = match e {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let hex = |at: usize| -> Option<u32> {
                    u32::from_str_radix(std::str::from_utf8(raw.get(at..at + 4)?).ok()?, 16).ok()
                };
                let hi = hex(i)?;
                i += 4;
                let cp = if (0xD800..0xDC00).contains(&hi) {
                    // A high surrogate must be followed by an escaped low one.
                    if raw.get(i..i + 2)? != b"\\u" {
                        return None;
                    }
                    let lo = hex(i + 2)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return None;
                    }
                    i += 6;
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else if (0xDC00..0xE000).contains(&hi) {
                    return None;
                } else {
                    hi
                };
                let ch = char::from_u32(cp)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            _ => return None,
        };
        out.push(simple);
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests;
