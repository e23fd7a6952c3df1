//! Flags of `perfgate history`.

use std::path::PathBuf;

use clap::Args;

/// The same numbers across baselines (releases) with change points flagged: per model ×
/// scenario × metric, in release order (provenance date, else engine version).
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Baseline files (any order; they are sorted into release order).
    #[arg(required = true, value_name = "BASELINE.toml")]
    pub baselines: Vec<PathBuf>,
    /// Metrics to follow (repeatable). Default: output throughput and the median TTFT, p99
    /// TTFT, median TPOT, ITL and E2E latency.
    #[arg(long = "metric", value_name = "METRIC")]
    pub metrics: Vec<String>,
    /// Only these models (repeatable).
    #[arg(long = "model", value_name = "MODEL")]
    pub models: Vec<String>,
    /// Also write the HTML page with one chart per model and metric.
    #[arg(long, value_name = "OUT.html", value_parser = super::report_file)]
    pub html: Option<PathBuf>,
    /// Points on each side of a boundary in the two-window test.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub window: u32,
    /// Gate settings (TOML) for the noise and tolerance per metric (default: the newest
    /// baseline's `[gate]` table).
    #[arg(long, value_name = "FILE")]
    pub gate: Option<PathBuf>,
    /// Print every series, not only those with a change point.
    #[arg(long)]
    pub all: bool,
}
