//! Workloads beyond one independent prompt per request, as `vllm bench serve` has them: LoRA
//! adapters chosen per request ([`lora`]), speculative-decoding counters read from the server's
//! `/metrics` ([`spec_decode`]), timed traces replayed at their own times ([`trace`]). Pure:
//! the edges fetch and send.

pub mod conversation;
pub mod lora;
pub mod spec_decode;
pub mod trace;
