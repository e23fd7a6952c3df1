//! Command-line interface (clap derive). Each subcommand's flags live in their own file.

use clap::{Parser, Subcommand, ValueEnum};

pub mod ab;
pub mod baseline;
pub mod bisect;
pub mod check;
pub mod comment;
pub mod compare;
pub mod history;
pub mod import;
pub mod live;
pub mod merge;
pub mod num;
pub mod plan;
pub mod report;
pub mod run;

/// The exit codes every subcommand uses, shown at the end of `--help` and in the man page.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  pass (or the command did its job)
  1  regression (or inconclusive under --fail-on inconclusive)
  2  usage, configuration or input error
  3  engine or infrastructure error";

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
#[command(name = "perfgate", version, about, long_about = None, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmark one scenario against a running OpenAI-compatible server (like `vllm bench serve`).
    // Long flags may be shortened to any unambiguous prefix (`--random-input 200`), as
    // argparse allows.
    #[command(allow_negative_numbers = true, infer_long_args = true)]
    Run(Box<run::RunArgs>),
    /// Import benchmark results (vLLM/SGLang/LMDeploy logs, JSON, JSONL, CSV) as JSON Lines records.
    Import(import::ImportArgs),
    /// Record, show or validate baseline files.
    #[command(subcommand)]
    Baseline(baseline::BaselineCommand),
    /// Gate results against a baseline with statistics; exit 1 on a regression.
    Check(Box<check::CheckArgs>),
    /// A/B on this runner: the base and the candidate engine launched in pairs, paired
    /// statistics after each pair until decided; exit 1 on a regression.
    Ab(Box<ab::AbArgs>),
    /// Find the revision that made a regression: `ab` comparisons between revisions, bisected;
    /// exit 0 when a culprit is named, 1 when none is.
    Bisect(Box<bisect::BisectArgs>),
    /// The design that reaches a verdict for the fewest engine-minutes: per row the noise
    /// between sessions, launches and runs (variance components) and the cost of each level,
    /// then the launches and runs per launch (`check`) or pairs (`ab`) that detect a change of
    /// δ at the gate's level with the power asked for; `--save` writes them for `--plan`.
    Plan(Box<plan::PlanArgs>),
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
    /// Print a shell completion script to standard output (or write all of them to --dir).
    #[command(hide = true)]
    Completions {
        /// The shell to complete for (bash, zsh, fish, elvish, powershell).
        #[arg(value_enum, required_unless_present = "dir")]
        shell: Option<clap_complete::Shell>,
        /// Write the scripts of every shell into this directory instead.
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
    },
    /// Print the man page (roff) to standard output (or write one page per command to --dir).
    #[command(hide = true)]
    Man {
        /// Write perfgate.1 and one perfgate-COMMAND.1 per subcommand into this directory.
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
    },
}

/// The command line with vLLM's underscore spellings of long options (`--dataset_name x`,
/// `--num_prompts=5`) turned into perfgate's (`--dataset-name`); argparse accepts both.
/// Values and everything after a bare `--` are left alone.
pub fn normalize_args<I, T>(args: I) -> Vec<std::ffi::OsString>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    let mut out = Vec::new();
    let mut options = true;
    for a in args {
        let a: std::ffi::OsString = a.into();
        match a.to_str() {
            Some("--") => {
                options = false;
                out.push(a);
            }
            Some(s) if options && s.starts_with("--") && s.len() > 2 => {
                let (name, value) = match s.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (s, None),
                };
                let mut t = format!("--{}", name[2..].replace('_', "-"));
                if let Some(v) = value {
                    t.push('=');
                    t.push_str(v);
                }
                out.push(t.into());
            }
            _ => out.push(a),
        }
    }
    out
}

/// A report file (`--markdown`, `--html`): a path, never `-`. Only `--json -` means stdout (the
/// table then goes to stderr); taken as a path, `-` would quietly become a file of that name.
pub fn report_file(s: &str) -> Result<std::path::PathBuf, String> {
    match s {
        "-" => Err(
            "`-` is not stdout for this report (only `--json -` is one): give a file path".into(),
        ),
        _ => Ok(s.into()),
    }
}

/// Parse a command line (after [`normalize_args`]).
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    use clap::{CommandFactory, FromArgMatches};
    let m = <Cli as CommandFactory>::command().try_get_matches_from(normalize_args(args))?;
    let mut cli = <Cli as FromArgMatches>::from_arg_matches(&m)?;
    plan::apply(&mut cli, &m)?;
    Ok(cli)
}

/// The shells completion scripts are shipped for, with their file names.
pub const COMPLETION_FILES: [(clap_complete::Shell, &str); 3] = [
    (clap_complete::Shell::Bash, "perfgate.bash"),
    (clap_complete::Shell::Zsh, "_perfgate"),
    (clap_complete::Shell::Fish, "perfgate.fish"),
];

/// The completion script of `shell` for the whole command line.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "perfgate", &mut out);
    out
}

/// The man pages (section 1, roff): `perfgate.1`, then `perfgate-COMMAND.1` for every visible
/// subcommand, as (file name, contents).
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let render = |c: clap::Command| {
        let mut out = Vec::new();
        clap_mangen::Man::new(c)
            .render(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    };
    let mut pages = vec![("perfgate.1".to_string(), render(cmd.clone()))];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("perfgate-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .bin_name(name.replace('-', " "));
        pages.push((format!("{name}.1"), render(page)));
    }
    pages
}
