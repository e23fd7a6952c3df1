//! The text of `perfgate plan`: per model the rows' variance components and cheapest designs,
//! then the suite's design beside the designs given to compare.

use crate::gate::plan::{Choice, Plan, RowPlan};

fn sd(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.1} %", v.sqrt() * 100.0))
}

fn design(c: Option<Choice>, unit: &str) -> String {
    c.map_or("–".into(), |c| {
        format!(
            "{} {unit} × {}: {:.1} min, {:.0} %",
            c.launches,
            c.runs_per_launch,
            c.minutes,
            c.power * 100.0
        )
    })
}

fn cells(r: &RowPlan) -> Vec<String> {
    let c = &r.components;
    let mut comps = format!(
        "{} / {} / {}",
        sd(c.session_var),
        sd(c.launch_var),
        sd(c.run_var)
    );
    if !c.clamped.is_empty() {
        comps.push_str(&format!(" ({} < 0 → 0)", c.clamped.join(", ")));
    }
    vec![
        r.scenario.clone(),
        if r.gated {
            r.metric.clone()
        } else {
            format!("({})", r.metric)
        },
        comps,
        format!("{:.1} % ({:.0})", r.gate_sd_pct, r.gate_df),
        format!("{:.0} %", r.tolerance_pct),
        r.level.map_or("–".into(), |l| format!("{l:.4}")),
        design(r.check, "launches"),
        design(r.ab, "pairs"),
    ]
}

/// An aligned table: the first two columns to the left, the others to the right.
fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, s) in w.iter_mut().zip(r) {
            *w = (*w).max(s.chars().count());
        }
    }
    let line = |c: &[String]| {
        let parts: Vec<String> = c
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let pad = " ".repeat(w[i] - s.chars().count());
                if i < 2 {
                    format!("{s}{pad}")
                } else {
                    format!("{pad}{s}")
                }
            })
            .collect();
        format!("  {}\n", parts.join("  ").trim_end())
    };
    let mut out = line(&head.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// Render a plan as text.
pub fn render(p: &Plan) -> String {
    const HEAD: [&str; 8] = [
        "scenario",
        "metric",
        "sd: sessions / launches / runs",
        "gate sd (df)",
        "δ",
        "level",
        "check: launches × runs",
        "ab: pairs × runs",
    ];
    let mut out = format!(
        "plan: detect a {} % change (worse on every metric) at α = {} (each test at its Holm \
         level) with power {:.0} %\n",
        p.delta_pct,
        p.alpha,
        p.power * 100.0
    );
    for (m, c) in &p.costs {
        out.push_str(&format!(
            "costs: {m}: {:.1} s start-up a launch, {:.1} s a run of its scenarios\n",
            c.startup_s, c.run_s
        ));
    }
    let mut models: Vec<&str> = Vec::new();
    for r in &p.rows {
        if !models.contains(&r.model.as_str()) {
            models.push(&r.model);
        }
    }
    for m in models {
        let rows: Vec<Vec<String>> = p.rows.iter().filter(|r| r.model == m).map(cells).collect();
        out.push_str(&format!("\n{m}\n{}", table(&HEAD, &rows)));
        for r in p.rows.iter().filter(|r| r.model == m && r.note.is_some()) {
            let note = r.note.as_deref().unwrap_or_default();
            out.push_str(&format!("  note: {} {}: {note}\n", r.scenario, r.metric));
        }
    }
    out.push_str("\nsuite (a check fails when any test regresses; minutes over every model)\n");
    let pick = |name: &str, unit: &str, c: Option<(Choice, &str)>| match c {
        Some((c, by)) => format!("  {name}: {} (by {by})\n", design(Some(c), unit)),
        None => format!("  {name}: no design within the limits\n"),
    };
    out.push_str(&pick(
        "check",
        "launches",
        p.check.as_ref().map(|x| (x.choice, x.by.as_str())),
    ));
    out.push_str(&pick(
        "ab",
        "pairs",
        p.ab.as_ref().map(|x| (x.choice, x.by.as_str())),
    ));
    out.push_str(&pick(
        "compared, check",
        "launches",
        p.given_check.as_ref().map(|x| (x.choice, x.by.as_str())),
    ));
    out.push_str(&pick(
        "compared, ab",
        "pairs",
        p.given_ab.as_ref().map(|x| (x.choice, x.by.as_str())),
    ));
    out.push_str(
        "sd of the log value (≈ relative) per level, a negative estimate set to 0 and named; \
         `gate sd`: one launch, as the gate moderates it.\nA design: launches (pairs) × runs per \
         launch, its engine-minutes (ab: both arms, all pairs) and the power the gate's rule \
         gives it; the compared designs' power is their strongest test's.\n",
    );
    out
}
