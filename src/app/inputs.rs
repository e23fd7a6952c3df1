//! Reading the inputs that `check`, its live mode, `baseline noise` and `report` share: a
//! baseline's records with its `[gate]` table and provenance, and the effective gate settings.

use std::path::Path;

use anyhow::Context;

use crate::baseline::Baseline;
use crate::gate::{GateConfig, Side};
use crate::record::ScenarioResult;

/// A baseline's records, its `[gate]` table and its provenance. A `.jsonl` file is read as
/// records (one per run).
pub fn load_baseline(path: &Path) -> anyhow::Result<(Vec<ScenarioResult>, GateConfig, Side)> {
    let shown = path.display().to_string();
    if path.extension().is_some_and(|e| e == "jsonl") {
        let recs = super::read_records(path)?.records;
        let side = Side {
            sources: vec![shown],
            ..Default::default()
        };
        return Ok((recs, GateConfig::default(), side));
    }
    let b = Baseline::load(path)?;
    let cfg = b.gate.clone().unwrap_or_default();
    cfg.validate()
        .with_context(|| format!("{shown}: [gate] table"))?;
    let side = Side {
        sources: vec![shown],
        engine: Some(b.engine.name.clone()),
        engine_version: b.engine.version.clone(),
        date: b.provenance.date.clone(),
        ..Default::default()
    };
    Ok((b.to_records(), cfg, side))
}

/// The effective gate settings: the baseline's `[gate]` table, then the `--gate` file.
pub fn gate_config(from_baseline: GateConfig, file: Option<&Path>) -> anyhow::Result<GateConfig> {
    match file {
        Some(p) => Ok(from_baseline.merged(&GateConfig::load(p)?)),
        None => Ok(from_baseline),
    }
}

/// Read a JSON report written by `perfgate check --json` or `perfgate merge`.
pub(crate) fn read_report(path: &Path) -> anyhow::Result<crate::gate::Report> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the report {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not a perfgate report", path.display()))
}
