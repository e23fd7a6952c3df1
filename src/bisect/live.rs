//! The live comparator: one bisect step is one `perfgate ab` between two revisions' engines on
//! this runner (the runner's A/B loop, [`crate::runner::Runner::run_ab`], judged with the paired
//! statistics at the step's α), its records, logs and reports in the step's own folder
//! (`steps/NN-rI-rJ/`). A revision reaches its engine as `PERFGATE_REV` (see [`super::revs`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::revs::{command_template, image_template, REV_VAR};
use super::search::{Comparator, Comparison, MetricChange, Request, Verdict};
use super::{EngineTemplate, Options};
use crate::baseline::Baseline;
use crate::gate::{GateConfig, Report, Side, TopVerdict};
use crate::runner::{AbModelRun, AbSpec, Order, Runner};
use crate::suite::{self, Plan};

/// Runs the steps of a bisect on this runner.
pub struct Live<'a> {
    pub opts: &'a Options,
    pub file: &'a Baseline,
    pub cfg: &'a GateConfig,
    pub revs: &'a [String],
    pub rt: &'a tokio::runtime::Runtime,
    pub interrupt: watch::Receiver<bool>,
    /// `--max-minutes` from the start of this invocation.
    pub deadline: Option<Instant>,
    /// Revisions whose `--prepare-cmd` ran in this invocation.
    pub prepared: BTreeSet<usize>,
    /// Set when an engine failure, a failed preparation or a signal stopped the search.
    pub infra: bool,
}

/// The plan of revision `rev` from the suite and the options: its engine template with the
/// revision, `PERFGATE_REV` in the engine's environment, only the chosen scenarios.
pub fn plan_of(opts: &Options, file: &Baseline, rev: &str) -> Result<Plan, String> {
    let mut ov = opts.overrides.clone();
    match &opts.engine {
        EngineTemplate::Cmd(t) => ov.engine_cmd = Some(command_template(t)),
        EngineTemplate::Image(t) => ov.engine_image = Some(image_template(t, rev)),
    }
    let shown = opts.suite.display();
    let mut plan = suite::plan(file, &ov).map_err(|e| format!("{shown}: {e}"))?;
    for mp in &mut plan.models {
        if mp.launch.command.is_none() {
            return Err(format!(
                "{shown}: model {}: bisect launches each revision's engine, so the suite needs a \
                 launchable engine, not a server URL",
                mp.name
            ));
        }
        mp.launch.env.insert(REV_VAR.into(), rev.to_string());
        if !opts.scenarios.is_empty() {
            if let Some(s) = opts
                .scenarios
                .iter()
                .find(|s| !mp.scenarios.iter().any(|x| &x.id == *s))
            {
                return Err(format!(
                    "--scenarios: model {} has no scenario `{s}`",
                    mp.name
                ));
            }
            mp.scenarios.retain(|x| opts.scenarios.contains(&x.id));
        }
    }
    plan.engine_version = Some(rev.to_string());
    Ok(plan)
}

impl Live<'_> {
    /// Run `--prepare-cmd` for revision `i` once per invocation (`sh -c`, the revision in
    /// `PERFGATE_REV`).
    fn prepare(&mut self, i: usize) -> Result<(), String> {
        let Some(t) = &self.opts.prepare else {
            return Ok(());
        };
        if !self.prepared.insert(i) {
            return Ok(());
        }
        let rev = &self.revs[i];
        eprintln!("perfgate: bisect: preparing revision {rev}");
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(command_template(t))
            .env(REV_VAR, rev)
            .stdin(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("--prepare-cmd for {rev}: cannot run sh: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            self.prepared.remove(&i);
            Err(format!(
                "--prepare-cmd for revision {rev} failed ({status})"
            ))
        }
    }

    fn step_dir(&self, req: &Request) -> PathBuf {
        self.opts
            .output_dir
            .join("steps")
            .join(format!("{:02}-r{}-r{}", req.step, req.base, req.cand))
    }

    fn step(&mut self, req: &Request) -> Result<Comparison, String> {
        let left = self
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            return Ok(stopped("the time budget (--max-minutes) was spent".into()));
        }
        self.prepare(req.base)?;
        self.prepare(req.cand)?;
        let (b, c) = (&self.revs[req.base], &self.revs[req.cand]);
        let base = plan_of(self.opts, self.file, b)?;
        let cand = plan_of(self.opts, self.file, c)?;
        let dir = self.step_dir(req);
        set_aside(&dir)?;
        eprintln!(
            "perfgate: bisect step {}: {b} (base) vs {c} (candidate), α = {:.2e}",
            req.step, req.alpha
        );
        let cfg = GateConfig {
            alpha: Some(req.alpha),
            equivalence_alpha: Some(req.equivalence_alpha),
            ..self.cfg.clone()
        };
        let mut runner = Runner::new(
            cand,
            self.opts.settings.clone(),
            &dir,
            self.interrupt.clone(),
        )
        .map_err(|e| e.to_string())?;
        let spec = AbSpec {
            base: &base,
            order: Order::Abba,
            max_pairs: self.opts.max_pairs,
            runs_per_launch: self.opts.runs_per_launch,
            budget: left,
            max_minutes: self.opts.max_minutes,
            gate: &cfg,
            kind: "bisect",
        };
        let t0 = Instant::now();
        let runs = self.rt.block_on(runner.run_ab(&spec));
        let wall = t0.elapsed();
        let results = runner.output_dir().join("results.jsonl");
        let m = runner.into_measured();
        // Both arms' records are in this step's one results file, with its digest.
        let run_dir = results.parent().unwrap_or(&results).to_path_buf();
        let side = |rev: &str| Side {
            engine_version: Some(rev.to_string()),
            date: Some(chrono::Utc::now().to_rfc3339()),
            ..m.results_side(&run_dir)
        };
        let report = spec.judge(&runs, &m, (side(b), side(c)), wall);
        write(
            &dir.join("report.json"),
            crate::report::render_json(&report),
        )?;
        write(
            &dir.join("report.md"),
            crate::report::render_markdown(&report),
        )?;
        let mut out = comparison(&report, &runs);
        if m.interrupted {
            self.infra = true;
            out.stop = Some("interrupted (signal)".into());
        } else if report.verdict == TopVerdict::Error {
            self.infra = true;
            let why = report
                .rows
                .iter()
                .find_map(|r| {
                    r.note
                        .clone()
                        .filter(|_| r.verdict == crate::gate::Verdict::Error)
                })
                .unwrap_or_default();
            let first = why.lines().next().unwrap_or("").to_string();
            out.stop = Some(format!("an engine failed in step {}: {first}", req.step));
        } else if out.verdict == Verdict::Unknown
            && self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            out.stop = Some("the time budget (--max-minutes) was spent".into());
        }
        eprintln!(
            "perfgate: bisect step {}: {} after {} pair(s)",
            req.step,
            out.verdict.word(),
            out.pairs
        );
        Ok(out)
    }
}

impl Comparator for Live<'_> {
    fn compare(&mut self, req: &Request) -> Comparison {
        match self.step(req) {
            Ok(c) => c,
            Err(why) => {
                self.infra = true;
                stopped(why)
            }
        }
    }
}

/// What a step's report says to the search: the top verdict as same / different / unknown, the
/// gated metrics' changes, the pairs run (the fewest of any model) and their cost.
fn comparison(report: &Report, runs: &[AbModelRun]) -> Comparison {
    let ab = report.ab.as_ref();
    Comparison {
        verdict: match report.verdict {
            TopVerdict::Pass => Verdict::Same,
            TopVerdict::Fail => Verdict::Different,
            _ => Verdict::Unknown,
        },
        changes: report
            .rows
            .iter()
            .filter(|r| r.gated && r.metric != "success_rate")
            .map(|r| MetricChange {
                model: r.model.clone(),
                scenario: r.scenario.clone(),
                metric: r.metric.clone(),
                change_pct: r.change_pct,
                interval: r.interval,
                tolerance_pct: r.tolerance_pct,
                verdict: r.verdict.as_str().to_string(),
                values: r.baseline.zip(r.current).map(|(b, c)| [b, c]),
            })
            .collect(),
        pairs: runs.iter().map(|r| r.pairs).min().unwrap_or(0),
        engine_minutes: ab.map_or(0.0, |a| a.models.iter().map(|m| m.wall_minutes).sum()),
        gpu_minutes: ab.map_or(0.0, |a| a.gpu_minutes),
        note: runs
            .iter()
            .map(|r| r.stopped.clone())
            .collect::<Vec<_>>()
            .join("; "),
        stop: None,
    }
}

fn stopped(why: String) -> Comparison {
    Comparison {
        verdict: Verdict::Unknown,
        changes: Vec::new(),
        pairs: 0,
        engine_minutes: 0.0,
        gpu_minutes: 0.0,
        note: why.clone(),
        stop: Some(why),
    }
}

fn write(path: &Path, text: String) -> Result<(), String> {
    crate::atomic::write(path, text).map_err(|e| e.to_string())
}

/// A step folder left by an interrupted invocation is renamed `….interrupted` (its records were
/// never a finished measurement), so the step starts from an empty folder.
fn set_aside(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Ok(());
    }
    let old = dir.with_extension("interrupted");
    if old.exists() {
        std::fs::remove_dir_all(&old)
            .map_err(|e| format!("cannot remove {}: {e}", old.display()))?;
    }
    eprintln!(
        "perfgate: bisect: {} is an unfinished step of an earlier run: kept as {}",
        dir.display(),
        old.display()
    );
    std::fs::rename(dir, &old).map_err(|e| format!("cannot rename {}: {e}", dir.display()))
}
