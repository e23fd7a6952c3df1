//! perfgate's records: the one shape every measurement takes ([`record::ScenarioResult`], keyed
//! like vLLM's `--save-result` JSON) and what a record carries beside vLLM's keys: the
//! steady-state figures ([`steady`]), machine and server telemetry ([`telemetry`]), the engine's
//! launch command as logs write it ([`launch`]); plus the text helpers ([`text`]) and the
//! redaction of secrets ([`redact`]) every later crate uses.
//!
//! Pure data and arithmetic: no processes, no network, no terminal. The compiler keeps it so:
//! this crate depends on no perfgate crate and on none of the edge crates (tokio, reqwest,
//! octocrab, nix, libc). perfgate re-exports every module under its own name
//! (`perfgate::record`, …), and the ARCHITECTURE.md code map describes each.

pub mod launch;
pub mod record;
pub mod redact;
pub mod steady;
pub mod telemetry;
pub mod text;
