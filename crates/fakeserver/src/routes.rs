//! One keep-alive connection, request after request: `/health`, `/v1/models`, `/metrics`,
//! `/tokenize`, `/detokenize`, and the two streaming endpoints (`/v1/completions`,
//! `/v1/chat/completions`), which record the request ([`SeenRequest`]), pick its fault and hand it
//! to the stream. [`Shared`] is what every connection reads and writes.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};
use tokio::net::TcpStream;

use super::config::{FakeApi, FakeConfig, Fault, FAKE_VOCAB};
use super::http::{read_request, respond, Request};
use super::sse::Events;
use super::stream::{stream, Job};
use super::truth::Recorder;

/// A generation request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenRequest {
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`null` when it was not JSON).
    pub body: Value,
}

/// What the connections share.
pub(super) struct Shared {
    pub cfg: FakeConfig,
    /// [`FakeConfig::tokenizer_json`], loaded.
    pub tok: Option<tokenizers::Tokenizer>,
    pub truth: Recorder,
    /// The last generation request (for tests of what a client sends).
    pub last: Mutex<Option<SeenRequest>>,
}

/// Serve requests on `sock` until the client closes it, a stream ends it or it breaks.
pub(super) async fn serve_conn(mut sock: TcpStream, shared: Arc<Shared>) {
    let mut buf = Vec::with_capacity(8192);
    // The last endpoint's and model's events, rendered once for the connection's requests.
    let mut events = None;
    loop {
        let req = match read_request(&mut sock, &mut buf).await {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => {
                let _ = respond(
                    &mut sock,
                    "400 Bad Request",
                    "text/plain",
                    e.to_string().as_bytes(),
                )
                .await;
                return;
            }
        };
        let close = req.close;
        match handle(&mut sock, &shared, &mut events, req).await {
            Ok(true) if !close => {}
            _ => return,
        }
    }
}

const JSON: &str = "application/json";

/// `/tokenize`'s ids for `text`: the configured tokenizer's, else one per word.
fn token_ids(shared: &Shared, text: &str) -> Vec<u32> {
    match &shared.tok {
        Some(t) => t
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default(),
        None => text.split_whitespace().map(word_id).collect(),
    }
}

fn error(message: impl std::fmt::Display) -> Vec<u8> {
    json!({"error": {"message": message.to_string()}})
        .to_string()
        .into_bytes()
}

/// Answer one request; `Ok(false)` when the connection must close.
async fn handle(
    sock: &mut TcpStream,
    shared: &Shared,
    events: &mut Option<Events>,
    req: Request,
) -> io::Result<bool> {
    let parsed = || serde_json::from_slice::<Value>(&req.body);
    let cfg = &shared.cfg;
    let (status, content_type, body) = match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/health") => (
            "200 OK",
            JSON,
            json!({"status": "ok"}).to_string().into_bytes(),
        ),
        ("GET", "/v1/models") => {
            let model = match cfg.api {
                FakeApi::LlamaCpp => {
                    json!({"id": cfg.model, "object": "model", "owned_by": "perfgate", "meta": {"n_vocab": FAKE_VOCAB}})
                }
                FakeApi::Vllm | FakeApi::Sglang => {
                    json!({"id": cfg.model, "object": "model", "owned_by": "perfgate", "max_model_len": cfg.max_model_len.unwrap_or(4096)})
                }
            };
            let mut data = vec![model];
            // vLLM lists each LoRA adapter with its base model as `parent`.
            for lora in &cfg.lora_modules {
                data.push(json!({"id": lora, "object": "model", "owned_by": "vllm", "root": lora, "parent": cfg.model}));
            }
            let body = json!({"object": "list", "data": data});
            ("200 OK", JSON, body.to_string().into_bytes())
        }
        ("GET", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4",
            shared.truth.metrics_text().into_bytes(),
        ),
        ("POST", "/tokenize") => match (parsed(), cfg.api) {
            (Ok(v), FakeApi::LlamaCpp) => {
                let text = v.get("content").and_then(|c| c.as_str()).unwrap_or("");
                let ids = token_ids(shared, text);
                let body = json!({"tokens": ids});
                ("200 OK", JSON, body.to_string().into_bytes())
            }
            // vLLM and SGLang validate the body: the text is `prompt`, required.
            (Ok(v), _) => match v.get("prompt").and_then(|c| c.as_str()) {
                Some(text) => {
                    let ids = token_ids(shared, text);
                    let body = json!({"count": ids.len(), "max_model_len": cfg.max_model_len.unwrap_or(4096), "tokens": ids, "token_strs": null});
                    ("200 OK", JSON, body.to_string().into_bytes())
                }
                None => ("400 Bad Request", JSON, error("field required: prompt")),
            },
            (Err(e), _) => ("400 Bad Request", JSON, error(e)),
        },
        ("POST", "/detokenize") => match parsed() {
            Ok(v) => {
                // An id past the vocabulary decodes to nothing (as vLLM's tokenizer does).
                let n = v.get("tokens").and_then(|t| t.as_array()).map_or(0, |a| {
                    a.iter()
                        .filter(|i| i.as_u64().is_some_and(|i| i < u64::from(FAKE_VOCAB)))
                        .count()
                });
                let text = vec!["tok"; n].join(" ");
                let body = match cfg.api {
                    FakeApi::LlamaCpp => json!({"content": text}),
                    FakeApi::Vllm => json!({"prompt": text}),
                    FakeApi::Sglang => json!({"text": text}),
                };
                ("200 OK", JSON, body.to_string().into_bytes())
            }
            Err(e) => ("400 Bad Request", JSON, error(e)),
        },
        ("POST", path) if path.ends_with("completions") => {
            let v = parsed();
            *shared.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(SeenRequest {
                path: req.path.clone(),
                headers: req.headers,
                body: v.as_ref().map_or(Value::Null, Value::clone),
            });
            match (path, v) {
                (_, Err(e)) => (
                    "400 Bad Request",
                    JSON,
                    error(format!("invalid JSON body: {e}")),
                ),
                ("/v1/completions", Ok(v)) => {
                    return generate(sock, shared, events, req.arrived, v, false).await
                }
                ("/v1/chat/completions", Ok(v)) => {
                    return generate(sock, shared, events, req.arrived, v, true).await
                }
                _ => ("404 Not Found", JSON, error(format!("no route {path}"))),
            }
        }
        (_, path) => ("404 Not Found", JSON, error(format!("no route {path}"))),
    };
    respond(sock, status, content_type, &body).await?;
    Ok(true)
}

/// The prompt's words: the completion's `prompt`, or every chat message's content (a
/// conversation's history counts as prompt, as a server's chat template makes it).
fn prompt_words(v: &Value, chat: bool) -> u64 {
    let words = |c: Option<&Value>| {
        c.and_then(|c| c.as_str())
            .map_or(0, |s| s.split_whitespace().count()) as u64
    };
    if !chat {
        return words(v.get("prompt"));
    }
    v.get("messages")
        .and_then(|m| m.as_array())
        .map_or(0, |all| all.iter().map(|m| words(m.get("content"))).sum())
}

/// The fake's tokenizer: one token per whitespace-separated word, id from the word's bytes.
fn word_id(w: &str) -> u32 {
    w.bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % FAKE_VOCAB
}

/// A streaming request with a valid JSON body: count it, apply its fault, stream the tokens.
async fn generate(
    sock: &mut TcpStream,
    shared: &Shared,
    events: &mut Option<Events>,
    arrived: Instant,
    v: Value,
    chat: bool,
) -> io::Result<bool> {
    let cfg = &shared.cfg;
    let seq = shared.truth.request();
    let fault = if seq.is_multiple_of(cfg.fault_every) {
        cfg.fault
    } else {
        Fault::None
    };
    if fault == Fault::Http500 {
        let body = json!({"error": {"message": "fake internal server error", "type": "InternalServerError", "code": 500}});
        respond(
            sock,
            "500 Internal Server Error",
            JSON,
            body.to_string().as_bytes(),
        )
        .await?;
        return Ok(true);
    }
    let max_tokens = v
        .get("max_tokens")
        .or_else(|| v.get("max_completion_tokens"))
        .and_then(|m| m.as_u64())
        .map_or(cfg.default_max_tokens, |m| {
            m.min(u64::from(u32::MAX)) as u32
        });
    let model = v
        .get("model")
        .and_then(|m| m.as_str())
        .unwrap_or(&cfg.model);
    if !cfg.lora_modules.is_empty()
        && model != cfg.model
        && !cfg.lora_modules.iter().any(|l| l == model)
    {
        // vLLM's answer to a model it does not serve.
        let body = json!({"error": {"message": format!("The model `{model}` does not exist."), "type": "NotFoundError", "param": "model", "code": 404}});
        respond(sock, "404 Not Found", JSON, body.to_string().as_bytes()).await?;
        return Ok(true);
    }
    let words = prompt_words(&v, chat);
    let prompt_tokens = words
        + if chat {
            u64::from(cfg.chat_template_tokens)
        } else {
            0
        };
    // vLLM shortens an output that would run past the context, silently.
    let max_tokens = match cfg.max_model_len {
        Some(ctx) => max_tokens
            .min(u32::try_from(u64::from(ctx).saturating_sub(prompt_tokens)).unwrap_or(u32::MAX)),
        None => max_tokens,
    };
    if !events
        .as_ref()
        .is_some_and(|e: &Events| e.chat == chat && e.model == model)
    {
        *events = None;
    }
    let events = events.get_or_insert_with(|| {
        Events::new(chat, model, cfg.tokens_per_chunk, cfg.events_per_write)
    });
    let job = Job {
        events,
        arrived,
        max_tokens,
        prompt_tokens,
        fault,
    };
    stream(sock, cfg, &shared.truth, job).await
}
