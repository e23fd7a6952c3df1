//! Starting and stopping one engine launch: spawn the command (or use `--base-url`), wait until
//! it is ready, load the tokenizer, build each scenario's prompts once per launch, stop it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::dataset::{self, Prompt};
use crate::engine::{self, Engine, EngineSpec};
use crate::suite::{ModelPlan, ScenarioPlan};
use crate::tokenizer::Tokenize;

use super::Runner;

/// A started engine and what a launch needs to send it requests.
pub(super) struct Launched {
    /// `None` with `--base-url` (nothing launched).
    pub engine: Option<Engine>,
    pub base: String,
    pub tok: Arc<dyn Tokenize>,
    prompts: BTreeMap<String, Vec<Prompt>>,
}

impl Runner {
    /// Launch (or reach) the engine of `mp` and load its tokenizer. On failure every scenario of
    /// `scen` gets the error, the engine is stopped, and `None` is returned.
    pub(super) async fn start(
        &mut self,
        mp: &ModelPlan,
        scen: &[&ScenarioPlan],
    ) -> Option<Launched> {
        let base = mp.launch.base_url.clone();
        let mut engine: Option<Engine> = None;
        if let Some(cmd) = &mp.launch.command {
            let spec = EngineSpec {
                command: cmd.clone(),
                env: mp.launch.env.clone(),
                port: mp.launch.port,
                base_url: base.clone(),
                served_model_name: mp.served_model_name.clone(),
                start_timeout: mp.launch.start_timeout,
                stop: mp.launch.stop.clone(),
                grace: self.settings.grace,
                log_path: self.log_path(&mp.name),
            };
            match Engine::spawn(spec) {
                Ok(e) => engine = Some(e),
                Err(e) => {
                    eprintln!("perfgate: {}: {e}", mp.name);
                    self.fail_all(mp, scen, &e.to_string());
                    return None;
                }
            }
        }
        let ready = {
            let http = self.http.clone();
            let wait = async {
                match engine.as_mut() {
                    Some(e) => e.wait_ready(&http).await.map_err(|e| e.to_string()),
                    None => {
                        wait_external(&http, &base, &mp.served_model_name, mp.launch.start_timeout)
                            .await
                    }
                }
            };
            tokio::select! {
                r = wait => r,
                _ = self.until_interrupted() => Err("interrupted (signal) while the engine was starting".into()),
            }
        };
        let failed = match ready {
            Ok(d) => {
                eprintln!("perfgate: {} ready after {:.1} s", mp.name, d.as_secs_f64());
                None
            }
            Err(msg) => {
                eprintln!("perfgate: {}: {msg}", mp.name);
                self.measured.interrupted |= self.interrupted();
                Some(msg)
            }
        };
        let tok: Result<Arc<dyn Tokenize>, String> = match failed {
            Some(msg) => Err(msg),
            None => {
                let tok_spec = mp.tokenizer.clone().unwrap_or_else(|| "server".to_string());
                let (spec, url) = (tok_spec.clone(), base.clone());
                match tokio::task::spawn_blocking(move || {
                    crate::client::tokenize::load(&spec, &url)
                })
                .await
                {
                    Ok(Ok(t)) => Ok(Arc::from(t)),
                    Ok(Err(e)) => Err(format!("tokenizer `{tok_spec}`: {e}")),
                    Err(e) => Err(format!("tokenizer `{tok_spec}`: {e}")),
                }
            }
        };
        match tok {
            Ok(tok) => Some(Launched {
                engine,
                base,
                tok,
                prompts: BTreeMap::new(),
            }),
            Err(msg) => {
                self.fail_all(mp, scen, &msg);
                stop_engine(engine.as_mut(), &mp.name).await;
                None
            }
        }
    }

    fn fail_all(&mut self, mp: &ModelPlan, scen: &[&ScenarioPlan], msg: &str) {
        for sp in scen {
            self.fail(&mp.name, &sp.id, None, msg);
        }
    }

    /// The prompts of a scenario, built once per launch. Building is not a measurement: a few
    /// retries for a transient failure of the engine's /tokenize are fine. `None` after an error
    /// row was recorded.
    pub(super) async fn prompts(
        &mut self,
        l: &mut Launched,
        mp: &ModelPlan,
        sp: &ScenarioPlan,
        run_index: u32,
    ) -> Option<Vec<Prompt>> {
        if let Some(p) = l.prompts.get(&sp.id) {
            return Some(p.clone());
        }
        let mut built = self.build_prompts(mp, sp, l.tok.clone()).await;
        for attempt in 1..=3 {
            let Err(why) = &built else { break };
            eprintln!("perfgate: {}: {why}; retry {attempt}/3", sp.id);
            tokio::time::sleep(Duration::from_millis(300 * attempt)).await;
            built = self.build_prompts(mp, sp, l.tok.clone()).await;
        }
        match built {
            Ok(p) => {
                l.prompts.insert(sp.id.clone(), p.clone());
                Some(p)
            }
            Err(msg) => {
                self.fail(&mp.name, &sp.id, Some(run_index), &msg);
                None
            }
        }
    }

    async fn build_prompts(
        &self,
        mp: &ModelPlan,
        sp: &ScenarioPlan,
        tok: Arc<dyn Tokenize>,
    ) -> Result<Vec<Prompt>, String> {
        let spec = self.scenario(mp, sp, tok.clone())?.dataset;
        let built = tokio::task::spawn_blocking(move || dataset::build(&spec, tok.as_ref()))
            .await
            .map_err(|e| format!("building prompts: {e}"))?
            .map_err(|e| format!("building prompts: {e}"))?;
        for note in &built.notes {
            eprintln!("perfgate: {}: {note}", sp.id);
        }
        Ok(built.prompts)
    }

    /// Stop the launched engine (nothing for `--base-url`).
    pub(super) async fn stop(&self, l: &mut Launched, model: &str) {
        stop_engine(l.engine.as_mut(), model).await;
    }
}

async fn stop_engine(engine: Option<&mut Engine>, model: &str) {
    let Some(e) = engine else { return };
    let o = e.stop().await;
    eprintln!(
        "perfgate: stopped the engine of {model}{}{}",
        if o.killed {
            " (SIGKILL after the grace period)"
        } else {
            ""
        },
        if o.port_freed { "; port free" } else { "" }
    );
    for n in o.notes {
        eprintln!("perfgate: {model}: {n}");
    }
}

/// An engine perfgate did not launch (`--base-url`): wait until it is ready.
async fn wait_external(
    http: &reqwest::Client,
    base: &str,
    model: &str,
    limit: Duration,
) -> Result<Duration, String> {
    let t0 = tokio::time::Instant::now();
    let mut polls = 0u32;
    loop {
        match engine::process::probe_ready(http, base, model).await {
            Ok(()) => return Ok(t0.elapsed()),
            Err(why) if t0.elapsed() >= limit => {
                return Err(format!(
                    "the server at {base} was not ready within {} s: {why}",
                    limit.as_secs()
                ))
            }
            Err(_) => {
                tokio::time::sleep(engine::process::ready_poll_pause(polls)).await;
                polls = polls.saturating_add(1);
            }
        }
    }
}
