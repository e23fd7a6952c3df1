//! Flags of `perfgate bisect`: two revisions, the ordered list between them, how to start a
//! revision's engine, the suite, and the budget.

use std::path::PathBuf;

use clap::{ArgGroup, Args};

use super::live::LaunchArgs;
use super::num;
use crate::bisect::{EngineTemplate, Options, Source};

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("revs").required(true).args(["revisions", "repo"])))]
#[command(group(ArgGroup::new("engine").required(true).args(["engine_cmd", "engine_image"])))]
pub struct BisectArgs {
    /// A revision without the regression (the older end).
    #[arg(long, value_name = "REV")]
    pub good: String,

    /// A revision with the regression (the newer end).
    #[arg(long, value_name = "REV")]
    pub bad: String,

    /// The ordered revisions: a file, one a line, oldest first (`#` comments).
    #[arg(long, value_name = "FILE")]
    pub revisions: Option<PathBuf>,

    /// The ordered revisions: the first-parent commits of this git repository from GOOD to BAD.
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// The suite: a suite or baseline TOML file (models, scenarios, engine, `[gate]`).
    #[arg(long, visible_alias = "suite", value_name = "SUITE.toml")]
    pub baseline: PathBuf,

    /// The engine command template of a revision; `{rev}` is the revision (passed as the
    /// environment variable PERFGATE_REV, expanded as one quoted word).
    #[arg(long, value_name = "TEMPLATE")]
    pub engine_cmd: Option<String>,

    /// The container image template of a revision (docker presets), e.g. `vllm:{rev}`.
    #[arg(long, value_name = "TEMPLATE")]
    pub engine_image: Option<String>,

    /// A command run once per revision (per invocation) before its first launch, e.g. to
    /// install or build it; `{rev}` as in --engine-cmd. It must be idempotent.
    #[arg(long, value_name = "TEMPLATE")]
    pub prepare_cmd: Option<String>,

    /// Only these scenarios (comma-separated ids): the ones that regressed.
    #[arg(long, value_delimiter = ',')]
    pub scenarios: Vec<String>,

    /// Gate only these metrics (comma-separated): the ones that regressed.
    #[arg(long, value_delimiter = ',')]
    pub metrics: Vec<String>,

    /// Gate settings (TOML) applied over the suite's `[gate]` table.
    #[arg(long, value_name = "FILE")]
    pub gate: Option<PathBuf>,

    /// Time budget of this invocation in minutes: no scenario starts once it is spent.
    #[arg(long, value_name = "MINUTES", value_parser = num::minutes)]
    pub max_minutes: Option<f64>,

    /// Most pairs of launches per step (one look of the step's sequential test per pair).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_pairs: u32,

    #[command(flatten)]
    pub launch: LaunchArgs,
}

impl BisectArgs {
    /// The validated options of the search.
    pub fn options(&self) -> Result<Options, String> {
        let l = &self.launch;
        Ok(Options {
            good: self.good.clone(),
            bad: self.bad.clone(),
            source: match (&self.revisions, &self.repo) {
                (Some(f), _) => Source::File(f.clone()),
                (None, Some(r)) => Source::Repo(r.clone()),
                (None, None) => return Err("pass --revisions FILE or --repo PATH".into()),
            },
            suite: self.baseline.clone(),
            engine: match (&self.engine_cmd, &self.engine_image) {
                (Some(c), _) => EngineTemplate::Cmd(c.clone()),
                (None, Some(i)) => EngineTemplate::Image(i.clone()),
                (None, None) => return Err("pass --engine-cmd or --engine-image".into()),
            },
            prepare: self.prepare_cmd.clone(),
            scenarios: self.scenarios.clone(),
            metrics: self.metrics.clone(),
            gate: self.gate.clone(),
            max_minutes: self.max_minutes,
            max_pairs: self.max_pairs,
            runs_per_launch: l.runs_per_launch,
            output_dir: l.output_dir.clone(),
            overrides: l.overrides(None, None, None)?,
            settings: l.settings()?,
        })
    }
}
