//! What `perfgate baseline calibrate` accepts: launches of one engine, unchanged, from ≥ 2
//! recording sessions. `perfgate ab` records qualify when both arms ran the same build (an A/A
//! run); arms that differ would make a change between builds look like launch noise, and every
//! later check on the baseline would be judged against that inflated noise.

use std::collections::BTreeSet;

use super::BaselineError;
use crate::gate::{paired, GateConfig, Row, Side, Verdict};
use crate::record::ScenarioResult;

/// The recording sessions of records meant to calibrate a baseline: every record must name
/// its session, there must be at least two (else the between-session variance cannot be
/// measured), and the two arms of any `ab` run among them must not differ ([`arms_agree`]).
pub fn calibration_sessions(records: &[ScenarioResult]) -> Result<usize, BaselineError> {
    if let Some(r) = records.iter().find(|r| r.session_id.is_none()) {
        return Err(BaselineError::Calibration(format!(
            "model `{}`, scenario `{}`: a record without `session_id`; calibration needs launches \
             from ≥ 2 recording sessions (live mode writes the session of each record)",
            r.model,
            r.scenario_id()
        )));
    }
    arms_agree(records)?;
    let sessions: BTreeSet<&str> = records
        .iter()
        .filter_map(|r| r.session_id.as_deref())
        .collect();
    if sessions.len() < 2 {
        return Err(BaselineError::Calibration(format!(
            "calibration needs launches from ≥ 2 recording sessions; the records hold {}",
            sessions.len()
        )));
    }
    Ok(sessions.len())
}

/// The `ab` records of each session (those with an `arm`) judged as `ab` judges them (default settings, one look at all pairs): an error names the gated rows on
/// which the arms differ beyond their tolerance, either way. Records do not say what each arm
/// ran, so this is the evidence there is; an A/A run is refused about as often as `ab` calls
/// identical builds different (α each way).
pub fn arms_agree(records: &[ScenarioResult]) -> Result<(), BaselineError> {
    let sessions: BTreeSet<Option<&str>> = records
        .iter()
        .filter(|r| r.arm.is_some())
        .map(|r| r.session_id.as_deref())
        .collect();
    let cfg = GateConfig::default();
    for s in sessions {
        let recs: Vec<ScenarioResult> = records
            .iter()
            .filter(|r| r.arm.is_some() && r.session_id.as_deref() == s)
            .cloned()
            .collect();
        let report = paired::evaluate(paired::AbInputs {
            records: &recs,
            errors: &[],
            cfg: &cfg,
            look_of: &|_| None,
            kind: "ab",
            base_side: Side::default(),
            cur_side: Side::default(),
        });
        let differ: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| r.gated && matches!(r.verdict, Verdict::Regressed | Verdict::Improved))
            .collect();
        if differ.is_empty() {
            continue;
        }
        let shown: Vec<String> = differ.iter().take(3).map(|r| describe(r)).collect();
        let more = match differ.len() {
            n if n > 3 => format!(" and {} more", n - 3),
            _ => String::new(),
        };
        return Err(BaselineError::Calibration(format!(
            "session `{}`: the two arms of these `ab` records differ: {}{more}; calibration \
             takes launches of one unchanged engine (an `ab` run with the same build on both \
             arms), else the change between the builds would be counted as noise",
            s.unwrap_or("(none)"),
            shown.join("; ")
        )));
    }
    Ok(())
}

fn describe(r: &Row) -> String {
    let change = r
        .change_pct
        .map_or(String::new(), |c| format!(" {c:+.1} %"));
    let interval = r
        .interval
        .map_or(String::new(), |[lo, hi]| format!(" [{lo:+.1}, {hi:+.1}] %"));
    format!(
        "model `{}`, scenario `{}`, {}{change}{interval} ({})",
        r.model,
        r.scenario,
        r.metric,
        r.verdict.as_str()
    )
}
