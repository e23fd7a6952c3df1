//! Loading a `tokenizer.json` of the supported shape straight into [`ByteBpe`]'s tables: the
//! file's JSON read without an intermediate tree, its options checked (anything else: `None`),
//! then the merge table and the decoding table built from the vocabulary.

use std::sync::Mutex;

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;

use super::{byte_chars, ByteBpe, Splitter, GPT2_PATTERN};

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
        let (nfc, splitter) = supported(&file)?;
        let m = file.model;
        let vocab = m.vocab?.0;
        let merge_list = m.merges?.0;

        let chars = byte_chars();
        let by_text: FxHashMap<&str, u32> = vocab.iter().map(|(s, i)| (s.as_str(), *i)).collect();
        let mut byte_ids = [0u32; 256];
        for (b, c) in chars.iter().enumerate() {
            byte_ids[b] = *by_text.get(c.encode_utf8(&mut [0; 4]) as &str)?;
        }
        let merges = merge_table(&by_text, merge_list)?;

        // Decoding table: added tokens take precedence over the model's token of that id.
        let added_ids: FxHashMap<u32, &str> = file
            .added_tokens
            .iter()
            .map(|t| (t.id, t.content.as_str()))
            .collect();
        let (dec_bytes, dec_off, dec_flags) =
            decoding_table(&chars, &vocab, &added_ids, &file.added_tokens)?;
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
}

/// The file's options, checked against what [`ByteBpe`] implements: whether it NFC-normalises,
/// and its pre-tokenizer's splitter; `None` for anything else.
fn supported(file: &FileJson) -> Option<(bool, Splitter)> {
    let m = &file.model;
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
    Some((nfc, splitter))
}

/// The merges by pair of ids: `(left << 32) | right` → (rank, merged id); `None` when a merge
/// names a token the vocabulary lacks. The list is freed as soon as the table is built.
fn merge_table(
    by_text: &FxHashMap<&str, u32>,
    merge_list: Vec<(String, String)>,
) -> Option<FxHashMap<u64, (u32, u32)>> {
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
    Some(merges)
}

/// The decoding table: the bytes of every id (`dec_bytes`, delimited by `dec_off`) and its flags
/// (bit 0 known, bit 1 special), added tokens over the model's token of their id.
fn decoding_table(
    chars: &[char; 256],
    vocab: &[(String, u32)],
    added_ids: &FxHashMap<u32, &str>,
    added_tokens: &[AddedJson],
) -> Option<(Vec<u8>, Vec<u32>, Vec<u8>)> {
    let mut char_byte: FxHashMap<char, u8> = FxHashMap::default();
    for (b, c) in chars.iter().enumerate() {
        char_byte.insert(*c, b as u8);
    }
    let special: FxHashSet<&str> = added_tokens
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
    for (s, i) in vocab {
        text_of[*i as usize] = Some(s.as_str());
    }
    for (i, s) in added_ids {
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
    Some((dec_bytes, dec_off, dec_flags))
}
