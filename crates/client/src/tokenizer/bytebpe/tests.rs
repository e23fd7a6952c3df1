use rustc_hash::FxHashSet;

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
