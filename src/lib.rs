//! perfgate: stops performance regressions in LLM serving engines before they merge.
//!
//! The data path is one-way: suite → dataset → load → client → metrics → [`record::ScenarioResult`]
//! → baseline / gate → report → github. Pure modules (`record`, `suite`, `dataset`, `metrics`,
//! `baseline`, `import`, `gate`, `report`, `output`, `sidebyside`) never import the edge modules
//! (`client`, `load`, `engine`, `github`, `fakeserver`); only `app` wires them together.

pub mod app;
pub mod baseline;
pub mod chunk;
pub mod cli;
pub mod client;
pub mod dataset;
pub mod engine;
pub mod fakeserver;
pub mod gate;
pub mod github;
pub mod h1;
pub mod import;
pub mod load;
pub mod metrics;
pub mod output;
pub mod record;
pub mod report;
pub mod sidebyside;
pub mod sse;
pub mod suite;
pub mod tokenizer;
