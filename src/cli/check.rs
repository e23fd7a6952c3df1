//! Flags of `perfgate check`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::FailOn;

/// When to colour the terminal report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Colour only for a terminal without NO_COLOR, unless forced.
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                use std::io::IsTerminal;
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The baseline: a baseline TOML file (or JSON Lines records).
    #[arg(long, value_name = "FILE")]
    pub baseline: PathBuf,
    /// Results to gate: JSON Lines records from `perfgate run`/`import` (one or more files).
    #[arg(long, value_name = "RECORDS.jsonl", num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// Also write the report as JSON to this file (`-` for stdout, instead of the table).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Also write the report as markdown (PR comment, job summary) to this file.
    #[arg(long, value_name = "OUT", value_parser = super::report_file)]
    pub markdown: Option<PathBuf>,
    /// Also write the sign-off page (self-contained HTML with plots) to this file.
    #[arg(long, value_name = "OUT.html", value_parser = super::report_file)]
    pub html: Option<PathBuf>,
    /// Gate settings (TOML) applied over the baseline's `[gate]` table.
    #[arg(long, value_name = "FILE")]
    pub gate: Option<PathBuf>,
    /// Exit 1 on regressions only (default), also on inconclusive rows, or never.
    #[arg(long, value_enum, default_value_t = FailOn::Regression)]
    pub fail_on: FailOn,
    /// Colour the terminal table.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// The report kind named in the hidden marker of the markdown (`<!-- perfgate:KIND -->`).
    #[arg(long, default_value = "check")]
    pub kind: String,
    #[command(flatten)]
    pub github: crate::cli::comment::CheckGithubArgs,
    #[command(flatten)]
    pub live: crate::cli::live::LiveArgs,
}
