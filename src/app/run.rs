//! `perfgate run` (one scenario against a running server, like `vllm bench serve`): check the flags, wait for the server, pick the tokenizer, build the
//! dataset, then run the load with the pieces of [`crate::runner::single`].

use std::time::Duration;

use anyhow::Context;

use super::{infra, Exit};
use crate::cli::run::RunArgs;
use crate::client::load::LoadError;
use crate::report::output;
use crate::runner::scenario_run;
use crate::runner::single::{self, Bar, SingleError};
use crate::tokenizer::TokenizerError;

pub(crate) fn exec(mut args: RunArgs) -> anyhow::Result<Exit> {
    // Parse and check once: the flags' parsers checked each value; here the metrics, the
    // headers, the scenario and the URL (before the server, the tokenizer and the dataset).
    let cfg_metrics = args.metrics_config().map_err(anyhow::Error::msg)?;
    for note in args.notes() {
        eprintln!("perfgate: note: {note}");
    }
    args.check_workload().map_err(anyhow::Error::msg)?;
    let extras = args.extras().map_err(anyhow::Error::msg)?;
    let params = args.params().map_err(anyhow::Error::msg)?;
    crate::client::Client::new(args.client_config("", extras.headers.clone()))?;
    let base_url = args.base_url();
    let rt = crate::runner::runtime()?;
    let timeout = Duration::from_secs(args.ready_check_timeout_sec);
    let ready = |need_models| -> anyhow::Result<Option<Vec<String>>> {
        match rt.block_on(single::ready_check(&base_url, timeout, need_models)) {
            Err(e @ SingleError::NotReady(_)) => Err(infra(e.to_string())),
            r => Ok(r?),
        }
    };
    // Local mistakes (a tokenizer file, the dataset) are reported before waiting for the server;
    // the server is waited for first only when it must answer before that (no --model, or
    // `--tokenizer server`).
    let server_first = args.model.is_none()
        || args
            .tokenizer
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("server"))
        || single::tokenizer_spec(args.tokenizer.as_deref(), args.model.as_deref()).0 == "server";
    if server_first {
        let listed = ready(args.model.is_none())?;
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
    let (tok_name, tok_note) =
        single::tokenizer_spec(args.tokenizer.as_deref(), args.model.as_deref());
    if let Some(note) = tok_note {
        eprintln!("perfgate: {note}");
    }
    let tok = match single::load_tokenizer(&tok_name, &base_url) {
        Ok(tok) => tok,
        // The engine's own tokenizer failing is the engine's fault, not the user's (exit 3).
        Err(e @ TokenizerError::Server { .. }) => {
            return Err(infra(format!("--tokenizer {tok_name}: {e}")))
        }
        Err(e) => return Err(anyhow::Error::new(e).context(format!("--tokenizer {tok_name}"))),
    };
    let client = args.client_config(args.model.as_deref().unwrap_or_default(), extras.headers);
    let settings = args.settings(client, cfg_metrics.clone(), Some(tok.clone()));
    let sc = scenario_run(&params, args.seed, settings).map_err(anyhow::Error::msg)?;
    let work = crate::runner::workload::work(&sc.dataset, tok.as_ref(), &args.workload())?;
    if !server_first {
        ready(false)?;
    }

    let cfg = sc.run;
    let progress = Bar::new(!args.no_progress);
    let every = (!args.no_telemetry).then(|| Duration::from_secs_f64(args.telemetry_interval));
    let (mut outcome, spec) =
        match rt.block_on(single::measure(&cfg, work, &progress, &base_url, every)) {
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
    let (metrics, percentiles) = (&cfg_metrics.percentile_metrics, &cfg_metrics.percentiles);
    let block = output::result_block(&outcome.result, metrics, percentiles);
    print!(
        "{}",
        single::add_workload_sections(block, &mut outcome, spec.as_ref())
    );

    let formats = args.detailed_formats().map_err(anyhow::Error::msg)?;
    let date = outcome.result.date.clone().unwrap_or_default();
    let prefix = cfg.client.request_id_prefix.as_deref();
    single::save_request_rows(
        &mut outcome,
        formats,
        &args.result_name().path(&date),
        prefix,
    )?;
    if args.saves_result() {
        let text = single::result_json(&outcome, args.label.as_deref())?;
        let date = outcome.result.date.clone().unwrap_or_default();
        let path = args.result_name().path(&date);
        single::save_result(&path, &text, args.append_result)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("perfgate: wrote {}", path.display());
    }
    Ok(Exit::Pass)
}
