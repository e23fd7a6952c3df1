//! Renderers: pure functions from a result structure to a `String`. Here the gate [`Report`]
//! (terminal table, markdown for PR comments and job summaries, JSON); in the submodules a
//! `perfgate run`'s vLLM-style summary ([`output`]), the side-by-side comparison of two baselines
//! ([`sidebyside`]) and a live check's `--dry-run` plan ([`dryrun`]). They never compute
//! statistics and never print; the caller decides where the text goes.

pub mod dryrun;
pub mod history;
pub mod html;
pub mod json;
pub mod markdown;
pub mod noise;
pub mod output;
pub mod pages;
pub mod plan;
pub mod sidebyside;
pub mod telemetry;
pub mod terminal;

pub use json::render_json;
pub use markdown::{render_markdown, render_markdown_limited, GITHUB_COMMENT_LIMIT};
pub use terminal::render_terminal;

use crate::gate::{Counts, Report, Row, Side, TopVerdict};

/// A measured value for a table cell (success rates as percentages).
pub fn fmt_value(metric: &str, v: Option<f64>) -> String {
    let Some(v) = v else {
        return "–".into();
    };
    if metric == "success_rate" {
        return format!("{:.1}%", v * 100.0);
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A percent change, signed, one decimal.
pub fn fmt_change(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{}%", fmt_signed(v)),
        None => "–".into(),
    }
}

fn fmt_signed(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == 0.0 {
        "0.0".into()
    } else {
        format!("{r:+.1}")
    }
}

/// An interval of the change, e.g. `[-2.1, +3.4]%`.
pub fn fmt_interval(v: Option<[f64; 2]>) -> String {
    match v {
        Some([lo, hi]) => format!("[{}, {}]%", fmt_signed(lo), fmt_signed(hi)),
        None => "–".into(),
    }
}

/// The verdict word of a row; shown-only rows are parenthesised.
/// The noise a row was judged with, e.g. `4.1 % · 3+3 L` (own launches), `8.0 % prior · 1+1 L`,
/// `2.0 % runs · 3+3` (runs without launch ids); empty when untested.
pub fn fmt_noise(row: &Row) -> String {
    let Some(n) = row.noise else {
        return String::new();
    };
    let l = row
        .launches
        .map(|[b, c]| format!(" · {b}+{c} L"))
        .unwrap_or_default();
    let tag = match n.source {
        crate::gate::NoiseSource::Launches => "",
        crate::gate::NoiseSource::Runs => " runs",
        crate::gate::NoiseSource::Prior => " prior",
        crate::gate::NoiseSource::Pairs => {
            let pairs = row.launches.map(|[b, _]| b).unwrap_or(0);
            return format!("{:.1} % · {pairs} pairs", n.sd_pct);
        }
    };
    format!("{:.1} %{tag}{l}", n.sd_pct)
}

/// For an inconclusive gated row: what would decide it. For a regressed one that nothing could
/// confirm (an offline check with no launch to hold back): that it is unconfirmed, and why.
pub fn fmt_needed(row: &Row) -> Option<String> {
    if row.gated && row.verdict == crate::gate::Verdict::Regressed {
        return unconfirmed(row).map(str::to_string);
    }
    if !(row.gated && row.verdict == crate::gate::Verdict::Inconclusive && row.noise.is_some()) {
        return None;
    }
    let paired = row
        .noise
        .is_some_and(|n| n.source == crate::gate::NoiseSource::Pairs);
    match row.launches_needed {
        Some(n) if paired => Some(format!("likely decided with {n} pair(s) in all")),
        Some(n) => Some(format!("likely decided with {n} candidate launch(es)")),
        // The gate's note says why no number is given.
        None => row
            .note
            .as_deref()
            .and_then(|n| n.rsplit("; ").next())
            .map(str::to_string),
    }
}

/// The gate's word that a regressed row was decided on launches none of which could be held
/// back as confirmation.
fn unconfirmed(row: &Row) -> Option<&str> {
    row.note
        .as_deref()?
        .split("; ")
        .find(|s| s.starts_with(crate::gate::UNCONFIRMED))
}

/// When gated rows regressed without confirmation: a line that says how many, and what would
/// confirm them. A FAIL that rests on one launch should not read like one that was repeated.
pub fn fmt_unconfirmed(report: &Report) -> Option<String> {
    let n = report
        .rows
        .iter()
        .filter(|r| r.gated && r.verdict == crate::gate::Verdict::Regressed)
        .filter(|r| unconfirmed(r).is_some())
        .count();
    (n > 0).then(|| {
        format!(
            "{n} regressed row(s) unconfirmed: their models' launches left none to hold back as \
             confirmation; a live check launches more, or record two launches or more"
        )
    })
}

pub fn fmt_verdict(row: &Row) -> String {
    if row.gated {
        row.verdict.as_str().into()
    } else {
        format!("({})", row.verdict.as_str())
    }
}

/// `12 regressed, 3 improved, …` with zero counts left out (pass always shown).
pub fn fmt_counts(c: &Counts, sep: &str) -> String {
    c.describe(sep)
}

/// The lines that describe a `perfgate ab` comparison and its cost: the design, then one line
/// per model (pairs, launches, GPU-minutes, verdict, why it stopped), then the GPU-minutes by
/// verdict and the budget left.
pub fn fmt_ab(ab: &crate::gate::AbSummary) -> Vec<String> {
    let pairs: u32 = ab.models.iter().map(|m| m.pairs).sum();
    let mut out = vec![format!(
        "A/B on this runner: base {}, candidate {}, {pairs} pair(s), {:.1} GPU-minutes ({} order)",
        ab.base, ab.candidate, ab.gpu_minutes, ab.order
    )];
    for m in &ab.models {
        out.push(format!(
            "{}: {} pair(s), {} launch(es), {:.1} min × {} GPU = {:.1} GPU-min; {}: {}",
            m.model,
            m.pairs,
            m.launches,
            m.wall_minutes,
            m.tensor_parallel_size,
            m.gpu_minutes,
            m.verdict.as_str(),
            m.stopped
        ));
    }
    let mut by: Vec<(&str, f64, usize)> = Vec::new();
    for m in &ab.models {
        match by.iter_mut().find(|b| b.0 == m.verdict.as_str()) {
            Some(b) => {
                b.1 += m.gpu_minutes;
                b.2 += 1;
            }
            None => by.push((m.verdict.as_str(), m.gpu_minutes, 1)),
        }
    }
    let by: Vec<String> = by
        .iter()
        .map(|(v, g, n)| format!("{v} {g:.1} ({n} model(s))"))
        .collect();
    let budget = match (ab.max_minutes, ab.minutes_left) {
        (Some(max), Some(left)) => format!(", {left:.1} of {max:.1} min left"),
        _ => String::new(),
    };
    out.push(format!(
        "GPU-minutes by verdict: {}; budget: at most {} launches a side per model{budget}; \
         wall time {:.1} min",
        by.join(", "),
        ab.max_launches,
        ab.wall_minutes
    ));
    out
}

/// `vllm v0.10.1 (baselines/v0.10.1.toml)`.
pub fn fmt_side(s: &Side) -> String {
    let mut out = String::new();
    if let Some(e) = &s.engine {
        out.push_str(e);
    }
    if let Some(v) = &s.engine_version {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(v);
    }
    if out.is_empty() {
        out.push_str("unknown engine");
    }
    if !s.sources.is_empty() {
        out.push_str(&format!(" ({})", s.sources.join(", ")));
    }
    out
}

/// Rows grouped by model, models in report order.
pub fn by_model(report: &Report) -> Vec<(&str, Vec<&Row>)> {
    let mut out: Vec<(&str, Vec<&Row>)> = Vec::new();
    for r in &report.rows {
        match out.iter_mut().find(|(m, _)| *m == r.model) {
            Some((_, rows)) => rows.push(r),
            None => out.push((&r.model, vec![r])),
        }
    }
    out
}

/// The verdict as one word (`pass`, `fail`, `inconclusive`, `error`): the step output and the
/// check run's title.
pub fn verdict_word(v: TopVerdict) -> &'static str {
    match v {
        TopVerdict::Pass => "pass",
        TopVerdict::Fail => "fail",
        TopVerdict::Inconclusive => "inconclusive",
        TopVerdict::Error => "error",
    }
}

/// The check run's name for a report kind: `perfgate`, or `perfgate (KIND)`.
pub fn check_run_name(kind: &str) -> String {
    if kind == "check" {
        "perfgate".to_string()
    } else {
        format!("perfgate ({kind})")
    }
}

/// The check run's title: the verdict and the counts that are not zero.
pub fn check_run_title(report: &Report) -> String {
    let c = &report.counts;
    let parts: Vec<String> = [
        (c.regressed, "regressed"),
        (c.error, "error"),
        (c.inconclusive, "inconclusive"),
        (c.missing, "missing"),
        (c.improved, "improved"),
        (c.pass, "pass"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, w)| format!("{n} {w}"))
    .collect();
    format!("{}: {}", verdict_word(report.verdict), parts.join(", "))
}

#[cfg(test)]
pub(crate) use perfgate_gate::sample;
