//! The SSE bytes the server sends, rendered once: token chunks (completions or chat, the shape
//! vLLM streams), the chat role chunk, the final chunk with usage, and the fault events. Every
//! token is the text `" tok"`.

use super::http::chunk_into;

/// A chunk of `k` tokens as one SSE event.
fn token_event(chat: bool, model: &str, k: u32) -> String {
    let text = " tok".repeat(k as usize);
    if chat {
        format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n")
    } else {
        format!("data: {{\"id\":\"cmpl-fake\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":{model},\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}}]}}\n\n")
    }
}

pub(super) const ERROR_EVENT: &[u8] = b"data: {\"error\":{\"message\":\"fake in-band error\",\"type\":\"InternalServerError\",\"code\":500}}\n\ndata: [DONE]\n\n";
pub(super) const MALFORMED_EVENT: &[u8] =
    b"data: {\"choices\":[{\"text\": fake-malformed\n\ndata: [DONE]\n\n";
pub(super) const DONE: &[u8] = b"data: [DONE]\n\n";

/// The events of one endpoint and model, rendered once per connection and reused.
pub(super) struct Events {
    pub chat: bool,
    pub model: String,
    /// `model` as a JSON string.
    model_json: String,
    /// The chat role chunk, as an HTTP chunk.
    pub role: Option<Vec<u8>>,
    /// A chunk of `tokens_per_chunk` tokens (SSE event, unframed).
    pub full: Vec<u8>,
    /// `events_per_write` such chunks in one HTTP chunk: a blast write.
    pub batch: Vec<u8>,
}

impl Events {
    pub(super) fn new(chat: bool, model: &str, per_chunk: u32, per_write: u32) -> Events {
        let model_json = serde_json::Value::from(model).to_string();
        let full = token_event(chat, &model_json, per_chunk).into_bytes();
        let mut batch = Vec::new();
        chunk_into(&mut batch, &full.repeat(per_write as usize));
        let role = chat.then(|| {
            let mut v = Vec::new();
            chunk_into(&mut v, format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":{model_json},\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":null}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n").as_bytes());
            v
        });
        Events {
            chat,
            model: model.to_string(),
            model_json,
            role,
            full,
            batch,
        }
    }

    /// A chunk of `k` tokens (a stream's shorter last chunk).
    pub(super) fn short(&self, k: u32) -> Vec<u8> {
        token_event(self.chat, &self.model_json, k).into_bytes()
    }

    /// The final chunk (`finish_reason: length`) with `usage` (prompt, completion tokens) when
    /// given: in the final chunk for completions, in a `choices: []` chunk for chat.
    pub(super) fn finals(&self, usage: Option<(u64, u32)>) -> String {
        let model = &self.model_json;
        let usage_json = usage.map(|(p, c)| {
            format!(
                "{{\"prompt_tokens\":{p},\"completion_tokens\":{c},\"total_tokens\":{}}}",
                p + u64::from(c)
            )
        });
        if self.chat {
            let mut s = format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":{model},\"choices\":[{{\"index\":0,\"delta\":{{}},\"logprobs\":null,\"finish_reason\":\"length\"}}]}}\n\n");
            if let Some(u) = &usage_json {
                s.push_str(&format!("data: {{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":{model},\"choices\":[],\"usage\":{u}}}\n\n"));
            }
            s
        } else {
            let u = usage_json
                .map(|u| format!(",\"usage\":{u}"))
                .unwrap_or_default();
            format!("data: {{\"id\":\"cmpl-fake\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":{model},\"choices\":[{{\"index\":0,\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}}]{u}}}\n\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `data:` payloads of an SSE stream (events end with a blank line), read by hand: the
    /// measuring client's decoder is checked against these bytes in perfgate's own tests.
    fn data_of(all: &[u8]) -> Vec<Vec<u8>> {
        std::str::from_utf8(all)
            .unwrap()
            .split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| e.strip_prefix("data: ").unwrap().as_bytes().to_vec())
            .collect()
    }

    /// The payload of each HTTP chunk in `b` (a sequence of whole chunks).
    fn unchunk(mut b: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        while !b.is_empty() {
            let nl = b.windows(2).position(|w| w == b"\r\n").unwrap();
            let n = usize::from_str_radix(std::str::from_utf8(&b[..nl]).unwrap(), 16).unwrap();
            out.extend_from_slice(&b[nl + 2..nl + 2 + n]);
            b = &b[nl + 4 + n..];
        }
        out
    }

    #[test]
    fn events_are_valid_sse_json() {
        let e = Events::new(true, "m\"x", 3, 2);
        let mut all = unchunk(e.role.as_ref().unwrap());
        all.extend(unchunk(&e.batch));
        all.extend(e.short(1));
        all.extend(e.finals(Some((5, 7))).into_bytes());
        let events = data_of(&all);
        assert_eq!(events.len(), 6);
        for ev in &events {
            let v: serde_json::Value = serde_json::from_slice(ev).unwrap();
            assert_eq!(v["model"], "m\"x");
        }
        let one: serde_json::Value = serde_json::from_slice(&events[1]).unwrap();
        assert_eq!(one["choices"][0]["delta"]["content"], " tok tok tok");
        let usage: serde_json::Value = serde_json::from_slice(&events[5]).unwrap();
        assert_eq!(usage["usage"]["completion_tokens"], 7);
        let c = Events::new(false, "m", 1, 1);
        let f: serde_json::Value =
            serde_json::from_slice(&data_of(c.finals(None).as_bytes())[0]).unwrap();
        assert_eq!(f["choices"][0]["finish_reason"], "length");
        assert!(f.get("usage").is_none());
    }
}
