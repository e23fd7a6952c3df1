//! How to talk to the server: [`ClientConfig`] and the checks of the flags that fill it.

use std::time::Duration;

/// How to talk to the server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// e.g. `http://127.0.0.1:8000` (a trailing `/` is fine).
    pub base_url: String,
    /// `/v1/completions` or `/v1/chat/completions`.
    pub endpoint: String,
    /// The `model` field of the requests (`--served-model-name`, else `--model`).
    pub model: String,
    /// `temperature` of every request; `None`: not sent (the server's default, as vLLM 0.33's
    /// client does). `perfgate check`/`ab` send 0 (greedy).
    pub temperature: Option<f64>,
    pub ignore_eos: bool,
    /// Per-request deadline, from the send time. `None`: wait forever (like vLLM's 6 h).
    pub request_timeout: Option<Duration>,
    /// Extra JSON fields merged into every request body (e.g. `cache_prompt: false`).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Extra HTTP headers of every request (`--header KEY=VALUE`), checked by [`parse_header`].
    pub headers: Vec<(String, String)>,
    /// Each request's `x-request-id` header is this prefix and the request's index (vLLM's
    /// `--request-id-prefix`); `None`: no header.
    pub request_id_prefix: Option<String>,
    /// Reuse connections between requests and open them before the run, so TCP set-up stays out
    /// of TTFT (on by default). Turn it off for servers that announce keep-alive yet close the
    /// connection after a streamed response (llama.cpp's): a request sent on such a connection in
    /// that instant fails although the server never saw it.
    pub keep_alive: bool,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            base_url: "http://127.0.0.1:8000".into(),
            endpoint: "/v1/completions".into(),
            model: String::new(),
            temperature: Some(0.0),
            ignore_eos: false,
            request_timeout: None,
            extra_body: serde_json::Map::new(),
            headers: Vec::new(),
            request_id_prefix: None,
            keep_alive: true,
        }
    }
}

impl ClientConfig {
    /// True for the chat API (`…/chat/completions`).
    pub fn is_chat(&self) -> bool {
        self.endpoint
            .trim_end_matches('/')
            .ends_with("chat/completions")
    }

    /// The full URL of the endpoint.
    pub fn url(&self) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            self.endpoint.trim_start_matches('/')
        )
    }
}

/// The APIs perfgate measures (streaming completions). Others (`/v1/responses`,
/// `/v1/embeddings`, …) are refused up front instead of failing every request.
pub const ENDPOINTS: [&str; 2] = ["/v1/completions", "/v1/chat/completions"];

/// Check `--endpoint`: one of [`ENDPOINTS`], possibly under a path prefix
/// (`/proxy/v1/completions`).
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    let e = endpoint.trim_end_matches('/');
    if ENDPOINTS.iter().any(|ok| e.ends_with(ok)) {
        Ok(())
    } else {
        Err(format!(
            "--endpoint `{endpoint}` is not supported: perfgate measures the streaming \
             completions APIs ({})",
            ENDPOINTS.join(", ")
        ))
    }
}

/// One `--header KEY=VALUE`: a header name of token characters, a value without line breaks
/// (so no header can be smuggled into the request head).
pub fn parse_header(kv: &str) -> Result<(String, String), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("--header `{kv}`: expected KEY=VALUE"))?;
    let k = k.trim();
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if k.is_empty() || !k.chars().all(token) {
        return Err(format!("--header `{kv}`: `{k}` is not a valid header name"));
    }
    if v.contains(['\r', '\n', '\0']) {
        return Err(format!(
            "--header `{k}`: the value may not contain line breaks"
        ));
    }
    if ["host", "content-length", "transfer-encoding", "connection"]
        .contains(&k.to_ascii_lowercase().as_str())
    {
        return Err(format!("--header `{k}`: perfgate sets this header itself"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}
