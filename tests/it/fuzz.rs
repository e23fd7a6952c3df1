//! The fuzz targets' bodies (`fuzz/bodies.rs`) built into the test command and run on seed inputs
//! and random bytes: a target that stops compiling, or an input that makes one panic, fails here
//! without libFuzzer or a nightly toolchain (`cargo fuzz run <target>` explores further).

#[path = "../../fuzz/bodies.rs"]
mod bodies;

use perfgate::client::sse::decode_all;
use perfgate::import::{import_text, ImportOptions};
use proptest::prelude::*;
use std::path::Path;

const SSE: &[u8] = b"data: {\"choices\":[{\"text\":\"a\"}]}\n\n: keep-alive\r\n\r\n\
data: {\"choices\":[{\"text\":\"b\"}]}\r\n\r\ndata: [DONE]\n\n";

const CHUNKS: [&[u8]; 3] = [
    br#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"hi","logprobs":null,"finish_reason":null}],"usage":null}"#,
    br#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
    br#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#,
];

const RESPONSES: [&[u8]; 2] = [
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n\
5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello world",
];

/// The text files the importers and the baseline reader meet in real use.
fn import_seeds() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["tests/data/seeds", "tests/data/vllm", "baselines"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    let corpus = root.join("tests/data/cpu-llamacpp/s1-same-l1.jsonl");
    out.push((
        corpus.display().to_string(),
        std::fs::read_to_string(&corpus).unwrap(),
    ));
    out
}

/// Every split step a fuzzer's first byte can pick, on one input.
fn every_step(body: fn(&[u8]), input: &[u8]) {
    for step in [1u8, 2, 3, 7, 64, 255] {
        let mut data = vec![step];
        data.extend_from_slice(input);
        body(&data);
    }
}

#[test]
fn the_seeds_are_what_the_targets_meant_to_read() {
    // The seeds exercise the happy paths, not only the refusals.
    assert_eq!(decode_all([SSE]).len(), 3);
    for c in CHUNKS {
        assert!(
            perfgate::client::chunk::Stream::new().parse(c).is_ok(),
            "{}",
            String::from_utf8_lossy(c)
        );
    }
    for r in RESPONSES {
        assert!(matches!(perfgate::client::h1::parse_head(r), Ok(Some(_))));
    }
    let opts = ImportOptions {
        model: Some("m".into()),
        num_prompts: Some(10),
        ..Default::default()
    };
    let seeds = import_seeds();
    let read = seeds
        .iter()
        .filter(|(n, t)| n.ends_with(".txt") && import_text(t, n, &opts).is_ok())
        .count();
    assert_eq!(read, 3, "the three seed logs import");
}

#[test]
fn every_target_takes_its_seeds_whole_split_and_cut_short() {
    every_step(bodies::sse, SSE);
    for c in CHUNKS {
        bodies::chunk(c);
        bodies::chunk(&c[..c.len() / 2]);
    }
    for r in RESPONSES {
        every_step(bodies::h1, r);
        every_step(bodies::h1, &r[..r.len() - 3]);
    }
    for (_, text) in import_seeds() {
        bodies::import(text.as_bytes());
        // Cut at a few places (on a char boundary): a truncated upload.
        for cut in [text.len() / 3, text.len() / 2, text.len() * 9 / 10] {
            let cut = (0..=cut).rev().find(|&i| text.is_char_boundary(i)).unwrap();
            bodies::import(&text.as_bytes()[..cut]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic_a_target(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        bodies::sse(&data);
        bodies::chunk(&data);
        bodies::h1(&data);
        bodies::import(&data);
    }

    #[test]
    fn a_seed_with_one_byte_changed_never_panics_a_target(i in any::<prop::sample::Index>(), b in any::<u8>()) {
        let mut sse = SSE.to_vec();
        sse[i.index(SSE.len())] = b;
        every_step(bodies::sse, &sse);
        let mut r = RESPONSES[0].to_vec();
        let at = i.index(r.len());
        r[at] = b;
        every_step(bodies::h1, &r);
        let mut c = CHUNKS[0].to_vec();
        let at = i.index(c.len());
        c[at] = b;
        bodies::chunk(&c);
    }
}
