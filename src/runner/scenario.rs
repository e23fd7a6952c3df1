//! One scenario run on a launched engine: the load runs while the engine is watched (exit, hung
//! `/health`), its `/metrics` are sampled, and a scenario timeout and Ctrl-C are honoured; the
//! outcome becomes a record or an error row.

use std::sync::{Arc, Mutex};

use crate::client::load;
use crate::client::ClientConfig;
use crate::dataset::Prompt;
use crate::engine::{self, metrics, EngineError};
use crate::metrics::MetricsConfig;
use crate::monitor::{Monitor, MonitorConfig};
use crate::record::ScenarioResult;
use crate::suite::{self, CacheReset, ModelPlan, ScenarioPlan};
use crate::tokenizer::Tokenize;

use super::config::{scenario_run, RunSettings, ScenarioRun};
use super::launch::Launched;
use super::{first_line, LaunchEnd, Runner};

/// One scenario run to make.
pub(super) struct Job<'a> {
    pub mp: &'a ModelPlan,
    pub sp: &'a ScenarioPlan,
    pub run_index: u32,
    pub launch_id: String,
    pub run_in_launch: u32,
    pub prompts: Vec<Prompt>,
    /// What was done to the engine's caches before this run, in words.
    pub cache_reset: String,
}

/// How one scenario run ended.
pub(super) enum Outcome {
    Measured(Box<ScenarioResult>),
    /// The scenario failed but the engine is fine (e.g. every request was rejected).
    Failed(String),
    /// The engine died, hung or timed out: nothing more can run on it.
    Engine(String),
    Interrupted,
}

impl Runner {
    /// The run configuration of a scenario of this plan (the one translation in
    /// [`scenario_run`]).
    pub(super) fn scenario(
        &self,
        mp: &ModelPlan,
        sp: &ScenarioPlan,
        tok: Arc<dyn Tokenize>,
    ) -> Result<ScenarioRun, String> {
        let mut client = ClientConfig {
            base_url: mp.launch.base_url.clone(),
            model: mp.served_model_name.clone(),
            request_timeout: self.settings.request_timeout,
            keep_alive: suite::honours_keep_alive(&self.plan.engine),
            ..Default::default()
        };
        if self.cache_reset() == CacheReset::PerRequest {
            client
                .extra_body
                .insert("cache_prompt".into(), serde_json::Value::Bool(false));
        }
        let settings = RunSettings {
            client,
            ignore_eos: Some(true),
            num_warmups: 0,
            metrics: MetricsConfig::default(),
            retokenize: false,
            tokenizer: Some(tok),
            model: mp.name.clone(),
            backend: self.plan.engine.clone(),
            dataset_path: self.settings.dataset_path.clone(),
        };
        scenario_run(&sp.params, sp.seed, settings)
    }

    /// Run one scenario with the engine watched and its `/metrics` sampled.
    pub(super) async fn measure(&mut self, job: Job<'_>, l: &mut Launched) -> Outcome {
        let (mp, sp) = (job.mp, job.sp);
        let base = l.base.clone();
        let cfg = match self.scenario(mp, sp, l.tok.clone()) {
            Ok(s) => s.run,
            Err(e) => return Outcome::Failed(e),
        };

        let http = self.http.clone();
        let sampler = Mutex::new(metrics::Sampler::default());
        let metrics_on = match metrics::scrape(&http, &base).await {
            Ok(snap) => {
                sampler.lock().unwrap_or_else(|p| p.into_inner()).before = Some(snap);
                true
            }
            Err(e) => {
                sampler
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .record_error(&e);
                false
            }
        };
        let sampling = async {
            if metrics_on {
                metrics::sample_loop(&http, &base, self.settings.metrics_every, &sampler).await
            } else {
                std::future::pending::<()>().await
            }
        };
        // Telemetry on a thread of its own, stopped when this function returns (dropped).
        let monitor = self
            .settings
            .telemetry
            .map(|every| Monitor::start(MonitorConfig::new(every, Some(base.clone()))));
        let engine = &mut l.engine;
        let timeout = self.settings.scenario_timeout;
        let result = tokio::select! {
            r = load::run_scenario(&cfg, job.prompts, &load::NoProgress) => Some(r),
            e = engine::watch(engine.as_mut(), &http, &base, self.settings.unresponsive) => {
                return Outcome::Engine(engine_msg(&e));
            }
            _ = sampling => None,
            _ = tokio::time::sleep(timeout) => {
                let tail = engine.as_ref().map(|e| e.log_tail()).unwrap_or_default();
                return Outcome::Engine(format!(
                    "the scenario did not finish within --scenario-timeout {} s; last log lines:\n{tail}",
                    timeout.as_secs()
                ));
            }
            _ = self.until_interrupted() => return Outcome::Interrupted,
        };
        let telemetry = monitor.map(Monitor::finish);
        if metrics_on {
            let after = metrics::scrape(&http, &base).await;
            let mut smp = sampler.lock().unwrap_or_else(|p| p.into_inner());
            match after {
                Ok(snap) => smp.after = Some(snap),
                Err(e) => smp.record_error(&e),
            }
        }
        let stats = sampler
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .summarize();
        let mut line = serde_json::json!({
            "model": mp.name, "scenario": sp.id, "run_index": job.run_index,
            "launch_id": job.launch_id, "run_in_launch": job.run_in_launch,
            "cache_reset": job.cache_reset, "engine": stats,
        });
        if let (Some((arm, pair)), Some(o)) = (self.tag, line.as_object_mut()) {
            o.insert("arm".into(), arm.as_str().into());
            o.insert("pair".into(), pair.into());
        }
        self.out.engine_metrics(&line);

        // The engine may have died during the scenario: failed connections are then its fault,
        // never a normal record (its death can take a moment to be observed).
        let lost_connections = match &result {
            Some(Ok(rec)) => rec
                .errors
                .keys()
                .any(|k| k == "connection_error" || k == "connection_reset"),
            Some(Err(_)) => true,
            None => false,
        };
        let died = match engine.as_mut() {
            Some(e) if !lost_connections => e.exited().map(|status| {
                engine_msg(&EngineError::Exited {
                    status,
                    tail: e.log_tail(),
                })
            }),
            _ if lost_connections => self.engine_died(engine.as_mut(), &base).await,
            _ => None,
        };
        if let Some(msg) = died {
            return Outcome::Engine(msg);
        }
        match result {
            Some(Ok(mut rec)) => {
                rec.model = mp.name.clone();
                rec.engine = Some(self.plan.engine.clone());
                rec.run_index = job.run_index;
                rec.launch_id = Some(job.launch_id);
                rec.session_id = Some(self.session.clone());
                rec.run_in_launch = Some(job.run_in_launch);
                rec.arm = self.tag.map(|t| t.0);
                rec.pair = self.tag.map(|t| t.1);
                rec.seed = Some(sp.seed);
                rec.telemetry = telemetry;
                rec.source
                    .get_or_insert_with(|| "perfgate check (live)".into());
                Outcome::Measured(rec.into())
            }
            Some(Err(e)) => Outcome::Failed(e.to_string()),
            None => Outcome::Failed("metrics sampling ended unexpectedly".into()),
        }
    }

    /// Keep what a scenario run gave. `Some` when the launch must end.
    pub(super) fn settle(
        &mut self,
        mp: &ModelPlan,
        sp: &ScenarioPlan,
        run_index: u32,
        outcome: Outcome,
    ) -> Option<LaunchEnd> {
        match outcome {
            Outcome::Measured(rec) => {
                self.measured.record(&mut self.out, *rec);
                None
            }
            Outcome::Failed(msg) => {
                eprintln!("perfgate: {} {}: {msg}", mp.name, sp.id);
                self.fail(&mp.name, &sp.id, Some(run_index), &msg);
                None
            }
            Outcome::Engine(msg) => {
                eprintln!("perfgate: {} {}: {msg}", mp.name, sp.id);
                self.fail(&mp.name, &sp.id, Some(run_index), &msg);
                Some(LaunchEnd::EngineFailed(first_line(&msg).to_string()))
            }
            Outcome::Interrupted => {
                self.measured.interrupted = true;
                let msg = "interrupted (signal) during the scenario";
                self.fail(&mp.name, &sp.id, Some(run_index), msg);
                Some(LaunchEnd::Interrupted)
            }
        }
    }
}

/// The message of an engine fault: the reason, then the log tail.
pub(super) fn engine_msg(e: &EngineError) -> String {
    match e.log_tail() {
        Some(t) if !t.trim().is_empty() => format!("{}; last log lines:\n{t}", e.reason()),
        _ => e.reason(),
    }
}
