//! The one integration-test binary: each area in its own module.

mod baselines;
mod import;
