//! A lean in-process runner for byte-level BPE `tokenizer.json` files (Qwen2/Qwen3, GPT-2 style).
//!
//! The `tokenizers` crate builds a full `Encoding` per text (token strings, offsets, alignment
//! tables) and its regex backend for the usual pre-tokenizer pattern (which has a look-ahead)
//! is a backtracking VM. Counting millions of prompt tokens only needs ids, so for the common
//! byte-level BPE shape this module does the same steps with less work:
//!
//! 1. split out added tokens (leftmost-longest, like the crate),
//! 2. NFC-normalise the rest (same Unicode tables as the crate),
//! 3. split with the pre-tokenizer pattern on a DFA; the one look-ahead these patterns use,
//!    `\s+(?!\S)|\s+` at the end, is resolved by hand (see [`Splitter`]),
//! 4. map bytes to their byte-level symbols and apply the merges by rank, leftmost first,
//!    with a per-thread cache of pieces already seen.
//!
//! It also loads the file without the crate's intermediate JSON tree (which buffers the whole
//! vocabulary and merge list), so the peak memory of loading is a fraction of the crate's.
//!
//! [`ByteBpe::parse`] returns `None` for any file of another shape or with an option it does
//! not implement; the caller then uses the `tokenizers` crate. Tests compare the ids with the
//! crate's on real text.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;

/// The tail that needs a look-ahead; handled by [`Splitter`].
const WS_TAIL: &str = r"|\s+(?!\S)|\s+";
/// The pattern of a `ByteLevel` pre-tokenizer with `use_regex: true` (GPT-2's).
const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// Pieces kept per worker before the cache is emptied (bounds memory on odd inputs).
const CACHE_CAP: usize = 200_000;
/// Pieces up to this many bytes are merged by a plain scan; longer ones by a heap.
const SCAN_MAX: usize = 48;
/// Workers' states kept between batches.
const SPARES: usize = 16;

pub(crate) struct ByteBpe {
    /// Initial symbol of each byte.
    byte_ids: [u32; 256],
    /// `(left << 32) | right` → (rank, merged id).
    merges: FxHashMap<u64, (u32, u32)>,
    /// Added tokens, matched in the raw text; `None` when there are none.
    added: Option<(AhoCorasick, Vec<u32>)>,
    nfc: bool,
    splitter: Splitter,
    /// Decoded bytes of id `i`: `dec_bytes[dec_off[i]..dec_off[i + 1]]`.
    dec_bytes: Vec<u8>,
    dec_off: Vec<u32>,
    /// Per id: bit 0 = known id, bit 1 = special (skipped by decode).
    dec_flags: Vec<u8>,
    vocab_size: usize,
    /// Workers' state between batches, so piece caches stay warm across calls.
    spares: Mutex<Vec<Work>>,
}

/// The pre-tokenizer's `Split` (behaviour `Isolated`): matches and the gaps between them.
struct Splitter {
    /// The pattern, with a trailing `\s+(?!\S)|\s+` replaced by `\s+`.
    full: Regex,
    /// The pattern without that tail, when it had one.
    head: Option<Regex>,
}

impl Splitter {
    fn new(pattern: &str) -> Option<Splitter> {
        let (full, head) = match pattern.strip_suffix(WS_TAIL) {
            Some(head) => (format!(r"{head}|\s+"), Some(head)),
            None => (pattern.to_string(), None),
        };
        // Any other look-around (or back-reference) fails to compile here: then not supported.
        let hir = regex_syntax::parse(&full).ok()?;
        if hir.properties().minimum_len().unwrap_or(0) == 0 {
            return None; // empty matches: leave those semantics to the crate
        }
        Some(Splitter {
            full: Regex::new(&full).ok()?,
            head: match head {
                Some(h) => Some(Regex::new(h).ok()?),
                None => None,
            },
        })
    }

    fn caches(&self) -> ReCaches {
        ReCaches {
            full: self.full.create_cache(),
            head: self.head.as_ref().map(Regex::create_cache),
        }
    }

    /// Call `f` with each piece of `text`, in order, until it returns false.
    fn pieces(&self, re: &mut ReCaches, text: &str, mut f: impl FnMut(&str) -> bool) {
        let mut pos = 0;
        while pos < text.len() {
            let at = Input::new(text).range(pos..).anchored(Anchored::Yes);
            let end = match self.full.search_half_with(&mut re.full, &at) {
                Some(m) if m.offset() > pos => self.resolve_tail(re, text, pos, m.offset()),
                _ => {
                    // A gap: up to the next match (a piece of its own, as `Isolated` keeps it).
                    let next = self
                        .full
                        .search_with(&mut re.full, &Input::new(text).range(pos..))
                        .map_or(text.len(), |m| m.start());
                    if next > pos {
                        next
                    } else {
                        pos + text[pos..].chars().next().map_or(1, char::len_utf8)
                    }
                }
            };
            if !f(&text[pos..end]) {
                return;
            }
            pos = end;
        }
    }

    /// `full` matched `text[pos..end]`. When that came from the `\s+` branch (the head does
    /// not match here), it is the whole whitespace run; the original `\s+(?!\S)` then stops one
    /// character short when a non-space follows and the run has two or more characters.
    fn resolve_tail(&self, re: &mut ReCaches, text: &str, pos: usize, end: usize) -> usize {
        let (Some(head), Some(cache)) = (&self.head, re.head.as_mut()) else {
            return end;
        };
        let m = &text.as_bytes()[pos..end];
        // Only a match that may be all whitespace can come from the `\s+` branch.
        if m.iter()
            .any(|&b| b < 0x80 && !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        {
            return end;
        }
        let at = Input::new(text).range(pos..).anchored(Anchored::Yes);
        if head.search_half_with(cache, &at).is_some() {
            return end;
        }
        if end == text.len() {
            return end;
        }
        let last = text[pos..end].chars().next_back().map_or(0, char::len_utf8);
        if end - last > pos {
            end - last
        } else {
            end
        }
    }
}

/// GPT-2's byte ↔ printable character table: byte `b` is written as `byte_char(b)`.
fn byte_chars() -> [char; 256] {
    let mut out = ['\0'; 256];
    let mut n = 0u32;
    for b in 0..=255u8 {
        let kept = matches!(b, 33..=126 | 161..=172 | 174..=255);
        out[b as usize] = if kept {
            b as char
        } else {
            n += 1;
            char::from_u32(255 + n).expect("valid char")
        };
    }
    out
}

// ---- loading ---------------------------------------------------------------------------------

#[derive(Deserialize)]
struct FileJson {
    #[serde(default)]
    added_tokens: Vec<AddedJson>,
    #[serde(default)]
    normalizer: Option<serde_json::Value>,
    #[serde(default)]
    pre_tokenizer: Option<serde_json::Value>,
    #[serde(default)]
    post_processor: Option<serde_json::Value>,
    #[serde(default)]
    decoder: Option<serde_json::Value>,
    model: ModelJson,
}

#[derive(Deserialize)]
struct AddedJson {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    normalized: bool,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct ModelJson {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    vocab: Option<VocabJson>,
    #[serde(default)]
    merges: Option<MergesJson>,
    #[serde(default)]
    dropout: Option<f64>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
    #[serde(default)]
    byte_fallback: bool,
    #[serde(default)]
    ignore_merges: bool,
}

/// The BPE vocabulary (`{"token": id, ..}`) read straight into a list.
struct VocabJson(Vec<(String, u32)>);

impl<'de> Deserialize<'de> for VocabJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = VocabJson;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of token to id")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<VocabJson, A::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0));
                while let Some((k, v)) = m.next_entry::<String, u32>()? {
                    out.push((k, v));
                }
                Ok(VocabJson(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The merges, either `"a b"` strings or `["a", "b"]` pairs, in rank order.
struct MergesJson(Vec<(String, String)>);

impl<'de> Deserialize<'de> for MergesJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        enum One {
            Pair(String, String),
            Skip,
        }
        impl<'de> Deserialize<'de> for One {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = One;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(r#""a b" or ["a", "b"]"#)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<One, E> {
                        if s.starts_with("#version") {
                            return Ok(One::Skip);
                        }
                        let mut parts = s.split(' ');
                        match (parts.next(), parts.next(), parts.next()) {
                            (Some(a), Some(b), None) => Ok(One::Pair(a.into(), b.into())),
                            _ => Err(E::custom("a merge is not two tokens")),
                        }
                    }
                    fn visit_seq<A: serde::de::SeqAccess<'de>>(
                        self,
                        mut s: A,
                    ) -> Result<One, A::Error> {
                        let a: String = s
                            .next_element()?
                            .ok_or_else(|| serde::de::Error::custom("short merge"))?;
                        let b: String = s
                            .next_element()?
                            .ok_or_else(|| serde::de::Error::custom("short merge"))?;
                        if s.next_element::<serde::de::IgnoredAny>()?.is_some() {
                            return Err(serde::de::Error::custom("long merge"));
                        }
                        Ok(One::Pair(a, b))
                    }
                }
                d.deserialize_any(V)
            }
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MergesJson;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of merges")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> Result<MergesJson, A::Error> {
                let mut out = Vec::with_capacity(s.size_hint().unwrap_or(0));
                while let Some(one) = s.next_element::<One>()? {
                    if let One::Pair(a, b) = one {
                        out.push((a, b));
                    }
                }
                Ok(MergesJson(out))
            }
        }
        d.deserialize_seq(V)
    }
}

fn kind(v: &serde_json::Value) -> Option<&str> {
    v.get("type").and_then(|t| t.as_str())
}

fn flag(v: &serde_json::Value, name: &str) -> Option<bool> {
    v.get(name).and_then(|t| t.as_bool())
}

/// The regex of a supported pre-tokenizer: `Sequence[Split(Regex, Isolated), ByteLevel(no
/// regex)]`, or a lone `ByteLevel` with its own GPT-2 regex; no prefix space either way.
fn split_pattern(pre: &serde_json::Value) -> Option<String> {
    let byte_level_ok = |b: &serde_json::Value| {
        kind(b) == Some("ByteLevel") && flag(b, "add_prefix_space") == Some(false)
    };
    match kind(pre)? {
        "ByteLevel" if byte_level_ok(pre) && flag(pre, "use_regex") != Some(false) => {
            Some(GPT2_PATTERN.to_string())
        }
        "Sequence" => {
            let parts = pre.get("pretokenizers")?.as_array()?;
            let [split, bl] = parts.as_slice() else {
                return None;
            };
            if kind(split)? != "Split"
                || split.get("behavior")?.as_str()? != "Isolated"
                || flag(split, "invert") != Some(false)
                || !byte_level_ok(bl)
                || flag(bl, "use_regex") != Some(false)
            {
                return None;
            }
            Some(split.get("pattern")?.get("Regex")?.as_str()?.to_string())
        }
        _ => None,
    }
}

impl ByteBpe {
    /// Build from the JSON text of a `tokenizer.json`; `None` if the file has another shape
    /// (or is invalid: the crate then says why).
    pub(crate) fn parse(bytes: &[u8]) -> Option<ByteBpe> {
        let file: FileJson = serde_json::from_slice(bytes).ok()?;
        let m = file.model;
        let plain = |s: &Option<String>| s.as_deref().is_none_or(str::is_empty);
        if m.kind.as_deref().is_some_and(|k| k != "BPE")
            || m.dropout.is_some()
            || m.byte_fallback
            || m.ignore_merges
            || !plain(&m.continuing_subword_prefix)
            || !plain(&m.end_of_word_suffix)
        {
            return None;
        }
        let nfc = match &file.normalizer {
            None | Some(serde_json::Value::Null) => false,
            Some(n) if kind(n) == Some("NFC") => true,
            Some(_) => return None,
        };
        let splitter = Splitter::new(&split_pattern(file.pre_tokenizer.as_ref()?)?)?;
        if kind(file.decoder.as_ref()?)? != "ByteLevel" {
            return None;
        }
        match &file.post_processor {
            None | Some(serde_json::Value::Null) => {}
            Some(p) if kind(p) == Some("ByteLevel") => {}
            Some(_) => return None,
        }
        if file
            .added_tokens
            .iter()
            .any(|t| t.single_word || t.lstrip || t.rstrip || t.normalized || t.content.is_empty())
        {
            return None;
        }
        let vocab = m.vocab?.0;
        let merge_list = m.merges?.0;

        let chars = byte_chars();
        let mut char_byte: FxHashMap<char, u8> = FxHashMap::default();
        for (b, c) in chars.iter().enumerate() {
            char_byte.insert(*c, b as u8);
        }
        let by_text: FxHashMap<&str, u32> = vocab.iter().map(|(s, i)| (s.as_str(), *i)).collect();
        let mut byte_ids = [0u32; 256];
        for (b, c) in chars.iter().enumerate() {
            byte_ids[b] = *by_text.get(c.encode_utf8(&mut [0; 4]) as &str)?;
        }
        let mut merges: FxHashMap<u64, (u32, u32)> = FxHashMap::default();
        merges.reserve(merge_list.len());
        let mut joined = String::new();
        for (rank, (a, b)) in merge_list.iter().enumerate() {
            let (ia, ib) = (*by_text.get(a.as_str())?, *by_text.get(b.as_str())?);
            joined.clear();
            joined.push_str(a);
            joined.push_str(b);
            let new = *by_text.get(joined.as_str())?;
            merges.insert((u64::from(ia) << 32) | u64::from(ib), (rank as u32, new));
        }
        drop(merge_list);

        // Decoding table: added tokens take precedence over the model's token of that id.
        let added_ids: FxHashMap<u32, &str> = file
            .added_tokens
            .iter()
            .map(|t| (t.id, t.content.as_str()))
            .collect();
        let special: FxHashSet<&str> = file
            .added_tokens
            .iter()
            .filter(|t| t.special)
            .map(|t| t.content.as_str())
            .collect();
        let max_id = vocab
            .iter()
            .map(|(_, i)| *i)
            .chain(added_ids.keys().copied())
            .max()
            .unwrap_or(0) as usize;
        let mut text_of: Vec<Option<&str>> = vec![None; max_id + 1];
        for (s, i) in &vocab {
            text_of[*i as usize] = Some(s.as_str());
        }
        for (i, s) in &added_ids {
            text_of[*i as usize] = Some(s);
        }
        let mut dec_bytes = Vec::new();
        let mut dec_off = Vec::with_capacity(max_id + 2);
        let mut dec_flags = vec![0u8; max_id + 1];
        dec_off.push(0u32);
        for (i, t) in text_of.iter().enumerate() {
            if let Some(t) = t {
                dec_flags[i] = 1 | if special.contains(t) { 2 } else { 0 };
                let start = dec_bytes.len();
                // The ByteLevel decoder: symbols back to bytes, or the text as is when it is
                // not made of byte symbols only.
                for c in t.chars() {
                    match char_byte.get(&c) {
                        Some(b) => dec_bytes.push(*b),
                        None => {
                            dec_bytes.truncate(start);
                            dec_bytes.extend_from_slice(t.as_bytes());
                            break;
                        }
                    }
                }
            }
            dec_off.push(u32::try_from(dec_bytes.len()).ok()?);
        }
        // `get_vocab_size(true)`: distinct texts of the vocabulary and the added tokens.
        let vocab_size = vocab.len()
            + added_ids
                .values()
                .collect::<FxHashSet<_>>()
                .into_iter()
                .filter(|s| !by_text.contains_key(*s))
                .count();

        let added = if file.added_tokens.is_empty() {
            None
        } else {
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(file.added_tokens.iter().map(|t| t.content.as_str()))
                .ok()?;
            Some((ac, file.added_tokens.iter().map(|t| t.id).collect()))
        };
        Some(ByteBpe {
            byte_ids,
            merges,
            added,
            nfc,
            splitter,
            dec_bytes,
            dec_off,
            dec_flags,
            vocab_size,
            spares: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    // ---- encoding ----------------------------------------------------------------------------

    /// Ids of `text` (no special tokens added), stopping once more than `limit` are found.
    fn run(&self, w: &mut Work, text: &str, limit: usize, out: &mut Vec<u32>) {
        let mut start = 0;
        if let Some((ac, ids)) = &self.added {
            for m in ac.find_iter(text) {
                if !self.normal(w, &text[start..m.start()], limit, out) {
                    return;
                }
                out.push(ids[m.pattern().as_usize()]);
                if out.len() > limit {
                    return;
                }
                start = m.end();
            }
        }
        self.normal(w, &text[start..], limit, out);
    }

    /// Text between added tokens: normalise, split, merge. False once past `limit`.
    fn normal(&self, w: &mut Work, text: &str, limit: usize, out: &mut Vec<u32>) -> bool {
        if text.is_empty() {
            return true;
        }
        let normalized;
        let text = if self.nfc && !text.is_ascii() {
            use unicode_normalization_alignments::UnicodeNormalization;
            normalized = text.nfc().map(|(c, _)| c).collect::<String>();
            normalized.as_str()
        } else {
            text
        };
        let mut within = true;
        let Work { re, bpe, .. } = w;
        self.splitter.pieces(re, text, |piece| {
            self.piece(bpe, piece.as_bytes(), out);
            within = out.len() <= limit;
            within
        });
        within
    }

    /// The BPE ids of one pre-tokenized piece.
    fn piece(&self, w: &mut Scratch, piece: &[u8], out: &mut Vec<u32>) {
        if let [b] = piece {
            out.push(self.byte_ids[*b as usize]);
            return;
        }
        if let Some(ids) = w.cache.get(piece) {
            out.extend_from_slice(ids);
            return;
        }
        let start = out.len();
        if piece.len() <= SCAN_MAX {
            self.merge_scan(w, piece, out);
        } else {
            self.merge_heap(w, piece, out);
        }
        if w.cache.len() >= CACHE_CAP {
            w.cache.clear();
        }
        w.cache.insert(piece.into(), out[start..].into());
    }

    fn merge_of(&self, a: u32, b: u32) -> Option<(u32, u32)> {
        self.merges
            .get(&((u64::from(a) << 32) | u64::from(b)))
            .copied()
    }

    /// Short pieces: repeatedly merge the lowest-ranked adjacent pair, leftmost on ties. The
    /// rank of each adjacent pair is kept, and only the two pairs next to a merge looked up again.
    fn merge_scan(&self, w: &mut Scratch, piece: &[u8], out: &mut Vec<u32>) {
        const NONE: (u32, u32) = (u32::MAX, 0);
        let syms = &mut w.short;
        syms.clear();
        syms.extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
        let pairs = &mut w.pairs;
        pairs.clear();
        pairs.extend(
            syms.windows(2)
                .map(|p| self.merge_of(p[0], p[1]).unwrap_or(NONE)),
        );
        loop {
            let mut best = (u32::MAX, 0);
            for (i, &(rank, _)) in pairs.iter().enumerate() {
                if rank < best.0 {
                    best = (rank, i);
                }
            }
            if best.0 == u32::MAX {
                break;
            }
            let i = best.1;
            syms[i] = pairs[i].1;
            syms.remove(i + 1);
            pairs.remove(i);
            if i > 0 {
                pairs[i - 1] = self.merge_of(syms[i - 1], syms[i]).unwrap_or(NONE);
            }
            if i < pairs.len() {
                pairs[i] = self.merge_of(syms[i], syms[i + 1]).unwrap_or(NONE);
            }
        }
        out.extend_from_slice(syms);
    }

    /// Long pieces: the same order of merges, with a heap of candidate pairs and a linked list.
    fn merge_heap(&self, w: &mut Scratch, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        let syms = &mut w.syms;
        syms.clear();
        syms.extend(piece.iter().enumerate().map(|(i, &b)| Sym {
            id: self.byte_ids[b as usize],
            prev: i.wrapping_sub(1),
            next: if i + 1 < n { i + 1 } else { usize::MAX },
            alive: true,
        }));
        let heap = &mut w.heap;
        heap.clear();
        for i in 0..n - 1 {
            if let Some((rank, new)) = self.merge_of(syms[i].id, syms[i + 1].id) {
                heap.push(Reverse((rank, i, new)));
            }
        }
        while let Some(Reverse((rank, pos, new))) = heap.pop() {
            let s = syms[pos];
            if !s.alive || s.next == usize::MAX {
                continue;
            }
            // A stale entry: the pair at `pos` is no longer this merge.
            if self.merge_of(s.id, syms[s.next].id) != Some((rank, new)) {
                continue;
            }
            let right = syms[s.next];
            syms[s.next].alive = false;
            syms[pos].id = new;
            syms[pos].next = right.next;
            if right.next != usize::MAX {
                syms[right.next].prev = pos;
                if let Some((r, m)) = self.merge_of(new, syms[right.next].id) {
                    heap.push(Reverse((r, pos, m)));
                }
            }
            if s.prev != usize::MAX {
                if let Some((r, m)) = self.merge_of(syms[s.prev].id, new) {
                    heap.push(Reverse((r, s.prev, m)));
                }
            }
        }
        let mut i = 0;
        while i != usize::MAX {
            out.push(syms[i].id);
            i = syms[i].next;
        }
    }

    fn work(&self) -> Work {
        Work {
            re: self.splitter.caches(),
            bpe: Scratch::default(),
            ids: Vec::new(),
        }
    }

    /// A worker's state from the spares (with its piece cache from earlier calls), or a new
    /// one; it goes back to the spares when dropped.
    fn take_work(&self) -> Lent<'_> {
        let spare = self.spares.lock().unwrap_or_else(|e| e.into_inner()).pop();
        Lent {
            work: Some(spare.unwrap_or_else(|| self.work())),
            home: &self.spares,
        }
    }

    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.run(&mut self.work(), text, usize::MAX, &mut out);
        out
    }

    /// Map `texts` through `f` with one cache per worker, in parallel when worth it.
    fn batch<T: Send>(&self, texts: &[&str], f: impl Fn(&mut Work, &str) -> T + Sync) -> Vec<T> {
        if texts.len() < 8 {
            let mut w = self.take_work();
            return texts.iter().map(|t| f(&mut w, t)).collect();
        }
        let per = texts
            .len()
            .div_ceil(4 * rayon::current_num_threads())
            .max(1);
        texts
            .par_iter()
            .with_min_len(per)
            .map_init(|| self.take_work(), |w, t| f(w, t))
            .collect()
    }

    pub(crate) fn encode_batch(&self, texts: &[&str]) -> Vec<Vec<u32>> {
        self.batch(texts, |w, t| {
            let mut out = Vec::new();
            self.run(w, t, usize::MAX, &mut out);
            out
        })
    }

    /// Token counts, exact up to `limit`; a count above `limit` may be reported short of the
    /// full count (still above `limit`).
    pub(crate) fn count_batch(&self, texts: &[&str], limit: usize) -> Vec<usize> {
        self.batch(texts, |w, t| {
            let mut out = std::mem::take(&mut w.ids);
            out.clear();
            self.run(w, t, limit, &mut out);
            let n = out.len();
            w.ids = out;
            n
        })
    }

    // ---- decoding ----------------------------------------------------------------------------

    /// Text of `ids` skipping special tokens and unknown ids, as the crate's ByteLevel decoder.
    pub(crate) fn decode(&self, ids: &[u32]) -> String {
        let mut bytes = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let i = id as usize;
            if self.dec_flags.get(i).copied().unwrap_or(0) != 1 {
                continue;
            }
            bytes.extend_from_slice(
                &self.dec_bytes[self.dec_off[i] as usize..self.dec_off[i + 1] as usize],
            );
        }
        match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }

    pub(crate) fn decode_batch(&self, seqs: &[&[u32]]) -> Vec<String> {
        if seqs.len() < 64 {
            return seqs.iter().map(|s| self.decode(s)).collect();
        }
        seqs.par_iter().map(|s| self.decode(s)).collect()
    }
}

#[derive(Clone, Copy)]
struct Sym {
    id: u32,
    prev: usize,
    next: usize,
    alive: bool,
}

/// A [`Work`] lent from [`ByteBpe::spares`].
struct Lent<'a> {
    work: Option<Work>,
    home: &'a Mutex<Vec<Work>>,
}

impl std::ops::Deref for Lent<'_> {
    type Target = Work;
    fn deref(&self) -> &Work {
        self.work.as_ref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut Work {
        self.work.as_mut().expect("present until dropped")
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.work.take() {
            let mut spares = self.home.lock().unwrap_or_else(|e| e.into_inner());
            if spares.len() < SPARES {
                spares.push(w);
            }
        }
    }
}

/// One worker's caches and scratch space.
struct Work {
    re: ReCaches,
    bpe: Scratch,
    ids: Vec<u32>,
}

/// The regex engines' caches for [`Splitter`].
struct ReCaches {
    full: Cache,
    head: Option<Cache>,
}

/// Pieces already merged, and room to merge long ones.
#[derive(Default)]
struct Scratch {
    cache: FxHashMap<Box<[u8]>, Box<[u32]>>,
    short: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    syms: Vec<Sym>,
    heap: BinaryHeap<Reverse<(u32, usize, u32)>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_table_is_gpt2s() {
        let c = byte_chars();
        assert_eq!(c[b'a' as usize], 'a');
        assert_eq!(c[b' ' as usize], 'Ġ');
        assert_eq!(c[b'\n' as usize], 'Ċ');
        assert_eq!(c[0], 'Ā');
        let distinct: FxHashSet<char> = c.iter().copied().collect();
        assert_eq!(distinct.len(), 256);
    }

    /// A small byte-level BPE file in the Qwen shape: the 256 byte symbols, a few merges
    /// (including two routes to one token), and added tokens.
    fn tiny_json(pre_tokenizer: serde_json::Value, normalizer: serde_json::Value) -> String {
        let chars = byte_chars();
        let mut vocab: Vec<String> = chars.iter().map(|c| c.to_string()).collect();
        let merges: Vec<(&str, &str)> = vec![
            ("Ġ", "t"),
            ("h", "e"),
            ("Ġt", "he"),
            ("t", "h"),
            ("th", "e"),
            ("=", "="),
            ("==", "=="),
            ("a", "b"),
            ("ab", "ab"),
            ("Ġ", "Ġ"),
            ("Ċ", "Ċ"),
            ("Ã", "©"),
            ("c", "a"),
            ("ca", "f"),
            ("caf", "Ã©"),
        ];
        for (a, b) in &merges {
            let m = format!("{a}{b}");
            if !vocab.contains(&m) {
                vocab.push(m);
            }
        }
        let n = vocab.len();
        let vocab_map: serde_json::Map<String, serde_json::Value> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), serde_json::json!(i)))
            .collect();
        let merges: Vec<String> = merges.iter().map(|(a, b)| format!("{a} {b}")).collect();
        serde_json::json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": [
                {"id": n, "content": "<|end|>", "single_word": false, "lstrip": false,
                 "rstrip": false, "normalized": false, "special": true},
                {"id": n + 1, "content": "<|end|>x", "single_word": false, "lstrip": false,
                 "rstrip": false, "normalized": false, "special": false},
                {"id": n + 2, "content": "tool", "single_word": false, "lstrip": false,
                 "rstrip": false, "normalized": false, "special": false}
            ],
            "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer,
            "post_processor": {"type": "ByteLevel", "add_prefix_space": false,
                               "trim_offsets": false, "use_regex": false},
            "decoder": {"type": "ByteLevel", "add_prefix_space": false,
                        "trim_offsets": true, "use_regex": true},
            "model": {"type": "BPE", "dropout": null, "unk_token": null,
                      "continuing_subword_prefix": "", "end_of_word_suffix": "",
                      "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                      "vocab": vocab_map, "merges": merges}
        })
        .to_string()
    }

    const QWEN_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

    fn shapes() -> Vec<String> {
        let qwen = serde_json::json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN_PATTERN}, "behavior": "Isolated",
             "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
             "use_regex": false}]});
        let gpt2 = serde_json::json!({"type": "ByteLevel", "add_prefix_space": false,
                                      "trim_offsets": true, "use_regex": true});
        vec![
            tiny_json(qwen, serde_json::json!({"type": "NFC"})),
            tiny_json(gpt2, serde_json::Value::Null),
        ]
    }

    #[test]
    fn tiny_byte_level_files_give_the_crate_ids_and_text() {
        let texts = [
            "",
            "the the  the\n\n\nthe",
            "  leading and trailing  ",
            "abababab ab aba ====== ===",
            "cafe\u{301} café CAFÉ",
            "x<|end|>y<|end|>x<|end|z tool tools",
            "I'M it's 123 4.5 \t\t\r\n end\n  ",
            "中文 👍🏽 \u{3000}\u{00A0}x",
        ];
        let long = format!("{} {}", "=".repeat(200), "ab".repeat(100));
        for json in shapes() {
            let lean = ByteBpe::parse(json.as_bytes()).expect("supported shape");
            let reference = tokenizers::Tokenizer::from_bytes(json.as_bytes()).unwrap();
            assert_eq!(lean.vocab_size(), reference.get_vocab_size(true));
            for t in texts.iter().copied().chain([long.as_str()]) {
                let want = reference.encode_fast(t, false).unwrap().get_ids().to_vec();
                assert_eq!(lean.encode(t), want, "{t:?}");
                assert_eq!(lean.count_batch(&[t], usize::MAX), [want.len()]);
                assert_eq!(lean.decode(&want), reference.decode(&want, true).unwrap());
            }
            let all: Vec<u32> = (0..lean.vocab_size() as u32 + 3).collect();
            assert_eq!(lean.decode(&all), reference.decode(&all, true).unwrap());
        }
    }

    #[test]
    fn other_shapes_are_left_to_the_crate() {
        let json = &shapes()[0];
        let swap = |from: &str, to: &str| {
            assert!(json.contains(from), "{from}");
            json.replacen(from, to, 1)
        };
        assert!(ByteBpe::parse(json.as_bytes()).is_some());
        for other in [
            swap(r#""type":"NFC""#, r#""type":"NFKC""#),
            swap(r#""byte_fallback":false"#, r#""byte_fallback":true"#),
            swap(r#""ignore_merges":false"#, r#""ignore_merges":true"#),
            swap(r#""dropout":null"#, r#""dropout":0.1"#),
            swap(r#""lstrip":false"#, r#""lstrip":true"#),
            swap(r#""behavior":"Isolated""#, r#""behavior":"Removed""#),
            swap(r#""type":"BPE""#, r#""type":"WordPiece""#),
            swap(r#"(?!\\S)"#, r#"(?=\\S)"#),
            swap(
                r#""decoder":{"type":"ByteLevel""#,
                r#""decoder":{"type":"Metaspace""#,
            ),
        ] {
            assert!(ByteBpe::parse(other.as_bytes()).is_none(), "{other:.300}");
        }
    }

    #[test]
    fn whitespace_tail_matches_the_look_ahead() {
        let s = Splitter::new(GPT2_PATTERN).unwrap();
        let split = |t: &str| {
            let mut v = Vec::new();
            s.pieces(&mut s.caches(), t, |p| {
                v.push(p.to_string());
                true
            });
            v
        };
        // `\s+(?!\S)` leaves the last space to the next word; a lone space before a digit run
        // is taken by ` ?\p{N}+`; trailing spaces stay together.
        assert_eq!(split("a   b"), ["a", "  ", " b"]);
        assert_eq!(split("a \n b  "), ["a", " \n", " b", "  "]);
        assert_eq!(split("x  12"), ["x", " ", " 12"]);
        assert_eq!(split("  "), ["  "]);
    }
}
