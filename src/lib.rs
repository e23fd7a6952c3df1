//! perfgate: stops performance regressions in LLM serving engines before they merge.
//!
//! The data path is one-way: suite → dataset → client (load, h1, sse, chunk) → metrics →
//! [`record::ScenarioResult`] → baseline / gate → report → github.
//!
//! # Dependency rules
//! Four layers; a module imports only modules of its own layer or a lower one.
//! - **Core** (pure: no processes, no network, no terminal, no flags; never names
//!   tokio/reqwest/hyper/http/octocrab/nix/libc/socket2/indicatif/clap): [`text`], [`telemetry`],
//!   [`redact`], [`record`], [`export`], [`launch`], [`suite`], [`dataset`], [`tokenizer`],
//!   [`steady`], [`metrics`],
//!   [`baseline`], [`import`], [`workload`], [`gate`], [`history`], [`report`]. One counted
//!   exception: [`record`] derives `clap::ValueEnum` for the enums the flags take as values.
//! - **Edges**: [`client`] (the measuring HTTP client, its load generator and the engine's
//!   tokenizer endpoint), [`engine`] (processes, readiness, `/metrics`), [`monitor`] (telemetry
//!   sampled beside a run on its own thread), [`github`] (posts what
//!   [`report`] rendered; never renders), [`atomic`] (whole-file writes, SIGXFSZ).
//! - **Crates of their own** (the compiler keeps them apart): `perfgate-record` ([`record`],
//!   [`text`], [`steady`], [`telemetry`], [`redact`], [`launch`]) and `perfgate-gate` ([`gate`],
//!   [`baseline`], [`history`]), core modules re-exported here under their names, which can reach
//!   no other module and no edge crate; `perfgate-client` ([`client`], [`dataset`],
//!   [`tokenizer`], [`metrics`], [`export`]), which cannot reach the gate; `perfgate-stamp` (kernel receive times, shared by
//!   [`client`] and the fake server) and `perfgate-fakeserver` (the fake engine of tests, benches
//!   and `perfgate fake-server`; it cannot reach perfgate's modules).
//! - **Orchestration**: [`runner`] (the live suite runner: launches → records) wires the edges;
//!   [`bisect`] (a search of `ab` comparisons over revisions; its [`bisect::search`] is pure)
//!   drives the runner.
//! - **Front**: [`app`] only parses, wires and maps errors to exit codes; [`cli`] holds the flags.
//! - `report` never computes statistics; `gate` never renders; nothing imports in a circle,
//!   between modules or between the files of one folder.
//!
//! `tests/it/architecture.rs` checks these rules on the source; `ARCHITECTURE.md` explains them.
//!
#![doc = include_str!("../docs/library.md")]

pub mod app;
pub mod atomic;
pub mod bisect;
pub mod cli;
pub mod engine;
pub mod github;
pub mod import;
pub mod monitor;
pub mod report;
pub mod runner;
pub mod suite;
pub mod workload;

// The modules of perfgate's crates, under the names they have always had here
// (`perfgate::record`, `crate::gate`, …).
pub use perfgate_client::{client, dataset, export, metrics, tokenizer};
pub use perfgate_gate::{baseline, gate, history};
pub use perfgate_record::{launch, record, redact, steady, telemetry, text};
