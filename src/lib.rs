//! perfgate: stops performance regressions in LLM serving engines before they merge.
//!
//! The data path is one-way: suite → dataset → client (load, h1, sse, chunk) → metrics →
//! [`record::ScenarioResult`] → baseline / gate → report → github.
//!
//! # Dependency rules
//! - **Core** (pure: no processes, no network, no tokio/reqwest/octocrab/hyper/nix): [`text`],
//!   [`record`], [`launch`], [`suite`], [`dataset`], [`tokenizer`], [`metrics`], [`baseline`],
//!   [`import`], [`gate`], [`history`], [`report`]. Core modules import only core modules.
//! - **Edges**: [`client`] (the measuring HTTP client, its load generator and the engine's
//!   tokenizer endpoint), [`engine`] (processes, readiness, `/metrics`), [`github`] (posts what
//!   [`report`] rendered; never renders), `fakeserver` (the fake engine of tests, benches and
//!   `perfgate fake-server`; only with the `fake-server` feature). Edges may import core modules, never [`app`] or [`cli`].
//! - **Orchestration**: [`runner`] (the live suite runner: launches → records) wires the edges;
//!   [`bisect`] (a search of `ab` comparisons over revisions; its [`bisect::search`] is pure)
//!   drives the runner;
//!   [`app`] only parses, wires and maps errors to exit codes; [`cli`] holds the flags.
//! - `report` never computes statistics; `gate` never renders; nothing imports in a circle,
//!   between modules or between the files of one folder.
//!
//! `tests/it/architecture.rs` checks these rules on the source.
//!
//! # Library use
//!
//! One scenario against a running server: a [`client::load::RunConfig`] says how to reach the
//! server and, in its `params`, what to run; the load and the record read the scenario from
//! there only, so the record names exactly what was run.
//!
//! ```no_run
//! use perfgate::client::load::{self, RunConfig};
//! use perfgate::dataset::Prompt;
//! use perfgate::record::Endpoint;
//!
//! # async fn example() -> Result<(), load::LoadError> {
//! let mut cfg = RunConfig::new("http://127.0.0.1:8000", "my-model");
//! cfg.params.max_concurrency = Some(64);
//! cfg.params.endpoint = Some(Endpoint::Chat);
//! cfg.params.temperature = Some(0.7);
//! let prompts = vec![Prompt {
//!     text: "Tell me about the sea".into(),
//!     input_len: 5,
//!     output_len: 64,
//! }];
//! let result = load::run_scenario(&cfg, prompts, &load::NoProgress).await?;
//! assert_eq!(result.params.max_concurrency, Some(64));
//! println!("{}: {} ms median TTFT", result.scenario_id(), result.stats["median_ttft_ms"]);
//! # Ok(())
//! # }
//! ```

pub mod app;
pub mod atomic;
pub mod baseline;
pub mod bisect;
pub mod cli;
pub mod client;
pub mod dataset;
pub mod engine;
#[cfg(feature = "fake-server")]
pub mod fakeserver;
pub mod gate;
pub mod github;
pub mod history;
pub mod import;
pub mod launch;
pub mod metrics;
pub mod record;
pub mod redact;
pub mod report;
pub mod runner;
pub mod suite;
pub mod text;
pub mod tokenizer;
