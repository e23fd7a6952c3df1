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

use super::summary::{count, top_verdict};
use crate::gate::{Report, Verdict};

/// Join a first report that FAILed with the report of the same check decided again with the
/// confirmation launches added. Returns `second` unchanged when `first` did not FAIL.
pub fn confirm(first: &Report, mut second: Report, launches: u32) -> Report {
    if first.verdict != crate::gate::TopVerdict::Fail {
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
        row.note = Some(match row.note.take() {
            Some(n) => format!("{n}; {said}"),
            None => said,
        });
    }
    second.counts = count(&second.rows);
    second.verdict = top_verdict(&second.rows);
    second
}
