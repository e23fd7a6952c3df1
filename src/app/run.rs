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

pub(crate) fn exec(mut args: RunArgs) -> anyhow::Result<Exit> {
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
    crate::client::check_endpoint(&args.endpoint).map_err(anyhow::Error::msg)?;
    let extras = Extras::parse(&args)?;
    // The URL and the API key are checked before the server, the tokenizer and the dataset.
    crate::client::Client::new(scenario(&args, cfg_metrics.clone(), None)?.run.client)?;
    let base_url = base_url(&args);
    let rt = super::runtime()?;
    // Local mistakes (a tokenizer file, the dataset) are reported before waiting for the server;
    // the server is waited for first only when it must answer before that (no --model, or
    // `--tokenizer server`).
    let ready_timeout = Duration::from_secs(args.ready_check_timeout_sec);
    let server_first = args.model.is_none()
        || args
            .tokenizer
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("server"))
        || tokenizer_spec(&args).0 == "server";
    if server_first {
        let listed = rt.block_on(ready_check(&base_url, ready_timeout, args.model.is_none()))?;
        if args.model.is_none() {
            let first = listed.and_then(|m| m.into_iter().next()).ok_or_else(|| {
                infra(format!(
                    "no --model given and {base_url}/v1/models lists no model; pass --model"
                ))
            })?;
            eprintln!(
                "perfgate: --model not given; using `{first}`, the first model of /v1/models"
            );
            args.model = Some(first);
        }
    }
    let (tok_name, tok_note) = tokenizer_spec(&args);
    if let Some(note) = tok_note {
        eprintln!("perfgate: {note}");
    }
    let tok = load_tokenizer(&tok_name, &base_url)?;
    let sc = scenario(&args, cfg_metrics.clone(), Some(tok.clone()))?;
    let ds = dataset::build(&sc.dataset, tok.as_ref())
        .with_context(|| format!("dataset `{}`", args.dataset_name.as_str()))?;
    for note in &ds.notes {
        eprintln!("perfgate: {note}");
    }
    if !server_first {
        rt.block_on(ready_check(&base_url, ready_timeout, false))?;
    }

    let mut cfg = sc.run;
    cfg.client.base_url = base_url;
    cfg.client.headers = extras.headers;
    // Sampling flags first; --extra-body wins where both name a field.
    cfg.client.extra_body = extras.sampling;
    cfg.client.extra_body.extend(extras.extra_body);
    if let Some(ramp) = cfg.ramp_up {
        anyhow::ensure!(
            args.request_rate.is_inf(),
            "--request-rate and --ramp-up-strategy exclude each other: the ramp sets the rate"
        );
        ramp.validate().map_err(anyhow::Error::msg)?;
    }
    let progress = Bar::new(!args.no_progress && std::io::stderr().is_terminal());
    let mut outcome = match rt.block_on(load::run(&cfg, ds.prompts, &progress)) {
        Ok(o) => o,
        Err(e @ LoadError::AllFailed { .. }) => return Err(infra(e.to_string())),
        Err(e) => return Err(anyhow::Error::new(e)),
    };
    outcome.result.metadata = extras.metadata.clone();
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
        let text = result_json(&outcome)?;
        let path = result_path(&args, &outcome.result.date.clone().unwrap_or_default());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        crate::atomic::write(&path, text)?;
        eprintln!("perfgate: wrote {}", path.display());
    }
    Ok(Exit::Pass)
}

/// The `--save-result` JSON: the record under vLLM's keys, the `--save-detailed` arrays (with
/// vLLM's per-request `errors` list), and the `--metadata` pairs also as top-level keys, as vLLM
/// writes them (a pair whose key the record already uses stays only under `metadata`).
pub(crate) fn result_json(outcome: &load::RunOutcome) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(&outcome.result)?;
    if let Some(obj) = value.as_object_mut() {
        if let Some(d) = &outcome.detailed {
            if let serde_json::Value::Object(extra) = serde_json::to_value(d)? {
                obj.extend(extra);
            }
        }
        for (k, v) in &outcome.result.metadata {
            if !obj.contains_key(k) && !crate::record::is_stat_key(k) {
                obj.insert(k.clone(), v.clone().into());
            }
        }
    }
    let mut text = serde_json::to_string(&value)?;
    text.push('\n');
    Ok(text)
}

/// `--base-url`, else `http://HOST:PORT` (vLLM's rule).
fn base_url(args: &RunArgs) -> String {
    match &args.base_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None if args.host.contains(':') && !args.host.starts_with('[') => {
            format!("http://[{}]:{}", args.host, args.port)
        }
        None => format!("http://{}:{}", args.host, args.port),
    }
}

/// What `--metadata`, `--header`, `--extra-body` and the sampling flags add to a run.
struct Extras {
    metadata: std::collections::BTreeMap<String, String>,
    headers: Vec<(String, String)>,
    sampling: serde_json::Map<String, serde_json::Value>,
    extra_body: serde_json::Map<String, serde_json::Value>,
}

impl Extras {
    fn parse(args: &RunArgs) -> anyhow::Result<Extras> {
        let mut metadata = std::collections::BTreeMap::new();
        for kv in &args.metadata {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--metadata `{kv}`: expected KEY=VALUE"))?;
            anyhow::ensure!(!k.trim().is_empty(), "--metadata `{kv}`: empty key");
            metadata.insert(k.trim().to_string(), v.trim().to_string());
        }
        let headers = args
            .header
            .iter()
            .map(|h| crate::client::parse_header(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)?;
        let mut sampling = serde_json::Map::new();
        let floats = [
            ("top_p", args.top_p),
            ("min_p", args.min_p),
            ("frequency_penalty", args.frequency_penalty),
            ("presence_penalty", args.presence_penalty),
            ("repetition_penalty", args.repetition_penalty),
        ];
        for (key, v) in floats {
            if let Some(v) = v {
                anyhow::ensure!(
                    v.is_finite(),
                    "--{}: {v} is not a finite number",
                    key.replace('_', "-")
                );
                sampling.insert(key.into(), v.into());
            }
        }
        if let Some(k) = args.top_k {
            sampling.insert("top_k".into(), k.into());
        }
        let extra_body = match &args.extra_body {
            None => serde_json::Map::new(),
            Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::Object(m)) => m,
                Ok(_) => anyhow::bail!("--extra-body must be a JSON object, got `{text}`"),
                Err(e) => anyhow::bail!("--extra-body is not valid JSON: {e}"),
            },
        };
        Ok(Extras {
            metadata,
            headers,
            sampling,
            extra_body,
        })
    }
}

/// Wait for the server to answer `GET /v1/models` (any status below 500), up to `timeout`
/// (vLLM's `--ready-check-timeout-sec`; 0: one attempt only when the model list is needed).
/// Returns the listed model ids when the server gave them.
async fn ready_check(
    base_url: &str,
    timeout: Duration,
    need_models: bool,
) -> anyhow::Result<Option<Vec<String>>> {
    if timeout.is_zero() && !need_models {
        return Ok(None);
    }
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .context("building the HTTP client")?;
    let url = format!("{base_url}/v1/models");
    let start = std::time::Instant::now();
    let mut last_err;
    loop {
        match http.get(&url).send().await {
            Ok(resp) if resp.status().as_u16() < 500 => {
                if !resp.status().is_success() {
                    return Ok(None);
                }
                let body: serde_json::Value = resp.json().await.unwrap_or_default();
                let ids = body["data"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|m| m["id"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                return Ok(Some(ids));
            }
            Ok(resp) => last_err = format!("HTTP {}", resp.status()),
            Err(e) => last_err = e.without_url().to_string(),
        }
        if start.elapsed() >= timeout {
            return Err(infra(format!(
                "the server at {base_url} is not ready after {} s ({url}: {last_err}); \
                 raise --ready-check-timeout-sec or check the server",
                timeout.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
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
        random_prefix_len: (random_like && args.random_prefix_len > 0)
            .then_some(u64::from(args.random_prefix_len)),
        ..Default::default()
    };
    let mut params = params;
    match args.dataset_name {
        DatasetName::PrefixRepetition => {
            params.prefix_repetition_prefix_len = Some(args.prefix_repetition_prefix_len.into());
            params.prefix_repetition_suffix_len = Some(args.prefix_repetition_suffix_len.into());
            params.prefix_repetition_num_prefixes =
                Some(args.prefix_repetition_num_prefixes.into());
            params.prefix_repetition_output_len = Some(args.prefix_repetition_output_len.into());
        }
        DatasetName::Custom => params.custom_output_len = Some(args.custom_output_len.into()),
        _ => {}
    }
    let ramp_up = match (
        args.ramp_up_strategy,
        args.ramp_up_start_rps,
        args.ramp_up_end_rps,
    ) {
        (Some(strategy), Some(start_rps), Some(end_rps)) => Some(load::RampUp {
            strategy,
            start_rps,
            end_rps,
        }),
        _ => None,
    };
    if let Some(r) = ramp_up {
        params.ramp_up_strategy = Some(r.strategy);
        params.ramp_up_start_rps = Some(r.start_rps);
        params.ramp_up_end_rps = Some(r.end_rps);
    }
    let model = args.model.clone().unwrap_or_default();
    let settings = RunSettings {
        client: ClientConfig {
            base_url: base_url(args),
            endpoint: args.endpoint.clone(),
            model: args
                .served_model_name
                .clone()
                .unwrap_or_else(|| model.clone()),
            temperature: args.temperature,
            ignore_eos: false,
            request_timeout: args.request_timeout.map(Duration::from_secs_f64),
            extra_body: serde_json::Map::new(),
            headers: Vec::new(),
            keep_alive: !args.no_keep_alive,
        },
        ignore_eos: args.ignore_eos,
        num_warmups: args.num_warmups,
        metrics,
        retokenize: args.retokenize,
        tokenizer,
        model,
        backend: args.backend.clone(),
        dataset_path: args.dataset_path.clone(),
    };
    scenario_run(&params, args.seed, settings).map_err(anyhow::Error::msg)
}

fn result_path(args: &RunArgs, date: &str) -> PathBuf {
    let name = args.result_filename.clone().unwrap_or_else(|| {
        let full = args.model.clone().unwrap_or_default();
        let model = full.rsplit('/').next().unwrap_or(&full);
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
/// The tokenizer to load, as vLLM finds it: `--tokenizer` (a path, `server`, or a Hugging Face
/// id found in the local cache), else `--model` as a path or a cached Hugging Face id, else the
/// server's own `/tokenize` (perfgate downloads nothing). The note says which was chosen.
fn tokenizer_spec(args: &RunArgs) -> (String, Option<String>) {
    let hf = |id: &str| crate::tokenizer::hf_cached(id).map(|p| p.display().to_string());
    if let Some(t) = &args.tokenizer {
        if t.eq_ignore_ascii_case("server") || std::path::Path::new(t).exists() {
            return (t.clone(), None);
        }
        return match hf(t) {
            Some(p) => (
                p.clone(),
                Some(format!("tokenizer `{t}` from the Hugging Face cache: {p}")),
            ),
            None => (t.clone(), None),
        };
    }
    match args.model.as_deref().filter(|m| !m.is_empty()) {
        Some(m) if std::path::Path::new(m).exists() => (m.to_string(), None),
        Some(m) => match hf(m) {
            Some(p) => (
                p.clone(),
                Some(format!(
                    "tokenizer of `{m}` from the Hugging Face cache: {p}"
                )),
            ),
            None => (
                "server".into(),
                Some(format!(
                    "no local tokenizer for `{m}` (not a path, not in the Hugging Face cache); \
                     counting tokens with the server's /tokenize (pass --tokenizer to choose)"
                )),
            ),
        },
        None => (
            "server".into(),
            Some("counting tokens with the server's /tokenize (pass --tokenizer to choose)".into()),
        ),
    }
}

fn load_tokenizer(name: &str, base_url: &str) -> anyhow::Result<Arc<dyn Tokenize>> {
    match crate::client::tokenize::load(name, base_url) {
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
