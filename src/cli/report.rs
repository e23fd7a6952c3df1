//! Flags of `perfgate report`.

use std::path::PathBuf;

use clap::Args;

/// Render the sign-off page: one self-contained HTML file with the plots, from a check report
/// (JSON) and/or baselines.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The HTML file to write.
    #[arg(long, value_name = "OUT.html", value_parser = super::report_file)]
    pub html: PathBuf,
    /// A check report (`perfgate check --json`, or `report.json` of a live run). Its baseline and
    /// results files are read for the plots when they exist (see `--baseline`, `--results`).
    #[arg(long, value_name = "REPORT.json")]
    pub report: Option<PathBuf>,
    /// The baseline of the check (default: the file the report names).
    #[arg(long, value_name = "FILE", requires = "report")]
    pub baseline: Option<PathBuf>,
    /// The results of the check, JSON Lines (default: the files the report names).
    #[arg(long, value_name = "RECORDS.jsonl", num_args = 1.., requires = "report")]
    pub results: Vec<PathBuf>,
    /// The engine metrics of the run (default: `engine-metrics.jsonl` next to the results).
    #[arg(long, value_name = "FILE")]
    pub engine_metrics: Option<PathBuf>,
    /// Baselines to show side by side (without `--report`), like `perfgate compare --html`.
    #[arg(value_name = "BASELINE.toml")]
    pub baselines: Vec<PathBuf>,
    /// The page's title.
    #[arg(long)]
    pub title: Option<String>,
}
