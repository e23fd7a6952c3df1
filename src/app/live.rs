//! `perfgate check` in live mode (no `--results`): validate the flags, plan the suite, hand it to
//! the [`Runner`](crate::runner::Runner), then gate the measured records with the same code as the
//! offline check. Results, engine logs, engine metrics and the reports always land in the output
//! directory, also when something fails; engine faults become `error` rows (exit 3).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use tokio::runtime::Runtime;

use super::check::{self, ReportOptions};
use super::{infra, Exit};
use crate::baseline::Baseline;
use crate::cli::check::CheckArgs;
use crate::cli::live::{LiveArgs, Rerun};
use crate::gate::{Look, Side};
use crate::report::dryrun::{render_dry_run, Schedule};
use crate::runner::{interrupt_on_signal, GateInputs, Measured, Runner};
use crate::suite;

/// Run `perfgate check` in live mode.
pub(crate) fn exec(args: &CheckArgs) -> anyhow::Result<Exit> {
    let live = &args.live;
    let shown = args.baseline.display().to_string();
    let file = Baseline::load(&args.baseline)?;
    let (cmd, image, url) = (&live.engine_cmd, &live.engine_image, &live.base_url);
    let ov = (live.launch)
        .overrides(cmd.clone(), image.clone(), url.clone())
        .map_err(anyhow::Error::msg)?;
    let plan = suite::plan(&file, &ov).with_context(|| shown.clone())?;
    let schedule = Schedule {
        launches: live.runs,
        runs_per_launch: live.launch.runs_per_launch,
        warmup: live.launch.warmup_requests.describe(),
        shuffle: live.launch.shuffle_scenarios,
        cache_reset: !live.launch.no_cache_reset,
    };
    if live.dry_run {
        print!("{}", render_dry_run(&plan, &shown, &schedule));
        return Ok(Exit::Pass);
    }
    let settings = live.launch.settings().map_err(anyhow::Error::msg)?;
    let (base_recs, cfg, base_side) = super::inputs::load_baseline(&args.baseline)?;
    let cfg = super::inputs::gate_config(cfg, args.gate.as_deref())?;
    let mut opts = ReportOptions::from_args(args);
    opts.json
        .get_or_insert_with(|| live.launch.output_dir.join("report.json"));
    opts.markdown
        .get_or_insert_with(|| live.launch.output_dir.join("report.md"));
    opts.html
        .get_or_insert_with(|| live.launch.output_dir.join("report.html"));

    let rt = crate::runner::runtime()?;
    let rx = interrupt_on_signal(&rt);
    let dry = render_dry_run(&plan, &shown, &schedule);
    let mut runner = Runner::new(plan, settings, &live.launch.output_dir, rx)
        .map_err(|e| infra(e.to_string()))?;
    let _ = crate::atomic::write(&runner.output_dir().join("plan.txt"), dry);
    rt.block_on(runner.run_suite(live.runs, live.launch.runs_per_launch));

    let gate = GateInputs {
        baseline: &base_recs,
        config: &cfg,
        kind: &opts.kind,
        base_side: base_side.clone(),
    };
    let look = rerun(&rt, &mut runner, live, &gate);
    // Runs so far: the launches' runs, then one per re-run round.
    let next_run = live.runs * live.launch.runs_per_launch + look.map_or(0, |l| l.k - 1);
    let first = rt.block_on(runner.confirm_fail(
        &gate,
        look,
        live.confirm,
        next_run,
        live.launch.runs_per_launch,
    ));
    rt.shutdown_timeout(Duration::from_secs(1));
    let out_dir = runner.output_dir().to_path_buf();
    let engine = runner.plan().engine.clone();
    if let Some(path) = &live.save_baseline {
        let (b, notes) = runner
            .baseline(&file, &shown)
            .context("building the baseline from the measured runs")?;
        for n in notes {
            eprintln!("perfgate: --save-baseline: {n}");
        }
        crate::atomic::write(path, b.to_toml())?;
        eprintln!("perfgate: wrote baseline {}", path.display());
    }
    let m = runner.into_measured();

    if base_recs.is_empty() {
        return Ok(measured_only(&shown, &m, &out_dir));
    }
    let cur_side = Side {
        engine: Some(engine),
        engine_version: ov
            .engine_image
            .clone()
            .or_else(|| ov.engine_cmd.as_ref().map(|_| "--engine-cmd".to_string())),
        date: Some(chrono::Utc::now().to_rfc3339()),
        ..m.results_side(&out_dir)
    };
    let input = crate::gate::Inputs {
        baseline: &base_recs,
        current: &m.records,
        errors: &m.errors,
        cfg: &cfg,
        look,
        kind: &opts.kind,
        base_side,
        cur_side,
        unconfirmable: &[],
    };
    let mut report = crate::gate::evaluate(input);
    if let Some(first) = &first {
        report = crate::gate::confirm(first, report, live.confirm);
        eprintln!(
            "perfgate: confirmation: {} with {} more launch(es) (first decision: FAIL)",
            report.verdict.as_str().to_uppercase(),
            live.confirm
        );
    }
    check::ensure_compared(&report, &cfg, &base_recs, &m.records)?;
    let exit = check::publish(&report, &base_recs, &m.records, &opts)?;
    eprintln!(
        "perfgate: results, engine logs, engine metrics and reports are in {}",
        out_dir.display()
    );
    if m.interrupted {
        return Ok(Exit::Infra);
    }
    Ok(exit)
}

/// `--rerun inconclusive`: re-run what the gate leaves open; the look the final gate is at.
fn rerun(
    rt: &Runtime,
    runner: &mut Runner,
    live: &LiveArgs,
    gate: &GateInputs<'_>,
) -> Option<Look> {
    if live.rerun != Some(Rerun::Inconclusive) {
        return None;
    }
    let next_run = live.runs * live.launch.runs_per_launch;
    let rounds = rt.block_on(runner.rerun_inconclusive(gate, live.max_reruns, next_run));
    // The final gate is look rounds + 1 of the planned max_reruns + 1: it is judged at that
    // look's share of α (α-spending), as every look of the loop was.
    let look = Some(Look {
        k: rounds + 1,
        of: live.max_reruns + 1,
    });
    eprintln!(
        "perfgate: {rounds} re-run round(s): look {} of {}, gating at alpha {:.4} of {}",
        rounds + 1,
        live.max_reruns + 1,
        gate.config.levels(look).look_alpha(),
        gate.config.alpha()
    );
    look
}

/// A suite file (no numbers): measure only; nothing to gate against.
fn measured_only(shown: &str, m: &Measured, out_dir: &Path) -> Exit {
    eprintln!(
        "perfgate: {shown} has no baseline numbers: measured {} record(s), gated nothing",
        m.records.len()
    );
    for e in &m.errors {
        let first = e.message.lines().next().unwrap_or("");
        eprintln!("perfgate: error: {} {}: {first}", e.model, e.scenario);
    }
    eprintln!(
        "perfgate: results, engine logs and engine metrics are in {}",
        out_dir.display()
    );
    if m.errors.is_empty() && !m.interrupted {
        Exit::Pass
    } else {
        Exit::Infra
    }
}
