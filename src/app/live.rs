//! `perfgate check` in live mode (no `--results`): for each model of the baseline, launch its
//! engine, wait until ready, warm up, run every scenario `--runs` times (fresh order each run,
//! same dataset seeds) while sampling the engine's `/metrics`, stop the engine, go on with the
//! next model; then gate the measured records with the same code as the offline check. Results,
//! engine logs, engine metrics and the reports always land in the output directory, also when
//! something fails; engine faults become `error` rows (exit 3) and never stop the next model.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use tokio::sync::watch;

use super::check::{self, ReportOptions};
use super::Exit;
use crate::baseline::{Baseline, MetricSeries, Provenance, RunInfo};
use crate::cli::check::CheckArgs;
use crate::cli::live::{LiveArgs, Rerun};
use crate::client::load::{self, RunConfig};
use crate::dataset::{self, DatasetName, DatasetSpec};
use crate::engine::{self, metrics, Engine, EngineError, EngineSpec};
use crate::gate::{self, ScenarioError, Side, Verdict};
use crate::record::{Direction, ScenarioResult};
use crate::suite::{self, ModelPlan, Overrides, Plan, ScenarioPlan};
use crate::tokenizer::{self, Tokenize};

/// Validated live-mode settings.
#[derive(Debug, Clone)]
struct Settings {
    grace: Duration,
    unresponsive: Duration,
    metrics_every: Duration,
    warmups: u32,
    scenario_timeout: Duration,
    request_timeout: Option<Duration>,
    dataset_path: Option<PathBuf>,
}

/// The files of the output directory.
struct Output {
    dir: PathBuf,
    results: File,
    engine_metrics: File,
    errors: File,
}

impl Output {
    fn create(dir: &Path) -> anyhow::Result<Output> {
        std::fs::create_dir_all(dir.join("logs"))
            .with_context(|| format!("creating the output directory {}", dir.display()))?;
        let open = |name: &str| {
            let p = dir.join(name);
            File::create(&p).with_context(|| format!("creating {}", p.display()))
        };
        Ok(Output {
            dir: dir.to_path_buf(),
            results: open("results.jsonl")?,
            engine_metrics: open("engine-metrics.jsonl")?,
            errors: open("errors.jsonl")?,
        })
    }

    fn log_path(&self, model: &str) -> PathBuf {
        self.dir
            .join("logs")
            .join(format!("{}.log", suite::slug(model)))
    }
}

/// What a live run measured so far.
#[derive(Debug, Default)]
struct Measured {
    records: Vec<ScenarioResult>,
    errors: Vec<ScenarioError>,
    interrupted: bool,
}

impl Measured {
    /// Record a failure (one error per model × scenario; the first reason wins) and log it.
    fn fail(&mut self, out: &mut Output, model: &str, scenario: &str, run: Option<u32>, msg: &str) {
        let line = serde_json::json!({
            "model": model, "scenario": scenario, "run_index": run, "message": msg,
        });
        let _ = writeln!(out.errors, "{line}");
        if !self
            .errors
            .iter()
            .any(|e| e.model == model && e.scenario == scenario)
        {
            self.errors.push(ScenarioError {
                model: model.to_string(),
                scenario: scenario.to_string(),
                message: msg.to_string(),
            });
        }
    }
}

/// Run `perfgate check` in live mode.
pub(crate) fn exec(args: &CheckArgs) -> anyhow::Result<Exit> {
    let live = &args.live;
    let shown = args.baseline.display().to_string();
    let file = Baseline::load(&args.baseline)?;
    let ov = overrides(live)?;
    let plan = suite::plan(&file, &ov).with_context(|| shown.clone())?;
    if live.dry_run {
        print!(
            "{}",
            crate::report::dryrun::render_dry_run(&plan, &shown, live.runs)
        );
        return Ok(Exit::Pass);
    }
    let settings = settings(live)?;
    let (base_recs, cfg, base_side) = check::load_baseline(&args.baseline)?;
    let mut cfg = check::gate_config(cfg, args.gate.as_deref())?;
    let mut opts = ReportOptions::from_args(args);
    opts.json
        .get_or_insert_with(|| live.output_dir.join("report.json"));
    opts.markdown
        .get_or_insert_with(|| live.output_dir.join("report.md"));
    opts.html
        .get_or_insert_with(|| live.output_dir.join("report.html"));

    let mut out = Output::create(&live.output_dir)?;
    let _ = crate::atomic::write(
        &live.output_dir.join("plan.txt"),
        crate::report::dryrun::render_dry_run(&plan, &shown, live.runs),
    );
    let rt = super::runtime()?;
    let (tx, rx) = watch::channel(false);
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("perfgate: interrupted: stopping the engine and keeping what was measured");
            let _ = tx.send(true);
        }
    });

    let mut m = Measured::default();
    let all = |_: &ModelPlan, _: &ScenarioPlan| true;
    rt.block_on(run_plan(
        &plan, &all, 0, live.runs, &settings, &mut out, &mut m, &rx,
    ));

    // Re-run what the gate could not decide, with a fresh engine per model.
    let mut rounds = 0;
    if live.rerun == Some(Rerun::Inconclusive) {
        let mut next_run = live.runs;
        while rounds < live.max_reruns && !m.interrupted {
            let report = gate::evaluate(
                &base_recs,
                &m.records,
                &m.errors,
                &cfg,
                &opts.kind,
                base_side.clone(),
                Side::default(),
            );
            let todo: BTreeSet<(String, String)> = report
                .rows
                .iter()
                .filter(|r| r.gated && r.verdict == Verdict::Inconclusive)
                .map(|r| (r.model.clone(), r.scenario.clone()))
                .collect();
            if todo.is_empty() {
                break;
            }
            rounds += 1;
            eprintln!(
                "perfgate: re-run {rounds}/{}: {} inconclusive scenario(s)",
                live.max_reruns,
                todo.len()
            );
            let pick =
                |mp: &ModelPlan, s: &ScenarioPlan| todo.contains(&(mp.name.clone(), s.id.clone()));
            rt.block_on(run_plan(
                &plan, &pick, next_run, 1, &settings, &mut out, &mut m, &rx,
            ));
            next_run += 1;
        }
    }
    if rounds > 0 {
        // Every re-run is another look at the data: split the false-alarm rate over the looks
        // (Bonferroni) so that re-running until something regresses does not inflate it.
        let alpha = cfg.alpha() / f64::from(rounds + 1);
        eprintln!(
            "perfgate: {rounds} re-run round(s): gating at alpha {alpha:.4} (= {} / {})",
            cfg.alpha(),
            rounds + 1
        );
        cfg.alpha = Some(alpha);
    }
    rt.shutdown_timeout(Duration::from_secs(1));

    if let Some(path) = &live.save_baseline {
        let b = baseline_with_runs(&file, &plan, &m.records, &shown);
        crate::atomic::write(path, b.to_toml())?;
        eprintln!("perfgate: wrote baseline {}", path.display());
    }

    if base_recs.is_empty() {
        // A suite file (no numbers): measure only; nothing to gate against.
        eprintln!(
            "perfgate: {shown} has no baseline numbers: measured {} record(s), gated nothing",
            m.records.len()
        );
        for e in &m.errors {
            eprintln!(
                "perfgate: error: {} {}: {}",
                e.model,
                e.scenario,
                first_line(&e.message)
            );
        }
        eprintln!(
            "perfgate: results, engine logs and engine metrics are in {}",
            out.dir.display()
        );
        return Ok(if m.errors.is_empty() && !m.interrupted {
            Exit::Pass
        } else {
            Exit::Infra
        });
    }
    let cur_side = Side {
        sources: vec![out.dir.join("results.jsonl").display().to_string()],
        engine: Some(plan.engine.clone()),
        engine_version: ov
            .engine_image
            .clone()
            .or_else(|| ov.engine_cmd.as_ref().map(|_| "--engine-cmd".to_string())),
        date: Some(chrono::Utc::now().to_rfc3339()),
    };
    let exit = check::gate_and_report(
        &base_recs, base_side, &m.records, cur_side, &m.errors, &cfg, &opts,
    )?;
    eprintln!(
        "perfgate: results, engine logs, engine metrics and reports are in {}",
        out.dir.display()
    );
    if m.interrupted {
        return Ok(Exit::Infra);
    }
    Ok(exit)
}

fn overrides(live: &LiveArgs) -> anyhow::Result<Overrides> {
    let start_timeout = match live.start_timeout {
        Some(v) => Some(LiveArgs::secs("--start-timeout", v).map_err(anyhow::Error::msg)?),
        None => None,
    };
    Ok(Overrides {
        engine_cmd: live.engine_cmd.clone(),
        engine_image: live.engine_image.clone(),
        port: live.port,
        start_timeout,
        models: live.models.clone(),
        tokenizer: live.tokenizer.clone(),
        base_url: live.base_url.clone(),
    })
}

fn settings(live: &LiveArgs) -> anyhow::Result<Settings> {
    let secs = |flag: &str, v: f64| LiveArgs::secs(flag, v).map_err(anyhow::Error::msg);
    Ok(Settings {
        grace: secs("--stop-grace", live.stop_grace)?,
        unresponsive: secs("--unresponsive-timeout", live.unresponsive_timeout)?,
        metrics_every: secs("--metrics-interval", live.metrics_interval)?,
        warmups: live.warmup_requests,
        scenario_timeout: secs("--scenario-timeout", live.scenario_timeout)?,
        request_timeout: match live.request_timeout {
            Some(v) => Some(secs("--request-timeout", v)?),
            None => None,
        },
        dataset_path: live.dataset_path.clone(),
    })
}

async fn interrupted(rx: &watch::Receiver<bool>) {
    let mut rx = rx.clone();
    if rx.wait_for(|v| *v).await.is_ok() {
        return;
    }
    // A closed channel (no Ctrl-C handler) must never look like an interrupt.
    std::future::pending::<()>().await
}

fn is_interrupted(rx: &watch::Receiver<bool>) -> bool {
    *rx.borrow()
}

/// How one scenario run ended.
enum Outcome {
    Measured(Box<ScenarioResult>),
    /// The scenario failed but the engine is fine (e.g. every request was rejected).
    Failed(String),
    /// The engine died, hung or timed out: nothing more can run on it.
    Engine(String),
    Interrupted,
}

/// Run the selected scenarios of every model `runs` times, numbering runs from `first_run`.
#[allow(clippy::too_many_arguments)]
async fn run_plan(
    plan: &Plan,
    pick: &(dyn Fn(&ModelPlan, &ScenarioPlan) -> bool + Sync),
    first_run: u32,
    runs: u32,
    s: &Settings,
    out: &mut Output,
    m: &mut Measured,
    intr: &watch::Receiver<bool>,
) {
    // Probes (readiness, health, /metrics) open a fresh connection each time: an idle
    // keep-alive connection would hold one of the few HTTP threads some engines have
    // (llama.cpp: about n_parallel + 2) that the benchmark needs.
    let http = match reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            for mp in &plan.models {
                for sp in mp.scenarios.iter().filter(|sp| pick(mp, sp)) {
                    m.fail(out, &mp.name, &sp.id, None, &format!("HTTP client: {e}"));
                }
            }
            return;
        }
    };
    for mp in &plan.models {
        let scen: Vec<&ScenarioPlan> = mp.scenarios.iter().filter(|sp| pick(mp, sp)).collect();
        if scen.is_empty() || m.interrupted {
            continue;
        }
        run_model(plan, mp, &scen, first_run, runs, s, out, m, intr, &http).await;
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_model(
    plan: &Plan,
    mp: &ModelPlan,
    scen: &[&ScenarioPlan],
    first_run: u32,
    runs: u32,
    s: &Settings,
    out: &mut Output,
    m: &mut Measured,
    intr: &watch::Receiver<bool>,
    http: &reqwest::Client,
) {
    let base = mp.launch.base_url.clone();
    let fail_all = |m: &mut Measured, out: &mut Output, msg: &str| {
        for sp in scen {
            m.fail(out, &mp.name, &sp.id, None, msg);
        }
    };
    eprintln!(
        "perfgate: model {} ({} scenario(s) × {runs} run(s))",
        mp.name,
        scen.len()
    );

    // ---- launch and wait until ready ---------------------------------------------------
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
            grace: s.grace,
            log_path: out.log_path(&mp.name),
        };
        match Engine::spawn(spec) {
            Ok(e) => engine = Some(e),
            Err(e) => {
                eprintln!("perfgate: {}: {e}", mp.name);
                fail_all(m, out, &e.to_string());
                return;
            }
        }
    }
    let ready = {
        let wait = async {
            match engine.as_mut() {
                Some(e) => e.wait_ready(http).await.map_err(|e| e.to_string()),
                None => {
                    wait_external(http, &base, &mp.served_model_name, mp.launch.start_timeout).await
                }
            }
        };
        tokio::select! {
            r = wait => r,
            _ = interrupted(intr) => Err("interrupted (Ctrl-C) while the engine was starting".into()),
        }
    };
    match ready {
        Ok(d) => eprintln!("perfgate: {} ready after {:.1} s", mp.name, d.as_secs_f64()),
        Err(msg) => {
            eprintln!("perfgate: {}: {msg}", mp.name);
            m.interrupted |= is_interrupted(intr);
            fail_all(m, out, &msg);
            stop(engine.as_mut(), &mp.name).await;
            return;
        }
    }

    // ---- tokenizer and prompts -----------------------------------------------------------
    let tok_spec = mp.tokenizer.clone().unwrap_or_else(|| "server".to_string());
    let tok: Arc<dyn Tokenize> = {
        let (spec, url) = (tok_spec.clone(), base.clone());
        match tokio::task::spawn_blocking(move || tokenizer::load(&spec, &url)).await {
            Ok(Ok(t)) => Arc::from(t),
            Ok(Err(e)) => {
                let msg = format!("tokenizer `{tok_spec}`: {e}");
                fail_all(m, out, &msg);
                stop(engine.as_mut(), &mp.name).await;
                return;
            }
            Err(e) => {
                fail_all(m, out, &format!("tokenizer `{tok_spec}`: {e}"));
                stop(engine.as_mut(), &mp.name).await;
                return;
            }
        }
    };
    let mut prompts: BTreeMap<String, Vec<dataset::Prompt>> = BTreeMap::new();

    // ---- the runs ------------------------------------------------------------------------
    let mut warmups = s.warmups;
    'runs: for r in 0..runs {
        let run_index = first_run + r;
        let order = suite::run_order(scen.len(), run_index);
        for (pos, &i) in order.iter().enumerate() {
            let sp = scen[i];
            if !prompts.contains_key(&sp.id) {
                // Building prompts is not a measurement: a few retries for a transient failure
                // of the engine's /tokenize is fine.
                let mut built = build_prompts(sp, s, tok.clone()).await;
                for attempt in 1..=3 {
                    let Err(why) = &built else { break };
                    eprintln!("perfgate: {}: {why}; retry {attempt}/3", sp.id);
                    tokio::time::sleep(Duration::from_millis(300 * attempt)).await;
                    built = build_prompts(sp, s, tok.clone()).await;
                }
                match built {
                    Ok(p) => {
                        prompts.insert(sp.id.clone(), p);
                    }
                    Err(msg) => {
                        m.fail(out, &mp.name, &sp.id, Some(run_index), &msg);
                        continue;
                    }
                }
            }
            let p = prompts[&sp.id].clone();
            eprintln!(
                "perfgate: {} run {} scenario {} ({} prompts)",
                mp.name,
                run_index + 1,
                sp.id,
                p.len()
            );
            let outcome = run_one(
                plan,
                mp,
                sp,
                run_index,
                p,
                warmups,
                tok.clone(),
                s,
                out,
                engine.as_mut(),
                intr,
                http,
            )
            .await;
            warmups = 0;
            match outcome {
                Outcome::Measured(rec) => {
                    let _ = writeln!(
                        out.results,
                        "{}",
                        serde_json::to_string(&*rec).unwrap_or_default()
                    );
                    m.records.push(*rec);
                }
                Outcome::Failed(msg) => {
                    eprintln!("perfgate: {} {}: {msg}", mp.name, sp.id);
                    m.fail(out, &mp.name, &sp.id, Some(run_index), &msg);
                }
                Outcome::Engine(msg) => {
                    eprintln!("perfgate: {} {}: {msg}", mp.name, sp.id);
                    m.fail(out, &mp.name, &sp.id, Some(run_index), &msg);
                    // Nothing else can run on this engine: the rest of this model's runs fail.
                    let rest = format!("not run: the engine failed earlier ({})", first_line(&msg));
                    for &j in &order[pos + 1..] {
                        m.fail(out, &mp.name, &scen[j].id, Some(run_index), &rest);
                    }
                    for later in r + 1..runs {
                        for sp in scen {
                            m.fail(out, &mp.name, &sp.id, Some(first_run + later), &rest);
                        }
                    }
                    break 'runs;
                }
                Outcome::Interrupted => {
                    m.interrupted = true;
                    m.fail(
                        out,
                        &mp.name,
                        &sp.id,
                        Some(run_index),
                        "interrupted (Ctrl-C) during the scenario",
                    );
                    break 'runs;
                }
            }
        }
    }
    stop(engine.as_mut(), &mp.name).await;
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// An engine perfgate did not launch (`--base-url`): wait until it is ready.
async fn wait_external(
    http: &reqwest::Client,
    base: &str,
    model: &str,
    limit: Duration,
) -> Result<Duration, String> {
    let t0 = tokio::time::Instant::now();
    loop {
        match engine::process::probe_ready(http, base, model).await {
            Ok(()) => return Ok(t0.elapsed()),
            Err(why) if t0.elapsed() >= limit => {
                return Err(format!(
                    "the server at {base} was not ready within {} s: {why}",
                    limit.as_secs()
                ))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

async fn stop(engine: Option<&mut Engine>, model: &str) {
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

async fn build_prompts(
    sp: &ScenarioPlan,
    s: &Settings,
    tok: Arc<dyn Tokenize>,
) -> Result<Vec<dataset::Prompt>, String> {
    let p = &sp.params;
    let name = match p.dataset_name.as_str() {
        "random" => DatasetName::Random,
        "sharegpt" => DatasetName::Sharegpt,
        "fixed" => DatasetName::Fixed,
        "jsonl" => DatasetName::Jsonl,
        other => return Err(format!("unknown dataset `{other}`")),
    };
    let u32_of = |v: Option<u64>, field: &str| -> Result<u32, String> {
        u32::try_from(v.unwrap_or(0)).map_err(|_| format!("{field} is too large"))
    };
    let spec = DatasetSpec {
        name,
        path: s.dataset_path.clone(),
        num_prompts: p.num_prompts as usize,
        random_input_len: u32_of(p.random_input_len, "random_input_len")?,
        random_output_len: u32_of(p.random_output_len, "random_output_len")?,
        random_range_ratio: p.random_range_ratio.unwrap_or(0.0),
        range_convention: p.range_convention.unwrap_or_default(),
        sharegpt_output_len: p.sharegpt_output_len.map(|v| v as u32),
        seed: sp.seed,
    };
    let built = tokio::task::spawn_blocking(move || dataset::build(&spec, tok.as_ref()))
        .await
        .map_err(|e| format!("building prompts: {e}"))?
        .map_err(|e| format!("building prompts: {e}"))?;
    for note in &built.notes {
        eprintln!("perfgate: {}: {note}", sp.id);
    }
    Ok(built.prompts)
}

/// One scenario run with the engine watched and its `/metrics` sampled.
#[allow(clippy::too_many_arguments)]
async fn run_one(
    plan: &Plan,
    mp: &ModelPlan,
    sp: &ScenarioPlan,
    run_index: u32,
    prompts: Vec<dataset::Prompt>,
    warmups: u32,
    tok: Arc<dyn Tokenize>,
    s: &Settings,
    out: &mut Output,
    mut engine: Option<&mut Engine>,
    intr: &watch::Receiver<bool>,
    http: &reqwest::Client,
) -> Outcome {
    let base = mp.launch.base_url.as_str();
    let mut cfg = RunConfig::new(base, &mp.served_model_name);
    cfg.client.ignore_eos = true;
    cfg.client.request_timeout = s.request_timeout;
    cfg.client.keep_alive = crate::suite::honours_keep_alive(&plan.engine);
    cfg.request_rate = sp.params.request_rate;
    cfg.burstiness = sp.params.burstiness.unwrap_or(1.0);
    cfg.max_concurrency = sp.params.max_concurrency.map(|c| c as usize);
    cfg.num_warmups = warmups as usize;
    cfg.seed = sp.seed;
    cfg.tokenizer = Some(tok);
    cfg.model = mp.name.clone();
    cfg.backend = plan.engine.clone();
    cfg.params = sp.params.clone();

    let sampler = Mutex::new(metrics::Sampler::default());
    let metrics_on = match metrics::scrape(http, base).await {
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
            metrics::sample_loop(http, base, s.metrics_every, &sampler).await
        } else {
            std::future::pending::<()>().await
        }
    };
    let progress = load::NoProgress;
    let result = tokio::select! {
        r = load::run_scenario(&cfg, prompts, &progress) => Some(r),
        e = engine::watch(engine.as_deref_mut(), http, base, s.unresponsive) => {
            return Outcome::Engine(engine_msg(&e));
        }
        _ = sampling => None,
        _ = tokio::time::sleep(s.scenario_timeout) => {
            let tail = engine.as_deref().map(|e| e.log_tail()).unwrap_or_default();
            return Outcome::Engine(format!(
                "the scenario did not finish within --scenario-timeout {} s; last log lines:\n{tail}",
                s.scenario_timeout.as_secs()
            ));
        }
        _ = interrupted(intr) => return Outcome::Interrupted,
    };
    if metrics_on {
        let after = metrics::scrape(http, base).await;
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
    let line = serde_json::json!({
        "model": mp.name, "scenario": sp.id, "run_index": run_index, "engine": stats,
    });
    let _ = writeln!(out.engine_metrics, "{line}");

    match result {
        Some(Ok(mut rec)) => {
            // The engine may have died right at the end: failed requests then are its fault.
            if let Some(e) = engine.as_deref_mut() {
                if let Some(status) = e.exited() {
                    return Outcome::Engine(engine_msg(&EngineError::Exited {
                        status,
                        tail: e.log_tail(),
                    }));
                }
            }
            rec.model = mp.name.clone();
            rec.engine = Some(plan.engine.clone());
            rec.run_index = run_index;
            rec.seed = Some(sp.seed);
            rec.source
                .get_or_insert_with(|| "perfgate check (live)".into());
            Outcome::Measured(Box::new(rec))
        }
        Some(Err(e)) => {
            if let Some(eng) = engine {
                if let Some(status) = eng.exited() {
                    return Outcome::Engine(engine_msg(&EngineError::Exited {
                        status,
                        tail: eng.log_tail(),
                    }));
                }
            }
            Outcome::Failed(e.to_string())
        }
        None => Outcome::Failed("metrics sampling ended unexpectedly".into()),
    }
}

/// The message of an engine fault: the reason, then the log tail.
fn engine_msg(e: &EngineError) -> String {
    match e.log_tail() {
        Some(t) if !t.trim().is_empty() => format!("{}; last log lines:\n{t}", e.reason()),
        _ => e.reason(),
    }
}

/// Numeric fields of a record worth storing in a baseline.
const TOP_METRICS: [&str; 12] = [
    "completed",
    "failed",
    "duration",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "output_throughput",
    "input_throughput",
    "total_token_throughput",
    "request_goodput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
];

/// The suite file with the measured runs filled in as its numbers: a baseline.
fn baseline_with_runs(
    file: &Baseline,
    plan: &Plan,
    records: &[ScenarioResult],
    source: &str,
) -> Baseline {
    let mut b = file.clone();
    let planned: BTreeSet<&str> = plan.models.iter().map(|m| m.name.as_str()).collect();
    b.models.retain(|m| planned.contains(m.name.as_str()));
    for m in &mut b.models {
        for sc in &mut m.scenarios {
            let mut recs: Vec<&ScenarioResult> = records
                .iter()
                .filter(|r| r.model == m.name && r.scenario_id() == sc.id)
                .collect();
            recs.sort_by_key(|r| r.run_index);
            sc.runs = recs
                .iter()
                .map(|r| RunInfo {
                    source: r.source.clone(),
                    date: r.date.clone(),
                    backend: r.backend.clone(),
                    seed: r.seed,
                    output_token_source: r.output_token_source,
                    tokenizer_id: r.tokenizer_id.clone(),
                    ..Default::default()
                })
                .collect();
            sc.metrics.clear();
            if recs.is_empty() {
                continue;
            }
            let mut names: Vec<String> = TOP_METRICS.iter().map(|s| s.to_string()).collect();
            names.extend(recs[0].stats.keys().cloned());
            for name in names {
                let values: Option<Vec<f64>> = recs.iter().map(|r| r.metric(&name)).collect();
                if let Some(values) = values {
                    sc.metrics.insert(
                        name.clone(),
                        MetricSeries {
                            direction: Direction::of(&name),
                            values,
                        },
                    );
                }
            }
        }
    }
    b.provenance = Provenance {
        sources: vec![format!("perfgate check --baseline {source} (live runs)")],
        date: Some(chrono::Utc::now().to_rfc3339()),
        perfgate_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        ..file.provenance.clone()
    };
    b
}
