//! The report of a bisect: built once from the search ([`build`]), rendered as terminal text,
//! markdown and JSON (pure functions returning `String`).

use serde::Serialize;

use super::search::{Budget, End, MetricChange, Search, Verdict};
use crate::report::{fmt_change, fmt_interval};

/// A named culprit with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct CulpritOut {
    pub revision: String,
    /// The last revision without the change.
    pub previous: String,
    /// Position of the culprit in the range (0 = good).
    pub index: usize,
    /// The step whose DIFFERENT verdict is the narrowest evidence.
    pub evidence_step: usize,
    pub evidence_base: String,
    pub evidence_candidate: String,
    pub changes: Vec<MetricChange>,
}

/// A range still open: a change may lie after `after`, up to and including `through`.
#[derive(Debug, Clone, Serialize)]
pub struct RangeOut {
    pub after: String,
    pub through: String,
    pub revisions: usize,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepOut {
    pub step: usize,
    pub base: String,
    pub candidate: String,
    pub verdict: Verdict,
    pub pairs: u32,
    pub engine_minutes: f64,
    pub gpu_minutes: f64,
    pub alpha: f64,
    pub equivalence_alpha: f64,
    pub note: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Taken from the output folder's state, not measured in this invocation.
    pub reused: bool,
    pub changes: Vec<MetricChange>,
}

/// Everything a bisect reports.
#[derive(Debug, Clone, Serialize)]
pub struct BisectReport {
    pub perfgate_version: String,
    pub good: String,
    pub bad: String,
    pub revisions: Vec<String>,
    /// `culprit`, `not_reproduced`, `open` (a change shown but not located) or `stopped`.
    pub outcome: String,
    pub summary: String,
    pub culprits: Vec<CulpritOut>,
    pub open_ranges: Vec<RangeOut>,
    pub steps: Vec<StepOut>,
    pub steps_reused: usize,
    pub engine_minutes: f64,
    pub gpu_minutes: f64,
    pub planned_steps: usize,
    pub alpha: f64,
    pub equivalence_alpha: f64,
    pub error_control: String,
}

/// The report of `search` over `revs`; the first `reused` steps came from the saved state.
pub fn build(revs: &[String], s: &Search, budget: Budget, reused: usize) -> BisectReport {
    let name = |i: usize| revs.get(i).cloned().unwrap_or_default();
    let steps: Vec<StepOut> = s
        .steps
        .iter()
        .enumerate()
        .map(|(i, st)| StepOut {
            step: st.request.step,
            base: name(st.request.base),
            candidate: name(st.request.cand),
            verdict: st.result.verdict,
            pairs: st.result.pairs,
            engine_minutes: st.result.engine_minutes,
            gpu_minutes: st.result.gpu_minutes,
            alpha: st.request.alpha,
            equivalence_alpha: st.request.equivalence_alpha,
            note: st.result.note.clone(),
            stopped: st.result.stop.clone(),
            reused: i < reused,
            changes: st.result.changes.clone(),
        })
        .collect();
    let culprits: Vec<CulpritOut> = s
        .culprits
        .iter()
        .map(|c| {
            let ev = &s.steps[c.evidence];
            CulpritOut {
                revision: name(c.index),
                previous: name(c.previous),
                index: c.index,
                evidence_step: ev.request.step,
                evidence_base: name(ev.request.base),
                evidence_candidate: name(ev.request.cand),
                changes: ev.result.changes.clone(),
            }
        })
        .collect();
    let open_ranges: Vec<RangeOut> = s
        .open
        .iter()
        .map(|o| RangeOut {
            after: name(o.lo),
            through: name(o.hi),
            revisions: o.hi - o.lo,
            why: o.why.clone(),
        })
        .collect();
    let (outcome, summary) = match &s.end {
        End::NotReproduced(why) => (
            "not_reproduced",
            format!("not reproduced: {why}; no culprit"),
        ),
        End::Done if !culprits.is_empty() => {
            let names: Vec<String> = culprits
                .iter()
                .map(|c| format!("{} (after {})", c.revision, c.previous))
                .collect();
            let open = if open_ranges.is_empty() {
                String::new()
            } else {
                format!("; {} range(s) still open", open_ranges.len())
            };
            ("culprit", format!("culprit: {}{open}", names.join(", ")))
        }
        End::Done => (
            "open",
            "the end points differ, but the change was not located: see the open range(s)".into(),
        ),
        End::Stopped(why) => ("stopped", format!("stopped: {why}")),
    };
    let engine_minutes = steps.iter().map(|s| s.engine_minutes).sum();
    let gpu_minutes = steps.iter().map(|s| s.gpu_minutes).sum();
    BisectReport {
        perfgate_version: env!("CARGO_PKG_VERSION").into(),
        good: name(0),
        bad: name(revs.len().saturating_sub(1)),
        revisions: revs.to_vec(),
        outcome: outcome.into(),
        summary,
        culprits,
        open_ranges,
        steps,
        steps_reused: reused,
        engine_minutes,
        gpu_minutes,
        planned_steps: budget.planned(),
        alpha: budget.alpha,
        equivalence_alpha: budget.equivalence_alpha,
        error_control: error_control(budget),
    }
}

/// The error statement of a search, in one paragraph.
fn error_control(b: Budget) -> String {
    format!(
        "Every step is a paired A/B comparison (`perfgate ab`'s statistics). Step k is tested at \
         α/(S+1) for k ≤ S = {s} planned steps (the end points, ⌈log₂(n−1)⌉ bisection steps and 2 \
         more) and half as much for each step beyond, and the same for the equivalence level, so \
         the levels of all steps sum to less than α = {a} and α_eq = {e}: the chance of naming a \
         wrong culprit (a step calling a range that changed by less than the tolerance DIFFERENT, \
         or one that changed by more SAME) is at most {t}.",
        s = b.planned(),
        a = b.alpha,
        e = b.equivalence_alpha,
        t = ((b.alpha + b.equivalence_alpha) * 1e6).round() / 1e6,
    )
}

fn change_line(c: &MetricChange) -> String {
    let tol = c
        .tolerance_pct
        .map(|t| format!(", tolerance {t}%"))
        .unwrap_or_default();
    format!(
        "{} {} {}: {} {} ({}{tol})",
        c.model,
        c.scenario,
        c.metric,
        fmt_change(c.change_pct),
        fmt_interval(c.interval),
        c.verdict
    )
}

/// The terminal text.
pub fn render_text(r: &BisectReport) -> String {
    let mut out = format!(
        "perfgate bisect: {} revisions from {} (good) to {} (bad)\n{}\n",
        r.revisions.len(),
        r.good,
        r.bad,
        r.summary
    );
    for c in &r.culprits {
        out.push_str(&format!(
            "\nCulprit {} (after {}): step {} ({} → {}) DIFFERENT\n",
            c.revision, c.previous, c.evidence_step, c.evidence_base, c.evidence_candidate
        ));
        for ch in c.changes.iter().filter(|c| c.verdict == "regressed") {
            out.push_str(&format!("  {}\n", change_line(ch)));
        }
    }
    for o in &r.open_ranges {
        out.push_str(&format!(
            "\nOpen range after {} through {} ({} revision(s)): {}\n",
            o.after, o.through, o.revisions, o.why
        ));
    }
    out.push_str("\nstep  base → candidate  verdict  pairs  engine-min  GPU-min  α\n");
    for s in &r.steps {
        out.push_str(&format!(
            "{:>4}  {} → {}  {}  {}  {:.2}  {:.2}  {:.2e}{}\n",
            s.step,
            s.base,
            s.candidate,
            s.verdict.word(),
            s.pairs,
            s.engine_minutes,
            s.gpu_minutes,
            s.alpha,
            if s.reused { "  (loaded)" } else { "" }
        ));
    }
    out.push_str(&format!(
        "\n{} comparison(s), {:.2} engine-minutes ({:.2} GPU-minutes); {} loaded from the output \
         folder.\n{}\n",
        r.steps.len(),
        r.engine_minutes,
        r.gpu_minutes,
        r.steps_reused,
        r.error_control
    ));
    out
}

/// The markdown report.
pub fn render_markdown(r: &BisectReport) -> String {
    let mut out = format!(
        "<!-- perfgate:bisect -->\n## perfgate bisect: {} → {}\n\n**{}**\n\n",
        r.good, r.bad, r.summary
    );
    for c in &r.culprits {
        out.push_str(&format!(
            "### Culprit `{}` (after `{}`)\n\nEvidence: step {} (`{}` → `{}`), DIFFERENT.\n\n\
             | model | scenario | metric | change | interval | verdict |\n|---|---|---|--:|--:|---|\n",
            c.revision, c.previous, c.evidence_step, c.evidence_base, c.evidence_candidate
        ));
        for ch in &c.changes {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                ch.model,
                ch.scenario,
                ch.metric,
                fmt_change(ch.change_pct),
                fmt_interval(ch.interval),
                ch.verdict
            ));
        }
        out.push('\n');
    }
    if !r.open_ranges.is_empty() {
        out.push_str("### Open ranges\n\n");
        for o in &r.open_ranges {
            out.push_str(&format!(
                "- after `{}` through `{}` ({} revision(s)): {}\n",
                o.after, o.through, o.revisions, o.why
            ));
        }
        out.push('\n');
    }
    out.push_str(
        "### Steps\n\n| step | base | candidate | verdict | pairs | engine-minutes | GPU-minutes | α | why it stopped |\n\
         |--:|---|---|---|--:|--:|--:|--:|---|\n",
    );
    for s in &r.steps {
        out.push_str(&format!(
            "| {} | `{}` | `{}` | {} | {} | {:.2} | {:.2} | {:.2e} | {}{} |\n",
            s.step,
            s.base,
            s.candidate,
            s.verdict.word(),
            s.pairs,
            s.engine_minutes,
            s.gpu_minutes,
            s.alpha,
            s.note,
            if s.reused { " (loaded)" } else { "" }
        ));
    }
    out.push_str(&format!(
        "\n{} comparison(s), {:.2} engine-minutes, {:.2} GPU-minutes.\n\n{}\n",
        r.steps.len(),
        r.engine_minutes,
        r.gpu_minutes,
        r.error_control
    ));
    out
}

/// The metric the plot follows: the culprit's first regressed row, else the end points' first
/// row; and its value per revision (the mean over the steps that measured it).
fn series(r: &BisectReport) -> Option<(String, Vec<Option<f64>>)> {
    let pick = r
        .culprits
        .first()
        .and_then(|c| c.changes.iter().find(|x| x.verdict == "regressed"))
        .or_else(|| r.steps.first().and_then(|s| s.changes.first()))?;
    let key = |c: &MetricChange| (c.model.clone(), c.scenario.clone(), c.metric.clone());
    let want = key(pick);
    let mut sums = vec![(0.0, 0usize); r.revisions.len()];
    for s in &r.steps {
        let Some(v) = s
            .changes
            .iter()
            .find(|c| key(c) == want)
            .and_then(|c| c.values)
        else {
            continue;
        };
        for (rev, value) in [(&s.base, v[0]), (&s.candidate, v[1])] {
            if let Some(i) = r.revisions.iter().position(|x| x == rev) {
                sums[i].0 += value;
                sums[i].1 += 1;
            }
        }
    }
    let values = sums
        .iter()
        .map(|(s, n)| (*n > 0).then(|| s / *n as f64))
        .collect();
    Some((format!("{} · {} · {}", want.0, want.1, want.2), values))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A self-contained HTML page: the metric along the revisions (the culprits marked), then the
/// text report.
pub fn render_html(r: &BisectReport) -> String {
    let plot = series(r).and_then(|(title, values)| {
        let line = crate::report::html::plot::Trend {
            label: title.clone(),
            color: 0,
            values,
            bands: Vec::new(),
            changes: r
                .culprits
                .iter()
                .map(|c| (c.index, format!("culprit {}", c.revision)))
                .collect(),
        };
        let unit = title.rsplit(" · ").next().unwrap_or("").to_string();
        crate::report::html::plot::trends(&title, &unit, &r.revisions, &[line]).ok()
    });
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>perfgate bisect {} → {}</title></head>\n\
         <body><h1>perfgate bisect: {} → {}</h1>\n<p><strong>{}</strong></p>\n{}\n<pre>{}</pre>\n</body></html>\n",
        escape(&r.good),
        escape(&r.bad),
        escape(&r.good),
        escape(&r.bad),
        escape(&r.summary),
        plot.unwrap_or_default(),
        escape(&render_text(r))
    )
}

/// The JSON report.
pub fn render_json(r: &BisectReport) -> String {
    serde_json::to_string_pretty(r).expect("the report serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::super::search::{run, Comparator, Comparison, Request};
    use super::*;

    struct At(usize);
    impl Comparator for At {
        fn compare(&mut self, req: &Request) -> Comparison {
            let hit = req.base < self.0 && req.cand >= self.0;
            Comparison {
                verdict: if hit {
                    Verdict::Different
                } else {
                    Verdict::Same
                },
                changes: vec![MetricChange {
                    model: "m".into(),
                    scenario: "s".into(),
                    metric: "median_ttft_ms".into(),
                    change_pct: Some(if hit { 42.0 } else { 0.5 }),
                    interval: Some([30.0, 55.0]),
                    tolerance_pct: Some(10.0),
                    verdict: if hit { "regressed" } else { "pass" }.into(),
                    values: Some([100.0, if hit { 142.0 } else { 100.5 }]),
                }],
                pairs: 2,
                engine_minutes: 0.25,
                gpu_minutes: 0.5,
                note: "decided".into(),
                stop: None,
            }
        }
    }

    #[test]
    fn the_reports_name_the_culprit_its_change_and_every_step_with_its_cost() {
        let revs: Vec<String> = (0..8).map(|i| format!("r{i}")).collect();
        let b = Budget {
            n: 8,
            alpha: 0.05,
            equivalence_alpha: 0.05,
            margin: 2,
        };
        let s = run(b, &mut At(6));
        let r = build(&revs, &s, b, 1);
        assert_eq!(r.outcome, "culprit");
        assert_eq!(r.culprits[0].revision, "r6");
        assert_eq!(r.culprits[0].previous, "r5");
        assert!((r.gpu_minutes - 0.5 * s.steps.len() as f64).abs() < 1e-9);
        let text = render_text(&r);
        assert!(text.contains("culprit: r6 (after r5)"), "{text}");
        assert!(
            text.contains("median_ttft_ms: +42.0% [+30.0, +55.0]% (regressed, tolerance 10%)"),
            "{text}"
        );
        assert!(text.contains("(loaded)"), "{text}");
        let md = render_markdown(&r);
        assert!(md.contains("### Culprit `r6` (after `r5`)"), "{md}");
        assert!(md.contains("| 1 | `r0` | `r7` | DIFFERENT | 2 |"), "{md}");
        let json: serde_json::Value = serde_json::from_str(&render_json(&r)).unwrap();
        assert_eq!(json["culprits"][0]["revision"], "r6");
        assert_eq!(json["steps"][0]["verdict"], "different");
        assert_eq!(json["steps"][0]["reused"], true);
        assert_eq!(json["steps"][1]["reused"], false);
        let html = render_html(&r);
        assert!(html.contains("<svg"), "{html}");
        assert!(html.contains("culprit r6"), "{html}");
    }
}
