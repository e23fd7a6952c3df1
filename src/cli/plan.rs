//! Flags of `perfgate plan`, and `--plan FILE` of `check` and `ab`: the plan's design unless a
//! flag on the command line says otherwise.

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

use super::{num, Cli, Command};

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// A baseline file (TOML), or records (`.jsonl`, one or more files: e.g. a corpus's
    /// launches).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Gate settings on top of the baseline's `[gate]` table.
    #[arg(long, value_name = "FILE")]
    pub gate: Option<PathBuf>,
    /// The change to detect, in percent, worse on every metric (a uniform slowdown).
    #[arg(long, default_value_t = 5.0, value_parser = num::percent)]
    pub delta_pct: f64,
    /// The check's family-wise level (default: the gate's `alpha`).
    #[arg(long, value_parser = num::probability)]
    pub alpha: Option<f64>,
    /// The chance of detecting the change.
    #[arg(long, default_value_t = 0.95, value_parser = num::probability)]
    pub power: f64,
    /// Seconds of start-up per launch (start, warm-up, stop); default: from --launches-tsv.
    #[arg(long, value_name = "SECONDS", value_parser = num::secs)]
    pub startup_s: Option<f64>,
    /// A table of launches' wall seconds (tab-separated, columns `file` and `seconds`, as the
    /// corpora's `launches.tsv`): start-up = wall time less the launch's runs.
    #[arg(long, value_name = "FILE")]
    pub launches_tsv: Option<PathBuf>,
    /// Most runs per launch to consider.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_runs_per_launch: u32,
    /// Most launches (or pairs) to consider.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub max_launches: u32,
    /// A `check` design to compare with: candidate launches (the quick start's 2).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub compare_launches: u32,
    /// An `ab` design to compare with: pairs (the quick start's 6).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub compare_pairs: u32,
    /// Runs per launch of the designs to compare with.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub compare_runs_per_launch: u32,
    /// Print the plan as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write the suite's designs to this file, for `check --plan` and `ab --plan`.
    #[arg(long, value_name = "PLAN.toml")]
    pub save: Option<PathBuf>,
}

/// Apply `--plan FILE` of `check` (launches → `--runs`, `--runs-per-launch`) or `ab`
/// (launches → `--max-launches`, `--runs-per-launch`): a flag given on the command line wins,
/// and a note says so.
pub fn apply(cli: &mut Cli, m: &ArgMatches) -> Result<(), clap::Error> {
    let (path, sub) = match (&cli.command, m.subcommand()) {
        (Command::Check(a), Some((_, sub))) => (a.live.plan.clone(), sub),
        (Command::Ab(a), Some((_, sub))) => (a.plan.clone(), sub),
        _ => return Ok(()),
    };
    let Some(path) = path else { return Ok(()) };
    let shown = path.display().to_string();
    let bad = |msg: String| clap::Error::raw(clap::error::ErrorKind::ValueValidation, msg + "\n");
    let text = std::fs::read_to_string(&path).map_err(|e| bad(format!("--plan {shown}: {e}")))?;
    let plan = crate::gate::plan::PlanFile::parse(&text, &shown).map_err(|e| bad(e.to_string()))?;
    let explicit = |id: &str| sub.value_source(id) == Some(ValueSource::CommandLine);
    let (design, launches_id, launches, runs) = match &mut cli.command {
        Command::Check(a) => (
            plan.check,
            "runs",
            &mut a.live.runs,
            &mut a.live.launch.runs_per_launch,
        ),
        Command::Ab(a) => (
            plan.ab,
            "max_launches",
            &mut a.max_launches,
            &mut a.launch.runs_per_launch,
        ),
        _ => return Ok(()),
    };
    let Some(d) = design else {
        return Err(bad(format!(
            "--plan {shown}: no design for this command in the file"
        )));
    };
    for (id, slot, value) in [
        (launches_id, launches, d.launches),
        ("runs_per_launch", runs, d.runs_per_launch),
    ] {
        let flag = format!("--{}", id.replace('_', "-"));
        if explicit(id) {
            eprintln!(
                "perfgate: note: {flag} {} from the command line wins over the plan's {value}",
                *slot
            );
        } else {
            *slot = value;
        }
    }
    Ok(())
}

impl PlanArgs {
    /// The question these flags ask, at the family-wise level `alpha`.
    pub fn question(&self, alpha: f64) -> crate::gate::plan::Question {
        crate::gate::plan::Question {
            delta_pct: self.delta_pct,
            alpha: self.alpha.unwrap_or(alpha),
            power: self.power,
            max_runs: self.max_runs_per_launch,
            max_launches: self.max_launches,
        }
    }

    /// The designs to compare the plan with.
    pub fn compare(&self) -> crate::gate::plan::Compare {
        crate::gate::plan::Compare {
            launches: self.compare_launches,
            pairs: self.compare_pairs,
            runs_per_launch: self.compare_runs_per_launch,
        }
    }
}
