//! `perfgate ab`: the base and the candidate engine on the same runner, launched in pairs (one
//! launch of each arm, back to back, in ABBA or seeded random order), every launch with the same
//! warm-up, scenario order and cache resets. After each pair the model's records are judged by
//! the paired statistics ([`crate::gate::paired`]) at that pair's look of a sequential test
//! planned with `--max-launches` looks; a model stops when its gated rows are decided, when a
//! launch fails, or when the budget (launches, minutes) is spent.

use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use crate::gate::paired::Stop;
use crate::gate::{self, AbModel, AbSummary, GateConfig, Look, Report, Side, TopVerdict};
use crate::record::Arm;
use crate::suite::{ModelPlan, Plan, ScenarioPlan};

use super::{LaunchEnd, Measured, Runner};

/// The order of the two arms within each pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Base first in even pairs, candidate first in odd ones (ABBA ABBA …): a linear drift
    /// cancels over every two pairs, and neither arm always runs first.
    Abba,
    /// A reproducible coin per pair from the seed.
    Random(u64),
}

impl Order {
    /// The arms of pair `p` (0-based) of the `m`-th model, in launch order.
    pub fn arms(self, m: usize, p: u32) -> [Arm; 2] {
        let base_first = match self {
            Order::Abba => p.is_multiple_of(2),
            Order::Random(seed) => splitmix(seed ^ ((m as u64) << 32) ^ u64::from(p)) & 1 == 0,
        };
        if base_first {
            [Arm::Base, Arm::Candidate]
        } else {
            [Arm::Candidate, Arm::Base]
        }
    }

    pub fn describe(self) -> String {
        match self {
            Order::Abba => "abba".into(),
            Order::Random(s) => format!("random (seed {s})"),
        }
    }
}

/// SplitMix64's output function: a well-mixed 64-bit value from any input.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What an A/B comparison runs.
pub struct AbSpec<'a> {
    /// The base arm's plan: the runner's plan (the candidate's) with the base engine.
    pub base: &'a Plan,
    pub order: Order,
    /// Most pairs per model (`--max-launches`); also the number of planned looks.
    pub max_pairs: u32,
    pub runs_per_launch: u32,
    /// `--max-minutes`: no scenario starts after it is spent.
    pub budget: Option<Duration>,
    /// `--max-minutes` as given, for the reports.
    pub max_minutes: Option<f64>,
    pub gate: &'a GateConfig,
    pub kind: &'a str,
}

/// How one model's A/B went.
#[derive(Debug, Clone, PartialEq)]
pub struct AbModelRun {
    pub model: String,
    /// Complete pairs.
    pub pairs: u32,
    /// Launches made (both arms).
    pub launches: u32,
    pub tensor_parallel_size: u32,
    /// Wall time of its launches (engine start and stop included).
    pub wall: Duration,
    /// The look it was last judged at; `None` before its first complete pair.
    pub look: Option<Look>,
    /// Its verdict at that look.
    pub verdict: Option<TopVerdict>,
    /// Why its launches stopped, in words.
    pub stopped: String,
}

impl AbSpec<'_> {
    /// Judge what the A/B loop measured with the paired statistics (each model at its last look),
    /// name the models that never got a pair, and add what the comparison cost. The sides name
    /// the arms in their `engine_version`.
    pub fn judge(
        &self,
        runs: &[AbModelRun],
        m: &Measured,
        (base, candidate): (Side, Side),
        wall: Duration,
    ) -> Report {
        let labels = [&base, &candidate].map(|s| s.engine_version.clone().unwrap_or_default());
        let looks: BTreeMap<String, Look> = runs
            .iter()
            .filter_map(|r| r.look.map(|l| (r.model.clone(), l)))
            .collect();
        let look_of = |model: &str| looks.get(model).copied();
        let mut report = gate::paired::evaluate(gate::paired::AbInputs {
            records: &m.records,
            errors: &m.errors,
            cfg: self.gate,
            look_of: &look_of,
            kind: self.kind,
            base_side: base,
            cur_side: candidate,
        });
        for r in runs.iter().filter(|r| r.pairs == 0) {
            if !m.errors.iter().any(|e| e.model == r.model) {
                gate::paired::not_measured(&mut report, &r.model, &r.stopped);
            }
        }
        let [base, candidate] = labels;
        report.ab = Some(self.summary(runs, base, candidate, &report, wall));
        report
    }

    fn summary(
        &self,
        runs: &[AbModelRun],
        base: String,
        candidate: String,
        report: &Report,
        wall: Duration,
    ) -> AbSummary {
        let minutes = |d: Duration| d.as_secs_f64() / 60.0;
        let models: Vec<AbModel> = runs
            .iter()
            .map(|r| {
                // The model's verdict as the final report has it (its rows, its look).
                let rows: Vec<gate::Row> = report
                    .rows
                    .iter()
                    .filter(|row| row.model == r.model)
                    .cloned()
                    .collect();
                AbModel {
                    model: r.model.clone(),
                    pairs: r.pairs,
                    launches: r.launches,
                    tensor_parallel_size: r.tensor_parallel_size,
                    wall_minutes: minutes(r.wall),
                    gpu_minutes: minutes(r.wall) * f64::from(r.tensor_parallel_size),
                    verdict: gate::verdict::top_verdict(&rows),
                    stopped: r.stopped.clone(),
                }
            })
            .collect();
        AbSummary {
            base,
            candidate,
            order: self.order.describe(),
            max_launches: self.max_pairs,
            max_minutes: self.max_minutes,
            wall_minutes: minutes(wall),
            gpu_minutes: models.iter().map(|m| m.gpu_minutes).sum(),
            minutes_left: self.max_minutes.map(|b| (b - minutes(wall)).max(0.0)),
            models,
        }
    }
}

impl Runner {
    /// Every model of the plan, pair after pair, until each is decided or the budget is spent.
    pub async fn run_ab(&mut self, spec: &AbSpec<'_>) -> Vec<AbModelRun> {
        self.deadline = spec.budget.map(|b| Instant::now() + b);
        let plan = self.plan.clone();
        let mut out = Vec::new();
        for (m, mp) in plan.models.iter().enumerate() {
            let mut run = AbModelRun {
                model: mp.name.clone(),
                pairs: 0,
                launches: 0,
                tensor_parallel_size: mp.tensor_parallel_size.max(1),
                wall: Duration::ZERO,
                look: None,
                verdict: None,
                stopped: String::new(),
            };
            let base = spec.base.models.iter().find(|b| b.name == mp.name);
            if let Some(why) = self.blocked(base) {
                run.stopped = why;
                out.push(run);
                continue;
            }
            let base = base.expect("checked by blocked");
            eprintln!(
                "perfgate: model {}: A/B in pairs ({}), at most {} pair(s)",
                mp.name,
                spec.order.describe(),
                spec.max_pairs
            );
            self.model_pairs(m, base, mp, spec, &mut run).await;
            self.tag = None;
            out.push(run);
        }
        out
    }

    /// Why a model cannot start, if it cannot.
    fn blocked(&self, base: Option<&ModelPlan>) -> Option<String> {
        if self.measured.interrupted {
            Some("not run: interrupted (signal)".into())
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some("not run: the time budget (--max-minutes) was spent".into())
        } else if base.is_none() {
            Some("not run: the base arm's plan lacks the model".into())
        } else {
            None
        }
    }

    async fn model_pairs(
        &mut self,
        m: usize,
        base: &ModelPlan,
        cand: &ModelPlan,
        spec: &AbSpec<'_>,
        run: &mut AbModelRun,
    ) {
        let k = spec.runs_per_launch;
        for p in 0..spec.max_pairs {
            for arm in spec.order.arms(m, p) {
                let mp = match arm {
                    Arm::Base => base,
                    Arm::Candidate => cand,
                };
                let scen: Vec<&ScenarioPlan> = mp.scenarios.iter().collect();
                if self.deadline.is_some_and(|d| Instant::now() >= d) {
                    eprintln!("perfgate: the time budget is spent: no further scenario starts");
                    run.stopped =
                        format!("the time budget (--max-minutes) ran out in pair {}", p + 1);
                    return;
                }
                self.tag = Some((arm, p));
                eprintln!(
                    "perfgate: {} pair {}: {} engine",
                    mp.name,
                    p + 1,
                    arm.as_str()
                );
                let t0 = Instant::now();
                let end = self.run_launch(mp, &scen, p * k, k).await;
                run.wall += t0.elapsed();
                run.launches += 1;
                let stop = match end {
                    LaunchEnd::Done => continue,
                    LaunchEnd::Interrupted => "interrupted (signal)".to_string(),
                    LaunchEnd::OutOfTime => {
                        format!("the time budget (--max-minutes) ran out in pair {}", p + 1)
                    }
                    LaunchEnd::EngineFailed(why) => {
                        format!(
                            "the {} engine failed in pair {}: {why}",
                            arm.as_str(),
                            p + 1
                        )
                    }
                };
                run.stopped = stop;
                return;
            }
            self.tag = None;
            run.pairs = p + 1;
            let look = Look {
                k: p + 1,
                of: spec.max_pairs,
            };
            let report = self.judge(&cand.name, spec, look);
            run.look = Some(look);
            run.verdict = Some(report.verdict);
            let stopped = match gate::paired::stop(&report, look) {
                None => None,
                Some(Stop::Decided(TopVerdict::Pass)) => Some("passed".to_string()),
                Some(Stop::Decided(TopVerdict::Fail)) => Some("regressed".to_string()),
                Some(Stop::Decided(_)) => Some("failed with an error".to_string()),
                Some(Stop::Futile) => Some(format!(
                    "stopped early: no open row would likely be decided within {} pairs",
                    look.of
                )),
            };
            if let Some(word) = stopped {
                run.stopped = format!("{word} after {} pair(s)", p + 1);
                eprintln!("perfgate: {}: {}", cand.name, run.stopped);
                return;
            }
            eprintln!(
                "perfgate: {}: look {} of {}: still open",
                cand.name, look.k, look.of
            );
        }
        run.stopped = format!(
            "--max-launches {} a side reached with rows still open",
            spec.max_pairs
        );
    }

    /// One model's records judged at `look`.
    fn judge(&self, model: &str, spec: &AbSpec<'_>, look: Look) -> Report {
        let recs: Vec<_> = self
            .measured
            .records
            .iter()
            .filter(|r| r.model == model)
            .cloned()
            .collect();
        let errors: Vec<_> = self
            .measured
            .errors
            .iter()
            .filter(|e| e.model == model)
            .cloned()
            .collect();
        gate::paired::at_look(&recs, &errors, spec.gate, look, spec.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abba_alternates_which_arm_goes_first() {
        let o = Order::Abba;
        assert_eq!(o.arms(0, 0), [Arm::Base, Arm::Candidate]);
        assert_eq!(o.arms(0, 1), [Arm::Candidate, Arm::Base]);
        assert_eq!(o.arms(3, 2), [Arm::Base, Arm::Candidate]);
    }

    #[test]
    fn random_order_is_reproducible_and_mixes() {
        let o = Order::Random(7);
        let firsts: Vec<Arm> = (0..64).map(|p| o.arms(0, p)[0]).collect();
        assert_eq!(firsts, (0..64).map(|p| o.arms(0, p)[0]).collect::<Vec<_>>());
        let base_first = firsts.iter().filter(|a| **a == Arm::Base).count();
        assert!((20..=44).contains(&base_first), "{base_first} of 64");
        let other: Vec<Arm> = (0..64).map(|p| Order::Random(8).arms(0, p)[0]).collect();
        assert_ne!(firsts, other);
    }
}
