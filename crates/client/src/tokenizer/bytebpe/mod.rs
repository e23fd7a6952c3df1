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
mod load;

use std::sync::Mutex;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};
use rustc_hash::FxHashMap;

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

impl ByteBpe {
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
mod tests;
