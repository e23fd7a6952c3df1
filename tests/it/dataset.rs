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
            if std::env::var("PERFGATE_REQUIRE_ENGINE").as_deref() == Ok("1") {
                panic!("PERFGATE_REQUIRE_ENGINE=1 but {var} is not an installed file (scripts/install-engine.sh)");
            }
            eprintln!("skipped: {var} not set (run scripts/install-engine.sh)");
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
