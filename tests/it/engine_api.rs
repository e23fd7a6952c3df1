//! What real engines do that perfgate got wrong against vLLM (issue 22), on the fake server with
//! the knobs that mimic them: vLLM's and SGLang's tokenizer endpoints (no vocabulary size in
//! `/v1/models`), a chat template that adds prompt tokens, an output shortened silently when
//! prompt + max_tokens exceeds the context, and the peak-concurrency figures under a cap.

use perfgate::client::load::{self, NoProgress};
use perfgate::metrics::Metric;
use perfgate::report::output::result_block;
use perfgate_fakeserver::{FakeApi, FakeConfig, FAKE_VOCAB};

use crate::support::*;

#[test]
fn server_tokenizer_speaks_llamacpp_vllm_and_sglang() {
    for api in [FakeApi::LlamaCpp, FakeApi::Vllm, FakeApi::Sglang] {
        let server = fake(FakeConfig {
            api,
            ..Default::default()
        });
        let tok = perfgate::client::tokenize::load("server", &server.url())
            .unwrap_or_else(|e| panic!("{api:?}: {e}"));
        // vLLM and SGLang do not say their vocabulary size: it is found with /detokenize.
        assert_eq!(tok.vocab_size(), FAKE_VOCAB as usize, "{api:?}");
        let ids = tok.encode("alpha beta gamma").unwrap();
        assert_eq!(ids.len(), 3, "{api:?}");
        assert_eq!(tok.decode(&ids).unwrap(), "tok tok tok", "{api:?}");
        let many = tok.decode_batch(&[&ids[..1], &ids[..2]]).unwrap();
        assert_eq!(many, ["tok", "tok tok"], "{api:?}");
        drop(tok);
    }
}

#[test]
fn input_tokens_are_the_servers_count_and_the_prompts_count_is_kept() {
    let server = fake(FakeConfig {
        ttft: ms(2),
        itl: ms(1),
        chat_template_tokens: 25,
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.client.endpoint = "/v1/chat/completions".into();
    let chat = block_on(30, load::run_scenario(&cfg, prompts(8, 4, 6), &NoProgress)).unwrap();
    assert_eq!((chat.completed, chat.failed), (8, 0));
    // The server processed the template too: usage.prompt_tokens is the truth.
    assert_eq!(chat.total_input_tokens, 8 * (4 + 25));
    assert_eq!(chat.total_input_tokens_client, Some(8 * 4));
    let block = result_block(&chat, &[Metric::Ttft], &[99.0]);
    assert!(block.contains("Total input tokens:"), "{block}");
    assert!(
        block.contains("note: input tokens: 232 counted by the server"),
        "{block}"
    );
    assert!(block.contains("32 in the prompts"), "{block}");

    // Completions: the two counts agree, and nothing is noted.
    let cfg = config(&server.url());
    let comp = block_on(30, load::run_scenario(&cfg, prompts(8, 4, 6), &NoProgress)).unwrap();
    assert_eq!(comp.total_input_tokens, 32);
    assert_eq!(comp.total_input_tokens_client, Some(32));
    let block = result_block(&comp, &[Metric::Ttft], &[99.0]);
    assert!(!block.contains("note: input tokens"), "{block}");
}

#[test]
fn an_output_shortened_by_the_context_is_a_failure_not_a_success() {
    // A 20-token context: 8 prompt tokens + 16 asked for do not fit; vLLM gives 12, silently.
    let server = fake(FakeConfig {
        ttft: ms(2),
        itl: ms(1),
        api: FakeApi::Vllm,
        max_model_len: Some(20),
        ..Default::default()
    });
    let cfg = config(&server.url());
    assert!(cfg.client.ignore_eos);
    // Two prompts of 8 tokens (shortened) and two of 4 (they fit: 4 + 16 = 20).
    let mut mixed = prompts(2, 8, 16);
    mixed.extend(prompts(2, 4, 16));
    let r = block_on(30, load::run_scenario(&cfg, mixed, &NoProgress)).unwrap();
    assert_eq!((r.completed, r.failed), (2, 2), "{:?}", r.errors);
    assert_eq!(r.total_output_tokens, 2 * 16);
    let e = &r.errors["short_output"];
    assert_eq!(e.count, 2);
    assert!(
        e.first_message
            .contains("asked for 16 tokens with ignore_eos, the server generated 12"),
        "{}",
        e.first_message
    );
    let block = result_block(&r, &[Metric::Ttft], &[99.0]);
    assert!(block.contains("short_output:"), "{block}");
    assert!(block.contains("exceeds its context length"), "{block}");

    // When every output is shortened, the run fails as a whole, saying why.
    let all = block_on(30, load::run_scenario(&cfg, prompts(4, 8, 16), &NoProgress));
    let Err(e) = all else {
        panic!("every request was shortened, yet the run succeeded")
    };
    let e = e.to_string();
    assert!(e.contains("short_output ×4"), "{e}");

    // Without ignore_eos a short output is the model's choice to stop: not a failure.
    let mut free = config(&server.url());
    free.client.ignore_eos = false;
    let r = block_on(
        30,
        load::run_scenario(&free, prompts(4, 8, 16), &NoProgress),
    )
    .unwrap();
    assert_eq!((r.completed, r.failed), (4, 0), "{:?}", r.errors);
    assert_eq!(r.total_output_tokens, 4 * 12);
}

#[test]
fn peak_in_flight_stays_under_the_cap_while_vllms_per_second_peak_does_not() {
    let server = fake(FakeConfig {
        ttft: ms(5),
        itl: ms(5),
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.params.max_concurrency = Some(4);
    // 24 requests of ~40 ms, 4 at a time: about 0.25 s in all, inside one or two seconds.
    let r = block_on(30, load::run_scenario(&cfg, prompts(24, 4, 8), &NoProgress)).unwrap();
    assert_eq!((r.completed, r.failed), (24, 0));
    assert_eq!(r.max_in_flight_requests, Some(4));
    assert_eq!(server.truth().max_in_flight, 4);
    // vLLM's figure counts every request active in a 1 s bucket: far above the cap.
    let per_second = r.max_concurrent_requests.unwrap();
    assert!(per_second > 4, "{per_second}");
    let block = result_block(&r, &[Metric::Ttft], &[99.0]);
    let line = |label: &str| {
        block
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no `{label}` in\n{block}"))
            .to_string()
    };
    assert!(
        line("Peak requests in flight:").trim_end().ends_with(" 4"),
        "{block}"
    );
    assert!(
        line("Peak concurrent requests (1 s buckets):").contains(&format!("{per_second}.00")),
        "{block}"
    );
    // The bare vLLM label, which read like a broken cap, is gone.
    assert!(
        !block
            .lines()
            .any(|l| l.starts_with("Peak concurrent requests:")),
        "{block}"
    );
}
