//! perfgate's verdicts: the gate ([`gate`]: the statistics that turn baseline and current
//! records into a [`gate::Report`]), the baseline and suite files the records are stored in
//! ([`baseline`]) and the same numbers across releases ([`history`]).
//!
//! Pure: records and baselines in, reports and histories out; no processes, no network, no
//! terminal, no flags. The compiler keeps it so: this crate depends on `perfgate-record` only
//! among perfgate's crates and on none of the edge crates, so it cannot reach the client, the
//! engine, GitHub or the renderers. perfgate re-exports every module under its own name
//! (`perfgate::gate`, …).

pub mod baseline;
pub mod gate;
pub mod history;
#[cfg(any(test, feature = "sample"))]
#[doc(hidden)]
pub mod sample;

// The record crate's modules under the names the gate's code has always used (`crate::record`).
use perfgate_record::{launch, record, text};
