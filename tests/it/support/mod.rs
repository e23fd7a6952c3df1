//! Helpers shared by the integration tests.

#![allow(dead_code)]

pub mod fake;
pub mod github;

pub use fake::*;
