//! `perfgate check --results`: read the baseline and the results, gate them, write the reports,
//! and map the top verdict to the exit code; the live check (`super::live`) shares
//! [`ensure_compared`] and [`publish`].

use std::path::{Path, PathBuf};

use super::{exit_for, Exit};
use crate::cli::check::CheckArgs;
use crate::cli::FailOn;
use crate::gate::{self, GateConfig, Report, Side};
use crate::record::ScenarioResult;
use crate::report;

/// Where the reports go and what fails the check.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// JSON report file (`-` = stdout; the table then goes to stderr).
    pub json: Option<PathBuf>,
    /// Markdown report file.
    pub markdown: Option<PathBuf>,
    /// HTML sign-off page.
    pub html: Option<PathBuf>,
    pub fail_on: FailOn,
    /// Colour the terminal table.
    pub color: bool,
    /// The report kind (hidden marker of the PR comment).
    pub kind: String,
    /// `--github`: post the report at the end (see `app::comment::after_check`).
    pub github: crate::cli::comment::CheckGithubArgs,
}

impl ReportOptions {
    pub fn from_args(args: &CheckArgs) -> ReportOptions {
        ReportOptions {
            json: args.json.clone(),
            markdown: args.markdown.clone(),
            html: args.html.clone(),
            fail_on: args.fail_on,
            color: args.color.enabled(),
            kind: args.kind.clone(),
            github: args.github.clone(),
        }
    }
}

/// A check that compared nothing must never pass: see [`gate::nothing_compared`].
pub fn ensure_compared(
    report: &Report,
    cfg: &GateConfig,
    baseline: &[ScenarioResult],
    current: &[ScenarioResult],
) -> anyhow::Result<()> {
    match gate::nothing_compared(report, cfg, baseline, current) {
        Some(why) => Err(anyhow::Error::msg(why)),
        None => Ok(()),
    }
}

/// Print the terminal table, write the requested reports (the HTML page plots the sides'
/// records), post them with `--github`, and return the exit code.
pub fn publish(
    report: &Report,
    baseline: &[ScenarioResult],
    current: &[ScenarioResult],
    opts: &ReportOptions,
) -> anyhow::Result<Exit> {
    let table = report::render_terminal(report, opts.color);
    let json_to_stdout = opts.json.as_deref() == Some(Path::new("-"));
    if json_to_stdout {
        eprint!("{table}");
        print!("{}", report::render_json(report));
    } else {
        print!("{table}");
    }
    if let Some(line) = report::telemetry::throttle_line(current) {
        match json_to_stdout {
            true => eprintln!("{line}"),
            false => println!("{line}"),
        }
    }
    if let Some(p) = opts.json.as_deref().filter(|_| !json_to_stdout) {
        write(p, &report::render_json(report))?;
    }
    if let Some(p) = &opts.markdown {
        write(p, &report::render_markdown(report))?;
    }
    if let Some(p) = &opts.html {
        super::report::write_check_page(report, baseline, current, p)?;
    }
    let json = opts.json.as_deref().filter(|_| !json_to_stdout);
    super::comment::after_check(
        report,
        json,
        &report::render_markdown(report),
        &opts.github,
        exit_for(report.verdict, opts.fail_on),
    )
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    Ok(crate::atomic::write(path, text)?)
}

pub(crate) fn exec(args: CheckArgs) -> anyhow::Result<Exit> {
    use super::inputs::{gate_config, load_baseline};
    let (base, base_cfg, base_side) = load_baseline(&args.baseline)?;
    let cfg = gate_config(base_cfg, args.gate.as_deref())?;
    if args.results.is_empty() {
        anyhow::bail!("no --results given: pass one or more JSON Lines files of records");
    }
    let (mut current, mut cur_side) = (Vec::new(), Side::default());
    for p in &args.results {
        let read = super::read_records(p)?;
        cur_side.add_source(p.display().to_string(), read.sha256);
        current.extend(read.records);
    }
    if current.is_empty() {
        anyhow::bail!("the results hold no records");
    }
    if let Some(msg) = gate::duplicate(&current) {
        anyhow::bail!("--results: {msg}");
    }
    if let Some(msg) = gate::duplicate(&base) {
        anyhow::bail!("{}: {msg}", args.baseline.display());
    }
    let opts = ReportOptions::from_args(&args);
    let input = gate::Inputs {
        kind: &opts.kind,
        base_side,
        cur_side,
        ..gate::Inputs::new(&base, &current, &cfg)
    };
    // Nothing to launch: a FAIL is confirmed on the results' own launches, the last held back.
    let report = gate::confirm_held_out(input, args.live.confirm);
    ensure_compared(&report, &cfg, &base, &current)?;
    publish(&report, &base, &current, &opts)
}
