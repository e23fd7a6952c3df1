//! The live suite runner behind `perfgate check` without `--results`: for each model of the
//! plan, launch its engine, wait until it is ready, run the scenarios while watching the engine
//! and sampling its `/metrics`, stop it; engine faults become errors (never a hang), and every
//! record, error and engine log lands in the output directory as it happens.
//!
//! The launch is the unit of replication: runs inside one engine launch share its state (caches,
//! compiled graphs, memory layout), so each launch is a fresh engine, warmed up with a discarded
//! pass of every scenario's shape, then the scenarios in a fixed order (`--runs-per-launch`
//! times), with the engine's caches reset before each scenario. Every record carries its
//! `launch_id` and `run_in_launch`.
//!
//! One [`Runner`] holds the context of a live run (plan, settings, output directory, interrupt,
//! HTTP client, measured records); one engine launch is [`Runner::run_launch`]: (model,
//! scenarios, runs) → records. The suite ([`Runner::run_suite`]) and the re-runs
//! ([`Runner::rerun_inconclusive`]) are sequences of launches; an A/B comparison can alternate
//! launches of two engine specs the same way.

mod ab;
pub mod config;
mod launch;
mod output;
mod rerun;
mod save;
mod scenario;
pub mod single;
mod warmup;
pub mod workload;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

pub use ab::{AbModelRun, AbSpec, Order};
pub use config::{scenario_run, RunSettings, ScenarioRun};
pub use output::{Measured, Output};
pub use rerun::GateInputs;
pub use save::interrupt_on_signal;
pub use warmup::Warmup;

use crate::record::Arm;
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
    /// Between telemetry samples (`None`: no telemetry, `--no-telemetry`).
    pub telemetry: Option<Duration>,
    /// The warm-up pass after each launch.
    pub warmup: Warmup,
    /// Shuffle the scenario order (reproducibly) instead of the file's order.
    pub shuffle: bool,
    /// Reset the engine's caches before each scenario (where the engine offers it).
    pub cache_reset: bool,
    pub scenario_timeout: Duration,
    pub request_timeout: Option<Duration>,
    pub dataset_path: Option<PathBuf>,
    /// The session every record carries (`None`: a new one for this invocation).
    pub session: Option<String>,
}

/// How a launch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchEnd {
    /// Every run was attempted (some scenarios may have failed on a healthy engine).
    Done,
    /// The engine failed (would not start, died, hung): the message's first line.
    EngineFailed(String),
    Interrupted,
    /// The time budget (`perfgate ab --max-minutes`) ran out before a scenario.
    OutOfTime,
}

/// A session id for this invocation: its start time (UTC, to the second) and process id.
fn new_session_id() -> String {
    format!(
        "{}-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
        std::process::id()
    )
}

/// One launch's identity.
struct Launch {
    id: String,
    /// `run_in_launch` of its first run (not 0 only for the shared launch of `--base-url`).
    first_in_launch: u32,
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
    /// Launches so far (launch ids are `L1`, `L2`, … in this order).
    launches: u32,
    /// With `--base-url` nothing is launched: all runs of a model share the server's one
    /// "launch" and its id.
    external: Vec<(String, String, u32)>,
    /// `perfgate ab`: the arm and pair of the launch being run.
    tag: Option<(Arm, u32)>,
    /// `perfgate ab --max-minutes`: no scenario starts after this.
    deadline: Option<Instant>,
    /// The recording session every record of this run carries (`session_id`): launch ids
    /// restart at `L1` in every invocation, so the session tells them apart.
    session: String,
}

impl Runner {
    /// Create the output directory and the HTTP client. `interrupt` turns true on SIGINT, SIGTERM or SIGHUP.
    pub fn new(
        plan: Plan,
        settings: Settings,
        output_dir: &Path,
        interrupt: watch::Receiver<bool>,
    ) -> Result<Runner, RunnerError> {
        let out = Output::create(output_dir)?;
        let session = settings.session.clone().unwrap_or_else(new_session_id);
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
            launches: 0,
            session,
            external: Vec::new(),
            tag: None,
            deadline: None,
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

    /// Every scenario of every model: `launches` engine launches per model, `per_launch` runs of
    /// the suite in each. An engine fault ends the model's launches (the rest become errors).
    pub async fn run_suite(&mut self, launches: u32, per_launch: u32) {
        let plan = self.plan.clone();
        for mp in &plan.models {
            if self.measured.interrupted {
                break;
            }
            let scen: Vec<&ScenarioPlan> = mp.scenarios.iter().collect();
            eprintln!(
                "perfgate: model {} ({} scenario(s) × {launches} launch(es) × {per_launch} run(s))",
                mp.name,
                scen.len()
            );
            for k in 0..launches {
                match self.run_launch(mp, &scen, k * per_launch, per_launch).await {
                    LaunchEnd::Done => {}
                    LaunchEnd::Interrupted | LaunchEnd::OutOfTime => break,
                    LaunchEnd::EngineFailed(why) => {
                        let rest = format!("not run: the engine failed earlier ({why})");
                        for run in (k + 1) * per_launch..launches * per_launch {
                            for sp in &scen {
                                self.fail(&mp.name, &sp.id, Some(run), &rest);
                            }
                        }
                        break;
                    }
                }
            }
        }
    }

    /// One engine launch: start the engine of `mp`, warm up every scenario shape, run `scen`
    /// `runs` times (runs numbered from `first_run`; the same order each time), stop the engine.
    /// Failures become error rows; an engine fault fails the launch's remaining runs.
    pub async fn run_launch(
        &mut self,
        mp: &ModelPlan,
        scen: &[&ScenarioPlan],
        first_run: u32,
        runs: u32,
    ) -> LaunchEnd {
        let launch = self.next_launch(mp, runs);
        eprintln!("perfgate: {} launch {}", mp.name, launch.id);
        let Some(mut l) = self.start(mp, scen).await else {
            return if self.measured.interrupted {
                LaunchEnd::Interrupted
            } else {
                LaunchEnd::EngineFailed("the engine did not start".into())
            };
        };
        let mut end = self.warm_up(mp, scen, &mut l).await;
        if let Some(LaunchEnd::EngineFailed(why)) = &end {
            let msg = format!("the engine failed during the warm-up: {why}");
            for r in 0..runs {
                for sp in scen {
                    self.fail(&mp.name, &sp.id, Some(first_run + r), &msg);
                }
            }
        }
        'runs: for r in 0..runs {
            if end.is_some() {
                break;
            }
            let run_index = first_run + r;
            let order: Vec<usize> = if self.settings.shuffle {
                suite::run_order(scen.len(), run_index)
            } else {
                (0..scen.len()).collect()
            };
            for (pos, &i) in order.iter().enumerate() {
                let sp = scen[i];
                if self.deadline.is_some_and(|d| Instant::now() >= d) {
                    eprintln!("perfgate: the time budget is spent: no further scenario starts");
                    end = Some(LaunchEnd::OutOfTime);
                    break 'runs;
                }
                let Some(prompts) = self.prompts(&mut l, mp, sp, run_index).await else {
                    continue;
                };
                eprintln!(
                    "perfgate: {} {} run {} scenario {} ({} prompts)",
                    mp.name,
                    launch.id,
                    run_index + 1,
                    sp.id,
                    prompts.len()
                );
                let cache_reset = self.reset_caches(&l).await;
                let job = scenario::Job {
                    mp,
                    sp,
                    run_index,
                    launch_id: launch.id.clone(),
                    run_in_launch: launch.first_in_launch + r,
                    prompts,
                    cache_reset,
                };
                let outcome = self.measure(job, &mut l).await;
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
                    end = Some(stop);
                    break 'runs;
                }
            }
        }
        self.stop(&mut l, &mp.name).await;
        end.unwrap_or(LaunchEnd::Done)
    }

    /// The id of the next launch of `mp` (of `runs` runs), and where its runs start counting.
    fn next_launch(&mut self, mp: &ModelPlan, runs: u32) -> Launch {
        if mp.launch.command.is_none() {
            if let Some((_, id, next)) = self.external.iter_mut().find(|(m, _, _)| *m == mp.name) {
                let first_in_launch = *next;
                *next += runs;
                return Launch {
                    id: id.clone(),
                    first_in_launch,
                };
            }
        }
        self.launches += 1;
        let id = format!("L{}", self.launches);
        if mp.launch.command.is_none() {
            self.external.push((mp.name.clone(), id.clone(), runs));
        }
        Launch {
            id,
            first_in_launch: 0,
        }
    }

    /// Record a failure; in an A/B comparison the message names the arm.
    fn fail(&mut self, model: &str, scenario: &str, run: Option<u32>, msg: &str) {
        let msg = match self.tag {
            Some((arm, pair)) => format!("{} engine (pair {}): {msg}", arm.as_str(), pair + 1),
            None => msg.to_string(),
        };
        self.measured
            .fail(&mut self.out, model, scenario, run, &msg);
    }

    /// The engine log of a model (of the arm being run, in an A/B comparison).
    fn log_path(&self, model: &str) -> PathBuf {
        let p = self.out.log_path(model);
        match self.tag {
            Some((arm, _)) => p.with_extension(format!("{}.log", arm.as_str())),
            None => p,
        }
    }

    fn interrupted(&self) -> bool {
        *self.interrupt.borrow()
    }

    /// Resolves on SIGINT, SIGTERM or SIGHUP (never, when no handler is installed).
    async fn until_interrupted(&self) {
        let mut rx = self.interrupt.clone();
        if rx.wait_for(|v| *v).await.is_ok() {
            return;
        }
        // A closed channel (no signal handler) must never look like an interrupt.
        std::future::pending::<()>().await
    }
}

/// The tokio runtime of the commands that measure: one thread. The load client's reads and
/// timestamps then never wait for a second scheduler thread sharing the core, and a run costs one
/// core however high the concurrency. Work that would stall the reads (re-tokenizing, folding
/// records, dataset building, loading a tokenizer) runs on threads of its own.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
