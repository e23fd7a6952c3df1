//! Command-line interface (clap derive). Each subcommand's flags live in their own file.

use clap::{Parser, Subcommand, ValueEnum};

pub mod baseline;
pub mod check;
pub mod comment;
pub mod compare;
pub mod history;
pub mod import;
pub mod live;
pub mod merge;
pub mod num;
pub mod report;
pub mod run;

/// Which verdicts make `check` and `comment` exit non-zero (`--fail-on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum FailOn {
    /// A regressed row exits 1, an error row 3; inconclusive rows exit 0.
    #[default]
    Regression,
    /// Also an inconclusive row (or a scenario missing from the results) exits 1.
    Inconclusive,
    /// Always exit 0 once the report is out (errors and regressions only reported).
    Never,
}

/// Stops performance regressions in LLM serving engines before they merge.
#[derive(Debug, Parser)]
#[command(name = "perfgate", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmark one scenario against a running OpenAI-compatible server (like `vllm bench serve`).
    Run(Box<run::RunArgs>),
    /// Import benchmark results (vLLM/SGLang/LMDeploy logs, JSON, JSONL, CSV) as JSON Lines records.
    Import(import::ImportArgs),
    /// Record, show or validate baseline files.
    #[command(subcommand)]
    Baseline(baseline::BaselineCommand),
    /// Gate results against a baseline with statistics; exit 1 on a regression.
    Check(Box<check::CheckArgs>),
    /// Compare baselines side by side (e.g. SGLang vs vLLM); `--html` for the plots.
    Compare(compare::CompareArgs),
    /// Write the sign-off page (self-contained HTML with plots) from a check report or baselines.
    Report(report::ReportArgs),
    /// Follow metrics across baselines (releases) and flag change points.
    History(history::HistoryArgs),
    /// Post a check report to GitHub: sticky PR comment, check run, job summary.
    Comment(comment::CommentArgs),
    /// Merge per-model check reports (from a matrix) into one report.
    Merge(merge::MergeArgs),
    /// Serve a fake OpenAI streaming API on 127.0.0.1 (for demos and benchmarks); prints its URL.
    #[command(hide = true)]
    FakeServer(run::FakeServerArgs),
}
