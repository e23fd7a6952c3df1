//! The provenance rows in the page's header: where a side's numbers come from (file, engine,
//! version, runner, date, …) and how many models, scenarios, runs and launches they hold, for a
//! baseline file or for a set of result records.

use std::collections::{BTreeMap, BTreeSet};

use crate::baseline::Baseline;
use crate::record::ScenarioResult;

/// Provenance rows of a baseline file.
pub fn baseline_provenance(b: &Baseline, path: &str) -> Vec<(String, String)> {
    let mut p = vec![("file".to_string(), path.to_string())];
    let mut push = |k: &str, v: Option<&String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            p.push((k.into(), v.clone()));
        }
    };
    push("engine", Some(&b.engine.name));
    push("version", b.engine.version.as_ref());
    push("image", b.engine.image.as_ref());
    push("install", b.engine.install.as_ref());
    push("runner", b.provenance.runner.as_ref());
    push("hardware", b.provenance.hardware.as_ref());
    push("date", b.provenance.date.as_ref());
    push("commit", b.provenance.commit.as_ref());
    push("perfgate", b.provenance.perfgate_version.as_ref());
    if !b.provenance.sources.is_empty() {
        p.push(("sources".into(), b.provenance.sources.join(", ")));
    }
    let scen: usize = b.models.iter().map(|m| m.scenarios.len()).sum();
    let runs: Vec<usize> = b
        .models
        .iter()
        .flat_map(|m| &m.scenarios)
        .map(|s| s.runs.len())
        .collect();
    p.push((
        "models × scenarios".into(),
        format!("{} models, {scen} scenarios", b.models.len()),
    ));
    p.push(("runs per scenario".into(), span(&runs)));
    let launches: BTreeSet<&str> = b
        .models
        .iter()
        .flat_map(|m| &m.scenarios)
        .flat_map(|s| &s.runs)
        .filter_map(|r| r.launch_id.as_deref())
        .collect();
    if !launches.is_empty() {
        p.push(("engine launches".into(), launches.len().to_string()));
    }
    if let Some(n) = &b.provenance.notes {
        p.push(("notes".into(), n.clone()));
    }
    p
}

fn span(v: &[usize]) -> String {
    match (v.iter().min(), v.iter().max()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "0".into(),
    }
}

fn distinct<'a>(it: impl Iterator<Item = Option<&'a String>>) -> Option<String> {
    let mut v: Vec<&str> = Vec::new();
    for s in it.flatten() {
        if !v.contains(&s.as_str()) {
            v.push(s);
        }
    }
    (!v.is_empty()).then(|| v.join(", "))
}

/// Provenance rows of a set of result records.
pub fn records_provenance(recs: &[ScenarioResult], sources: &[String]) -> Vec<(String, String)> {
    let mut p = Vec::new();
    if !sources.is_empty() {
        p.push(("file".to_string(), sources.join(", ")));
    }
    for (k, v) in [
        ("engine", distinct(recs.iter().map(|r| r.engine.as_ref()))),
        (
            "version",
            distinct(recs.iter().map(|r| r.engine_version.as_ref())),
        ),
        ("backend", distinct(recs.iter().map(|r| r.backend.as_ref()))),
        (
            "perfgate",
            distinct(recs.iter().map(|r| r.perfgate_version.as_ref())),
        ),
    ] {
        if let Some(v) = v {
            p.push((k.to_string(), v));
        }
    }
    let mut dates: Vec<&String> = recs.iter().filter_map(|r| r.date.as_ref()).collect();
    dates.sort();
    match (dates.first(), dates.last()) {
        (Some(a), Some(b)) if a == b => p.push(("date".into(), a.to_string())),
        (Some(a), Some(b)) => p.push(("date".into(), format!("{a} – {b}"))),
        _ => {}
    }
    let mut per: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for r in recs {
        *per.entry((&r.model, r.scenario_id())).or_default() += 1;
    }
    let models: BTreeSet<&str> = recs.iter().map(|r| r.model.as_str()).collect();
    p.push((
        "models × scenarios".into(),
        format!("{} models, {} scenarios", models.len(), per.len()),
    ));
    p.push((
        "runs per scenario".into(),
        span(&per.values().copied().collect::<Vec<_>>()),
    ));
    p.push(("records".into(), recs.len().to_string()));
    let launches: BTreeSet<&str> = recs.iter().filter_map(|r| r.launch_id.as_deref()).collect();
    if !launches.is_empty() {
        p.push(("engine launches".into(), launches.len().to_string()));
    }
    p
}
