//! `perfgate bisect`: from "the bad revision is slower than the good one" to the revision that
//! did it. Every step is a same-runner A/B comparison (`perfgate ab`) between two revisions'
//! engines; the search ([`search`], pure) confirms the end points differ, then bisects with error
//! levels planned over the whole search, refines where two changes show, and reports the culprit
//! or the narrowest range still open. The state lives in the output folder ([`state`]): a killed
//! bisect restarted with the same arguments loses no finished step.

pub mod live;
pub mod render;
pub mod revs;
pub mod search;
pub mod state;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::baseline::Baseline;
use crate::gate::GateConfig;

/// A bisect that cannot start (usage, input) or that the engines or the machine stopped.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Infra(String),
}

/// Where the ordered revisions come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file, one revision a line, oldest first.
    File(PathBuf),
    /// `git rev-list` of a repository (first parents from good to bad).
    Repo(PathBuf),
}

/// How a revision's engine starts.
#[derive(Debug, Clone)]
pub enum EngineTemplate {
    /// `--engine-cmd`: a command template; `{rev}` becomes `"$PERFGATE_REV"`.
    Cmd(String),
    /// `--engine-image`: an image template; `{rev}` becomes the (validated) revision.
    Image(String),
}

/// Everything a bisect needs, validated by the command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub good: String,
    pub bad: String,
    pub source: Source,
    pub suite: PathBuf,
    pub engine: EngineTemplate,
    pub prepare: Option<String>,
    pub scenarios: Vec<String>,
    pub metrics: Vec<String>,
    pub gate: Option<PathBuf>,
    pub max_minutes: Option<f64>,
    pub max_pairs: u32,
    pub runs_per_launch: u32,
    pub output_dir: PathBuf,
    /// The plan's overrides (port, models, tokenizer, …); the engine is set per revision.
    pub overrides: crate::suite::Overrides,
    pub settings: crate::runner::Settings,
}

/// How a bisect ended; the discriminant indexes the exit codes (0, 1, 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// At least one culprit named (exit 0).
    Culprit = 0,
    /// Not reproduced, or the change not located within the budget (exit 1).
    NoCulprit = 1,
    /// An engine, a preparation, a signal or a failed save stopped it (exit 3).
    Failed = 2,
}

/// The arguments a resume must match.
fn identity(o: &Options, revs: &[String], suite_text: &str, gate_text: &str) -> state::Identity {
    let mut id = state::Identity::new();
    let mut put = |k: &str, v: String| {
        id.insert(k.to_string(), v);
    };
    put("revisions", revs.join(" "));
    put(
        "suite",
        format!(
            "{} ({})",
            o.suite.display(),
            state::digest(suite_text.as_bytes())
        ),
    );
    put("gate", state::digest(gate_text.as_bytes()));
    put(
        "engine",
        match &o.engine {
            EngineTemplate::Cmd(t) => format!("--engine-cmd {t}"),
            EngineTemplate::Image(t) => format!("--engine-image {t}"),
        },
    );
    put("prepare", o.prepare.clone().unwrap_or_default());
    put("scenarios", o.scenarios.join(","));
    put("metrics", o.metrics.join(","));
    put("models", o.overrides.models.join(","));
    put("max_pairs", o.max_pairs.to_string());
    put("runs_per_launch", o.runs_per_launch.to_string());
    id
}

/// The gate settings of every step: the suite's `[gate]`, the `--gate` file, `--metrics`.
fn gate_of(o: &Options, file: &Baseline) -> Result<(GateConfig, String), BisectError> {
    let usage = BisectError::Usage;
    let mut cfg = file.gate.clone().unwrap_or_default();
    let mut text = String::new();
    if let Some(p) = &o.gate {
        text = std::fs::read_to_string(p)
            .map_err(|e| usage(format!("cannot read {}: {e}", p.display())))?;
        cfg = cfg.merged(&GateConfig::load(p).map_err(|e| usage(e.to_string()))?);
    }
    if !o.metrics.is_empty() {
        cfg.gated = Some(o.metrics.clone());
    }
    cfg.validate()
        .map_err(|e| usage(format!("{}: gate settings: {e}", o.suite.display())))?;
    Ok((cfg, text))
}

/// Run a bisect: revisions, suite and templates checked before anything starts; the finished
/// steps of an earlier run in the same folder reloaded; the reports written to the folder and
/// the text printed.
pub fn exec(o: &Options) -> Result<Outcome, BisectError> {
    let usage = BisectError::Usage;
    for (flag, r) in [("--good", &o.good), ("--bad", &o.bad)] {
        revs::validate(r).map_err(|e| usage(format!("{flag}: {e}")))?;
    }
    let (list, shown) = match &o.source {
        Source::File(p) => (revs::read_file(p)?, p.display().to_string()),
        Source::Repo(p) => (revs::from_git(p, &o.good, &o.bad)?, p.display().to_string()),
    };
    let revs = match &o.source {
        Source::File(_) => revs::range(list, &o.good, &o.bad, &shown)?,
        Source::Repo(_) => list,
    };
    for r in &revs {
        revs::validate(r).map_err(|e| usage(format!("{shown}: {e}")))?;
    }
    let suite_text = std::fs::read_to_string(&o.suite)
        .map_err(|e| usage(format!("cannot read {}: {e}", o.suite.display())))?;
    let file = Baseline::load(&o.suite).map_err(|e| usage(e.to_string()))?;
    let (cfg, gate_text) = gate_of(o, &file)?;
    live::plan_of(o, &file, &revs[0]).map_err(usage)?;
    let id = identity(o, &revs, &suite_text, &gate_text);
    let dir = &o.output_dir;
    std::fs::create_dir_all(dir)
        .map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
    let saved = state::load(dir, &id)?;
    if !saved.is_empty() {
        eprintln!(
            "perfgate: bisect: resuming: {} finished step(s) in {}",
            saved.len(),
            dir.join(state::STATE_FILE).display()
        );
    }
    let rt = crate::runner::runtime().map_err(|e| BisectError::Infra(e.to_string()))?;
    let interrupt = crate::runner::interrupt_on_signal(&rt);
    let budget = search::Budget {
        n: revs.len(),
        alpha: cfg.alpha(),
        equivalence_alpha: cfg.equivalence_alpha(),
        margin: 2,
    };
    let mut live = live::Live {
        opts: o,
        file: &file,
        cfg: &cfg,
        revs: &revs,
        rt: &rt,
        interrupt,
        deadline: o
            .max_minutes
            .map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0)),
        prepared: Default::default(),
        infra: false,
    };
    let mut resume = state::Resume::new(&mut live, dir, id, saved);
    let found = search::run(budget, &mut resume);
    let reused = resume.reused;
    let save_failed = resume.error.take();
    drop(resume);
    let failed = live.infra || save_failed.is_some();
    drop(live);
    rt.shutdown_timeout(Duration::from_secs(1));
    let report = render::build(&revs, &found, budget, reused);
    let write = |name: &str, text: String| {
        crate::atomic::write(&dir.join(name), text).map_err(|e| BisectError::Infra(e.to_string()))
    };
    write("bisect.json", render::render_json(&report))?;
    write("bisect.md", render::render_markdown(&report))?;
    write("bisect.html", render::render_html(&report))?;
    print!("{}", render::render_text(&report));
    eprintln!(
        "perfgate: bisect reports, steps and engine logs are in {}",
        dir.display()
    );
    Ok(if failed {
        Outcome::Failed
    } else if !report.culprits.is_empty() {
        Outcome::Culprit
    } else {
        Outcome::NoCulprit
    })
}
