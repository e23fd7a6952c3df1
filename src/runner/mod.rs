//! The live suite runner behind `perfgate check` without `--results`: for each model of the
//! plan, launch its engine, wait until it is ready, run the scenarios while watching the engine
//! and sampling its `/metrics`, stop it; engine faults become errors (never a hang), and every
//! record, error and engine log lands in the output directory as it happens.
//!
//! One [`Runner`] holds the context of a live run (plan, settings, output directory, interrupt,
//! HTTP client, measured records); one engine launch is [`Runner::run_launch`]: (model,
//! scenarios, runs) → records. The suite ([`Runner::run_suite`]) and the re-runs
//! ([`Runner::rerun_inconclusive`]) are sequences of launches.

pub mod config;
mod launch;
mod output;
mod rerun;
mod scenario;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

pub use config::{scenario_run, RunSettings, ScenarioRun};
pub use output::{Measured, Output};
pub use rerun::GateInputs;

use crate::suite::{self, ModelPlan, Plan, ScenarioPlan};

/// Errors that stop a live run before it starts. Everything after that becomes a record or an
/// error row, never an `Err`.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("cannot write the output {path}: {source}")]
    Output {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot build the HTTP client: {0}")]
    Http(String),
}

/// Validated live-mode settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// SIGTERM → SIGKILL grace when stopping an engine.
    pub grace: Duration,
    /// `/health` failing this long during a scenario = a hung engine.
    pub unresponsive: Duration,
    /// Between `/metrics` samples.
    pub metrics_every: Duration,
    /// Warm-up requests before the first scenario of a launch.
    pub warmups: u32,
    pub scenario_timeout: Duration,
    pub request_timeout: Option<Duration>,
    pub dataset_path: Option<PathBuf>,
}

/// How a launch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchEnd {
    /// Every run was attempted (some scenarios may have failed on a healthy engine).
    Done,
    /// The engine failed (would not start, died, hung): the message's first line.
    EngineFailed(String),
    Interrupted,
}

/// The context of one live run.
pub struct Runner {
    plan: Arc<Plan>,
    settings: Settings,
    out: Output,
    interrupt: watch::Receiver<bool>,
    /// Probes (readiness, health, /metrics) open a fresh connection each time: an idle
    /// keep-alive connection would hold one of the few HTTP threads some engines have
    /// (llama.cpp: about n_parallel + 2) that the benchmark needs.
    http: reqwest::Client,
    measured: Measured,
}

impl Runner {
    /// Create the output directory and the HTTP client. `interrupt` turns true on Ctrl-C.
    pub fn new(
        plan: Plan,
        settings: Settings,
        output_dir: &Path,
        interrupt: watch::Receiver<bool>,
    ) -> Result<Runner, RunnerError> {
        let out = Output::create(output_dir)?;
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| RunnerError::Http(e.to_string()))?;
        Ok(Runner {
            plan: Arc::new(plan),
            settings,
            out,
            interrupt,
            http,
            measured: Measured::default(),
        })
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    pub fn output_dir(&self) -> &Path {
        self.out.dir()
    }

    pub fn measured(&self) -> &Measured {
        &self.measured
    }

    pub fn into_measured(self) -> Measured {
        self.measured
    }

    /// Every scenario of every model, `runs` times, all runs of a model in one launch.
    pub async fn run_suite(&mut self, runs: u32) {
        let plan = self.plan.clone();
        for mp in &plan.models {
            if self.measured.interrupted {
                break;
            }
            let scen: Vec<&ScenarioPlan> = mp.scenarios.iter().collect();
            eprintln!(
                "perfgate: model {} ({} scenario(s) × {runs} run(s))",
                mp.name,
                scen.len()
            );
            self.run_launch(mp, &scen, 0, runs).await;
        }
    }

    /// One engine launch: start the engine of `mp`, run `scen` `runs` times (runs numbered from
    /// `first_run`), stop the engine. Failures become error rows; an engine fault fails the
    /// launch's remaining runs.
    pub async fn run_launch(
        &mut self,
        mp: &ModelPlan,
        scen: &[&ScenarioPlan],
        first_run: u32,
        runs: u32,
    ) -> LaunchEnd {
        let Some(mut l) = self.start(mp, scen).await else {
            return if self.measured.interrupted {
                LaunchEnd::Interrupted
            } else {
                LaunchEnd::EngineFailed("the engine did not start".into())
            };
        };
        let mut warmups = self.settings.warmups;
        let mut end = LaunchEnd::Done;
        'runs: for r in 0..runs {
            let run_index = first_run + r;
            let order = suite::run_order(scen.len(), run_index);
            for (pos, &i) in order.iter().enumerate() {
                let sp = scen[i];
                let Some(prompts) = self.prompts(&mut l, mp, sp, run_index).await else {
                    continue;
                };
                eprintln!(
                    "perfgate: {} run {} scenario {} ({} prompts)",
                    mp.name,
                    run_index + 1,
                    sp.id,
                    prompts.len()
                );
                let job = scenario::Job {
                    mp,
                    sp,
                    run_index,
                    prompts,
                    warmups,
                };
                let outcome = self.measure(job, &mut l).await;
                warmups = 0;
                if let Some(stop) = self.settle(mp, sp, run_index, outcome) {
                    if let LaunchEnd::EngineFailed(why) = &stop {
                        // Nothing else can run on this engine: the launch's other runs fail.
                        let rest = format!("not run: the engine failed earlier ({why})");
                        for &j in &order[pos + 1..] {
                            self.fail(&mp.name, &scen[j].id, Some(run_index), &rest);
                        }
                        for later in r + 1..runs {
                            for sp in scen {
                                self.fail(&mp.name, &sp.id, Some(first_run + later), &rest);
                            }
                        }
                    }
                    end = stop;
                    break 'runs;
                }
            }
        }
        self.stop(&mut l, &mp.name).await;
        end
    }

    fn fail(&mut self, model: &str, scenario: &str, run: Option<u32>, msg: &str) {
        self.measured.fail(&mut self.out, model, scenario, run, msg);
    }

    fn interrupted(&self) -> bool {
        *self.interrupt.borrow()
    }

    /// Resolves when Ctrl-C is pressed (never, when nothing can press it).
    async fn until_interrupted(&self) {
        let mut rx = self.interrupt.clone();
        if rx.wait_for(|v| *v).await.is_ok() {
            return;
        }
        // A closed channel (no Ctrl-C handler) must never look like an interrupt.
        std::future::pending::<()>().await
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
