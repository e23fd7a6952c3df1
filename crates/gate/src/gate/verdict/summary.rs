//! What a report says besides its rows: counts, the top verdict, the method sentence, the
//! sides' engines, and the checks that the records are usable (duplicates, nothing compared).

use crate::gate::config::GateConfig;
use crate::gate::look::Levels;
use crate::gate::machine::Machine;
use crate::gate::noise;
use crate::gate::{Counts, Report, Row, Side, TopVerdict, Verdict};
use crate::record::ScenarioResult;

/// The first record that appears twice in `recs` (same model, scenario, launch, run, date and
/// numbers): a results file passed twice, or records appended twice, would silently double the
/// runs and narrow every interval. Returns a message naming it.
pub fn duplicate(recs: &[ScenarioResult]) -> Option<String> {
    let key = |r: &ScenarioResult| {
        (
            r.model.clone(),
            r.scenario_id(),
            noise::launch_key(r),
            r.run_index,
            r.run_in_launch,
            r.date.clone(),
            r.duration.to_bits(),
            r.output_throughput.to_bits(),
        )
    };
    let mut seen = std::collections::BTreeSet::new();
    for r in recs {
        if !seen.insert(key(r)) {
            return Some(format!(
                "model `{}`, scenario `{}`, run {}{}: the same record appears twice (a file passed twice?)",
                r.model,
                r.scenario_id(),
                r.run_index,
                r.launch_id
                    .as_deref()
                    .map(|l| format!(" of launch `{l}`"))
                    .unwrap_or_default()
            ));
        }
    }
    None
}

/// Gated rows whose verdict compared numbers of both sides (tested or ruled). A check where
/// this is zero compared nothing: it must never pass.
pub fn compared(rows: &[Row]) -> usize {
    rows.iter()
        .filter(|r| {
            r.gated
                && r.n_baseline > 0
                && r.n_current > 0
                && matches!(
                    r.verdict,
                    Verdict::Pass | Verdict::Regressed | Verdict::Improved | Verdict::Inconclusive
                )
        })
        .count()
}

/// A check that compared nothing (no model or scenario in common, or no gated metric) must never
/// pass: the message naming both sides' models and the gated metrics, or `None` when something
/// was compared (or a row is an error).
pub fn nothing_compared(
    report: &Report,
    cfg: &GateConfig,
    baseline: &[ScenarioResult],
    current: &[ScenarioResult],
) -> Option<String> {
    if compared(&report.rows) > 0 || report.counts.error > 0 {
        return None;
    }
    let models = |recs: &[ScenarioResult]| {
        let mut m: Vec<&str> = recs.iter().map(|r| r.model.as_str()).collect();
        m.sort_unstable();
        m.dedup();
        if m.is_empty() {
            "none".to_string()
        } else {
            m.join(", ")
        }
    };
    Some(format!(
        "nothing was compared: no gated metric of any model and scenario is on both sides \
         (baseline models: {}; results models: {}; gated metrics: {})",
        models(baseline),
        models(current),
        cfg.metric_list()
            .iter()
            .filter(|m| cfg.rule(m).gated)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Counts of the gated rows' verdicts.
pub fn count(rows: &[Row]) -> Counts {
    let mut c = Counts::default();
    for r in rows.iter().filter(|r| r.gated) {
        match r.verdict {
            Verdict::Pass => c.pass += 1,
            Verdict::Regressed => c.regressed += 1,
            Verdict::Improved => c.improved += 1,
            Verdict::Inconclusive => c.inconclusive += 1,
            Verdict::Missing => c.missing += 1,
            Verdict::Error => c.error += 1,
        }
    }
    c
}

/// Any gated regression fails; else an engine error is an error; else anything unproven
/// (inconclusive, or a scenario missing from the results) is inconclusive; else pass.
pub fn top_verdict(rows: &[Row]) -> TopVerdict {
    let gated = || rows.iter().filter(|r| r.gated);
    if gated().any(|r| r.verdict == Verdict::Regressed) {
        TopVerdict::Fail
    } else if gated().any(|r| r.verdict == Verdict::Error) {
        TopVerdict::Error
    } else if gated().any(|r| {
        r.verdict == Verdict::Inconclusive || (r.verdict == Verdict::Missing && r.n_current == 0)
    }) {
        TopVerdict::Inconclusive
    } else {
        TopVerdict::Pass
    }
}

pub(crate) fn fill_side(side: &mut Side, recs: &[ScenarioResult]) {
    let first = |f: fn(&ScenarioResult) -> Option<String>| recs.iter().find_map(f);
    if side.engine.is_none() {
        side.engine = first(|r| r.engine.clone().or(r.backend.clone()));
    }
    if side.engine_version.is_none() {
        side.engine_version = first(|r| r.engine_version.clone());
    }
    if side.date.is_none() {
        side.date = first(|r| r.date.clone());
    }
    let machine = Machine::of_records(recs);
    if side.calibration_ms.is_none() {
        side.calibration_ms = machine.calibration_ms;
    }
    if side.calibration_all_ms.is_none() {
        side.calibration_all_ms = machine.calibration_all_ms;
    }
    if side.platforms.is_empty() {
        side.platforms = machine.platforms;
    }
}

/// The method in one sentence.
pub fn method_sentence(cfg: &GateConfig, levels: Levels, n_gated: usize) -> String {
    let look = match levels.look {
        Some(l) if l.of > 1 => format!(" (look {} of {}: α-spending)", l.k, l.of),
        _ => String::new(),
    };
    format!(
        "Engine launches are the unit: per model, scenario and metric, each launch's runs give one \
         value (median of logs), the candidate's launches are compared with the baseline's on the log \
         scale with the row's own launch-to-launch noise moderated toward {} plus a \
         between-session term, and an \
         engine-wide test per metric pools each model's scenarios launch by launch; a row regresses \
         when it is shown worse than its tolerance δ (one-sided test against the shifted null, \
         weighted Holm across {n_gated} gated rows and tests with at least {}% of α on the widest \
         engine-wide tests, family-wise α = {}{look}) and passes when its {}% one-sided bound of \
         the change stays within δ (in a stored check, on its own launches' noise too).",
        prior_words(cfg),
        fmt_prob(100.0 * cfg.engine_wide_share()),
        fmt_prob(levels.look_alpha_for(n_gated)),
        fmt_prob(100.0 * (1.0 - levels.look_equivalence_alpha())),
    )
}

/// The noise prior in words: learnt from the check's rows (empirical Bayes), or its fixed
/// weight when the settings give one.
pub(crate) fn prior_words(cfg: &GateConfig) -> String {
    match cfg.prior_df() {
        Some(df) => format!(
            "the noise its metric shows over the check's other rows (that prior worth {} df)",
            fmt_prob(df)
        ),
        None => "the noise its metric shows over the check's other rows (empirical Bayes)".into(),
    }
}

pub(crate) fn fmt_prob(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Verdict {
    /// Order from best to worst for a measured row: improved < pass < inconclusive < regressed.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Improved => 0,
            Verdict::Pass => 1,
            Verdict::Inconclusive | Verdict::Missing => 2,
            Verdict::Regressed | Verdict::Error => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Missing => "missing",
            Verdict::Error => "error",
        }
    }
}

impl TopVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            TopVerdict::Pass => "pass",
            TopVerdict::Fail => "fail",
            TopVerdict::Inconclusive => "inconclusive",
            TopVerdict::Error => "error",
        }
    }
}
