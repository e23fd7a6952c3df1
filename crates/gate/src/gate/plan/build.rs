//! The plan of a set of records: every row's components and cheapest designs, then the suite's.

use super::{
    cheapest, choice, Choice, Components, Given, Kind, Launches, NoiseRow, Pick, Plan, PlanError,
    PlanInputs, RowPlan, ScenarioResult, Test, ENGINE_WIDE,
};
use crate::gate::stats;

/// The components of a row: from its own launches, or (an engine-wide series) from the levels
/// `baseline noise` reports.
fn components(recs: &[ScenarioResult], row: &NoiseRow) -> Components {
    if row.scenario != ENGINE_WIDE {
        let mine: Vec<&ScenarioResult> = recs
            .iter()
            .filter(|r| r.model == row.model && r.scenario_id() == row.scenario)
            .collect();
        if let Ok(l) = Launches::of(&mine, &row.metric) {
            return Components::of(&l);
        }
    }
    let l = &row.levels;
    let var = |sd: Option<f64>| sd.map(|s| (s / 100.0).powi(2));
    Components {
        session_var: var(l.session_sd_pct),
        session_df: l.session_df,
        launch_var: var(l.between_sd_pct),
        launch_df: l.between_df,
        run_var: None,
        run_df: 0.0,
        runs_per_launch: 1.0,
        clamped: Vec::new(),
    }
}

/// The plan's view of a row's test at `level`.
fn test_of(
    row: &NoiseRow,
    c: &Components,
    level: f64,
    delta_pct: f64,
    cfg: &super::GateConfig,
) -> Test {
    let rule = cfg.rule(&row.metric);
    let lim = stats::limits(rule.direction, row.tolerance_pct).0.abs();
    let worse = (delta_pct / 100.0).ln_1p();
    let l = &row.levels;
    let r = c.runs_per_launch.round().max(1.0) as u32;
    Test {
        gap: worse - lim,
        level,
        var: (l.gate_sd_pct / 100.0).powi(2),
        df: l.gate_df,
        prior_df: (l.gate_df - l.between_df).max(0.0),
        run_var: c.run_var.unwrap_or(0.0),
        base_share: super::run_share(r),
        n_base: l.launches,
        session_var: row.session_var,
    }
}

/// The plan: per row its components and, for the gated rows and engine-wide tests, the
/// cheapest `check` and `ab` designs that detect a uniform change of δ at the test's Holm level
/// (α × its weight, the engine-wide tests the widest) with the power asked for; then the
/// suite's design (the cheapest over its tests, costed over every model) and the power of the
/// designs given to compare.
pub fn plan(recs: &[ScenarioResult], inputs: &PlanInputs<'_>) -> Result<Plan, PlanError> {
    let cfg = inputs.cfg;
    let q = inputs.question;
    let table = crate::gate::noise::table(recs, cfg);
    let gated: Vec<bool> = table.iter().map(|r| r.gated).collect();
    let widest: Vec<bool> = table
        .iter()
        .filter(|r| r.gated)
        .map(|r| r.scenario == ENGINE_WIDE)
        .collect();
    if widest.is_empty() {
        return Err(PlanError::NoRows);
    }
    let mut weights = cfg.holm_weights(&widest).into_iter();
    let cost_of = |model: &str| {
        inputs
            .costs
            .iter()
            .find(|(m, _)| m == model)
            .map(|c| c.1)
            .unwrap_or(super::Costs {
                startup_s: 0.0,
                run_s: 0.0,
            })
    };
    let mut rows = Vec::new();
    let mut tests: Vec<(String, Test)> = Vec::new();
    for (row, g) in table.iter().zip(gated) {
        let c = components(recs, row);
        let level = g.then(|| q.alpha * weights.next().unwrap_or(0.0));
        let mut rp = RowPlan {
            model: row.model.clone(),
            scenario: row.scenario.clone(),
            metric: row.metric.clone(),
            gated: row.gated,
            tolerance_pct: row.tolerance_pct,
            gate_sd_pct: row.levels.gate_sd_pct,
            gate_df: row.levels.gate_df,
            components: c.clone(),
            level,
            check: None,
            ab: None,
            note: None,
        };
        if let Some(level) = level {
            let t = test_of(row, &c, level, q.delta_pct, cfg);
            let costs = cost_of(&row.model);
            rp.check = cheapest(&t, Kind::Check, &q, &costs);
            rp.ab = cheapest(&t, Kind::Ab, &q, &costs);
            rp.note = note(&t, &rp, &q);
            tests.push((
                format!("{} / {} / {}", row.model, row.scenario, row.metric),
                t,
            ));
        }
        rows.push(rp);
    }
    let models: Vec<super::Costs> = inputs.costs.iter().map(|c| c.1).collect();
    let suite_minutes = |kind: Kind, c: &Choice| {
        let arms = if kind == Kind::Ab { 2.0 } else { 1.0 };
        models
            .iter()
            .map(|m| arms * f64::from(c.launches) * m.launch_s(c.runs_per_launch) / 60.0)
            .sum::<f64>()
    };
    let pick = |kind: Kind| {
        let mut best: Option<Pick> = None;
        for (p, (by, _)) in rows.iter().filter(|r| r.level.is_some()).zip(&tests) {
            let c = if kind == Kind::Ab { p.ab } else { p.check };
            let Some(mut c) = c else { continue };
            c.minutes = suite_minutes(kind, &c);
            if best
                .as_ref()
                .is_none_or(|b| c.minutes < b.choice.minutes - 1e-9)
            {
                best = Some(Pick {
                    choice: c,
                    by: by.clone(),
                });
            }
        }
        best
    };
    let given = |kind: Kind, n: u32| {
        let r = inputs.compare.runs_per_launch;
        let mut best: Option<Given> = None;
        for (by, t) in &tests {
            let mut c = choice(t, kind, n, r, &cost_of(""));
            c.minutes = suite_minutes(kind, &c);
            if t.gap > 0.0 && best.as_ref().is_none_or(|b| c.power > b.choice.power) {
                best = Some(Given {
                    choice: c,
                    by: by.clone(),
                });
            }
        }
        best
    };
    Ok(Plan {
        delta_pct: q.delta_pct,
        alpha: q.alpha,
        power: q.power,
        costs: inputs.costs.clone(),
        check: pick(Kind::Check),
        ab: pick(Kind::Ab),
        given_check: given(Kind::Check, inputs.compare.launches),
        given_ab: given(Kind::Ab, inputs.compare.pairs),
        rows,
    })
}

/// Why a gated row has no design.
fn note(t: &Test, rp: &RowPlan, q: &super::Question) -> Option<String> {
    if t.gap <= 0.0 {
        return Some(format!(
            "a {} % change is within the test's {} % tolerance: it passes, never fails",
            q.delta_pct, rp.tolerance_pct
        ));
    }
    if rp.check.is_none() && t.session_var > 0.0 {
        let floor = (t.var / t.n_base.max(1) as f64 + t.session_var).sqrt();
        if stats::power_of(t.gap, floor, t.level, f64::INFINITY) < q.power {
            return Some(
                "no number of candidate launches reaches the power against this baseline: the \
                 session offset (or the baseline's own launches) bounds it; pairs (`ab`) cancel it"
                    .to_string(),
            );
        }
    }
    if rp.check.is_none() || rp.ab.is_none() {
        return Some(format!("beyond {} launches for one design", q.max_launches));
    }
    None
}
