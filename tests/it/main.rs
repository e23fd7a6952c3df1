//! The integration-test binary: one module per area, shared helpers in `support`.

mod support;

mod faults;
mod run;
