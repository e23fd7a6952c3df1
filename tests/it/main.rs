//! The one integration-test binary: each area has its module, helpers live in `support/`.

mod github;
mod support;
