//! What a launch does around its measured runs: the warm-up pass of every scenario shape after
//! the engine is ready, the cache reset before each scenario, and the check that an engine whose
//! connections failed is still alive.

use std::time::{Duration, Instant};

use crate::client::load;
use crate::dataset;
use crate::engine::{self, Engine, EngineError};
use crate::record::RequestRate;
use crate::suite::{CacheReset, ModelPlan, ScenarioPlan};

use super::launch::Launched;
use super::scenario::engine_msg;
use super::{first_line, LaunchEnd, Runner};

/// Warm-up prompts come from the scenario's seed mixed with this, so they differ from the
/// measured prompts (a warm prefix cache must not serve the measured run).
const WARMUP_SEED: u64 = 0x5741_524d_5550_0001;

/// How long an engine whose connections failed may take to be seen dead.
const DEATH_GRACE: Duration = Duration::from_secs(2);

/// `--warmup-requests`: the warm-up pass after each launch, per scenario shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warmup {
    /// The scenario's max concurrency (or prompt count), at most its prompt count.
    Auto,
    /// This many requests per scenario, at most its prompt count (0: no warm-up).
    Requests(u32),
}

impl Warmup {
    /// Warm-up requests for a scenario of `num_prompts` prompts at `max_concurrency`.
    pub fn requests(self, num_prompts: u64, max_concurrency: Option<u64>) -> u64 {
        match self {
            Warmup::Auto => max_concurrency.unwrap_or(num_prompts).min(num_prompts),
            Warmup::Requests(n) => u64::from(n).min(num_prompts),
        }
    }

    /// In words, for the dry-run plan.
    pub fn describe(self) -> String {
        match self {
            Warmup::Auto => crate::report::dryrun::WARMUP_AUTO.to_string(),
            Warmup::Requests(0) => "none (--warmup-requests 0)".into(),
            Warmup::Requests(n) => format!(
                "one pass of every scenario's shape (its lengths and concurrency; {n} requests, other prompts), discarded"
            ),
        }
    }
}

impl Runner {
    /// The cache reset this run uses for its engine.
    pub(super) fn cache_reset(&self) -> CacheReset {
        if self.settings.cache_reset {
            CacheReset::for_engine(&self.plan.engine)
        } else {
            CacheReset::Off
        }
    }

    /// One discarded pass of every scenario's shape: its lengths and concurrency, all requests
    /// at once, prompts from another seed. `Some` when the launch must end (engine fault or
    /// a signal); failed warm-up requests are only reported.
    pub(super) async fn warm_up(
        &mut self,
        mp: &ModelPlan,
        scen: &[&ScenarioPlan],
        l: &mut Launched,
    ) -> Option<LaunchEnd> {
        let t0 = Instant::now();
        let mut shapes = 0;
        for sp in scen {
            let p = &sp.params;
            let n = self
                .settings
                .warmup
                .requests(p.num_prompts, p.max_concurrency);
            if n == 0 {
                continue;
            }
            let mut sc = match self.scenario(mp, sp, l.tok.clone()) {
                Ok(sc) => sc,
                Err(_) => continue, // the measured run reports it
            };
            sc.dataset.num_prompts = n as usize;
            sc.dataset.seed = sp.seed ^ WARMUP_SEED;
            sc.run.params.request_rate = RequestRate::Inf;
            sc.run.num_warmups = 0;
            let (spec, tok) = (sc.dataset, l.tok.clone());
            let built = tokio::task::spawn_blocking(move || dataset::build(&spec, tok.as_ref()));
            let prompts = match built.await {
                Ok(Ok(d)) => d.prompts,
                _ => continue, // the measured run builds (and reports) its own prompts
            };
            let base = l.base.clone();
            let http = self.http.clone();
            let warm = tokio::select! {
                r = load::run_scenario(&sc.run, prompts, &load::NoProgress) => r,
                e = engine::watch(l.engine.as_mut(), &http, &base, self.settings.unresponsive) => {
                    let msg = engine_msg(&e);
                    eprintln!("perfgate: {} warm-up of {}: {msg}", mp.name, sp.id);
                    return Some(LaunchEnd::EngineFailed(first_line(&msg).to_string()));
                }
                _ = tokio::time::sleep(self.settings.scenario_timeout) => {
                    return Some(LaunchEnd::EngineFailed(format!(
                        "the warm-up of {} did not finish within --scenario-timeout", sp.id
                    )));
                }
                _ = self.until_interrupted() => {
                    self.measured.interrupted = true;
                    for sp in scen {
                        self.fail(&mp.name, &sp.id, None, "interrupted (signal) during the warm-up");
                    }
                    return Some(LaunchEnd::Interrupted);
                }
            };
            match warm {
                Ok(r) if r.failed > 0 => eprintln!(
                    "perfgate: {} warm-up of {}: {} of {n} requests failed",
                    mp.name, sp.id, r.failed
                ),
                Ok(_) => {}
                Err(e) => eprintln!("perfgate: {} warm-up of {}: {e}", mp.name, sp.id),
            }
            shapes += 1;
        }
        if shapes > 0 {
            eprintln!(
                "perfgate: {} warmed up {shapes} scenario shape(s) in {:.1} s",
                mp.name,
                t0.elapsed().as_secs_f64()
            );
        }
        None
    }

    /// Reset the engine's caches before a scenario, where it offers that; says what was done.
    pub(super) async fn reset_caches(&self, l: &Launched) -> String {
        let policy = self.cache_reset();
        let CacheReset::Endpoint(path) = policy else {
            return policy.describe();
        };
        let ans = self
            .http
            .post(format!("{}{path}", l.base))
            .timeout(Duration::from_secs(30))
            .send()
            .await;
        match ans {
            Ok(r) if r.status().is_success() => format!("POST {path}: {}", r.status().as_u16()),
            Ok(r) => {
                let msg = format!("POST {path} answered {} (cache not reset)", r.status());
                eprintln!("perfgate: {msg}");
                msg
            }
            Err(e) => {
                let msg = format!("POST {path} failed: {e} (cache not reset)");
                eprintln!("perfgate: {msg}");
                msg
            }
        }
    }

    /// After a scenario whose connections failed: is the engine dead? Its exit is given
    /// [`DEATH_GRACE`] to be observed; then `/health` must still connect. `Some(message)` for a
    /// dead engine.
    pub(super) async fn engine_died(
        &self,
        mut engine: Option<&mut Engine>,
        base: &str,
    ) -> Option<String> {
        let until = Instant::now() + DEATH_GRACE;
        while let Some(e) = engine.as_deref_mut() {
            if let Some(status) = e.exited() {
                // Let the last words reach the log file.
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Some(engine_msg(&EngineError::Exited {
                    status,
                    tail: e.log_tail(),
                }));
            }
            if Instant::now() >= until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let probe = self
            .http
            .get(format!("{base}/health"))
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        match probe {
            Err(e) if !e.is_timeout() => {
                let tail = engine.map(|e| e.log_tail()).unwrap_or_default();
                Some(engine_msg(&EngineError::Unresponsive {
                    secs: DEATH_GRACE.as_secs_f64(),
                    last: "GET /health failed to connect after the scenario's connections failed"
                        .into(),
                    tail,
                }))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Warmup;

    #[test]
    fn warm_up_sizes() {
        assert_eq!(Warmup::Auto.requests(8, Some(4)), 4);
        assert_eq!(Warmup::Auto.requests(3, Some(4)), 3);
        assert_eq!(Warmup::Auto.requests(6, None), 6);
        assert_eq!(Warmup::Requests(2).requests(8, Some(4)), 2);
        assert_eq!(Warmup::Requests(20).requests(8, None), 8);
        assert_eq!(Warmup::Requests(0).requests(8, Some(4)), 0);
    }
}
