//! The cost of each level of a design, from the records: seconds per run (a run of every
//! scenario of a model, from the records' `duration`) and seconds of start-up per launch (a
//! launch's wall time less its runs, from a `launches.tsv` as the corpora carry, or given).

use serde::{Deserialize, Serialize};

use super::PlanError;
use crate::record::ScenarioResult;

/// What one launch costs: a fixed start-up (start, warm-up, stop) and then each run of the
/// model's scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Costs {
    pub startup_s: f64,
    pub run_s: f64,
}

impl Costs {
    /// Seconds of one launch of `r` runs.
    pub fn launch_s(&self, r: u32) -> f64 {
        self.startup_s + f64::from(r) * self.run_s
    }
}

/// The wall seconds of each launch in a `launches.tsv` (tab-separated, a header line naming
/// `file` and `seconds`), keyed by the file name without `.jsonl` (the launch id).
pub fn launch_seconds(text: &str, path: &str) -> Result<Vec<(String, f64)>, PlanError> {
    let bad = |line: usize, msg: String| PlanError::Input {
        path: path.to_string(),
        line,
        msg,
    };
    let mut lines = text.lines().enumerate();
    let Some((_, head)) = lines.next() else {
        return Err(bad(1, "empty file".to_string()));
    };
    let cols: Vec<&str> = head.split('\t').collect();
    let at = |name: &str| cols.iter().position(|c| c.trim() == name);
    let (Some(fi), Some(si)) = (at("file"), at("seconds")) else {
        return Err(bad(
            1,
            "the header names no `file` and `seconds` columns".to_string(),
        ));
    };
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let (Some(file), Some(secs)) = (f.get(fi), f.get(si)) else {
            return Err(bad(i + 1, format!("fewer than {} columns", fi.max(si) + 1)));
        };
        let s: f64 = secs
            .trim()
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| {
                bad(
                    i + 1,
                    format!("`seconds` is not a number of seconds: {secs:?}"),
                )
            })?;
        let id = file.trim().trim_end_matches(".jsonl").to_string();
        out.push((id, s));
    }
    Ok(out)
}

/// Per model, in first-seen order: seconds per run (Σ over its scenarios of their runs' mean
/// `duration`) and start-up seconds: `startup_s` when given, else the mean over the launches
/// `walls` knows of their wall time less their runs' durations.
pub fn costs_of(
    recs: &[ScenarioResult],
    walls: &[(String, f64)],
    startup_s: Option<f64>,
) -> Result<Vec<(String, Costs)>, PlanError> {
    let mut models: Vec<String> = Vec::new();
    for r in recs {
        if !models.contains(&r.model) {
            models.push(r.model.clone());
        }
    }
    let mut out = Vec::new();
    for m in models {
        let mine: Vec<&ScenarioResult> = recs.iter().filter(|r| r.model == m).collect();
        let mut scen: Vec<(String, f64, usize)> = Vec::new();
        for r in &mine {
            let id = r.scenario_id();
            match scen.iter_mut().find(|s| s.0 == id) {
                Some(s) => {
                    s.1 += r.duration;
                    s.2 += 1;
                }
                None => scen.push((id, r.duration, 1)),
            }
        }
        let run_s: f64 = scen.iter().map(|s| s.1 / s.2 as f64).sum();
        let startup = match startup_s {
            Some(s) => s,
            None => overhead(&mine, walls).ok_or_else(|| PlanError::NoStartup(m.clone()))?,
        };
        let costs = Costs {
            startup_s: startup,
            run_s,
        };
        out.push((m, costs));
    }
    Ok(out)
}

/// The mean over launches with a known wall time of that time less their runs' durations.
fn overhead(recs: &[&ScenarioResult], walls: &[(String, f64)]) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for (id, wall) in walls {
        let runs: f64 = recs
            .iter()
            .filter(|r| r.launch_id.as_deref() == Some(id))
            .map(|r| r.duration)
            .sum();
        if runs > 0.0 {
            sum += (wall - runs).max(0.0);
            n += 1;
        }
    }
    (n > 0).then(|| sum / n as f64)
}
