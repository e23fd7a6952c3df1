//! Datasets against the real files scripts/install-engine.sh installs: the Qwen3 tokenizer.json
//! (PERFGATE_QWEN3_TOKENIZER) and the truncated ShareGPT_V3 JSON (PERFGATE_SHAREGPT). Skipped
//! when they are absent, failed when PERFGATE_REQUIRE_ENGINE=1.

use std::path::PathBuf;
use std::sync::OnceLock;

use perfgate::dataset::{build, sharegpt_valid, DatasetName, DatasetSpec};
use perfgate::record::RangeConvention;
use perfgate::tokenizer::{HfTokenizer, Tokenize};

fn installed(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var).map(PathBuf::from) {
        Some(p) if p.is_file() => Some(p),
        _ => {
            crate::support::skip_unless_required(
                &format!("{var} is not an installed file"),
                "run scripts/install-engine.sh",
            );
            None
        }
    }
}

/// The Qwen3 tokenizer, loaded once for all tests of this module.
fn qwen3() -> Option<&'static HfTokenizer> {
    static TOK: OnceLock<HfTokenizer> = OnceLock::new();
    let path = installed("PERFGATE_QWEN3_TOKENIZER")?;
    Some(TOK.get_or_init(|| HfTokenizer::from_path(&path).expect("Qwen3 tokenizer.json loads")))
}

fn spec(name: DatasetName, n: usize) -> DatasetSpec {
    DatasetSpec {
        name,
        path: None,
        num_prompts: n,
        random_input_len: 128,
        random_output_len: 32,
        random_range_ratio: 0.0,
        range_convention: RangeConvention::Vllm,
        sharegpt_output_len: None,
        seed: 1,
        ..Default::default()
    }
}

#[test]
fn qwen3_tokenizer_matches_known_ids() {
    let Some(tok) = qwen3() else { return };
    assert_eq!(tok.vocab_size(), 151_669);
    // Known Qwen2/Qwen3 byte-level BPE ids.
    assert_eq!(tok.encode("Hello world").unwrap(), vec![9707, 1879]);
    assert_eq!(tok.decode(&[9707, 1879]).unwrap(), "Hello world");
}

#[test]
fn qwen3_random_and_fixed_prompts_are_exact_and_seeded() {
    let Some(tok) = qwen3() else { return };
    let mut s = spec(DatasetName::Random, 300);
    s.random_range_ratio = 0.5;
    let ds = build(&s, tok).unwrap();
    assert_eq!(ds.prompts.len(), 300);
    let texts: Vec<&str> = ds.prompts.iter().map(|p| p.text.as_str()).collect();
    for (p, ids) in ds.prompts.iter().zip(tok.encode_batch(&texts).unwrap()) {
        assert_eq!(ids.len(), p.input_len as usize, "{:?}", p.text);
        assert!((64..=192).contains(&p.input_len), "{}", p.input_len);
        assert!((16..=48).contains(&p.output_len), "{}", p.output_len);
    }
    assert_eq!(
        build(&s, tok).unwrap().prompts,
        ds.prompts,
        "same seed, same prompts"
    );

    // The long-prompt sweep shape: one prompt of 10,000 tokens, repeated.
    let mut f = spec(DatasetName::Fixed, 3);
    f.random_input_len = 10_000;
    let ds = build(&f, tok).unwrap();
    assert_eq!(tok.encode(&ds.prompts[0].text).unwrap().len(), 10_000);
    assert!(ds.prompts.iter().all(|p| p == &ds.prompts[0]));
}

#[test]
fn sharegpt_truncated_file_reads_every_complete_conversation() {
    let Some(tok) = qwen3() else { return };
    let Some(path) = installed("PERFGATE_SHAREGPT") else {
        return;
    };
    let mut s = spec(DatasetName::Sharegpt, 400);
    s.path = Some(path);
    let ds = build(&s, tok).unwrap();
    assert_eq!(ds.prompts.len(), 400);
    let note = &ds.notes[0];
    assert!(note.contains("truncated"), "{note}");
    assert!(note.contains("17,671 complete conversations"), "{note}");
    assert!(note.contains("17,400 with at least two turns"), "{note}");
    let texts: Vec<&str> = ds.prompts.iter().map(|p| p.text.as_str()).collect();
    for (p, ids) in ds.prompts.iter().zip(tok.encode_batch(&texts).unwrap()) {
        assert_eq!(ids.len(), p.input_len as usize);
        assert!(
            sharegpt_valid(p.input_len as usize, p.output_len as usize, false),
            "{p:?}"
        );
    }
    // Seeded: the same seed gives the same prompts, another seed others.
    assert_eq!(build(&s, tok).unwrap().prompts, ds.prompts);
    s.seed = 2;
    s.sharegpt_output_len = Some(64);
    let other = build(&s, tok).unwrap();
    assert_ne!(other.prompts[0].text, ds.prompts[0].text);
    assert!(other.prompts.iter().all(|p| p.output_len == 64));
}

/// The first `n` conversations' texts (every turn) of the ShareGPT file, read record by record
/// (the file is cut off at the end).
fn sharegpt_texts(path: &std::path::Path, n: usize) -> Vec<String> {
    let buf = std::fs::read(path).unwrap();
    let mut pos = 1 + buf.iter().position(|&b| b == b'[').unwrap();
    let mut out = Vec::new();
    for _ in 0..n {
        let mut stream =
            serde_json::Deserializer::from_slice(&buf[pos..]).into_iter::<serde_json::Value>();
        let Some(Ok(v)) = stream.next() else { break };
        pos += stream.byte_offset();
        while buf
            .get(pos)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b',')
        {
            pos += 1;
        }
        for turn in v["conversations"].as_array().into_iter().flatten() {
            if let Some(t) = turn["value"].as_str() {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// Awkward text: whitespace runs of every kind before words, digits and punctuation; text
/// that NFC changes; special tokens inside text; long runs; CJK, emoji, invalid-looking bytes.
fn awkward_texts() -> Vec<String> {
    use rand::{Rng, SeedableRng};
    let mut fixed: Vec<String> = [
        "",
        " ",
        "  ",
        "\n",
        "a   b",
        "a \n b  ",
        "x  12",
        "Hello world",
        "I'M don'T it's WE'LL you'd",
        "tab\t\tthen\r\n\r\nwindows  \n\n  end   ",
        "caf\u{0065}\u{0301} vs café, \u{212B}ngstr\u{00F6}m, \u{1100}\u{1161}\u{11A8}",
        "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n",
        "<|endoftext|><|endoftext|>x<|endoftext|",
        "12345678901234567890 3.14159 -42 1e10 ٣٤٥ 五六",
        "中文文本，没有空格。日本語のテキスト　全角スペース",
        "emoji 👩‍👩‍👧‍👦🏳️‍🌈 and ZWJ\u{200D}joined\u{00A0}nbsp\u{2003}em",
        "fn main() {\n    println!(\"{}\", x);\n}\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    fixed.push("=".repeat(300));
    fixed.push(format!(" {}", "abcdefghij".repeat(40)));
    fixed.push("ab ".repeat(500));
    fixed.push(" \u{00A0}\u{3000}\t".repeat(50) + "z");
    // Random strings from a pool of characters of many classes.
    let pool: Vec<char> = " \t\n\r\u{00A0}\u{3000}\u{2028}aZéß'sT.,;!?-_()[]{}<>|/\\\"`~@#$%^&*+=0123456789٣中日ü\u{0301}\u{0308}👍\u{FE0F}"
        .chars()
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    for _ in 0..3000 {
        let n = rng.random_range(0..60);
        fixed.push(
            (0..n)
                .map(|_| pool[rng.random_range(0..pool.len())])
                .collect(),
        );
    }
    fixed.push("<|im_start|><|im_end|><|endoftext|>".into());
    fixed
}

#[test]
fn qwen3_lean_tokenizer_gives_the_crate_ids() {
    let Some(tok) = qwen3() else { return };
    assert!(
        tok.is_lean(),
        "the Qwen3 file is byte-level BPE: the lean runner serves it"
    );
    let path = installed("PERFGATE_QWEN3_TOKENIZER").unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let reference = HfTokenizer::from_bytes_with_crate(&bytes, "crate".into()).unwrap();
    assert!(!reference.is_lean());
    assert_eq!(tok.vocab_size(), reference.vocab_size());

    let mut texts = awkward_texts();
    if let Some(sharegpt) = std::env::var_os("PERFGATE_SHAREGPT").map(PathBuf::from) {
        if sharegpt.is_file() {
            texts.extend(sharegpt_texts(&sharegpt, 1500));
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let want = reference.encode_batch(&refs).unwrap();
    let got = tok.encode_batch(&refs).unwrap();
    let mut total = 0;
    for ((text, w), g) in texts.iter().zip(&want).zip(&got) {
        assert_eq!(g, w, "ids differ for {text:?}");
        total += w.len();
    }
    assert!(total > 10_000, "compared {total} tokens");
    // One at a time (a fresh cache), and counts with a limit: exact up to it, above it beyond.
    for (text, w) in texts.iter().zip(&want).step_by(7) {
        assert_eq!(&tok.encode(text).unwrap(), w, "{text:?}");
    }
    for limit in [0, 5, 100, 1024, usize::MAX] {
        let counts = tok.count_batch(&refs, limit).unwrap();
        for ((text, w), n) in texts.iter().zip(&want).zip(counts) {
            if w.len() <= limit {
                assert_eq!(n, w.len(), "limit {limit}: {text:?}");
            } else {
                assert!(n > limit, "limit {limit}: {n} for {} tokens", w.len());
            }
        }
    }

    // Decoding: runs of random ids, special and out-of-range ids included.
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let vocab = reference.vocab_size() as u32;
    let mut seqs: Vec<Vec<u32>> = (0..2000)
        .map(|_| {
            let n = rng.random_range(0..12);
            (0..n).map(|_| rng.random_range(0..vocab + 40)).collect()
        })
        .collect();
    seqs.extend(want.iter().take(500).cloned());
    seqs.push(vec![151_643, 151_644, 9707, 151_645, 1879]);
    let seq_refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
    assert_eq!(
        tok.decode_batch(&seq_refs).unwrap(),
        reference.decode_batch(&seq_refs).unwrap()
    );
    for s in seq_refs.iter().take(200) {
        assert_eq!(tok.decode(s).unwrap(), reference.decode(s).unwrap());
    }
}

#[test]
fn qwen3_prefix_repetition_shares_prefixes_and_random_prefix_is_shared() {
    let Some(tok) = qwen3() else { return };
    let mut s = spec(DatasetName::PrefixRepetition, 12);
    s.prefix_repetition = perfgate::dataset::PrefixRepetition {
        prefix_len: 40,
        suffix_len: 10,
        num_prefixes: 3,
        output_len: 7,
    };
    let ds = build(&s, tok).unwrap();
    assert_eq!(ds.prompts.len(), 12);
    let mut prefixes = std::collections::BTreeMap::new();
    for p in &ds.prompts {
        assert_eq!(p.output_len, 7);
        // Joined texts of word tokens keep their counts.
        assert_eq!(p.input_len, 50, "{:?}", p.text);
        let ids = tok.encode(&p.text).unwrap();
        *prefixes.entry(ids[..40].to_vec()).or_insert(0) += 1;
    }
    // Three distinct prefixes, four prompts each.
    assert_eq!(prefixes.len(), 3);
    assert!(prefixes.values().all(|&c| c == 4), "{prefixes:?}");
    assert_eq!(build(&s, tok).unwrap().prompts, ds.prompts);

    let mut r = spec(DatasetName::Random, 5);
    r.random_input_len = 20;
    r.random_prefix_len = 16;
    let ds = build(&r, tok).unwrap();
    let first = tok.encode(&ds.prompts[0].text).unwrap();
    for p in &ds.prompts {
        assert_eq!(p.input_len, 36);
        assert_eq!(tok.encode(&p.text).unwrap()[..16], first[..16]);
    }
}

#[test]
fn custom_dataset_reads_prompts_and_uses_the_output_length() {
    let Some(tok) = qwen3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    std::fs::write(
        &path,
        "{\"prompt\": \"Hello world\"}\n\n{\"prompt\": \"Hello\"}\n",
    )
    .unwrap();
    let mut s = spec(DatasetName::Custom, 2);
    s.path = Some(path.clone());
    s.custom_output_len = 9;
    let ds = build(&s, tok).unwrap();
    let lens: Vec<(u32, u32)> = ds
        .prompts
        .iter()
        .map(|p| (p.input_len, p.output_len))
        .collect();
    assert_eq!(lens, [(2, 9), (1, 9)]);
    s.num_prompts = 3;
    let ds = build(&s, tok).unwrap();
    assert_eq!(ds.prompts[2], ds.prompts[0]);
    assert!(ds
        .notes
        .iter()
        .any(|n| n.contains("repeated them in order")));
    std::fs::write(&path, "{\"text\": \"x\"}\n").unwrap();
    let err = build(&s, tok).unwrap_err().to_string();
    assert!(
        err.contains("c.jsonl:1: expected {\"prompt\": string}"),
        "{err}"
    );
}
