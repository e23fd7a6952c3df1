//! Orchestration: the only module that knows every other one. Each subcommand has its own file;
//! this one dispatches and maps outcomes to the documented exit codes.

use std::process::ExitCode;

use crate::cli::{Cli, Command, FailOn};
use crate::gate::TopVerdict;

mod ab;
mod baseline;
mod check;
mod comment;
mod compare;
mod fake;
mod history;
mod import;
mod inputs;
mod live;
mod merge;
mod plan;
mod promote;
mod report;
mod run;

/// Documented exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything passed (or the command did its job).
    Pass = 0,
    /// A regression was found (or an inconclusive verdict under `--fail-on inconclusive`).
    Regression = 1,
    /// Usage, configuration or input error.
    Usage = 2,
    /// Engine or infrastructure error.
    Infra = 3,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

/// An error caused by the engine or the infrastructure rather than by the user's input
/// (exit code 3). Wrap with `anyhow::Error::new(Infra(...))` or [`infra`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Infra(pub String);

/// Build an infrastructure error (exit code 3).
pub fn infra(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Infra(msg.into()))
}

/// The exit code a top verdict stands for under `--fail-on`: the one rule for `check`,
/// `comment` and the check run's conclusion.
pub fn exit_for(verdict: TopVerdict, fail_on: FailOn) -> Exit {
    match (fail_on, verdict) {
        (FailOn::Never, _) | (_, TopVerdict::Pass) => Exit::Pass,
        (_, TopVerdict::Fail) => Exit::Regression,
        (FailOn::Inconclusive, TopVerdict::Inconclusive) => Exit::Regression,
        (FailOn::Regression, TopVerdict::Inconclusive) => Exit::Pass,
        (_, TopVerdict::Error) => Exit::Infra,
    }
}

/// Run a parsed command line and return the process exit code.
pub fn main(cli: Cli) -> ExitCode {
    match dispatch(cli) {
        Ok(exit) => exit.into(),
        Err(err) => {
            eprintln!(
                "perfgate: error: {}",
                crate::redact::text(&crate::text::error_chain(&err))
            );
            if err.chain().any(|c| c.downcast_ref::<Infra>().is_some()) {
                Exit::Infra.into()
            } else {
                Exit::Usage.into()
            }
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Run(a) => run::exec(*a),
        Command::Import(a) => import::exec(a),
        Command::Baseline(c) => baseline::exec(c),
        // No records given: launch the engines and run the suite (live mode).
        Command::Check(a) if a.results.is_empty() => live::exec(&a),
        Command::Check(a) => check::exec(*a),
        Command::Ab(a) => ab::exec(&a),
        Command::Bisect(a) => {
            match crate::bisect::exec(&a.options().map_err(anyhow::Error::msg)?) {
                Ok(o) => Ok([Exit::Pass, Exit::Regression, Exit::Infra][o as usize]),
                Err(crate::bisect::BisectError::Infra(m)) => Err(infra(m)),
                Err(e) => Err(e.into()),
            }
        }
        Command::Plan(a) => plan::exec(*a),
        Command::Compare(a) => compare::exec(a),
        Command::Report(a) => report::exec(a),
        Command::History(a) => history::exec(a),
        Command::Comment(a) => comment::exec(a),
        Command::Merge(a) => merge::exec(a),
        Command::FakeServer(a) => fake::exec(a),
        Command::Completions { shell, dir } => match (shell, dir) {
            (_, Some(dir)) => write_files(
                &dir,
                crate::cli::COMPLETION_FILES
                    .iter()
                    .map(|(sh, name)| (name.to_string(), crate::cli::completions(*sh)))
                    .collect(),
            ),
            (Some(shell), None) => print_bytes(&crate::cli::completions(shell)),
            (None, None) => anyhow::bail!("name a shell or pass --dir"),
        },
        Command::Man { dir: Some(dir) } => write_files(&dir, crate::cli::man_pages()),
        Command::Man { dir: None } => print_bytes(&crate::cli::man_pages().swap_remove(0).1),
    }
}

/// Read a JSON Lines file of records (and the file's SHA-256), printing a warning per ignored
/// unknown key.
pub(crate) fn read_records(path: &std::path::Path) -> anyhow::Result<crate::record::ReadRecords> {
    let read = crate::record::read_jsonl_with_warnings(path)?;
    for w in &read.warnings {
        eprintln!("perfgate: warning: {w}");
    }
    Ok(read)
}

fn write_files(dir: &std::path::Path, files: Vec<(String, Vec<u8>)>) -> anyhow::Result<Exit> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, bytes) in files {
        let path = dir.join(name);
        crate::atomic::write(&path, bytes)?;
        eprintln!("perfgate: wrote {}", path.display());
    }
    Ok(Exit::Pass)
}

fn print_bytes(bytes: &[u8]) -> anyhow::Result<Exit> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(Exit::Pass)
}
