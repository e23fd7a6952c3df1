//! `--rerun inconclusive`: after the first gate, another launch per model for the scenarios the
//! gate could not decide, up to `--max-reruns` rounds. Each gate is one look of a sequential test
//! planned with `--max-reruns` + 1 looks: look k is judged at its share of α and of the pass
//! level (the group-sequential boundary of a Lan–DeMets Pocock-type spending, [`crate::gate::stats::look_alpha`]), so looking
//! again until something happens keeps the error rates at the stated levels. The loop stops at
//! the first look that fails the check or leaves nothing open. Which rows are still open is
//! decided in one place, [`Runner::still_open`].

use std::collections::BTreeSet;

use crate::gate::{self, GateConfig, Look, Scope, Side, TopVerdict, Verdict};
use crate::record::ScenarioResult;
use crate::suite::ScenarioPlan;

use super::Runner;

/// What the gate needs to judge the measured records.
#[derive(Debug, Clone)]
pub struct GateInputs<'a> {
    pub baseline: &'a [ScenarioResult],
    pub config: &'a GateConfig,
    pub kind: &'a str,
    pub base_side: Side,
}

/// What an open gated test asks to re-run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Open {
    /// One scenario of one model (model, scenario id).
    Scenario(String, String),
    /// Every scenario of a model: its engine-wide test is open.
    Model(String),
    /// Every scenario of every model: the all-models test is open.
    Every,
}

impl Runner {
    /// Re-run what the gate could not decide, one fresh launch per model per round, numbering
    /// the new runs from `next_run`. Returns the number of rounds made.
    pub async fn rerun_inconclusive(
        &mut self,
        gate: &GateInputs<'_>,
        max_rounds: u32,
        mut next_run: u32,
    ) -> u32 {
        let mut rounds = 0;
        while rounds < max_rounds && !self.measured.interrupted {
            let look = Look {
                k: rounds + 1,
                of: max_rounds + 1,
            };
            let todo = self.still_open(gate, look);
            if todo.is_empty() {
                break;
            }
            rounds += 1;
            eprintln!(
                "perfgate: re-run {rounds}/{max_rounds}: {} inconclusive scenario(s)",
                todo.len()
            );
            let plan = self.plan.clone();
            for mp in &plan.models {
                let scen: Vec<&ScenarioPlan> = mp
                    .scenarios
                    .iter()
                    .filter(|s| {
                        todo.contains(&Open::Scenario(mp.name.clone(), s.id.clone()))
                            || todo.contains(&Open::Model(mp.name.clone()))
                            || todo.contains(&Open::Every)
                    })
                    .collect();
                if scen.is_empty() || self.measured.interrupted {
                    continue;
                }
                self.run_launch(mp, &scen, next_run, 1).await;
            }
            next_run += 1;
        }
        rounds
    }

    /// The gate over what has been measured so far, at `look`.
    fn gate_so_far(&self, g: &GateInputs<'_>, look: Option<Look>) -> gate::Report {
        gate::evaluate(gate::Inputs {
            baseline: g.baseline,
            current: &self.measured.records,
            errors: &self.measured.errors,
            cfg: g.config,
            look,
            kind: g.kind,
            base_side: g.base_side.clone(),
            cur_side: Side::default(),
            unconfirmable: &[],
        })
    }

    /// What the open gated tests ask to re-run, by their [`Scope`]: the one call site of the
    /// re-run rule. An open engine-wide test re-runs all of its model's scenarios (all models' for the
    /// all-models test). A look that already fails the check leaves nothing open.
    pub fn still_open(&self, g: &GateInputs<'_>, look: Look) -> BTreeSet<Open> {
        let report = self.gate_so_far(g, Some(look));
        if report.verdict == TopVerdict::Fail {
            return BTreeSet::new();
        }
        report
            .rows
            .iter()
            .filter(|r| r.gated && r.verdict == Verdict::Inconclusive)
            .map(|r| match r.scope() {
                Scope::Scenario => Open::Scenario(r.model.clone(), r.scenario.clone()),
                Scope::EngineWide => Open::Model(r.model.clone()),
                Scope::AllModels => Open::Every,
            })
            .collect()
    }

    /// `--confirm N`: the first gate FAILed; launch each model with a regressed gated test N
    /// more times (every scenario, `per_launch` runs each, numbered from `next_run`) so the gate
    /// can decide again on all of the candidate's launches ([`gate::confirm`]). Returns the
    /// first gate's report, or `None` when it did not FAIL (nothing is launched).
    pub async fn confirm_fail(
        &mut self,
        g: &GateInputs<'_>,
        look: Option<Look>,
        n: u32,
        next_run: u32,
        per_launch: u32,
    ) -> Option<gate::Report> {
        let first = self.gate_so_far(g, look);
        if n == 0 || first.verdict != TopVerdict::Fail || self.measured.interrupted {
            return None;
        }
        let models: BTreeSet<String> = first
            .rows
            .iter()
            .filter(|r| r.gated && r.verdict == Verdict::Regressed)
            .flat_map(|r| match r.scope() {
                Scope::AllModels => self.plan.models.iter().map(|m| m.name.clone()).collect(),
                _ => vec![r.model.clone()],
            })
            .collect();
        eprintln!(
            "perfgate: the gate FAILed: confirming with {n} more launch(es) of {}",
            models.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        let plan = self.plan.clone();
        for mp in plan.models.iter().filter(|m| models.contains(&m.name)) {
            let scen: Vec<&ScenarioPlan> = mp.scenarios.iter().collect();
            for k in 0..n {
                if self.measured.interrupted {
                    return Some(first);
                }
                let end = self
                    .run_launch(mp, &scen, next_run + k * per_launch, per_launch)
                    .await;
                if !matches!(end, super::LaunchEnd::Done) {
                    break;
                }
            }
        }
        Some(first)
    }
}
