//! What [`super::load`] sends: independent prompts, or conversations whose turns follow each
//! other (`--multi-turn`). A conversation's turn carries the conversation so far as chat
//! messages, the server's own earlier answers included, and is sent when the previous answer
//! has arrived; its latencies count from its send. A turn that fails ends its conversation.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, Semaphore};

use crate::client::Client;
use crate::dataset::{ChatMessage, Prompt};
use crate::record::RequestRecord;

/// The requests of a run.
#[derive(Debug, Clone)]
pub enum Work {
    /// One request per prompt.
    Prompts(Arc<Vec<Prompt>>),
    /// One conversation per item: its turns, one request each, in order.
    Conversations(Arc<Vec<Vec<Prompt>>>),
}

impl Work {
    /// Scheduled items: prompts or conversations.
    pub fn items(&self) -> usize {
        match self {
            Work::Prompts(p) => p.len(),
            Work::Conversations(c) => c.len(),
        }
    }

    /// Requests, every turn counted.
    pub fn requests(&self) -> usize {
        match self {
            Work::Prompts(p) => p.len(),
            Work::Conversations(c) => c.iter().map(Vec::len).sum(),
        }
    }

    /// The prompts warmups cycle through: the prompts, or each conversation's first turn.
    pub fn warmup_prompts(&self) -> Arc<Vec<Prompt>> {
        match self {
            Work::Prompts(p) => p.clone(),
            Work::Conversations(c) => {
                Arc::new(c.iter().filter_map(|t| t.first().cloned()).collect())
            }
        }
    }

    /// Send item `i`, due at `scheduled` (`None`: when sent), on its own task; its records go to
    /// `tx`. `first_index[i]` is the request index of its first request.
    pub(crate) async fn dispatch(
        &self,
        i: usize,
        first_index: u32,
        (client, t0, scheduled): (&Arc<Client>, Instant, Option<Instant>),
        slots: &Option<Arc<Semaphore>>,
        tx: &mpsc::UnboundedSender<RequestRecord>,
    ) {
        let (client, tx, slots) = (client.clone(), tx.clone(), slots.clone());
        match self {
            Work::Prompts(prompts) => {
                // The scheduler waits for the slot, so later requests keep their order.
                let permit = match &slots {
                    Some(s) => Some(s.clone().acquire_owned().await.expect("never closed")),
                    None => None,
                };
                let prompts = prompts.clone();
                tokio::spawn(async move {
                    // A time-bounded run cycles through the prompts.
                    let prompt = &prompts[i % prompts.len()];
                    let rec = client.send(i as u32, prompt, t0, scheduled).await;
                    drop(permit);
                    let _ = tx.send(rec);
                });
            }
            Work::Conversations(convs) => {
                let convs = convs.clone();
                tokio::spawn(async move {
                    let turns = &convs[i];
                    converse(&client, turns, (i, first_index), (t0, scheduled), slots, tx).await;
                });
            }
        }
    }

    /// The request index of each item's first request.
    pub fn first_indices(&self) -> Vec<u32> {
        match self {
            Work::Prompts(p) => (0..p.len() as u32).collect(),
            Work::Conversations(c) => c
                .iter()
                .scan(0u32, |next, t| {
                    let first = *next;
                    *next += t.len() as u32;
                    Some(first)
                })
                .collect(),
        }
    }
}

/// Play one conversation: turn after turn, each with the history so far.
async fn converse(
    client: &Client,
    turns: &[Prompt],
    (conversation, first_index): (usize, u32),
    (t0, scheduled): (Instant, Option<Instant>),
    slots: Option<Arc<Semaphore>>,
    tx: mpsc::UnboundedSender<RequestRecord>,
) {
    let mut history: Vec<ChatMessage> = Vec::new();
    let mut history_tokens = 0u32;
    for (t, turn) in turns.iter().enumerate() {
        let prompt = Prompt {
            history: history.clone(),
            input_len: turn.input_len.saturating_add(history_tokens),
            ..turn.clone()
        };
        let permit = match &slots {
            Some(s) => Some(s.clone().acquire_owned().await.expect("never closed")),
            None => None,
        };
        // The first turn is due on the schedule; a later one when its question can be asked.
        let due = if t == 0 { scheduled } else { None };
        let index = first_index + t as u32;
        let mut rec = client.send(index, &prompt, t0, due).await;
        drop(permit);
        rec.turn = Some((conversation as u32, t as u32));
        let ok = rec.ok();
        let answer_tokens = rec.usage_output_tokens.unwrap_or(rec.chunks);
        let answer = rec.text.clone();
        let _ = tx.send(rec);
        if !ok {
            return;
        }
        history_tokens = history_tokens
            .saturating_add(turn.input_len)
            .saturating_add(answer_tokens);
        history.push(ChatMessage {
            role: "user".into(),
            content: turn.text.clone(),
        });
        history.push(ChatMessage {
            role: "assistant".into(),
            content: answer,
        });
    }
}

/// Mean TTFT per turn (ms), from the successful turns' records: what multi-turn runs add to the
/// result JSON as `mean_ttft_ms_by_turn`.
#[derive(Debug, Default)]
pub struct TurnTtft(Vec<(f64, u64)>);

impl TurnTtft {
    pub fn add(&mut self, rec: &RequestRecord) {
        if let (Some((_, t)), Some(ttft), true) = (rec.turn, rec.ttft(), rec.ok()) {
            let t = t as usize;
            if self.0.len() <= t {
                self.0.resize(t + 1, (0.0, 0));
            }
            self.0[t].0 += ttft * 1e3;
            self.0[t].1 += 1;
        }
    }

    /// The means, turn 0 first (`None` without turns).
    pub fn means(&self) -> Option<Vec<f64>> {
        (!self.0.is_empty()).then(|| {
            self.0
                .iter()
                .map(|&(sum, n)| if n > 0 { sum / n as f64 } else { 0.0 })
                .collect()
        })
    }
}
