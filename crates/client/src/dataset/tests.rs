use super::*;
use crate::tokenizer::HfTokenizer;
use std::collections::HashMap;

/// A whitespace WordLevel tokenizer over `n` words `w0 .. w{n-1}` (+ `[UNK]` = 0).
fn word_level(n: usize) -> HfTokenizer {
    let mut vocab: HashMap<String, u32> = HashMap::new();
    vocab.insert("[UNK]".into(), 0);
    for i in 0..n {
        vocab.insert(format!("w{i}"), i as u32 + 1);
    }
    let model = tokenizers::models::wordlevel::WordLevel::builder()
        .vocab(vocab.into_iter().collect())
        .unk_token("[UNK]".into())
        .build()
        .unwrap();
    let mut t = tokenizers::Tokenizer::new(model);
    t.with_pre_tokenizer(Some(
        tokenizers::pre_tokenizers::whitespace::WhitespaceSplit,
    ));
    HfTokenizer::from_tokenizer(t, "word-level".into())
}

/// A tokenizer whose decode/encode is not a round trip: characters `a` and `b`, and `aa`
/// as one merged token. Random ids like [a, a] come back as one token.
struct Merging;

impl Tokenize for Merging {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let b = text.as_bytes();
        let (mut i, mut out) = (0, Vec::new());
        while i < b.len() {
            if b[i] == b'a' && b.get(i + 1) == Some(&b'a') {
                out.push(2);
                i += 2;
            } else {
                out.push(if b[i] == b'a' { 0 } else { 1 });
                i += 1;
            }
        }
        Ok(out)
    }
    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        Ok(ids
            .iter()
            .map(|&i| ["a", "b", "aa"][i as usize])
            .collect::<String>())
    }
    fn vocab_size(&self) -> usize {
        3
    }
    fn id(&self) -> String {
        "merging".into()
    }
}

fn spec(name: DatasetName) -> DatasetSpec {
    DatasetSpec {
        name,
        path: None,
        num_prompts: 50,
        random_input_len: 40,
        random_output_len: 16,
        random_range_ratio: 0.0,
        range_convention: RangeConvention::Vllm,
        sharegpt_output_len: None,
        seed: 7,
        ..Default::default()
    }
}

fn check_exact(ds: &Dataset, tok: &dyn Tokenize) {
    for p in &ds.prompts {
        assert_eq!(
            tok.encode(&p.text).unwrap().len(),
            p.input_len as usize,
            "{p:?}"
        );
    }
}

#[test]
fn random_prompts_have_exactly_the_drawn_lengths() {
    let tok = word_level(500);
    let mut s = spec(DatasetName::Random);
    s.random_range_ratio = 0.5;
    let ds = build(&s, &tok).unwrap();
    assert_eq!(ds.prompts.len(), 50);
    check_exact(&ds, &tok);
    let (lo, hi) = RangeConvention::Vllm.bounds(40, 0.5);
    let (olo, ohi) = RangeConvention::Vllm.bounds(16, 0.5);
    assert!(ds
        .prompts
        .iter()
        .all(|p| (lo..=hi).contains(&(p.input_len as u64))
            && (olo..=ohi).contains(&(p.output_len as u64))));
    // Lengths really vary.
    let distinct: std::collections::BTreeSet<u32> =
        ds.prompts.iter().map(|p| p.input_len).collect();
    assert!(distinct.len() > 5, "{distinct:?}");
}

#[test]
fn random_converges_when_decode_and_encode_disagree() {
    let ds = build(&spec(DatasetName::Random), &Merging).unwrap();
    assert!(ds.prompts.iter().all(|p| p.input_len == 40));
    check_exact(&ds, &Merging);
    assert!(
        ds.notes.iter().any(|n| n.contains("whole")),
        "{:?}",
        ds.notes
    );
}

#[test]
fn random_is_deterministic_for_a_seed_and_differs_across_seeds() {
    let tok = word_level(500);
    let s = spec(DatasetName::Random);
    let a = build(&s, &tok).unwrap().prompts;
    let b = build(&s, &tok).unwrap().prompts;
    assert_eq!(a, b);
    let mut s2 = s.clone();
    s2.seed = 8;
    assert_ne!(a, build(&s2, &tok).unwrap().prompts);
    // Prompts differ from each other (no cache-friendly repetition).
    assert_ne!(a[0].text, a[1].text);
}

#[test]
fn sglang_ratio_one_means_exactly_the_length() {
    let tok = word_level(100);
    let mut s = spec(DatasetName::Random);
    s.range_convention = RangeConvention::Sglang;
    s.random_range_ratio = 1.0;
    let ds = build(&s, &tok).unwrap();
    assert!(ds
        .prompts
        .iter()
        .all(|p| p.input_len == 40 && p.output_len == 16));
    s.random_range_ratio = 0.0;
    assert!(build(&s, &tok).is_err());
}

#[test]
fn fixed_repeats_one_exact_prompt() {
    let tok = word_level(100);
    let mut s = spec(DatasetName::Fixed);
    s.random_input_len = 80;
    s.num_prompts = 5;
    let ds = build(&s, &tok).unwrap();
    assert_eq!(ds.prompts.len(), 5);
    assert!(ds.prompts.iter().all(|p| *p == ds.prompts[0]));
    assert_eq!(ds.prompts[0].input_len, 80);
    assert_eq!(ds.prompts[0].output_len, 16);
    check_exact(&ds, &tok);
}

fn conv(turns: &[&str]) -> String {
    let t: Vec<String> = turns
        .iter()
        .enumerate()
        .map(|(i, v)| {
            format!(
                r#"{{"from": "{}", "value": {}}}"#,
                if i % 2 == 0 { "human" } else { "gpt" },
                serde_json::to_string(v).unwrap()
            )
        })
        .collect();
    format!(r#"{{"id": "x", "conversations": [{}]}}"#, t.join(", "))
}

fn words(n: usize) -> String {
    (0..n)
        .map(|i| format!("w{}", i % 50))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn sharegpt_reads_complete_records_of_a_cut_file_and_filters_like_vllm() {
    let tok = word_level(100);
    let records = [
        conv(&[&words(10), &words(20)]),          // ok: 10 + 20
        conv(&[&words(10)]),                      // one turn: skipped before filtering
        conv(&[&words(3), &words(20)]),           // prompt too short
        conv(&[&words(10), &words(3)]),           // output too short
        conv(&[&words(1025), &words(5)]),         // prompt too long
        conv(&[&words(1000), &words(1049)]),      // total 2049 too long
        conv(&[&words(1024), &words(1024), "x"]), // ok at the limits, three turns
    ];
    let full = format!("[\n{}\n]", records.join(",\n"));
    let cut = format!("[\n{},\n{}", records.join(",\n"), &records[0][..30]);
    let dir = tempfile::tempdir().unwrap();
    for (name, body, truncated) in [("full.json", &full, false), ("cut.json", &cut, true)] {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        let mut s = spec(DatasetName::Sharegpt);
        s.path = Some(path);
        s.num_prompts = 2;
        let ds = build(&s, &tok).unwrap();
        let mut lens: Vec<(u32, u32)> = ds
            .prompts
            .iter()
            .map(|p| (p.input_len, p.output_len))
            .collect();
        lens.sort();
        assert_eq!(lens, vec![(10, 20), (1024, 1024)]);
        check_exact(&ds, &tok);
        assert_eq!(
            ds.notes[0].contains("truncated"),
            truncated,
            "{:?}",
            ds.notes
        );
        assert!(
            ds.notes[0].contains(" 7 complete") || !truncated,
            "{:?}",
            ds.notes
        );
        // More prompts than pass the filters: oversampled, and said so.
        s.num_prompts = 5;
        let ds = build(&s, &tok).unwrap();
        assert_eq!(ds.prompts.len(), 5);
        assert!(ds.notes.iter().any(|n| n.contains("oversampled")));
        // A fixed output length replaces the reference answer and its minimum.
        s.num_prompts = 4;
        s.sharegpt_output_len = Some(2);
        let ds = build(&s, &tok).unwrap();
        let mut ins: Vec<u32> = ds.prompts.iter().map(|p| p.input_len).collect();
        ins.sort();
        assert_eq!(ins, vec![10, 10, 1000, 1024]);
        assert!(ds.prompts.iter().all(|p| p.output_len == 2));
    }
}

#[test]
fn sharegpt_shuffle_is_seeded() {
    let tok = word_level(100);
    let records: Vec<String> = (0..40).map(|i| conv(&[&words(5 + i), &words(5)])).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, format!("[{}]", records.join(","))).unwrap();
    let mut s = spec(DatasetName::Sharegpt);
    s.path = Some(path);
    s.num_prompts = 10;
    let a = build(&s, &tok).unwrap().prompts;
    assert_eq!(a, build(&s, &tok).unwrap().prompts);
    s.seed += 1;
    assert_ne!(a, build(&s, &tok).unwrap().prompts);
}

/// Counts the texts it encodes.
struct Counting(HfTokenizer, std::sync::atomic::AtomicUsize);

impl Tokenize for Counting {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.encode(text)
    }
    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        self.0.decode(ids)
    }
    fn vocab_size(&self) -> usize {
        self.0.vocab_size()
    }
    fn id(&self) -> String {
        "counting".into()
    }
}

#[test]
fn sharegpt_counts_are_reused_across_builds_of_the_same_file() {
    let tok = Counting(word_level(100), Default::default());
    let records: Vec<String> = (0..30).map(|i| conv(&[&words(5 + i), &words(6)])).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memo.json");
    std::fs::write(&path, format!("[{}]", records.join(","))).unwrap();
    let mut s = spec(DatasetName::Sharegpt);
    s.path = Some(path);
    s.num_prompts = 30;
    let first = build(&s, &tok).unwrap().prompts;
    let encoded = tok.1.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(encoded, 60, "every prompt and answer once");
    // Another seed (another order) over the same file: nothing is encoded again.
    s.seed = 99;
    let second = build(&s, &tok).unwrap().prompts;
    assert_eq!(tok.1.load(std::sync::atomic::Ordering::SeqCst), encoded);
    let key = |p: &Prompt| (p.input_len, p.output_len, p.text.clone());
    let (mut a, mut b): (Vec<_>, Vec<_>) = (
        first.iter().map(key).collect(),
        second.iter().map(key).collect(),
    );
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

#[test]
fn sharegpt_syntax_errors_name_the_line() {
    let tok = word_level(10);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    let good = conv(&["a", "b"]);
    std::fs::write(&path, format!("[\n{good},\n{good}\n{{\"oops\": }}]")).unwrap();
    let mut s = spec(DatasetName::Sharegpt);
    s.path = Some(path);
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(e.contains("bad.json:4"), "{e}");
    std::fs::write(s.path.as_ref().unwrap(), "{}").unwrap();
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(e.contains("bad.json:1") && e.contains("array"), "{e}");
}

#[test]
fn jsonl_reads_prompts_and_names_file_and_line_on_errors() {
    let tok = word_level(100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.jsonl");
    std::fs::write(
        &path,
        "{\"prompt\": \"w1 w2 w3\", \"output_len\": 7}\n\n{\"prompt\": \"w4\", \"output_len\": 2, \"extra\": 1}\n",
    )
    .unwrap();
    let mut s = spec(DatasetName::Jsonl);
    s.path = Some(path.clone());
    s.num_prompts = 3;
    let ds = build(&s, &tok).unwrap();
    let got: Vec<(u32, u32)> = ds
        .prompts
        .iter()
        .map(|p| (p.input_len, p.output_len))
        .collect();
    assert_eq!(got, vec![(3, 7), (1, 2), (3, 7)]);
    assert!(ds.notes.iter().any(|n| n.contains("repeated")));
    // --no-oversample: the file's two prompts, not three.
    s.no_oversample = true;
    assert_eq!(build(&s, &tok).unwrap().prompts.len(), 2);
    s.no_oversample = false;

    std::fs::write(
        &path,
        "{\"prompt\": \"w1\", \"output_len\": 1}\n{\"prompt\": \"w1\"}\n",
    )
    .unwrap();
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(e.contains("p.jsonl:2") && e.contains("output_len"), "{e}");
    std::fs::write(&path, "not json\n").unwrap();
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(e.contains("p.jsonl:1"), "{e}");
    s.path = Some(dir.path().join("missing.jsonl"));
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(e.contains("missing.jsonl"), "{e}");
    s.path = None;
    assert!(build(&s, &tok)
        .unwrap_err()
        .to_string()
        .contains("--dataset-path"));
}

#[test]
fn vllm_filter_boundaries() {
    assert!(sharegpt_valid(4, 4, false));
    assert!(!sharegpt_valid(3, 4, false));
    assert!(!sharegpt_valid(4, 3, false));
    assert!(sharegpt_valid(4, 1, true));
    assert!(sharegpt_valid(1024, 1024, false));
    assert!(!sharegpt_valid(1025, 4, false));
    assert!(!sharegpt_valid(1000, 1049, false));
}

#[test]
fn spec_bench_reads_first_turns_of_one_category_and_every_prompt_on_minus_one() {
    let tok = word_level(100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("question.jsonl");
    let q = |c: &str, t: &str| {
        format!("{{\"question_id\": 1, \"category\": \"{c}\", \"turns\": [\"{t}\", \"w9\"]}}\n")
    };
    let text = [q("qa", "w1 w2"), q("math", "w3"), q("qa", "w4 w5 w6")].concat();
    std::fs::write(&path, text + "\n{\"category\": \"qa\"}\n").unwrap();
    let mut s = spec(DatasetName::SpecBench);
    s.path = Some(path.clone());
    s.num_prompts = 0;
    s.spec_bench_category = Some("qa".into());
    // The fourth line has no turns: named with its line.
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(e.contains("question.jsonl:5") && e.contains("turns"), "{e}");
    std::fs::write(
        &path,
        [q("qa", "w1 w2"), q("math", "w3"), q("qa", "w4 w5 w6")].concat(),
    )
    .unwrap();
    let ds = build(&s, &tok).unwrap();
    let got: Vec<(&str, u32, u32)> = ds
        .prompts
        .iter()
        .map(|p| (p.text.as_str(), p.input_len, p.output_len))
        .collect();
    assert_eq!(got, [("w1 w2", 2, 256), ("w4 w5 w6", 3, 256)]);
    // An unknown category lists the file's.
    s.spec_bench_category = Some("coding".into());
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(
        e.contains("category `coding`") && e.contains("math, qa"),
        "{e}"
    );
    // -1 is refused where it means nothing.
    let mut r = spec(DatasetName::Random);
    r.num_prompts = 0;
    assert!(build(&r, &tok)
        .unwrap_err()
        .to_string()
        .contains("custom and spec_bench"));
}

#[test]
fn burstgpt_keeps_gpt4_rows_in_a_seeded_order_and_names_bad_cells() {
    let tok = word_level(100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("burst.csv");
    let head = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
    let rows = "1,GPT-4,5,3,8,Conversation log\n2,ChatGPT,9,9,18,API log\n\
                3,GPT-4,7,0,7,Conversation log\n4,GPT-4,4,2,6,API log\n";
    std::fs::write(&path, format!("{head}{rows}")).unwrap();
    let mut s = spec(DatasetName::Burstgpt);
    s.path = Some(path.clone());
    s.num_prompts = 2;
    let ds = build(&s, &tok).unwrap();
    let mut lens: Vec<(u32, u32)> = ds
        .prompts
        .iter()
        .map(|p| (p.input_len, p.output_len))
        .collect();
    check_exact(&ds, &tok);
    lens.sort_unstable();
    // The ChatGPT row and the GPT-4 row without a response are left out.
    assert_eq!(lens, [(4, 2), (5, 3)]);
    // --no-oversample: three asked, two rows, two run.
    s.num_prompts = 3;
    s.no_oversample = true;
    let ds = build(&s, &tok).unwrap();
    assert_eq!(ds.prompts.len(), 2);
    assert!(
        ds.notes.iter().any(|n| n.contains("--no-oversample")),
        "{:?}",
        ds.notes
    );
    std::fs::write(&path, format!("{head}5,GPT-4,many,2,0,x\n")).unwrap();
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(
        e.contains("burst.csv:2") && e.contains("Request tokens"),
        "{e}"
    );
    std::fs::write(&path, "Timestamp,Model\n1,GPT-4\n").unwrap();
    let e = build(&s, &tok).unwrap_err().to_string();
    assert!(e.contains("no `Request tokens` column"), "{e}");
}
