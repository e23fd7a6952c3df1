//! Load generation: sends a scenario's prompts on schedule — all at once (`inf`) or with gamma
//! distributed gaps (`--burstiness`, 1 = Poisson) at `--request-rate`, under an optional
//! `--max-concurrency` — after optional warmups, and folds each finished request into the metrics
//! as it arrives, so memory stays bounded however many requests a run has.
//!
//! Latency origin: with a finite rate every request has a due time from the seeded schedule and
//! its latencies count from that time, including any wait for a concurrency slot (no coordinated
//! omission). With rate `inf` there is no schedule, so latencies count from the send.
//!
//! The library entry point for other components (the engine runner) is [`run_scenario`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_distr::{Distribution, Gamma};
use tokio::sync::{mpsc, Semaphore};

use crate::client::conversation::TurnTtft;
pub use crate::client::conversation::Work;
use crate::client::{Client, ClientConfig, ClientError};
use crate::dataset::Prompt;
use crate::metrics::{Accumulator, Detailed, MetricsConfig};
use crate::record::RequestRecord;
use crate::record::{Endpoint, RampUpStrategy, RequestRate, ScenarioParams, ScenarioResult};
use crate::tokenizer::Tokenize;

/// At most this many connections are opened before a run (see [`Client::preconnect`]).
const MAX_PRECONNECT: usize = 4096;

/// Everything needed to run one scenario against a server.
#[derive(Clone)]
pub struct RunConfig {
    /// How to reach the server, and the request fields a scenario leaves unset (the command's
    /// defaults): the scenario's endpoint, `temperature`, `ignore_eos` and body fields win.
    pub client: ClientConfig,
    /// Requests sent (and discarded) before the measured run.
    pub num_warmups: usize,
    /// Seeds the arrival schedule.
    pub seed: u64,
    pub metrics: MetricsConfig,
    /// Re-tokenize every generated text (`--retokenize`); without it, only texts whose request
    /// got no `usage` are re-tokenized (when a tokenizer is given).
    pub retokenize: bool,
    pub tokenizer: Option<Arc<dyn Tokenize>>,
    /// Identity written into the result.
    pub model: String,
    pub backend: String,
    /// The scenario: the schedule (`request_rate`, `burstiness`, the ramp-up), the cap
    /// (`max_concurrency`) and the request fields are read from here, and nowhere else, so the
    /// record names exactly what was run.
    pub params: ScenarioParams,
}

impl std::fmt::Debug for RunConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunConfig")
            .field("client", &self.client)
            .field("params", &self.params)
            .field("num_warmups", &self.num_warmups)
            .field("seed", &self.seed)
            .field("metrics", &self.metrics)
            .field("retokenize", &self.retokenize)
            .field("tokenizer", &self.tokenizer.as_ref().map(|t| t.id()))
            .field("model", &self.model)
            .finish()
    }
}

impl RunConfig {
    /// A configuration with vLLM's defaults for `model` at `base_url`.
    pub fn new(base_url: &str, model: &str) -> Self {
        RunConfig {
            client: ClientConfig {
                base_url: base_url.to_string(),
                model: model.to_string(),
                ..Default::default()
            },
            num_warmups: 0,
            seed: 0,
            metrics: MetricsConfig::default(),
            retokenize: false,
            tokenizer: None,
            model: model.to_string(),
            backend: "openai".into(),
            params: ScenarioParams::default(),
        }
    }

    /// At most this many requests in flight (`params.max_concurrency`).
    pub fn max_concurrency(&self) -> Option<usize> {
        let c = self.params.max_concurrency?;
        Some(usize::try_from(c).unwrap_or(usize::MAX))
    }

    /// Gamma shape of the gaps between requests (1 = Poisson). Ignored for rate `inf`.
    pub fn burstiness(&self) -> f64 {
        self.params.burstiness.unwrap_or(1.0)
    }

    /// The ramp-up of the rate over the run, if the scenario has one (vLLM's
    /// `--ramp-up-strategy`); it replaces `params.request_rate`.
    pub fn ramp_up(&self) -> Option<RampUp> {
        RampUp::of(&self.params)
    }

    /// The client of the measured requests: [`RunConfig::client`] with what the scenario asks
    /// of every request (endpoint, `temperature`, `ignore_eos`, sampling,
    /// `chat_template_kwargs`, `extra_body`) where it sets them.
    pub fn request_client(&self) -> ClientConfig {
        let (mut c, p) = (self.client.clone(), &self.params);
        if let Some(e) = p.endpoint {
            // A path of the same API (e.g. behind a prefix) is kept.
            if Endpoint::of_path(&c.endpoint) != e {
                c.endpoint = e.path().into();
            }
        }
        if let Some(t) = p.temperature {
            c.temperature = Some(t);
        }
        if let Some(i) = p.ignore_eos {
            c.ignore_eos = i;
        }
        c.extra_body.extend(p.body_fields());
        c
    }
}

/// The outcome of a run: the record plus the per-request arrays when asked for.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result: ScenarioResult,
    pub detailed: Option<Detailed>,
    /// Warmup requests that failed (they are not part of the result).
    pub warmup_failed: usize,
    /// Keys the result JSON has beside the record's (vLLM's `spec_decode_*`).
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no prompts to send")]
    NoPrompts,
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Nothing could be measured: every request failed.
    #[error("all {failed} requests failed, nothing was measured: {summary}")]
    AllFailed { failed: u64, summary: String },
}

/// Progress callbacks (a progress bar, a log line). All methods have no-op defaults.
pub trait Progress: Send + Sync {
    fn start(&self, _total: u64) {}
    fn request_done(&self, _ok: bool) {}
    fn finish(&self) {}
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// Run one scenario and return its record. See [`run`] for details.
pub async fn run_scenario(
    cfg: &RunConfig,
    prompts: Vec<Prompt>,
    progress: &dyn Progress,
) -> Result<ScenarioResult, LoadError> {
    run(cfg, prompts, progress).await.map(|o| o.result)
}

/// Due times (offsets from the start) of `n` requests at `rate` with gamma gaps of shape
/// `burstiness`, seeded. The first request is due at once; rate `inf` gives all zeros.
pub fn schedule(
    n: usize,
    rate: RequestRate,
    burstiness: f64,
    seed: u64,
) -> Result<Vec<Duration>, LoadError> {
    let RequestRate::PerSecond(r) = rate else {
        return Ok(vec![Duration::ZERO; n]);
    };
    if !(burstiness > 0.0 && burstiness.is_finite()) {
        return Err(LoadError::Config(format!(
            "--burstiness must be a positive number, got {burstiness}"
        )));
    }
    let gamma = Gamma::new(burstiness, 1.0 / (r * burstiness))
        .map_err(|e| LoadError::Config(format!("--request-rate/--burstiness: {e}")))?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut t = 0.0f64;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(Duration::from_secs_f64(t));
        t += gamma.sample(&mut rng);
    }
    Ok(out)
}

/// Due times of the requests of a time-bounded run (`budget`): the seeded schedule of
/// [`schedule`] (the same times, drawn the same way) up to the budget, or, for rate `inf`, an
/// endless run of zeros (the cap and the budget bound it).
fn schedule_until(
    budget: Duration,
    rate: RequestRate,
    burstiness: f64,
    seed: u64,
) -> Result<Box<dyn Iterator<Item = Duration> + Send>, LoadError> {
    let RequestRate::PerSecond(r) = rate else {
        return Ok(Box::new(std::iter::repeat(Duration::ZERO)));
    };
    // Draw in blocks of the expected count until the schedule passes the budget.
    let mut n = ((r * budget.as_secs_f64()).ceil() as usize).max(16);
    loop {
        let s = schedule(n, rate, burstiness, seed)?;
        if s.last().is_some_and(|&t| t >= budget) {
            return Ok(Box::new(s.into_iter().take_while(move |&t| t < budget)));
        }
        n = n.saturating_mul(2);
    }
}

/// A request rate ramping from `start_rps` to `end_rps` over the run (vLLM's ramp-up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RampUp {
    pub strategy: RampUpStrategy,
    pub start_rps: f64,
    pub end_rps: f64,
}

impl RampUp {
    /// The ramp-up a scenario asks for, if any.
    pub fn of(p: &ScenarioParams) -> Option<RampUp> {
        Some(RampUp {
            strategy: p.ramp_up_strategy?,
            start_rps: p.ramp_up_start_rps?,
            end_rps: p.ramp_up_end_rps?,
        })
    }

    /// vLLM's rules: both rates finite and non-negative, start ≤ end, and a start above 0 (an
    /// exponential ramp cannot start at 0; a linear one would send its first gap at rate 0).
    pub fn validate(&self) -> Result<(), String> {
        let (a, b) = (self.start_rps, self.end_rps);
        if !(a.is_finite() && b.is_finite()) || a < 0.0 || b < 0.0 {
            return Err(format!(
                "--ramp-up-start-rps and --ramp-up-end-rps must be finite and non-negative, got {a} and {b}"
            ));
        }
        if a > b {
            return Err(format!(
                "--ramp-up-start-rps ({a}) must not exceed --ramp-up-end-rps ({b})"
            ));
        }
        if a == 0.0 {
            return Err(format!(
                "--ramp-up-start-rps must be above 0 for the {} ramp-up",
                self.strategy.as_str()
            ));
        }
        // The flags' own bounds (src/cli/num.rs), for ramps that come from a suite or a file.
        if a < 1e-3 || b > 1e6 {
            return Err(format!(
                "--ramp-up-start-rps and --ramp-up-end-rps must be in [0.001, 1000000] requests \
                 per second, got {a} and {b}"
            ));
        }
        Ok(())
    }
}

/// The checks of a scenario before it runs, the message naming the field: a cap of at least
/// 1, a ramp-up within vLLM's rules and not beside a finite `request_rate` (the ramp sets the
/// rate), and the request fields ([`ScenarioParams::check_request_fields`]).
pub fn check_scenario(p: &ScenarioParams) -> Result<(), String> {
    if p.max_concurrency == Some(0) {
        return Err("max_concurrency must be at least 1".into());
    }
    if let Some(ramp) = RampUp::of(p) {
        if !p.request_rate.is_inf() {
            return Err("request_rate must be inf with a ramp-up (the ramp sets the rate)".into());
        }
        ramp.validate()?;
    }
    p.check_request_fields()
}

/// Due times of `n` requests under a ramp-up: the gap after request `i` is drawn from the gamma
/// distribution of the rate at `i` (see [`RampUpStrategy::rate`]), seeded.
pub fn schedule_ramp(
    n: usize,
    ramp: RampUp,
    burstiness: f64,
    seed: u64,
) -> Result<Vec<Duration>, LoadError> {
    ramp.validate().map_err(LoadError::Config)?;
    if !(burstiness > 0.0 && burstiness.is_finite()) {
        return Err(LoadError::Config(format!(
            "--burstiness must be a positive number, got {burstiness}"
        )));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut t = 0.0f64;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(Duration::try_from_secs_f64(t).map_err(|_| {
            LoadError::Config(format!(
                "the ramp-up puts request {i} {t:e} s after the start: not a schedule"
            ))
        })?);
        let rate = ramp.strategy.rate(ramp.start_rps, ramp.end_rps, i, n);
        let gamma = Gamma::new(burstiness, 1.0 / (rate * burstiness))
            .map_err(|e| LoadError::Config(format!("ramp-up rate {rate}: {e}")))?;
        t += gamma.sample(&mut rng);
    }
    Ok(out)
}

/// Run one scenario: warmups, then every prompt on schedule; fold the results.
///
/// Errors only when nothing could be measured (no prompts, bad configuration, every request
/// failed); failed requests of a run that measured something are data in the result.
pub async fn run(
    cfg: &RunConfig,
    prompts: Vec<Prompt>,
    progress: &dyn Progress,
) -> Result<RunOutcome, LoadError> {
    run_work(cfg, Work::Prompts(Arc::new(prompts)), progress).await
}

/// When each request of a run is due, from the start: a timed trace's own times, or the
/// seeded schedule (a ramp, a time budget, or `num_prompts` arrivals at the rate).
struct Schedule {
    due: Box<dyn Iterator<Item = Duration> + Send>,
    /// Whether the times are a trace's.
    timed: bool,
    budget: Option<Duration>,
}

fn due_times(cfg: &RunConfig, work: &Work) -> Result<Schedule, LoadError> {
    let burstiness = cfg.burstiness();
    // A timed trace brings its own times (in order); otherwise the seeded schedule.
    let timed: Option<Vec<Duration>> = match work {
        Work::Prompts(p) => p
            .iter()
            .map(|p| p.arrival.map(|a| Duration::from_secs_f64(a.max(0.0))))
            .collect(),
        Work::Conversations(_) => None,
    };
    let items = work.items();
    let budget = cfg.params.duration_s.map(Duration::from_secs_f64);
    if budget.is_some() && (timed.is_some() || matches!(work, Work::Conversations(_))) {
        return Err(LoadError::Config(
            "duration_s cannot be used with a timed trace or multi-turn conversations (their \
             own times and turns set the run)"
                .into(),
        ));
    }
    let is_timed = timed.is_some();
    let due: Box<dyn Iterator<Item = Duration> + Send> = match (timed, cfg.ramp_up(), budget) {
        (Some(t), _, _) => Box::new(t.into_iter()),
        (None, None, Some(b)) => schedule_until(b, cfg.params.request_rate, burstiness, cfg.seed)?,
        (None, Some(ramp), _) => {
            Box::new(schedule_ramp(items, ramp, burstiness, cfg.seed)?.into_iter())
        }
        (None, None, None) => {
            Box::new(schedule(items, cfg.params.request_rate, burstiness, cfg.seed)?.into_iter())
        }
    };
    Ok(Schedule {
        due,
        timed: is_timed,
        budget,
    })
}

/// A run in which no request succeeded: each failure kind with its count and first message.
fn all_failed(acc: &Accumulator) -> LoadError {
    let summary = acc
        .errors()
        .iter()
        .map(|(k, e)| format!("{k} ×{}: {}", e.count, e.first_message))
        .collect::<Vec<_>>()
        .join("; ");
    LoadError::AllFailed {
        failed: acc.failed(),
        summary,
    }
}

/// [`run`] for any [`Work`]: prompts, or conversations (whose items are scheduled as
/// conversations, their later turns sent as the answers arrive).
pub async fn run_work(
    cfg: &RunConfig,
    work: Work,
    progress: &dyn Progress,
) -> Result<RunOutcome, LoadError> {
    if work.requests() == 0 {
        return Err(LoadError::NoPrompts);
    }
    check_scenario(&cfg.params).map_err(LoadError::Config)?;
    let max_concurrency = cfg.max_concurrency();
    let Schedule { due, timed, budget } = due_times(cfg, &work)?;
    let client = Arc::new(Client::new(cfg.request_client())?);

    let warmup_failed = if cfg.num_warmups > 0 {
        let prompts = work.warmup_prompts();
        warmup(&client, &prompts, cfg.num_warmups, max_concurrency).await
    } else {
        0
    };

    let n = work.requests();
    let in_flight = max_concurrency.unwrap_or(n).min(n);
    raise_open_files_limit(in_flight);
    if cfg.client.keep_alive {
        client.preconnect(in_flight.min(MAX_PRECONNECT)).await;
    }
    progress.start(n as u64);
    let slots = max_concurrency.map(|c| Arc::new(Semaphore::new(c)));
    let (tx, mut rx) = mpsc::unbounded_channel::<RequestRecord>();
    let t0 = Instant::now();
    let finite_rate = !cfg.params.request_rate.is_inf() || cfg.ramp_up().is_some() || timed;

    // A time budget ends the issuing: a request not yet sent when it runs out (waiting for its
    // due time or for a slot) is never sent; those in flight finish (the drain).
    let deadline = budget.map(|b| tokio::time::Instant::from_std(t0 + b));
    let scheduler = {
        let client = client.clone();
        let firsts = work.first_indices();
        async move {
            for (i, offset) in due.enumerate() {
                // With rate inf a request is due when it is sent (like vLLM); otherwise at its
                // place in the schedule, however long it then waits for a slot.
                let scheduled = finite_rate.then_some(t0 + offset);
                if let Some(due) = scheduled {
                    tokio::time::sleep_until(tokio::time::Instant::from_std(due)).await;
                }
                let at = (&client, t0, scheduled);
                let first = firsts.get(i).copied().unwrap_or(i as u32);
                let send = work.dispatch(i, first, at, &slots, &tx);
                match deadline {
                    Some(d) if tokio::time::Instant::now() >= d => break,
                    // Cancelling `send` while it waits for a slot sends nothing.
                    Some(d) => {
                        if tokio::time::timeout_at(d, send).await.is_err() {
                            break;
                        }
                    }
                    None => send.await,
                }
            }
            drop(tx);
        }
    };

    // Folding a record (histograms, and re-tokenizing its text when the server sent no usage or
    // with --retokenize) runs on a thread of its own, so the thread that reads the sockets and
    // takes the timestamps does nothing else.
    let Folding {
        tx: fold_tx,
        thread: folder,
        acc: acc_rx,
    } = start_folding(cfg)?;
    let collector = async {
        let mut elapsed = Duration::ZERO;
        let mut by_turn = TurnTtft::default();
        while let Some(rec) = rx.recv().await {
            elapsed = t0.elapsed();
            by_turn.add(&rec);
            progress.request_done(rec.ok());
            let _ = fold_tx.send(rec);
        }
        drop(fold_tx);
        let acc = acc_rx.await;
        (acc, elapsed, by_turn)
    };

    let ((), (acc, elapsed, by_turn)) = tokio::join!(scheduler, collector);
    progress.finish();
    let _ = folder.join();
    let acc = acc.map_err(|_| LoadError::Config("the folding thread failed".into()))?;

    if acc.completed() == 0 {
        return Err(all_failed(&acc));
    }

    let mut outcome = outcome(cfg, acc, elapsed);
    outcome.warmup_failed = warmup_failed;
    if let Some(m) = by_turn.means() {
        outcome
            .extra
            .insert("mean_ttft_ms_by_turn".into(), m.into());
    }
    Ok(outcome)
}

/// Start the thread that folds records into the metrics (histograms, and re-tokenizing a text when
/// the server sent no usage or with --retokenize), so the thread that reads the sockets and
/// takes the timestamps does nothing else. Send it records, then drop the sender; the
/// accumulator comes back on the receiver.
fn start_folding(cfg: &RunConfig) -> Result<Folding, LoadError> {
    let (fold_tx, fold_rx) = std::sync::mpsc::channel::<RequestRecord>();
    let (acc_tx, acc_rx) = tokio::sync::oneshot::channel::<Accumulator>();
    let metrics = cfg.metrics.clone();
    let tokenizer = cfg.tokenizer.clone();
    let retokenize = cfg.retokenize;
    let folder = std::thread::Builder::new()
        .name("perfgate-fold".into())
        .spawn(move || {
            let mut acc = Accumulator::new(metrics);
            for rec in fold_rx {
                let retok = match &tokenizer {
                    Some(tok) if rec.ok() && (retokenize || rec.usage_output_tokens.is_none()) => {
                        tok.encode(&rec.text).ok().map(|ids| ids.len() as u32)
                    }
                    _ => None,
                };
                acc.add(&rec, retok);
            }
            let _ = acc_tx.send(acc);
        })
        .map_err(|e| LoadError::Config(format!("cannot start the folding thread: {e}")))?;
    Ok(Folding {
        tx: fold_tx,
        thread: folder,
        acc: acc_rx,
    })
}

/// The folding thread of a run: where to send records, the thread, and its accumulator.
struct Folding {
    tx: std::sync::mpsc::Sender<RequestRecord>,
    thread: std::thread::JoinHandle<()>,
    acc: tokio::sync::oneshot::Receiver<Accumulator>,
}

/// The outcome of a run that measured something: the record, its statistics from `acc`.
fn outcome(cfg: &RunConfig, acc: Accumulator, elapsed: Duration) -> RunOutcome {
    let mut result = ScenarioResult {
        date: Some(chrono::Local::now().format("%Y%m%d-%H%M%S").to_string()),
        backend: Some(cfg.backend.clone()),
        model: cfg.model.clone(),
        model_id: Some(cfg.model.clone()),
        tokenizer_id: cfg.tokenizer.as_ref().map(|t| t.id()),
        params: cfg.params.clone(),
        seed: Some(cfg.seed),
        source: Some("run".into()),
        perfgate_version: Some(env!("CARGO_PKG_VERSION").into()),
        ..Default::default()
    };
    let detailed = acc.finish(elapsed.as_secs_f64(), &mut result);
    RunOutcome {
        result,
        detailed,
        warmup_failed: 0,
        extra: serde_json::Map::new(),
    }
}

/// Make room for `connections` sockets: raise the soft limit on open files towards the hard
/// limit when it is lower than that plus a margin (CI runners often start at 1,024). A failure
/// is left for the requests to report as connection errors.
fn raise_open_files_limit(connections: usize) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let want = connections as u64 + 256;
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        if soft < want {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, want.min(hard), hard);
        }
    }
}

/// Send `count` warmup requests (cycling through the prompts), at most `max_concurrency` at a
/// time; return how many failed.
async fn warmup(
    client: &Arc<Client>,
    prompts: &Arc<Vec<Prompt>>,
    count: usize,
    max_concurrency: Option<usize>,
) -> usize {
    let slots = Arc::new(Semaphore::new(max_concurrency.unwrap_or(count).max(1)));
    let t0 = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..count {
        let permit = slots.clone().acquire_owned().await.expect("never closed");
        let (client, prompts) = (client.clone(), prompts.clone());
        tasks.spawn(async move {
            let p = &prompts[i % prompts.len()];
            let rec = client.send(i as u32, p, t0, None).await;
            drop(permit);
            rec.ok()
        });
    }
    let mut failed = 0;
    while let Some(r) = tasks.join_next().await {
        if !matches!(r, Ok(true)) {
            failed += 1;
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_up_rates_are_vllms() {
        let lin = RampUpStrategy::Linear;
        assert_eq!(lin.rate(1.0, 10.0, 0, 10), 1.0);
        assert_eq!(lin.rate(1.0, 10.0, 3, 10), 4.0);
        assert_eq!(lin.rate(1.0, 10.0, 9, 10), 10.0);
        assert_eq!(lin.rate(5.0, 10.0, 0, 1), 5.0);
        let exp = RampUpStrategy::Exponential;
        assert_eq!(exp.rate(1.0, 16.0, 2, 5), 4.0);
        assert_eq!(exp.rate(2.0, 32.0, 4, 5), 32.0);
        let bad = |a, b| {
            RampUp {
                strategy: lin,
                start_rps: a,
                end_rps: b,
            }
            .validate()
            .unwrap_err()
        };
        assert!(bad(0.0, 10.0).contains("above 0"));
        assert!(bad(10.0, 1.0).contains("must not exceed"));
        assert!(bad(-1.0, 1.0).contains("non-negative"));
    }

    #[test]
    fn ramp_up_schedule_speeds_up_as_the_rate_climbs() {
        let ramp = RampUp {
            strategy: RampUpStrategy::Linear,
            start_rps: 10.0,
            end_rps: 100.0,
        };
        let a = schedule_ramp(2001, ramp, 1.0, 3).unwrap();
        assert_eq!(a, schedule_ramp(2001, ramp, 1.0, 3).unwrap());
        assert_eq!(a[0], Duration::ZERO);
        let gap = |lo: usize, hi: usize| (a[hi] - a[lo]).as_secs_f64() / (hi - lo) as f64;
        // Requests 0..200 run at 10..19 req/s (mean gap ≈ 1/14); 1800..2000 at 91..100 (≈ 1/95).
        let (early, late) = (gap(0, 200), gap(1800, 2000));
        assert!((early - 1.0 / 14.3).abs() < 0.015, "{early}");
        assert!((late - 1.0 / 95.5).abs() < 0.002, "{late}");
    }

    #[test]
    fn schedule_is_seeded_and_has_the_requested_rate() {
        let a = schedule(4000, RequestRate::PerSecond(20.0), 1.0, 7).unwrap();
        let b = schedule(4000, RequestRate::PerSecond(20.0), 1.0, 7).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[0], Duration::ZERO);
        let mean_gap = a.last().unwrap().as_secs_f64() / 3999.0;
        assert!((mean_gap - 0.05).abs() < 0.005, "{mean_gap}");
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        let c = schedule(4000, RequestRate::PerSecond(20.0), 1.0, 8).unwrap();
        assert_ne!(a, c);
    }

    #[test]
    fn burstiness_changes_spread_not_rate() {
        let gaps = |b: f64| {
            let s = schedule(20000, RequestRate::PerSecond(10.0), b, 3).unwrap();
            let g: Vec<f64> = s.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
            crate::metrics::mean_std(&g)
        };
        let (m1, s1) = gaps(1.0);
        let (m4, s4) = gaps(4.0);
        assert!((m1 - 0.1).abs() < 0.005 && (m4 - 0.1).abs() < 0.005);
        // gamma: cv = 1/sqrt(shape)
        assert!((s1 / m1 - 1.0).abs() < 0.05, "{}", s1 / m1);
        assert!((s4 / m4 - 0.5).abs() < 0.05, "{}", s4 / m4);
    }

    #[test]
    fn inf_rate_is_all_at_once_and_bad_burstiness_is_refused() {
        assert_eq!(
            schedule(3, RequestRate::Inf, 1.0, 0).unwrap(),
            [Duration::ZERO; 3]
        );
        assert!(schedule(3, RequestRate::PerSecond(1.0), 0.0, 0).is_err());
    }
}
