//! What real engines do that perfgate got wrong against vLLM (issue 22), on the fake server with
//! the knobs that mimic them: vLLM's and SGLang's tokenizer endpoints (no vocabulary size in
//! `/v1/models`), a chat template that adds prompt tokens, an output shortened silently when
//! prompt + max_tokens exceeds the context, and the peak-concurrency figures under a cap.

use perfgate::fakeserver::{FakeApi, FakeConfig, FAKE_VOCAB};

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
