//! perfgate's one integration-test binary: each area has its own module.

mod dataset;
mod engine;
mod llamacpp;
