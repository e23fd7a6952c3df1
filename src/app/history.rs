//! `perfgate history baselines/*.toml`: the series across releases with change points, as a
//! terminal table and (with `--html`) a page of charts.

use anyhow::Context;

use super::Exit;
use crate::baseline::Baseline;
use crate::cli::history::HistoryArgs;
use crate::gate::GateConfig;
use crate::history;

pub(crate) fn exec(args: HistoryArgs) -> anyhow::Result<Exit> {
    let mut baselines = Vec::new();
    for p in &args.baselines {
        let mut b = Baseline::load(p)?;
        if !args.models.is_empty() {
            b.models.retain(|m| args.models.contains(&m.name));
        }
        baselines.push((p.display().to_string(), b));
    }
    if let Some(m) = args.models.iter().find(|m| {
        !baselines
            .iter()
            .any(|(_, b)| b.models.iter().any(|x| &x.name == *m))
    }) {
        anyhow::bail!("--model `{m}` is in none of the baselines");
    }
    let mut history_cfg = GateConfig::default();
    // The newest baseline's [gate] table (file order is not release order: pick by the history).
    let probe = history::build(&baselines, &args.metrics, &GateConfig::default(), 1)?;
    if let Some(last) = probe.entries.last() {
        if let Some((_, b)) = baselines.iter().find(|(p, _)| *p == last.path) {
            history_cfg = b.gate.clone().unwrap_or_default();
        }
    }
    if let Some(p) = &args.gate {
        history_cfg = history_cfg.merged(&GateConfig::load(p)?);
    }
    history_cfg
        .validate()
        .context("the gate settings of the history")?;
    let h = history::build(
        &baselines,
        &args.metrics,
        &history_cfg,
        args.window as usize,
    )?;
    print!("{}", crate::report::history::render_terminal(&h, !args.all));
    if let Some(out) = &args.html {
        let text = crate::report::html::render_history(
            &h,
            "perfgate history",
            &chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
        )?;
        crate::atomic::write(out, text)?;
        eprintln!("perfgate: wrote {}", out.display());
    }
    Ok(Exit::Pass)
}
