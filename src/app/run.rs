//! `perfgate run` (one scenario against a running server, like `vllm bench serve`) and the hidden
//! `perfgate fake-server`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::{infra, Exit};
use crate::cli::run::{FakeServerArgs, RunArgs};
use crate::client::load::{self, LoadError, Progress};
use crate::client::ClientConfig;
use crate::dataset::{self, DatasetName};
use crate::fakeserver::{FakeConfig, Fault};
use crate::metrics::{self, Metric, MetricsConfig};
use crate::record::ScenarioParams;
use crate::report::output;
use crate::runner::{scenario_run, RunSettings, ScenarioRun};
use crate::tokenizer::Tokenize;

pub(crate) fn exec(args: RunArgs) -> anyhow::Result<Exit> {
    let cfg_metrics = metrics_config(&args)?;
    if let Some(t) = args.request_timeout {
        anyhow::ensure!(
            t > 0.0 && t.is_finite(),
            "--request-timeout must be a positive number of seconds, got {t}"
        );
    }
    if args.num_prompts == 0 {
        anyhow::bail!("--num-prompts must be at least 1");
    }
    // The URL and the API key are checked before the (slow) tokenizer and dataset.
    crate::client::Client::new(scenario(&args, cfg_metrics.clone(), None)?.run.client)?;
    let tok = load_tokenizer(&args)?;
    let sc = scenario(&args, cfg_metrics.clone(), Some(tok.clone()))?;
    let ds = dataset::build(&sc.dataset, tok.as_ref())
        .with_context(|| format!("dataset `{}`", args.dataset_name.as_str()))?;
    for note in &ds.notes {
        eprintln!("perfgate: {note}");
    }

    let cfg = sc.run;
    let progress = Bar::new(!args.no_progress && std::io::stderr().is_terminal());
    let rt = super::runtime()?;
    let outcome = match rt.block_on(load::run(&cfg, ds.prompts, &progress)) {
        Ok(o) => o,
        Err(e @ LoadError::AllFailed { .. }) => return Err(infra(e.to_string())),
        Err(e) => return Err(anyhow::Error::new(e)),
    };
    if outcome.warmup_failed > 0 {
        eprintln!(
            "perfgate: warning: {} of {} warmup requests failed",
            outcome.warmup_failed, args.num_warmups
        );
    }
    print!(
        "{}",
        output::result_block(
            &outcome.result,
            &cfg_metrics.percentile_metrics,
            &cfg_metrics.percentiles
        )
    );

    if args.save_result || args.result_filename.is_some() || args.result_dir.is_some() {
        let mut value = serde_json::to_value(&outcome.result)?;
        if let (Some(d), Some(obj)) = (&outcome.detailed, value.as_object_mut()) {
            if let serde_json::Value::Object(extra) = serde_json::to_value(d)? {
                obj.extend(extra);
            }
        }
        let path = result_path(&args, &outcome.result.date.clone().unwrap_or_default());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let mut text = serde_json::to_string(&value)?;
        text.push('\n');
        crate::atomic::write(&path, text)?;
        eprintln!("perfgate: wrote {}", path.display());
    }
    Ok(Exit::Pass)
}

fn metrics_config(args: &RunArgs) -> anyhow::Result<MetricsConfig> {
    let percentile_metrics = args
        .percentile_metrics
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.parse::<Metric>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("--percentile-metrics: {e}"))?;
    Ok(MetricsConfig {
        percentile_metrics,
        percentiles: metrics::parse_percentiles(&args.metric_percentiles)?,
        goodput: metrics::parse_goodput(&args.goodput)?,
        detailed: args.save_detailed,
    })
}

/// The scenario these flags describe, as the library runs it.
pub(crate) fn scenario(
    args: &RunArgs,
    metrics: MetricsConfig,
    tokenizer: Option<Arc<dyn Tokenize>>,
) -> anyhow::Result<ScenarioRun> {
    let random_like = matches!(args.dataset_name, DatasetName::Random | DatasetName::Fixed);
    let params = ScenarioParams {
        dataset_name: args.dataset_name.into(),
        num_prompts: args.num_prompts as u64,
        random_input_len: random_like.then_some(u64::from(args.random_input_len)),
        random_output_len: random_like.then_some(u64::from(args.random_output_len)),
        random_range_ratio: random_like.then_some(args.random_range_ratio),
        range_convention: random_like.then_some(args.range_convention),
        sharegpt_output_len: args.sharegpt_output_len.map(u64::from),
        request_rate: args.request_rate,
        burstiness: Some(args.burstiness),
        max_concurrency: args.max_concurrency.map(|c| c as u64),
    };
    let settings = RunSettings {
        client: ClientConfig {
            base_url: args.base_url.clone(),
            endpoint: args.endpoint.clone(),
            model: args
                .served_model_name
                .clone()
                .unwrap_or_else(|| args.model.clone()),
            temperature: args.temperature,
            ignore_eos: false,
            request_timeout: args.request_timeout.map(Duration::from_secs_f64),
            extra_body: serde_json::Map::new(),
            keep_alive: !args.no_keep_alive,
        },
        ignore_eos: args.ignore_eos,
        num_warmups: args.num_warmups,
        metrics,
        retokenize: args.retokenize,
        tokenizer,
        model: args.model.clone(),
        backend: args.backend.clone(),
        dataset_path: args.dataset_path.clone(),
    };
    scenario_run(&params, args.seed, settings).map_err(anyhow::Error::msg)
}

fn result_path(args: &RunArgs, date: &str) -> PathBuf {
    let name = args.result_filename.clone().unwrap_or_else(|| {
        let model = args.model.rsplit('/').next().unwrap_or(&args.model);
        let conc = args
            .max_concurrency
            .map(|c| format!("-concurrency{c}"))
            .unwrap_or_default();
        format!(
            "{}-{}qps{conc}-{model}-{date}.json",
            args.backend, args.request_rate
        )
    });
    match &args.result_dir {
        Some(d) => d.join(name),
        None => PathBuf::from(name),
    }
}

/// The tokenizer named by `--tokenizer` (default: `--model`, when it is a path).
fn load_tokenizer(args: &RunArgs) -> anyhow::Result<Arc<dyn Tokenize>> {
    let name = match &args.tokenizer {
        Some(t) => t.clone(),
        None if std::path::Path::new(&args.model).exists() => args.model.clone(),
        None => anyhow::bail!(
            "--tokenizer is required (a tokenizer.json, a directory holding one, or `server`)"
        ),
    };
    match crate::client::tokenize::load(&name, &args.base_url) {
        Ok(tok) => Ok(Arc::from(tok)),
        // The engine's own tokenizer failing is the engine's fault, not the user's (exit 3).
        Err(e @ crate::tokenizer::TokenizerError::Server { .. }) => {
            Err(infra(format!("--tokenizer {name}: {e}")))
        }
        Err(e) => Err(anyhow::Error::new(e).context(format!("--tokenizer {name}"))),
    }
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    fn new(show: bool) -> Self {
        Bar(show.then(indicatif::ProgressBar::hidden))
    }
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        if let Some(b) = &self.0 {
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            b.set_length(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} requests [{elapsed_precise} < {eta_precise}] {msg}",
            ) {
                b.set_style(style);
            }
        }
    }
    fn request_done(&self, ok: bool) {
        if let Some(b) = &self.0 {
            if !ok {
                b.set_message("(failures)");
            }
            b.inc(1);
        }
    }
    fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// `perfgate fake-server`: serve until interrupted, after printing the URL.
pub(crate) fn fake_server(args: FakeServerArgs) -> anyhow::Result<Exit> {
    let fault: Fault = args
        .fault
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--fault: {e}"))?;
    for (name, v) in [("--ttft-ms", args.ttft_ms), ("--itl-ms", args.itl_ms)] {
        anyhow::ensure!(
            v >= 0.0 && v.is_finite(),
            "{name} must be a non-negative number"
        );
    }
    let cfg = FakeConfig {
        ttft: Duration::from_secs_f64(args.ttft_ms / 1e3),
        itl: Duration::from_secs_f64(args.itl_ms / 1e3),
        tokens_per_chunk: args.tokens_per_chunk,
        usage: !args.no_usage,
        fault,
        fault_every: args.fault_every,
        model: args.model,
        ..Default::default()
    };
    let port = args.port;
    let t = crate::fakeserver::serve_until_signal(cfg, port, |url| {
        println!("{url}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
    })
    .map_err(|e| infra(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    eprintln!(
        "fake-server: {} requests, {} completed, {} tokens, mean TTFT {:.3} ms, mean chunk gap {:.3} ms, max in flight {}",
        t.requests, t.completed, t.tokens, t.mean_ttft_ms, t.mean_chunk_gap_ms, t.max_in_flight
    );
    Ok(Exit::Pass)
}
