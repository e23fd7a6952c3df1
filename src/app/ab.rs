//! `perfgate ab`: plan both arms from one suite, hand them to the runner's A/B loop
//! ([`Runner::run_ab`]), judge the records with the paired statistics, add the cost, and report
//! like `check` (terminal, JSON, markdown, HTML, `--github`). Engine faults become `error` rows
//! naming the arm (exit 3); every record and log stays in the output directory.

use std::time::{Duration, Instant};

use anyhow::Context;

use super::check::{self, ReportOptions};
use super::{infra, Exit};
use crate::baseline::Baseline;
use crate::cli::ab::{AbArgs, AbOrder};
use crate::gate::Side;
use crate::record::Arm;
use crate::report::dryrun::{render_dry_run, Schedule};
use crate::runner::{AbSpec, Order, Runner};
use crate::suite::{self, Plan};

pub(crate) fn exec(args: &AbArgs) -> anyhow::Result<Exit> {
    let shown = args.suite.display().to_string();
    let file = Baseline::load(&args.suite)?;
    let launch = &args.launch;
    let plan_of = |cmd: &Option<String>, image: &Option<String>| -> anyhow::Result<Plan> {
        let ov = launch
            .overrides(cmd.clone(), image.clone(), None)
            .map_err(anyhow::Error::msg)?;
        suite::plan(&file, &ov).with_context(|| shown.clone())
    };
    let cand = plan_of(&args.engine_cmd, &args.engine_image)?;
    let base = plan_of(&args.base_engine_cmd, &args.base_engine_image)?;
    if let Some(mp) = cand.models.iter().find(|m| m.launch.command.is_none()) {
        anyhow::bail!(
            "{shown}: model {}: perfgate ab launches both engines, so the suite needs a \
             launchable engine (a preset or [engine.launch] command), not a server URL",
            mp.name
        );
    }
    let schedule = Schedule {
        launches: args.max_launches,
        runs_per_launch: launch.runs_per_launch,
        warmup: launch.warmup_requests.describe(),
        shuffle: launch.shuffle_scenarios,
        cache_reset: !launch.no_cache_reset,
    };
    let plan_text = format!(
        "# base arm ({})\n{}\n# candidate arm ({})\n{}",
        label(
            &args.base_label,
            &args.base_engine_image,
            &args.base_engine_cmd
        ),
        render_dry_run(&base, &shown, &schedule),
        label(&args.label, &args.engine_image, &args.engine_cmd),
        render_dry_run(&cand, &shown, &schedule),
    );
    if args.dry_run {
        print!("{plan_text}");
        return Ok(Exit::Pass);
    }
    let settings = launch.settings().map_err(anyhow::Error::msg)?;
    let (_, cfg, _) = super::inputs::load_baseline(&args.suite)?;
    let cfg = super::inputs::gate_config(cfg, args.gate.as_deref())?;
    let out = &launch.output_dir;
    let opts = ReportOptions {
        json: Some(args.json.clone().unwrap_or_else(|| out.join("report.json"))),
        markdown: Some(
            args.markdown
                .clone()
                .unwrap_or_else(|| out.join("report.md")),
        ),
        html: Some(args.html.clone().unwrap_or_else(|| out.join("report.html"))),
        fail_on: args.fail_on,
        color: args.color.enabled(),
        kind: args.kind.clone(),
        github: args.github.clone(),
    };

    let rt = crate::runner::runtime()?;
    let rx = crate::runner::interrupt_on_signal(&rt);
    let engine = cand.engine.clone();
    let mut runner = Runner::new(cand, settings, out, rx).map_err(|e| infra(e.to_string()))?;
    let _ = crate::atomic::write(&runner.output_dir().join("plan.txt"), &plan_text);
    let spec = AbSpec {
        base: &base,
        order: match args.order {
            AbOrder::Abba => Order::Abba,
            AbOrder::Random => Order::Random(args.seed),
        },
        max_pairs: args.max_launches,
        runs_per_launch: launch.runs_per_launch,
        budget: args.max_minutes.map(|m| Duration::from_secs_f64(m * 60.0)),
        max_minutes: args.max_minutes,
        gate: &cfg,
        kind: &opts.kind,
    };
    let t0 = Instant::now();
    let runs = rt.block_on(runner.run_ab(&spec));
    let wall = t0.elapsed();
    rt.shutdown_timeout(Duration::from_secs(1));
    let m = runner.into_measured();

    let side = |label: String| Side {
        engine: Some(engine.clone()),
        engine_version: Some(label),
        date: Some(chrono::Utc::now().to_rfc3339()),
        ..m.results_side(out)
    };
    let sides = (
        side(label(
            &args.base_label,
            &args.base_engine_image,
            &args.base_engine_cmd,
        )),
        side(label(&args.label, &args.engine_image, &args.engine_cmd)),
    );
    let report = spec.judge(&runs, &m, sides, wall);
    let (b, c): (Vec<_>, Vec<_>) = m
        .records
        .iter()
        .cloned()
        .partition(|r| r.arm == Some(Arm::Base));
    if report.counts.missing == 0 {
        // (A model that never got a pair already keeps the comparison from passing.)
        check::ensure_compared(&report, &cfg, &b, &c)?;
    }
    let exit = check::publish(&report, &b, &c, &opts)?;
    eprintln!(
        "perfgate: results, engine logs, engine metrics and reports are in {}",
        out.display()
    );
    Ok(if m.interrupted { Exit::Infra } else { exit })
}

/// What an arm ran, for the reports: the user's label, else its image, else its command, else
/// the suite's engine.
fn label(text: &Option<String>, image: &Option<String>, cmd: &Option<String>) -> String {
    text.clone()
        .or_else(|| image.clone())
        .or_else(|| cmd.clone())
        .unwrap_or_else(|| "the suite's engine".into())
}
