//! perfgate's one integration-test binary: each area has its own module, helpers live in `support/`.

mod ab;
mod architecture;
mod baselines;
mod bisect;
mod check;
mod compat;
mod containers;
mod dataset;
mod decision;
mod engine;
mod engine_api;
mod faults;
mod files;
mod github;
mod hostile;
mod import;
mod llamacpp;
mod plan;
mod run;
mod signoff;
mod suite_fields;
mod support;
mod vllm;
mod wire;
mod workloads;
