//! Confirmation: a FAIL is measured again before it stands.
//!
//! One disturbed candidate launch (a noisy neighbour, a throttled core) is, on its own, a
//! regression the gate cannot tell from a real one: with one or two launches a side there is
//! nothing to weigh it against. `perfgate check --confirm N` answers a FAIL by launching the
//! candidate N more times and deciding again on all of its launches; [`confirm`] joins the two
//! reports.
//!
//! The rule, and why it keeps the levels without any correction:
//! - the check FAILs only when the second decision FAILs too. The first FAIL is the trigger, so
//!   P(FAIL) = P(first FAILs and second FAILs) ≤ P(second FAILs) ≤ α;
//! - a row that regressed at first and does not regress on all the launches is *inconclusive*,
//!   never `pass`: a row may only pass through the second decision's bound, so
//!   P(pass | worse by δ) ≤ α_eq, as without confirmation. (Passing such a row on the second
//!   decision alone would add P(first passes) and spend α_eq twice.) A check whose first
//!   decision FAILed therefore never ends PASS: at best INCONCLUSIVE;
//! - every other row keeps the second decision's verdict (it saw more launches).

use std::collections::{BTreeMap, BTreeSet};

use super::summary::{count, top_verdict};
use super::{evaluate, Inputs};
use crate::gate::noise::launch_key;
use crate::gate::{Report, Row, TopVerdict, Verdict};
use crate::record::ScenarioResult;

/// How a regressed row's note begins the clause that says nothing confirmed it (its model's
/// launches left none to hold back); the reports find the clause by it.
pub const UNCONFIRMED: &str = "unconfirmed:";

/// Join a first report that FAILed with the report of the same check decided again with the
/// confirmation launches added. Returns `second` unchanged when `first` did not FAIL.
pub fn confirm(first: &Report, mut second: Report, launches: u32) -> Report {
    if first.verdict != TopVerdict::Fail {
        return second;
    }
    for row in second.rows.iter_mut().filter(|r| r.gated) {
        let was = first
            .rows
            .iter()
            .find(|f| f.model == row.model && f.scenario == row.scenario && f.metric == row.metric);
        let Some(was) = was.filter(|f| f.verdict == Verdict::Regressed) else {
            continue;
        };
        let before = was
            .change_pct
            .map(|c| format!(" ({c:+.1} %)"))
            .unwrap_or_default();
        let said = match row.verdict {
            Verdict::Regressed => format!(
                "confirmed: regressed on the first launches{before} and again with {launches} more"
            ),
            _ => {
                let now = row.verdict.as_str();
                if matches!(row.verdict, Verdict::Pass | Verdict::Improved) {
                    row.verdict = Verdict::Inconclusive;
                }
                format!(
                    "not confirmed: regressed on the first launches{before}, {now} with {launches} \
                     more; a row that regressed once is not passed"
                )
            }
        };
        add_note(row, said);
    }
    recounted(second)
}

/// Confirmation for records already measured (`perfgate check --results`): nothing can be
/// launched, so each model's last `hold` launches are held back as if they were the confirmation
/// launches. The check decides on all of the candidate's records; when that FAILs it decides
/// again without the held launches, and the FAIL stands only if that decision FAILs too
/// ([`confirm`] joins them, as a live check joins its first decision and the one with `hold` more
/// launches): the event "FAIL" is the live one, the first `n − hold` launches FAIL and all `n`
/// FAIL. Where that first decision does not FAIL, every row that regressed is *inconclusive* and
/// says why. Passing rows are the decision on all launches, so a pass keeps its bound. A model
/// with `hold` launches or fewer has nothing to hold back: its rows are decided once, and a
/// regressed one says it is unconfirmed (a live check would launch more). `hold` 0 decides once.
pub fn confirm_held_out(input: Inputs<'_>, hold: u32) -> Report {
    let launches = launches_of(input.current);
    // Models with nothing to hold back: their regressions must stand on their own launches.
    let unconfirmable: Vec<String> = launches
        .iter()
        .filter(|(_, keys)| hold > 0 && keys.len() <= hold as usize)
        .map(|(m, _)| m.clone())
        .collect();
    let input = Inputs {
        unconfirmable: &unconfirmable,
        ..input
    };
    let all = evaluate(Inputs {
        base_side: input.base_side.clone(),
        cur_side: input.cur_side.clone(),
        ..input
    });
    if hold == 0 || all.verdict != TopVerdict::Fail {
        return all;
    }
    let held: BTreeSet<(&str, &str)> = launches
        .iter()
        .filter(|(_, keys)| keys.len() > hold as usize)
        .flat_map(|(m, keys)| {
            keys[keys.len() - hold as usize..]
                .iter()
                .map(move |k| (m.as_str(), k.as_str()))
        })
        .collect();
    // The decision on the first launches; none when no model has a launch to hold back.
    let first = (!held.is_empty()).then(|| {
        let first_recs: Vec<ScenarioResult> = input
            .current
            .iter()
            .filter(|r| !held.contains(&(r.model.as_str(), launch_key(r).as_str())))
            .cloned()
            .collect();
        evaluate(Inputs {
            current: &first_recs,
            ..input
        })
    });
    let first_failed = first.as_ref().is_none_or(|f| f.verdict == TopVerdict::Fail);
    let mut out = match &first {
        Some(f) if first_failed => confirm(f, all, hold),
        _ => all,
    };
    for row in out.rows.iter_mut().filter(|r| r.gated) {
        if row.verdict != Verdict::Regressed {
            continue;
        }
        let n = launches.get(&row.model).map(Vec::len);
        let why = match (first_failed, n) {
            (true, Some(n)) if n <= hold as usize => format!(
                "{UNCONFIRMED} decided on its {n} launch(es) alone, with none to hold back as \
                 confirmation (a live check launches {hold} more)"
            ),
            (true, _) => continue,
            (false, Some(n)) if n > hold as usize => format!(
                "not confirmed: regressed on all {n} launches, but the first {} did not FAIL \
                 (the last {hold} held back as confirmation)",
                n - hold as usize
            ),
            (false, _) => "not confirmed: the first launches did not FAIL (the last \
                           held back as confirmation)"
                .to_string(),
        };
        if !first_failed {
            row.verdict = Verdict::Inconclusive;
        }
        add_note(row, why);
    }
    recounted(out)
}

/// Append `said` to the row's note.
fn add_note(row: &mut Row, said: String) {
    row.note = Some(match row.note.take() {
        Some(n) => format!("{n}; {said}"),
        None => said,
    });
}

/// The report with its counts and top verdict recomputed from its rows.
fn recounted(mut r: Report) -> Report {
    r.counts = count(&r.rows);
    r.verdict = top_verdict(&r.rows);
    r
}

/// Each model's distinct launches, in first-seen order.
fn launches_of(recs: &[ScenarioResult]) -> BTreeMap<String, Vec<String>> {
    let mut by_model: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in recs {
        let keys = by_model.entry(r.model.clone()).or_default();
        let k = launch_key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    by_model
}
