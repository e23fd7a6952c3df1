//! perfgate's one integration-test binary: each area has its own module, helpers live in `support/`.

mod engine;
mod faults;
mod github;
mod run;
mod support;
