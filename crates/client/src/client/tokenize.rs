//! The engine's own tokenizer through its `/tokenize` and `/detokenize` endpoints (llama.cpp's,
//! vLLM's or SGLang's dialect), and the one loader of a `--tokenizer` value (`server`, a
//! `tokenizer.json`, or a directory holding one). The server tokenizer does its HTTP on a
//! private thread with its own small tokio runtime, so it can be called from anywhere: plain
//! threads, or code that itself runs inside a tokio runtime (the calling thread only blocks on a
//! channel, which tokio allows).

use std::path::Path;
use std::time::Duration;

use crate::tokenizer::{HfTokenizer, Tokenize, TokenizerError};

/// Load a tokenizer from a `--tokenizer` value: `server` (the engine at `base_url`), a
/// `tokenizer.json` file, or a directory holding one.
pub fn load(spec: &str, base_url: &str) -> Result<Box<dyn Tokenize>, TokenizerError> {
    if spec.trim().eq_ignore_ascii_case("server") {
        return Ok(Box::new(ServerTokenizer::connect(base_url)?));
    }
    Ok(Box::new(HfTokenizer::from_path(Path::new(spec))?))
}

/// How many requests the server tokenizer keeps in flight for a batch. Small: llama.cpp serves
/// HTTP from a small thread pool (about n_parallel + 2 threads) that the benchmark needs too.
const SERVER_CONCURRENCY: usize = 2;
/// Per-request timeout of the server tokenizer.
const SERVER_TIMEOUT: Duration = Duration::from_secs(30);

/// The engine's own tokenizer, through its `POST /tokenize` and `POST /detokenize`, in either
/// dialect:
/// - llama.cpp's: `{"content": ..}` → `{"tokens": [..]}`, `{"tokens": [..]}` → `{"content": ..}`;
///   the vocabulary size is `data[].meta.n_vocab` of `GET /v1/models`.
/// - vLLM's and SGLang's: `{"prompt": .., "add_special_tokens": false}` → `{"tokens": [..], ..}`,
///   `{"tokens": [..]}` → `{"prompt": ..}` (vLLM) or `{"text": ..}` (SGLang). Their
///   `/v1/models` has no vocabulary size, so it is searched for with `/detokenize` (see
///   `probe_vocab`).
pub struct ServerTokenizer {
    base_url: String,
    client: reqwest::Client,
    rt: Option<tokio::runtime::Runtime>,
    vocab_size: usize,
    dialect: Dialect,
}

/// Which request and answer fields the server's tokenizer endpoints use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// llama.cpp: `content`.
    LlamaCpp,
    /// vLLM, SGLang: `prompt` in, `prompt` or `text` out.
    Prompt,
}

impl ServerTokenizer {
    /// Connect to the engine at `base_url` (e.g. `http://127.0.0.1:8000`) and learn its
    /// vocabulary size.
    pub fn connect(base_url: &str) -> Result<Self, TokenizerError> {
        let base_url = base_url.trim_end_matches('/').to_string();
        let err = |msg: String| TokenizerError::Server {
            url: base_url.clone(),
            msg,
        };
        // No idle keep-alive connections: each would pin one of the engine's HTTP threads for as
        // long as this tokenizer lives, and the engine then drops the benchmark's connections.
        let client = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .timeout(SERVER_TIMEOUT)
            .build()
            .map_err(|e| err(e.to_string()))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| err(format!("cannot start a runtime: {e}")))?;
        let mut tok = Self {
            base_url: base_url.clone(),
            client,
            rt: Some(rt),
            vocab_size: 0,
            dialect: Dialect::LlamaCpp,
        };
        let models: serde_json::Value = tok.block_on({
            let (client, url) = (tok.client.clone(), format!("{base_url}/v1/models"));
            async move { get_json(&client, &url).await }
        })?;
        let n_vocab = models.get("data").and_then(|d| d.as_array()).and_then(|d| {
            d.iter()
                .find_map(|m| m.pointer("/meta/n_vocab").and_then(|v| v.as_u64()))
        });
        match n_vocab {
            Some(n) => tok.vocab_size = n as usize,
            None => {
                tok.dialect = Dialect::Prompt;
                tok.vocab_size = tok.block_on({
                    let (client, base) = (tok.client.clone(), base_url.clone());
                    async move { probe_vocab(&client, &base).await }
                })?;
                if tok.vocab_size == 0 {
                    return Err(err(
                        "GET /v1/models has no data[].meta.n_vocab, and \
                         POST /detokenize decodes no token id: cannot learn the vocabulary size"
                            .into(),
                    ));
                }
            }
        }
        Ok(tok)
    }

    /// Run `fut` to completion on the private runtime, from a helper thread, so the caller
    /// may itself be inside a tokio runtime.
    fn block_on<T: Send>(
        &self,
        fut: impl std::future::Future<Output = Result<T, String>> + Send,
    ) -> Result<T, TokenizerError> {
        let rt = self.rt.as_ref().expect("runtime present until drop");
        let out = std::thread::scope(|s| {
            s.spawn(|| rt.block_on(fut))
                .join()
                .unwrap_or_else(|_| Err("tokenizer thread panicked".to_string()))
        });
        out.map_err(|msg| TokenizerError::Server {
            url: self.base_url.clone(),
            msg,
        })
    }

    fn run_batch<I, O, F, Fut>(&self, inputs: Vec<I>, f: F) -> Result<Vec<O>, TokenizerError>
    where
        I: Send,
        O: Send,
        F: Fn(reqwest::Client, String, I) -> Fut + Send + Sync,
        Fut: std::future::Future<Output = Result<O, String>> + Send,
    {
        use futures_util::stream::{self, StreamExt, TryStreamExt};
        let (client, base) = (self.client.clone(), self.base_url.clone());
        self.block_on(async move {
            stream::iter(inputs)
                .map(|i| f(client.clone(), base.clone(), i))
                .buffered(SERVER_CONCURRENCY)
                .try_collect()
                .await
        })
    }
}

impl Drop for ServerTokenizer {
    fn drop(&mut self) {
        // Dropping a runtime inside async code panics; shutting it down in the background does not.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

async fn get_json(client: &reqwest::Client, url: &str) -> Result<serde_json::Value, String> {
    let resp = client.get(url).send().await.map_err(|e| e.to_string())?;
    read_json(resp, url).await
}

async fn post_json(
    client: &reqwest::Client,
    url: &str,
    body: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let resp = client
        .post(url)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    read_json(resp, url).await
}

async fn read_json(resp: reqwest::Response, url: &str) -> Result<serde_json::Value, String> {
    let status = resp.status();
    let text = super::body::text_limited(resp, super::body::LARGE_BODY)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if !status.is_success() {
        let snippet: String = text.chars().take(200).collect();
        return Err(format!("{url}: HTTP {status}: {snippet}"));
    }
    serde_json::from_str(&text).map_err(|e| format!("{url}: invalid JSON: {e}"))
}

/// The id bound [`probe_vocab`] searches up to (2^22: above every released vocabulary).
const PROBE_LIMIT: u64 = 1 << 22;

/// Does the server decode `id` to some text? An error or empty text: no (vLLM and SGLang decode
/// an id past the vocabulary to nothing).
async fn decodes(client: &reqwest::Client, base: &str, id: u64) -> Result<bool, String> {
    let url = format!("{base}/detokenize");
    let resp = client
        .post(&url)
        .json(&serde_json::json!({ "tokens": [id] }))
        .send()
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    if resp.status().is_client_error() {
        return Ok(false);
    }
    let v = read_json(resp, &url).await?;
    Ok(detok_text(&v).is_some_and(|t| !t.is_empty()))
}

/// The vocabulary size of a server whose `/v1/models` does not say (vLLM, SGLang): the smallest
/// id from which `/detokenize` yields nothing, found by doubling from 256 and then bisecting
/// (about 30 requests). Ids past the vocabulary decode to nothing, so the answer never exceeds
/// the true size; an id inside the vocabulary that decodes to nothing can only make it smaller,
/// and the dataset only draws ids below it.
async fn probe_vocab(client: &reqwest::Client, base: &str) -> Result<usize, String> {
    if !decodes(client, base, 0).await? && !decodes(client, base, 1).await? {
        return Ok(0);
    }
    // Invariant: `lo` decodes, `hi` does not (or is the limit).
    let mut lo = 1u64;
    let mut hi = 256u64;
    while hi < PROBE_LIMIT && decodes(client, base, hi).await? {
        lo = hi;
        hi *= 2;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if decodes(client, base, mid).await? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi as usize)
}

/// The text of a `/detokenize` answer: `content` (llama.cpp), `prompt` (vLLM), `text` (SGLang).
fn detok_text(v: &serde_json::Value) -> Option<&str> {
    ["content", "prompt", "text"]
        .iter()
        .find_map(|k| v.get(*k).and_then(|c| c.as_str()))
}

async fn tokenize(
    client: reqwest::Client,
    base: String,
    dialect: Dialect,
    text: String,
) -> Result<Vec<u32>, String> {
    let url = format!("{base}/tokenize");
    let body = match dialect {
        Dialect::LlamaCpp => serde_json::json!({ "content": text, "add_special": false }),
        Dialect::Prompt => serde_json::json!({ "prompt": text, "add_special_tokens": false }),
    };
    let v = post_json(&client, &url, body).await?;
    v.get("tokens")
        .and_then(|t| t.as_array())
        .and_then(|t| {
            t.iter()
                .map(|x| x.as_u64().and_then(|x| u32::try_from(x).ok()))
                .collect::<Option<Vec<u32>>>()
        })
        .ok_or_else(|| format!("{url}: answer has no `tokens` array of ids"))
}

async fn detokenize(
    client: reqwest::Client,
    base: String,
    ids: Vec<u32>,
) -> Result<String, String> {
    let url = format!("{base}/detokenize");
    let v = post_json(&client, &url, serde_json::json!({ "tokens": ids })).await?;
    detok_text(&v)
        .map(str::to_owned)
        .ok_or_else(|| format!("{url}: answer has no `content`, `prompt` or `text` string"))
}

impl Tokenize for ServerTokenizer {
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let fut = tokenize(
            self.client.clone(),
            self.base_url.clone(),
            self.dialect,
            text.to_owned(),
        );
        self.block_on(fut)
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let fut = detokenize(self.client.clone(), self.base_url.clone(), ids.to_vec());
        self.block_on(fut)
    }

    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    fn id(&self) -> String {
        "server".to_string()
    }

    fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, TokenizerError> {
        let owned: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        let d = self.dialect;
        self.run_batch(owned, move |c, b, t| tokenize(c, b, d, t))
    }

    fn decode_batch(&self, seqs: &[&[u32]]) -> Result<Vec<String>, TokenizerError> {
        let owned: Vec<Vec<u32>> = seqs.iter().map(|s| s.to_vec()).collect();
        self.run_batch(owned, detokenize)
    }

    fn is_remote(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_server_is_an_error_not_a_hang() {
        // Port 1 on loopback refuses connections at once.
        let e = load("server", "http://127.0.0.1:1").err().unwrap();
        assert!(e.to_string().contains("127.0.0.1:1"), "{e}");
    }
}
