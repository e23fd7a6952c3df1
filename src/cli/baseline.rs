//! Flags of `perfgate baseline …`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Build a baseline TOML file from JSON Lines records (`perfgate import`/`perfgate run`).
    Record(Box<RecordArgs>),
    /// Show a baseline: a summary table, or its records as JSON Lines with `--json`.
    Show(ShowArgs),
    /// Print the JSON Schema of the baseline file format.
    Schema,
    /// Print each row's noise as the gate estimates it: the standard deviations (log scale,
    /// ≈ relative) between sessions, between launches of a session and between runs of a
    /// launch, with their degrees of freedom, the value the gate uses (moderated toward the
    /// metric's other rows), and how many launches of a new session an unchanged engine would
    /// likely need to pass; then each model's engine-wide series.
    Noise(NoiseArgs),
    /// Calibrate: build (or extend, with `--runs-from`) a baseline from A/A launches of one
    /// engine recorded over ≥ 2 sessions (e.g. two `perfgate check --runs N` invocations), so
    /// that the gate measures the between-session variance instead of assuming it; prints the
    /// noise profile. Refuses records of fewer than 2 sessions.
    Calibrate(Box<RecordArgs>),
    /// Make checked results the new baseline, with provenance (source report, commit, date);
    /// refuses results whose check failed unless `--force`, and prints what changed.
    Promote(PromoteArgs),
}

#[derive(Debug, Args)]
pub struct NoiseArgs {
    /// The baseline file (TOML), or records (`.jsonl`).
    pub file: PathBuf,
    /// Gate settings on top of the baseline's `[gate]` table (tolerances, priors).
    #[arg(long)]
    pub gate: Option<PathBuf>,
    /// Print JSON Lines (one object per row) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// The results to promote: JSON Lines records (e.g. `perfgate-out/results.jsonl`).
    #[arg(long, value_name = "RECORDS.jsonl")]
    pub from: PathBuf,
    /// The baseline file to write.
    #[arg(long, value_name = "BASELINE.toml")]
    pub to: PathBuf,
    /// The check report of these results (default: `report.json` next to them).
    #[arg(long, value_name = "REPORT.json")]
    pub report: Option<PathBuf>,
    /// Replace the runs of an existing baseline (keeping its engine, launch and model settings).
    #[arg(long, conflicts_with = "append")]
    pub replace: bool,
    /// Add the results as further runs of an existing baseline.
    #[arg(long)]
    pub append: bool,
    /// Promote even when the check failed or errored, no check report is found, or the report
    /// did not gate these exact bytes (their SHA-256).
    #[arg(long)]
    pub force: bool,
    /// Date of the measurements in the provenance (default: today, UTC).
    #[arg(long)]
    pub date: Option<String>,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Records (JSON Lines), one run per record.
    #[arg(required = true)]
    pub records: Vec<PathBuf>,
    /// The baseline file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Start from this baseline: keep its engine, provenance and runs, and append the new
    /// records as further runs.
    #[arg(long)]
    pub runs_from: Option<PathBuf>,
    /// Engine name (default: the records' engine).
    #[arg(long)]
    pub engine: Option<String>,
    /// Engine version (default: the records' engine version).
    #[arg(long)]
    pub engine_version: Option<String>,
    /// Container image the engine ran in.
    #[arg(long)]
    pub image: Option<String>,
    /// How the engine was installed when not from an image.
    #[arg(long)]
    pub install: Option<String>,
    /// Launch preset for `[engine.launch]` (`vllm-docker`, `sglang-docker`, `lmdeploy`, …).
    #[arg(long)]
    pub preset: Option<String>,
    /// Hardware the runs were measured on.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Who or what ran the benchmark (a CI runner, a person).
    #[arg(long)]
    pub runner: Option<String>,
    /// Date of the measurements (free text, e.g. `2025-08-20`).
    #[arg(long)]
    pub date: Option<String>,
    /// A note for reviewers.
    #[arg(long)]
    pub notes: Option<String>,
    /// Source files to list in the provenance instead of those named by the records.
    #[arg(long = "source")]
    pub sources: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The baseline file.
    pub file: PathBuf,
    /// Print the records (one JSON object per line) instead of a table.
    #[arg(long)]
    pub json: bool,
}
