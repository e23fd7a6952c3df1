//! `perfgate ab`: plan both arms from one suite, hand them to the runner's A/B loop
//! ([`Runner::run_ab`]), judge the records with the paired statistics, add the cost, and report
//! like `check` (terminal, JSON, markdown, HTML, `--github`). Engine faults become `error` rows
//! naming the arm (exit 3); every record and log stays in the output directory.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::check::{self, ReportOptions};
use super::live::{on_ctrl_c, overrides, settings};
use super::{infra, Exit};
use crate::baseline::Baseline;
use crate::cli::ab::{AbArgs, AbOrder};
use crate::gate::{self, AbModel, AbSummary, Side};
use crate::record::Arm;
use crate::report::dryrun::{render_dry_run, Schedule};
use crate::runner::{AbModelRun, AbSpec, Order, Runner};
use crate::suite::{self, Plan};

pub(crate) fn exec(args: &AbArgs) -> anyhow::Result<Exit> {
    let shown = args.suite.display().to_string();
    let file = Baseline::load(&args.suite)?;
    let launch = &args.launch;
    let plan_of = |cmd: &Option<String>, image: &Option<String>| -> anyhow::Result<Plan> {
        let ov = overrides(launch, cmd.clone(), image.clone(), None)?;
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
    let settings = settings(launch)?;
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
        color: check::use_color(args.color),
        kind: args.kind.clone(),
        github: args.github.clone(),
    };

    let rt = super::runtime()?;
    let rx = on_ctrl_c(&rt);
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
        gate: &cfg,
        kind: &opts.kind,
    };
    let t0 = Instant::now();
    let runs = rt.block_on(runner.run_ab(&spec));
    let wall = t0.elapsed();
    rt.shutdown_timeout(Duration::from_secs(1));
    let results = runner.output_dir().join("results.jsonl");
    let m = runner.into_measured();

    let side = |label: String| Side {
        sources: vec![results.display().to_string()],
        engine: Some(engine.clone()),
        engine_version: Some(label),
        date: Some(chrono::Utc::now().to_rfc3339()),
    };
    let base_label = label(
        &args.base_label,
        &args.base_engine_image,
        &args.base_engine_cmd,
    );
    let cand_label = label(&args.label, &args.engine_image, &args.engine_cmd);
    let looks: BTreeMap<String, gate::Look> = runs
        .iter()
        .filter_map(|r| r.look.map(|l| (r.model.clone(), l)))
        .collect();
    let mut report = gate::paired::evaluate(
        &m.records,
        &m.errors,
        &cfg,
        &|model| looks.get(model).copied(),
        &opts.kind,
        side(base_label.clone()),
        side(cand_label.clone()),
    );
    for r in runs.iter().filter(|r| r.pairs == 0) {
        if !m.errors.iter().any(|e| e.model == r.model) {
            gate::paired::not_measured(&mut report, &r.model, &r.stopped, &cfg);
        }
    }
    report.ab = Some(summary(&runs, args, base_label, cand_label, &report, wall));
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

fn summary(
    runs: &[AbModelRun],
    args: &AbArgs,
    base: String,
    candidate: String,
    report: &gate::Report,
    wall: Duration,
) -> AbSummary {
    let minutes = |d: Duration| d.as_secs_f64() / 60.0;
    let models: Vec<AbModel> = runs
        .iter()
        .map(|r| {
            // The model's verdict as the final report has it (its rows, its look).
            let rows: Vec<gate::Row> = report
                .rows
                .iter()
                .filter(|row| row.model == r.model)
                .cloned()
                .collect();
            AbModel {
                model: r.model.clone(),
                pairs: r.pairs,
                launches: r.launches,
                tensor_parallel_size: r.tensor_parallel_size,
                wall_minutes: minutes(r.wall),
                gpu_minutes: minutes(r.wall) * f64::from(r.tensor_parallel_size),
                verdict: gate::verdict::top_verdict(&rows),
                stopped: r.stopped.clone(),
            }
        })
        .collect();
    AbSummary {
        base,
        candidate,
        order: match args.order {
            AbOrder::Abba => Order::Abba.describe(),
            AbOrder::Random => Order::Random(args.seed).describe(),
        },
        max_launches: args.max_launches,
        max_minutes: args.max_minutes,
        wall_minutes: minutes(wall),
        gpu_minutes: models.iter().map(|m| m.gpu_minutes).sum(),
        minutes_left: args.max_minutes.map(|b| (b - minutes(wall)).max(0.0)),
        models,
    }
}
