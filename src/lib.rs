//! perfgate: stops performance regressions in LLM serving engines before they merge.
//!
//! The data path is one-way: suite → dataset → load → client → metrics → [`record::ScenarioResult`]
//! → baseline / compare → report → github. Pure modules (`record`, `suite`, `dataset`, `metrics`,
//! `baseline`, `import`, `gate`, `report`) never import the edge modules (`client`, `load`,
//! `engine`, `github`); only `app` wires them together.

pub mod app;
pub mod baseline;
pub mod cli;
pub mod dataset;
pub mod gate;
pub mod import;
pub mod record;
pub mod sidebyside;
pub mod tokenizer;
