//! The reference parse of a chunk with serde_json: every shape the fast scanner leaves alone,
//! and the answer (or error message) that stands for it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::{Choice, Fields, Parsed};

/// The reference parse with serde_json: every shape the fast path leaves alone.
pub fn parse_serde(data: &[u8]) -> Result<Parsed<'_>, serde_json::Error> {
    let c: StreamChunk<'_> = serde_json::from_slice(data)?;
    if let Some(err) = c.error {
        return Ok(Parsed::Error(error_message(&err)));
    }
    if c.object.as_deref() == Some("error") {
        let msg = c.message.as_deref().unwrap_or("error object in stream");
        return Ok(Parsed::Error(msg.to_string()));
    }
    Ok(Parsed::Fields(Fields {
        choice: c.choices.0.map(|ch| {
            let (content, reasoning_content) = match ch.delta {
                Some(d) => (d.content, d.reasoning_content),
                None => (None, None),
            };
            Choice {
                text: ch.text,
                content,
                reasoning_content,
                finish_reason: ch.finish_reason,
            }
        }),
        usage: c.usage.map(|u| (u.completion_tokens, u.prompt_tokens)),
    }))
}

fn error_message(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => o
            .get("message")
            .and_then(|m| m.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    }
}

#[derive(Deserialize)]
struct StreamChunk<'a> {
    #[serde(default, borrow)]
    choices: FirstOnly<SerdeChoice<'a>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default, borrow)]
    object: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    message: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct SerdeChoice<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u32>,
    #[serde(default)]
    prompt_tokens: Option<u32>,
}

/// The first element of a JSON array (or nothing for `null`/`[]`), skipping the rest without
/// allocating a vector.
struct FirstOnly<T>(Option<T>);

impl<T> Default for FirstOnly<T> {
    fn default() -> Self {
        FirstOnly(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for FirstOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = FirstOnly<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FirstOnly(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(FirstOnly(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first = seq.next_element::<T>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstOnly(first))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}
