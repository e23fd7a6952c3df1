//! `perfgate baseline record | show | schema | noise | calibrate`.

use super::Exit;
use crate::baseline::{Baseline, EngineInfo, LaunchSpec};
use crate::cli::baseline::{BaselineCommand, NoiseArgs, RecordArgs, ShowArgs};
use crate::record::to_jsonl;

pub(crate) fn exec(cmd: BaselineCommand) -> anyhow::Result<Exit> {
    match cmd {
        BaselineCommand::Record(a) => record(*a, false),
        BaselineCommand::Show(a) => show(a),
        BaselineCommand::Schema => {
            print!("{}", crate::baseline::json_schema());
            Ok(Exit::Pass)
        }
        BaselineCommand::Noise(a) => noise(a),
        BaselineCommand::Calibrate(a) => {
            let file = a.output.clone();
            record(*a, true)?;
            noise(NoiseArgs {
                file,
                gate: None,
                json: false,
            })
        }
        BaselineCommand::Promote(a) => super::promote::exec(a),
    }
}

fn noise(a: NoiseArgs) -> anyhow::Result<Exit> {
    let (recs, cfg, _) = super::inputs::load_baseline(&a.file)?;
    let cfg = super::inputs::gate_config(cfg, a.gate.as_deref())?;
    let rows = crate::gate::noise::table(&recs, &cfg);
    if a.json {
        for r in &rows {
            println!("{}", serde_json::to_string(r)?);
        }
    } else {
        print!("{}", crate::report::noise::render(&rows));
    }
    Ok(Exit::Pass)
}

/// `baseline record`, and `baseline calibrate` (`calibrate`: the records, with those of
/// `--runs-from`, must span ≥ 2 sessions).
fn record(a: RecordArgs, calibrate: bool) -> anyhow::Result<Exit> {
    let mut records = Vec::new();
    for f in &a.records {
        records.extend(super::read_records(f)?.records);
    }
    if records.is_empty() {
        anyhow::bail!("no records in {}", a.records[0].display());
    }
    let base = a.runs_from.as_deref().map(Baseline::load).transpose()?;
    if calibrate {
        let old = base.as_ref().map(Baseline::to_records).unwrap_or_default();
        crate::baseline::calibration_sessions(&[records.clone(), old].concat())?;
    }
    let mut engine = base.as_ref().map(|b| b.engine.clone()).unwrap_or_default();
    if let Some(n) = a.engine.clone().or_else(|| records[0].engine.clone()) {
        if base.is_none() || a.engine.is_some() {
            engine.name = n;
        }
    }
    if engine.name.is_empty() {
        anyhow::bail!("the records do not name their engine; pass `--engine`");
    }
    if let Some(v) = a
        .engine_version
        .clone()
        .or_else(|| records[0].engine_version.clone())
    {
        if engine.version.is_none() || a.engine_version.is_some() {
            engine.version = Some(v);
        }
    }
    engine.image = a.image.clone().or(engine.image);
    engine.install = a.install.clone().or(engine.install);
    if let Some(p) = &a.preset {
        engine.launch.get_or_insert_with(LaunchSpec::default).preset = Some(p.clone());
    }
    let mut prov = base
        .as_ref()
        .map(|b| b.provenance.clone())
        .unwrap_or_default();
    prov.add_sources(&records, &a.sources);
    prov.runner = a.runner.clone().or(prov.runner);
    prov.hardware = a.hardware.clone().or(prov.hardware);
    prov.date = a.date.clone().or(prov.date);
    prov.notes = a.notes.clone().or(prov.notes);
    prov.perfgate_version = Some(env!("CARGO_PKG_VERSION").to_string());
    let engine: EngineInfo = engine;
    let (b, notes) = Baseline::from_records(&records, engine, prov, base.as_ref())?;
    for n in notes {
        eprintln!("perfgate: note: {n}");
    }
    // Check what we wrote reads back to the same records.
    let text = b.to_checked_toml(&a.output.display().to_string())?;
    crate::atomic::write(&a.output, text)?;
    let runs = b.run_count();
    eprintln!(
        "perfgate: wrote {} ({} models, {} runs)",
        a.output.display(),
        b.models.len(),
        runs
    );
    Ok(Exit::Pass)
}

fn show(a: ShowArgs) -> anyhow::Result<Exit> {
    let b = Baseline::load(&a.file)?;
    if a.json {
        print!("{}", to_jsonl(&b.to_records()));
    } else {
        print!("{}", crate::report::sidebyside::summary(&b));
    }
    Ok(Exit::Pass)
}
