//! The hidden `perfgate fake-server`: the [`FakeServer`](perfgate_fakeserver::FakeServer) of the
//! tests on a port, until interrupted.

use std::time::Duration;

use super::{infra, Exit};
use crate::cli::run::FakeServerArgs;
use perfgate_fakeserver::{FakeApi, FakeConfig, Fault};

/// `perfgate fake-server`: serve until interrupted, after printing the URL.
pub(crate) fn exec(args: FakeServerArgs) -> anyhow::Result<Exit> {
    let fault: Fault = args
        .fault
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--fault: {e}"))?;
    let api: FakeApi = args
        .api
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--api: {e}"))?;
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
        api,
        max_model_len: args.max_model_len,
        chat_template_tokens: args.chat_template_tokens,
        lora_modules: args.lora_modules,
        ..Default::default()
    };
    let port = args.port;
    let t = perfgate_fakeserver::serve_until_signal(cfg, port, |url| {
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
