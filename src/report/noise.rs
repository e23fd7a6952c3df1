//! The table of `perfgate baseline noise`: per model, scenario and metric, the noise between
//! launches and within a launch, the value the gate uses and what it takes to pass.

use crate::gate::noise::NoiseRow;
use crate::gate::NoiseSource;

fn sd(v: Option<f64>, df: f64) -> String {
    match v {
        Some(v) => format!("{v:.1} % ({df:.0})"),
        None => "–".into(),
    }
}

/// Render the rows as an aligned text table, one block per model.
pub fn render(rows: &[NoiseRow]) -> String {
    const HEAD: [&str; 9] = [
        "scenario",
        "metric",
        "sessions/launches/runs",
        "between sessions (df)",
        "between launches (df)",
        "within a launch (df)",
        "gate uses (df)",
        "δ",
        "launches to pass",
    ];
    let mut out = String::new();
    let mut models: Vec<&str> = Vec::new();
    for r in rows {
        if !models.contains(&r.model.as_str()) {
            models.push(&r.model);
        }
    }
    for m in models {
        let cells: Vec<[String; 9]> = rows
            .iter()
            .filter(|r| r.model == m)
            .map(|r| {
                let l = &r.levels;
                let src = match l.source {
                    NoiseSource::Launches => "",
                    NoiseSource::Runs => " runs",
                    NoiseSource::Prior => " prior",
                    NoiseSource::Pairs => " pairs",
                };
                [
                    r.scenario.clone(),
                    if r.gated {
                        r.metric.clone()
                    } else {
                        format!("({})", r.metric)
                    },
                    format!("{}/{}/{}", l.sessions, l.launches, l.runs),
                    sd(l.session_sd_pct, l.session_df),
                    sd(l.between_sd_pct, l.between_df),
                    sd(l.within_sd_pct, l.within_df),
                    format!("{:.1} % ({:.0}){src}", l.gate_sd_pct, l.gate_df),
                    format!("{:.0} %", r.tolerance_pct),
                    r.launches_to_pass
                        .map_or("more baseline launches or sessions".into(), |n| {
                            n.to_string()
                        }),
                ]
            })
            .collect();
        let mut w = HEAD.map(|h| h.chars().count());
        for c in &cells {
            for (w, s) in w.iter_mut().zip(c) {
                *w = (*w).max(s.chars().count());
            }
        }
        let line = |c: &[String; 9]| {
            let parts: Vec<String> = (0..9)
                .map(|i| {
                    let pad = " ".repeat(w[i] - c[i].chars().count());
                    if i < 2 {
                        format!("{}{pad}", c[i])
                    } else {
                        format!("{pad}{}", c[i])
                    }
                })
                .collect();
            format!("  {}\n", parts.join("  ").trim_end())
        };
        out.push_str(&format!("{m}\n"));
        out.push_str(&line(&HEAD.map(String::from)));
        let mut last = String::new();
        for c in &cells {
            let mut c = c.clone();
            if c[0] == last {
                c[0] = String::new();
            } else {
                last = c[0].clone();
            }
            out.push_str(&line(&c));
        }
        out.push('\n');
    }
    out.push_str(
        "sd of the log value (≈ relative), degrees of freedom in parentheses; (…) = shown, not gated.\n\
         `between sessions`: the offset of a recording session beyond its launches' spread (needs ≥ 2 sessions).\n\
         `gate uses`: the launch-to-launch sd moderated toward the metric's other rows (`prior`: no repeated launches).\n\
         `launches to pass`: launches of a new session an unchanged engine would likely need to pass this row.\n",
    );
    out
}
