//! Flags of `perfgate check` in live mode (no `--results`): launch the engine of each model of
//! the baseline, run its suite, gate. Flattened into `check`'s flags.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::num;
pub use crate::runner::Warmup;

/// What `--rerun` re-runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Rerun {
    /// Scenarios whose verdict was inconclusive.
    Inconclusive,
}

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Live mode (no --results: launch engines and run the suite)")]
pub struct LiveArgs {
    /// Print every rendered launch command and scenario; run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Engine launches per model: each is a fresh engine, warmed up, then every scenario in the
    /// file's order, --runs-per-launch times (same dataset seeds). Records carry the launch id.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,

    /// Engine command template replacing the preset's (e.g. the engine this PR built).
    /// Placeholders: {model} {served_model_name} {tp} {port} {image} {container} {extra_args}.
    #[arg(long, value_name = "TEMPLATE")]
    pub engine_cmd: Option<String>,

    /// Container image replacing the file's (docker presets).
    #[arg(long, value_name = "IMAGE")]
    pub engine_image: Option<String>,

    /// Do not launch anything: benchmark the server already at this URL.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Re-run scenarios with this verdict (with a fresh engine per model) after the first gate.
    #[arg(long, value_enum)]
    pub rerun: Option<Rerun>,

    /// Most re-run rounds with --rerun.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub max_reruns: u32,

    /// When the gate FAILs, launch each model with a regressed test this many more times and
    /// decide again on all of the candidate's launches: the check FAILs only if that decision
    /// FAILs too (a row that regressed once is never passed). One disturbed launch is otherwise
    /// a FAIL the gate cannot tell from a regression; 0 turns confirmation off. With --results
    /// (nothing to launch) each model's last N launches are held back as the confirmation: the
    /// FAIL stands only if the decision without them FAILs too.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=20))]
    pub confirm: u32,

    /// Take --runs and --runs-per-launch from a plan's `[check]` (`perfgate plan --save`);
    /// flags given on the command line win, with a note.
    #[arg(long, value_name = "PLAN.toml")]
    pub plan: Option<PathBuf>,

    /// Also write the measured runs as a baseline file (the suite plus the numbers).
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,

    #[command(flatten)]
    pub launch: LaunchArgs,
}

/// How each engine launch is made, run and watched: shared by `perfgate check` (live mode) and
/// `perfgate ab`.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Engine launches")]
pub struct LaunchArgs {
    /// Runs of the suite inside one launch (they share the engine's state, so they count as
    /// one launch's runs, not as independent replicates).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs_per_launch: u32,

    /// Run the scenarios of a launch in a reproducible shuffled order (the same for every model
    /// and side) instead of the file's order.
    #[arg(long)]
    pub shuffle_scenarios: bool,

    /// Do not reset the engine's caches between scenarios (vLLM `POST /reset_prefix_cache`,
    /// SGLang `POST /flush_cache`, llama.cpp `"cache_prompt": false` in every request).
    #[arg(long)]
    pub no_cache_reset: bool,

    /// Only these models (comma-separated names, or the part after the last `/`).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,

    /// Port for the launched engine (default: the file's, else the preset's).
    #[arg(long)]
    pub port: Option<u16>,

    /// Where results records, engine logs, engine metrics and the reports are written.
    #[arg(long, default_value = "perfgate-out", value_name = "DIR")]
    pub output_dir: PathBuf,

    /// The recording session the records belong to (default: a new one per invocation, named
    /// by its start time and process id). Give invocations of one sitting the same id: the
    /// gate treats launches of one session as sharing the machine's state of that time.
    #[arg(long, env = "PERFGATE_SESSION", value_name = "ID", value_parser = session_id)]
    pub session: Option<String>,

    /// Seconds an engine may take to become ready (default: the file's, else the preset's).
    #[arg(long, value_name = "SECS", value_parser = num::secs)]
    pub start_timeout: Option<f64>,

    /// Seconds between SIGTERM and SIGKILL when stopping an engine.
    #[arg(long, default_value_t = 30.0, value_name = "SECS", value_parser = num::secs)]
    pub stop_grace: f64,

    /// An engine whose /health fails this long during a scenario counts as hung.
    #[arg(long, default_value_t = 120.0, value_name = "SECS", value_parser = num::secs)]
    pub unresponsive_timeout: f64,

    /// Seconds between /metrics samples during a scenario.
    #[arg(long, default_value_t = 1.0, value_name = "SECS", value_parser = num::secs)]
    pub metrics_interval: f64,

    /// No telemetry beside the scenarios. On by default: `nvidia-smi` when on PATH (clocks,
    /// power, temperature, throttle reasons), the CPU's load, clocks and steal time, and the
    /// engine's /metrics gauges, sampled on a thread of their own, plus a 0.2 s calibration loop
    /// timed before each scenario; summarised in each record's `telemetry` key.
    #[arg(long)]
    pub no_telemetry: bool,

    /// Seconds between telemetry samples.
    #[arg(long, default_value_t = 1.0, value_name = "SECS", value_parser = num::secs)]
    pub telemetry_interval: f64,

    /// Warm-up after each launch: a discarded pass of every scenario's shape (its lengths and
    /// concurrency, prompts from another seed) before the measured runs. `auto`: per scenario,
    /// its max concurrency (or prompt count) requests, at most its prompt count; N: N requests
    /// per scenario; 0: no warm-up.
    #[arg(long, default_value = "auto", value_parser = parse_warmup, value_name = "auto|N")]
    pub warmup_requests: Warmup,

    /// Tokenizer for prompt synthesis for every model (a tokenizer.json path, or `server`).
    #[arg(long)]
    pub tokenizer: Option<String>,

    /// ShareGPT JSON for `sharegpt` scenarios.
    #[arg(long, value_name = "FILE", env = "PERFGATE_SHAREGPT")]
    pub dataset_path: Option<PathBuf>,

    /// Per-request deadline in seconds (default: none; a hung engine is caught by the health watch).
    #[arg(long, value_name = "SECS", value_parser = num::secs)]
    pub request_timeout: Option<f64>,

    /// Hard limit in seconds for one scenario run, after which it counts as an engine fault.
    #[arg(long, default_value_t = 10800.0, value_name = "SECS", value_parser = num::secs)]
    pub scenario_timeout: f64,
}

fn parse_warmup(s: &str) -> Result<Warmup, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(Warmup::Auto);
    }
    match s.parse::<u32>() {
        Ok(n) if n <= 100_000 => Ok(Warmup::Requests(n)),
        _ => Err(format!(
            "expected `auto` or a number of requests (0 to 100000), got `{s}`"
        )),
    }
}

impl LaunchArgs {
    /// The plan's overrides from these flags and one arm's engine (`--engine-cmd`,
    /// `--engine-image`, `--base-url`).
    pub fn overrides(
        &self,
        engine_cmd: Option<String>,
        engine_image: Option<String>,
        base_url: Option<String>,
    ) -> Result<crate::suite::Overrides, String> {
        let start_timeout = match self.start_timeout {
            Some(v) => Some(LaunchArgs::secs("--start-timeout", v)?),
            None => None,
        };
        Ok(crate::suite::Overrides {
            engine_cmd,
            engine_image,
            port: self.port,
            start_timeout,
            models: self.models.clone(),
            tokenizer: self.tokenizer.clone(),
            base_url,
        })
    }

    /// The runner's settings from these flags.
    pub fn settings(&self) -> Result<crate::runner::Settings, String> {
        let secs = LaunchArgs::secs;
        Ok(crate::runner::Settings {
            grace: secs("--stop-grace", self.stop_grace)?,
            unresponsive: secs("--unresponsive-timeout", self.unresponsive_timeout)?,
            metrics_every: secs("--metrics-interval", self.metrics_interval)?,
            telemetry: match self.no_telemetry {
                true => None,
                false => Some(secs("--telemetry-interval", self.telemetry_interval)?),
            },
            warmup: self.warmup_requests,
            shuffle: self.shuffle_scenarios,
            cache_reset: !self.no_cache_reset,
            scenario_timeout: secs("--scenario-timeout", self.scenario_timeout)?,
            request_timeout: match self.request_timeout {
                Some(v) => Some(secs("--request-timeout", v)?),
                None => None,
            },
            dataset_path: self.dataset_path.clone(),
            session: self.session.clone(),
        })
    }

    /// Positive, finite seconds, or a usage error naming the flag.
    pub fn secs(flag: &str, v: f64) -> Result<std::time::Duration, String> {
        if v.is_finite() && v > 0.0 {
            Ok(std::time::Duration::from_secs_f64(v))
        } else {
            Err(format!(
                "{flag} must be a positive number of seconds, got {v}"
            ))
        }
    }
}

/// A session id: 1 to 64 letters, digits, `.`, `_`, `:` or `-` (it lands in records and
/// reports, never in a file name).
fn session_id(s: &str) -> Result<String, String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-');
    if (1..=64).contains(&s.len()) && s.chars().all(ok) {
        Ok(s.to_string())
    } else {
        Err("a session id is 1 to 64 letters, digits, '.', '_', ':' or '-'".into())
    }
}
