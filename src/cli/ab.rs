//! Flags of `perfgate ab`: the base and the candidate engine on this runner, launched in pairs,
//! judged with paired statistics after each pair until decided or out of budget.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::check::ColorChoice;
use super::live::LaunchArgs;
use super::{num, FailOn};

/// The order of the arms within each pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum AbOrder {
    /// Base first in odd pairs, candidate first in even ones (A B, B A, A B, …).
    #[default]
    Abba,
    /// A reproducible coin per pair (`--seed`).
    Random,
}

#[derive(Debug, Args)]
pub struct AbArgs {
    /// The suite: a suite or baseline TOML file (models, scenarios, engine preset, `[gate]`);
    /// its numbers, if any, are not used.
    #[arg(long, value_name = "FILE")]
    pub suite: PathBuf,

    /// The base arm's engine command template (e.g. main's build); default: the suite's.
    #[arg(long, value_name = "TEMPLATE", conflicts_with = "base_engine_image")]
    pub base_engine_cmd: Option<String>,

    /// The base arm's container image (docker presets).
    #[arg(long, value_name = "IMAGE")]
    pub base_engine_image: Option<String>,

    /// The candidate arm's engine command template (e.g. the PR's build); default: the suite's.
    #[arg(long, value_name = "TEMPLATE", conflicts_with = "engine_image")]
    pub engine_cmd: Option<String>,

    /// The candidate arm's container image (docker presets).
    #[arg(long, value_name = "IMAGE")]
    pub engine_image: Option<String>,

    /// What the base arm is, for the reports (a git ref, an image); default: its image or
    /// command.
    #[arg(long, value_name = "TEXT")]
    pub base_label: Option<String>,

    /// What the candidate arm is, for the reports; default: its image or command.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,

    /// Most launches of each arm per model (= pairs); the sequential test plans one look per
    /// pair, so a larger budget tests each look at a smaller share of alpha.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_launches: u32,

    /// Take --max-launches and --runs-per-launch from a plan's `[ab]` (`perfgate plan
    /// --save`); flags given on the command line win, with a note.
    #[arg(long, value_name = "PLAN.toml")]
    pub plan: Option<PathBuf>,

    /// Time budget for the whole comparison in minutes: no scenario starts once it is spent.
    #[arg(long, value_name = "MINUTES", value_parser = num::minutes)]
    pub max_minutes: Option<f64>,

    /// The order of the arms within each pair.
    #[arg(long, value_enum, default_value_t = AbOrder::Abba)]
    pub order: AbOrder,

    /// Seed of `--order random`.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Print both arms' launch commands and the scenarios; run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Also write the report as JSON to this file (`-` for stdout, instead of the table);
    /// default: OUTPUT_DIR/report.json.
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,

    /// Also write the report as markdown to this file; default: OUTPUT_DIR/report.md.
    #[arg(long, value_name = "OUT", value_parser = super::report_file)]
    pub markdown: Option<PathBuf>,

    /// Also write the sign-off page to this file; default: OUTPUT_DIR/report.html.
    #[arg(long, value_name = "OUT.html", value_parser = super::report_file)]
    pub html: Option<PathBuf>,

    /// Gate settings (TOML) applied over the suite's `[gate]` table.
    #[arg(long, value_name = "FILE")]
    pub gate: Option<PathBuf>,

    /// Exit 1 on regressions only (default), also on inconclusive rows, or never.
    #[arg(long, value_enum, default_value_t = FailOn::Regression)]
    pub fail_on: FailOn,

    /// Colour the terminal table.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// The report kind named in the hidden marker of the markdown (`<!-- perfgate:KIND -->`).
    #[arg(long, default_value = "ab")]
    pub kind: String,

    #[command(flatten)]
    pub github: crate::cli::comment::CheckGithubArgs,

    #[command(flatten)]
    pub launch: LaunchArgs,
}
