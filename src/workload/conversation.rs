//! Multi-turn conversations (`--multi-turn`): ShareGPT's conversations played turn by turn on
//! the chat endpoint. Each turn is one request whose messages are the conversation so far (the
//! user's earlier turns and the server's own earlier answers) and the turn's user message; the
//! next turn is sent when the answer has arrived. Each turn's TTFT is measured on its own.

use std::path::Path;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Deserialize;

use crate::dataset::{DatasetError, Prompt};
use crate::tokenizer::Tokenize;

/// One conversation of the file: (user message, reference answer) per turn.
pub type Turns = Vec<(String, String)>;

#[derive(Deserialize)]
struct Record {
    #[serde(default)]
    conversations: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    from: String,
    value: String,
}

/// Read ShareGPT's JSON (a list of `{"conversations": [{"from", "value"}, …]}`) into
/// conversations: each `human` (or `user`) message followed by a `gpt` (`chatgpt`,
/// `assistant`) answer is a turn; `system` messages are skipped; a conversation ends at its
/// first message out of that order. Errors name the file and line.
pub fn parse_sharegpt(path: &Path, text: &str) -> Result<Vec<Turns>, String> {
    let records: Vec<Record> = serde_json::from_str(text).map_err(|e| {
        format!(
            "{}:{}: not ShareGPT JSON (a list of {{\"conversations\": [{{\"from\", \"value\"}}]}}): {e}",
            path.display(),
            e.line()
        )
    })?;
    let mut out = Vec::new();
    for r in records {
        let mut turns = Vec::new();
        let mut user: Option<String> = None;
        for m in r.conversations {
            match (m.from.to_ascii_lowercase().as_str(), user.take()) {
                ("system", u) => user = u,
                ("human" | "user", None) => user = Some(m.value),
                ("gpt" | "chatgpt" | "assistant" | "bard", Some(u)) => turns.push((u, m.value)),
                _ => break,
            }
        }
        if !turns.is_empty() {
            out.push(turns);
        }
    }
    if out.is_empty() {
        return Err(format!("{}: no conversation with a turn", path.display()));
    }
    Ok(out)
}

/// `n` conversations drawn from `convs` in a seeded order, at most `max_turns` turns each, as
/// prompts: each turn's user message counted with `tok`, asking for its reference answer's
/// length (or `output_len`). A turn's `input_len` is its own message only; the run adds the
/// history. Returns the conversations and a note.
pub fn prompts(
    mut convs: Vec<Turns>,
    n: usize,
    max_turns: Option<usize>,
    output_len: Option<u32>,
    tok: &dyn Tokenize,
    seed: u64,
) -> Result<(Vec<Vec<Prompt>>, String), DatasetError> {
    convs.shuffle(&mut StdRng::seed_from_u64(seed));
    convs.truncate(n);
    let count = |s: &str| -> Result<u32, DatasetError> {
        Ok(u32::try_from(tok.encode(s)?.len()).unwrap_or(u32::MAX))
    };
    let mut out = Vec::with_capacity(convs.len());
    let mut turns = 0;
    for conv in convs {
        let mut prompts = Vec::new();
        for (user, answer) in conv.into_iter().take(max_turns.unwrap_or(usize::MAX)) {
            let output_len = match output_len {
                Some(n) => n,
                None => count(&answer)?.max(1),
            };
            prompts.push(Prompt {
                input_len: count(&user)?,
                text: user,
                output_len,
                ..Default::default()
            });
        }
        turns += prompts.len();
        out.push(prompts);
    }
    let note = format!(
        "multi-turn: {} conversations, {turns} turns, each turn sent after the previous answer \
         with the conversation so far, seed {seed}",
        out.len()
    );
    Ok((out, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_pair_user_messages_with_answers() {
        let text = r#"[
          {"id": "a", "conversations": [
            {"from": "system", "value": "be brief"},
            {"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello there"},
            {"from": "human", "value": "and?"}, {"from": "gpt", "value": "that is all"},
            {"from": "human", "value": "unanswered"}]},
          {"id": "b", "conversations": [{"from": "gpt", "value": "starts with an answer"}]},
          {"id": "c", "conversations": [
            {"from": "user", "value": "q"}, {"from": "assistant", "value": "a"},
            {"from": "gpt", "value": "twice"}, {"from": "human", "value": "never read"}]}
        ]"#;
        let c = parse_sharegpt(Path::new("s.json"), text).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0],
            [
                ("hi".to_string(), "hello there".to_string()),
                ("and?".into(), "that is all".into())
            ]
        );
        assert_eq!(c[1], [("q".to_string(), "a".to_string())]);
    }

    #[test]
    fn bad_files_are_named_with_the_line() {
        let e = parse_sharegpt(Path::new("s.json"), "[\n{\"conversations\": 3}\n]").unwrap_err();
        assert!(e.starts_with("s.json:2: not ShareGPT JSON"), "{e}");
        let e = parse_sharegpt(Path::new("s.json"), "[]").unwrap_err();
        assert_eq!(e, "s.json: no conversation with a turn");
    }
}
