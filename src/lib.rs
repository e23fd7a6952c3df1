//! perfgate: stops performance regressions in LLM serving engines before they merge.
//!
//! The data path is one-way: suite → dataset → client (load, h1, sse, chunk) → metrics →
//! [`record::ScenarioResult`] → baseline / gate → report → github. Pure modules (`text`, `record`,
//! `suite`, `dataset`, `tokenizer`, `metrics`, `baseline`, `import`, `gate`, `history`, `report`) never import
//! the edge modules (`client`, `engine`, `github`, `fakeserver`); only `app` wires them together.

pub mod app;
pub mod atomic;
pub mod baseline;
pub mod cli;
pub mod client;
pub mod dataset;
pub mod engine;
pub mod fakeserver;
pub mod gate;
pub mod github;
pub mod history;
pub mod import;
pub mod metrics;
pub mod record;
pub mod redact;
pub mod report;
pub mod suite;
pub mod text;
pub mod tokenizer;
