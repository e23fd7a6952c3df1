//! The search of `perfgate bisect`, pure: it only asks a [`Comparator`] "is revision j different
//! from revision i?" and decides where to look next, so the same code runs live (engines), in
//! tests (a scripted comparator or the fake server) and in the simulator (`examples/bisect-sim.rs`).
//!
//! The plan: first the end points (good vs bad); if they are not shown DIFFERENT the regression is
//! "not reproduced" and nothing else is measured. Then binary search on a range known DIFFERENT:
//! compare its low end with the midpoint; SAME moves the low end up, DIFFERENT moves the high end
//! down; UNKNOWN (the step spent its pairs undecided) asks the other half instead (midpoint vs high
//! end): DIFFERENT there searches that half and leaves the first one open, SAME there puts the
//! change in the first half, UNKNOWN again leaves the whole range open. When a culprit is named,
//! the part of the range above it that was never measured is checked with one more comparison
//! (culprit vs the range's high end; not repeated when an UNKNOWN step's other half already made
//! it), and a second change found there is searched the same way (Pinpoint's refinement: every
//! range that still differs is bisected). No pair of revisions is measured twice.
//!
//! Error control: step k is tested at α_k = α / (S + 1) for k ≤ S and α / (S + 1) · 2^−(k−S)
//! beyond, where S = 1 + ⌈log₂(n − 1)⌉ + margin is the planned number of steps for n revisions; the
//! α_k sum to less than α however many steps the search takes. The equivalence level (SAME) is
//! spent the same way. A wrong culprit needs a wrong step: a range that changed by less than the
//! tolerance called DIFFERENT, or one that changed by more called SAME, so by the union bound the
//! chance of naming a wrong culprit is at most α + α_eq.

use serde::{Deserialize, Serialize};

/// What one comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Shown within the tolerance (every gated row passed).
    Same,
    /// Shown worse than the tolerance (a gated row regressed).
    Different,
    /// Neither, within the step's pairs.
    Unknown,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Same => "SAME",
            Verdict::Different => "DIFFERENT",
            Verdict::Unknown => "UNKNOWN",
        }
    }
}

/// One metric's change in a comparison (candidate vs base), from its gated row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricChange {
    pub model: String,
    pub scenario: String,
    pub metric: String,
    /// Percent change of the candidate against the base.
    pub change_pct: Option<f64>,
    /// Its confidence interval, percent.
    pub interval: Option<[f64; 2]>,
    pub tolerance_pct: Option<f64>,
    /// The row's verdict (`pass`, `regressed`, …).
    pub verdict: String,
    /// The base and the candidate revision's values (geometric means over their launches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<[f64; 2]>,
}

/// A comparison to make: revision `base` (index into the range) against revision `cand`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// 1-based step number.
    pub step: usize,
    pub base: usize,
    pub cand: usize,
    /// The step's false-DIFFERENT level (α_k).
    pub alpha: f64,
    /// The step's false-SAME level.
    pub equivalence_alpha: f64,
}

/// What a comparator found, with its evidence and its cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub verdict: Verdict,
    /// Gated rows' changes (the evidence).
    pub changes: Vec<MetricChange>,
    /// Complete pairs of launches measured.
    pub pairs: u32,
    /// Wall minutes of the engines' launches.
    pub engine_minutes: f64,
    /// Engine minutes × GPUs per engine.
    pub gpu_minutes: f64,
    /// Why the step stopped, in words.
    pub note: String,
    /// Set when the whole search must stop after this step (budget spent, engine failure,
    /// interrupted): the step is not a finished measurement and is never saved for a resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
}

/// "Compare revision i with revision j": live, scripted, or simulated.
pub trait Comparator {
    fn compare(&mut self, req: &Request) -> Comparison;
}

/// One step of the search: what was asked and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub request: Request,
    pub result: Comparison,
}

/// The error budget of a search over `n` revisions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub n: usize,
    pub alpha: f64,
    pub equivalence_alpha: f64,
    /// Steps planned beyond the end points and the bisection (a second change, UNKNOWN steps).
    pub margin: usize,
}

impl Budget {
    /// Planned steps S: the end points, ⌈log₂(n − 1)⌉ bisection steps and the margin.
    pub fn planned(&self) -> usize {
        let span = self.n.saturating_sub(1).max(1);
        let log = usize::BITS - (span - 1).leading_zeros();
        1 + log as usize + self.margin
    }

    /// The share of a level that step `k` (1-based) gets; the shares sum to less than 1.
    pub fn share(&self, k: usize) -> f64 {
        let s = self.planned();
        let base = 1.0 / (s + 1) as f64;
        if k <= s {
            base
        } else {
            base * 0.5f64.powi((k - s).min(1000) as i32)
        }
    }
}

/// A revision named as the one that made the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Culprit {
    /// Index of the culprit in the range.
    pub index: usize,
    /// The last revision shown (or inferred) without the change.
    pub previous: usize,
    /// The step (index into `steps`) of the narrowest DIFFERENT comparison containing it.
    pub evidence: usize,
}

/// A range (lo, hi] still open: a change may lie in it, not located.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Open {
    pub lo: usize,
    pub hi: usize,
    pub why: String,
}

/// How the search ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "why")]
pub enum End {
    /// The end points were not shown different (SAME, or UNKNOWN within the step's pairs).
    NotReproduced(String),
    /// Every range that differed was searched (culprits and/or open ranges).
    Done,
    /// Stopped early (budget, engine failure, interrupt); what was open is listed.
    Stopped(String),
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    pub steps: Vec<Step>,
    pub culprits: Vec<Culprit>,
    pub open: Vec<Open>,
    pub end: End,
}

/// Search `budget.n` revisions (0 = good, n − 1 = bad) for the changes between them.
pub fn run(budget: Budget, cmp: &mut dyn Comparator) -> Search {
    let mut s = Searcher {
        budget,
        cmp,
        steps: Vec::new(),
        culprits: Vec::new(),
        open: Vec::new(),
        stopped: None,
    };
    let end = s.search();
    Search {
        steps: s.steps,
        culprits: s.culprits,
        open: s.open,
        end,
    }
}

struct Searcher<'a> {
    budget: Budget,
    cmp: &'a mut dyn Comparator,
    steps: Vec<Step>,
    culprits: Vec<Culprit>,
    open: Vec<Open>,
    stopped: Option<String>,
}

impl Searcher<'_> {
    /// The verdict of a finished step that already compared `base` with `cand`.
    fn known(&self, base: usize, cand: usize) -> Option<Verdict> {
        self.steps
            .iter()
            .find(|s| s.request.base == base && s.request.cand == cand && s.result.stop.is_none())
            .map(|s| s.result.verdict)
    }

    /// Ask one comparison; `None` when the search must stop.
    fn ask(&mut self, base: usize, cand: usize) -> Option<Verdict> {
        let k = self.steps.len() + 1;
        let share = self.budget.share(k);
        let request = Request {
            step: k,
            base,
            cand,
            alpha: self.budget.alpha * share,
            equivalence_alpha: self.budget.equivalence_alpha * share,
        };
        let result = self.cmp.compare(&request);
        let verdict = result.verdict;
        let stop = result.stop.clone();
        self.steps.push(Step { request, result });
        match stop {
            Some(why) => {
                self.stopped = Some(why);
                None
            }
            None => Some(verdict),
        }
    }

    fn search(&mut self) -> End {
        let n = self.budget.n;
        if n < 2 {
            return End::NotReproduced("fewer than two revisions".into());
        }
        let Some(v) = self.ask(0, n - 1) else {
            return self.stop_open(0, n - 1);
        };
        match v {
            Verdict::Same => {
                return End::NotReproduced(
                    "the end points were shown within the tolerance (SAME)".into(),
                )
            }
            Verdict::Unknown => {
                return End::NotReproduced(
                    "the end points were not shown different within the step's pairs (UNKNOWN)"
                        .into(),
                )
            }
            Verdict::Different => {}
        }
        let mut work = vec![(0, n - 1, 0)];
        while let Some((lo, hi, ev)) = work.pop() {
            if let Some(next) = self.locate(lo, hi, ev) {
                work.push(next);
            }
            if let Some(why) = &self.stopped {
                return End::Stopped(why.clone());
            }
        }
        End::Done
    }

    /// The search ended by a stop inside (lo, hi]: that range stays open.
    fn stop_open(&mut self, lo: usize, hi: usize) -> End {
        let why = self.stopped.clone().unwrap_or_default();
        self.open.push(Open {
            lo,
            hi,
            why: format!("not searched: {why}"),
        });
        End::Stopped(why)
    }

    /// Bisect (lo, hi], known DIFFERENT by step `ev`; returns a range above the culprit that
    /// still differs, to be searched next.
    fn locate(
        &mut self,
        mut lo: usize,
        mut hi: usize,
        mut ev: usize,
    ) -> Option<(usize, usize, usize)> {
        let top = hi;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let Some(v) = self.ask(lo, mid) else {
                self.stop_open(lo, hi);
                return None;
            };
            match v {
                Verdict::Different => {
                    hi = mid;
                    ev = self.steps.len() - 1;
                }
                Verdict::Same => lo = mid,
                Verdict::Unknown => {
                    let Some(w) = self.ask(mid, hi) else {
                        self.stop_open(lo, hi);
                        return None;
                    };
                    match w {
                        Verdict::Different => {
                            self.open.push(Open {
                                lo,
                                hi: mid,
                                why: format!(
                                    "step {} was UNKNOWN: a smaller change may lie here",
                                    self.steps.len() - 1
                                ),
                            });
                            lo = mid;
                            ev = self.steps.len() - 1;
                        }
                        Verdict::Same => hi = mid,
                        Verdict::Unknown => {
                            self.open.push(Open {
                                lo,
                                hi,
                                why: format!(
                                    "steps {} and {} were UNKNOWN: the change is in this range, \
                                     not located within the pairs allowed",
                                    self.steps.len() - 1,
                                    self.steps.len()
                                ),
                            });
                            return None;
                        }
                    }
                }
            }
        }
        self.culprits.push(Culprit {
            index: hi,
            previous: lo,
            evidence: ev,
        });
        if hi == top {
            return None;
        }
        // The revisions above the culprit were never measured against it: one more comparison,
        // unless an UNKNOWN step's other half already made exactly this one.
        let v = match self.known(hi, top) {
            Some(v) => v,
            None => {
                let Some(v) = self.ask(hi, top) else {
                    self.stop_open(hi, top);
                    return None;
                };
                v
            }
        };
        match v {
            Verdict::Same => None,
            Verdict::Different => Some((hi, top, self.steps.len() - 1)),
            Verdict::Unknown => {
                self.open.push(Open {
                    lo: hi,
                    hi: top,
                    why: format!(
                        "step {} was UNKNOWN: a second change may lie here",
                        self.steps.len()
                    ),
                });
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted world: revision i has level `level[i]`; a comparison is DIFFERENT when the
    /// candidate's level exceeds the base's by more than 1, SAME when it does not exceed it at
    /// all, UNKNOWN in between (a change too small to decide) or for pairs listed in `unknown`.
    struct Script {
        level: Vec<f64>,
        unknown: Vec<(usize, usize)>,
        asked: Vec<(usize, usize)>,
        /// Stop the search at this step (budget spent).
        stop_at: Option<usize>,
    }

    impl Script {
        fn new(level: Vec<f64>) -> Script {
            Script {
                level,
                unknown: Vec::new(),
                asked: Vec::new(),
                stop_at: None,
            }
        }
    }

    impl Comparator for Script {
        fn compare(&mut self, req: &Request) -> Comparison {
            self.asked.push((req.base, req.cand));
            let d = self.level[req.cand] - self.level[req.base];
            let verdict = if self.unknown.contains(&(req.base, req.cand)) {
                Verdict::Unknown
            } else if d > 1.0 {
                Verdict::Different
            } else if d <= 0.0 {
                Verdict::Same
            } else {
                Verdict::Unknown
            };
            Comparison {
                verdict,
                changes: Vec::new(),
                pairs: 3,
                engine_minutes: 1.0,
                gpu_minutes: 1.0,
                note: String::new(),
                stop: (self.stop_at == Some(req.step)).then(|| "budget spent".to_string()),
            }
        }
    }

    fn budget(n: usize) -> Budget {
        Budget {
            n,
            alpha: 0.05,
            equivalence_alpha: 0.05,
            margin: 2,
        }
    }

    fn step_at(n: usize, at: usize, size: f64) -> Vec<f64> {
        (0..n).map(|i| if i >= at { size } else { 0.0 }).collect()
    }

    #[test]
    fn one_change_is_named_within_the_planned_steps() {
        for n in [2, 3, 5, 8, 16, 17, 100] {
            for at in 1..n {
                let mut c = Script::new(step_at(n, at, 5.0));
                let s = run(budget(n), &mut c);
                assert_eq!(s.end, End::Done, "n {n} at {at}");
                assert_eq!(s.culprits.len(), 1, "n {n} at {at}: {:?}", s.culprits);
                assert_eq!(s.culprits[0].index, at);
                assert_eq!(s.culprits[0].previous, at - 1);
                assert!(s.open.is_empty());
                // End points + ⌈log₂(n−1)⌉ + one check above the culprit, at most.
                assert!(
                    s.steps.len() < budget(n).planned(),
                    "n {n} at {at}: {:?}",
                    c.asked
                );
                let ev = &s.steps[s.culprits[0].evidence];
                assert_eq!(ev.result.verdict, Verdict::Different);
                assert!(ev.request.base < at && ev.request.cand >= at);
            }
        }
        // The case: 16 revisions, the change at 11, within 6 comparisons.
        let mut c = Script::new(step_at(16, 11, 5.0));
        let s = run(budget(16), &mut c);
        assert_eq!(s.steps.len(), 6, "{:?}", c.asked);
        assert_eq!(
            c.asked,
            vec![(0, 15), (0, 7), (7, 11), (7, 9), (9, 10), (11, 15)]
        );
    }

    #[test]
    fn two_changes_are_both_named() {
        // A small change at 5 and a large one at 11 (both decidable).
        let mut level = step_at(16, 5, 2.0);
        for l in level.iter_mut().skip(11) {
            *l = 10.0;
        }
        let mut c = Script::new(level.clone());
        let s = run(budget(16), &mut c);
        assert_eq!(s.end, End::Done);
        let named: Vec<usize> = s.culprits.iter().map(|c| c.index).collect();
        assert_eq!(named, vec![5, 11], "{:?}", c.asked);
        assert!(s.open.is_empty());
        // Too small to decide: the large one is named and the other range is left open.
        for l in level.iter_mut().take(11).skip(5) {
            *l = 0.5;
        }
        let mut c = Script::new(level);
        let s = run(budget(16), &mut c);
        let named: Vec<usize> = s.culprits.iter().map(|c| c.index).collect();
        assert_eq!(named, vec![11], "{:?}", c.asked);
        assert_eq!(s.open.len(), 1, "{:?}", s.open);
        assert!(s.open[0].lo <= 4 && s.open[0].hi >= 5, "{:?}", s.open);
    }

    #[test]
    fn no_change_is_not_reproduced_after_one_step() {
        let mut c = Script::new(vec![0.0; 16]);
        let s = run(budget(16), &mut c);
        assert!(matches!(s.end, End::NotReproduced(_)), "{:?}", s.end);
        assert!(s.culprits.is_empty());
        assert_eq!(s.steps.len(), 1);
        // An end-point comparison that stays UNKNOWN is not reproduced either.
        let mut c = Script::new(step_at(16, 3, 0.5));
        let s = run(budget(16), &mut c);
        assert!(matches!(&s.end, End::NotReproduced(w) if w.contains("UNKNOWN")));
        assert!(s.culprits.is_empty());
    }

    #[test]
    fn unknown_steps_ask_the_other_half_then_leave_the_range_open() {
        // (0, 7) undecided: (7, 15) is DIFFERENT, so the search goes on there.
        let mut c = Script::new(step_at(16, 11, 5.0));
        c.unknown = vec![(0, 7)];
        let s = run(budget(16), &mut c);
        assert_eq!(
            s.culprits.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![11]
        );
        assert_eq!(s.open.len(), 1);
        assert_eq!((s.open[0].lo, s.open[0].hi), (0, 7));
        // The change in the first half: UNKNOWN there, SAME above the midpoint: searched there.
        let mut c = Script::new(step_at(16, 3, 5.0));
        c.unknown = vec![(0, 7)];
        let s = run(budget(16), &mut c);
        assert_eq!(
            s.culprits.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![3]
        );
        assert!(c.asked.contains(&(7, 15)));
        // Both halves UNKNOWN: the narrowest range known to differ is reported open.
        let mut c = Script::new(step_at(16, 11, 5.0));
        c.unknown = vec![(7, 11), (11, 15)];
        let s = run(budget(16), &mut c);
        assert!(s.culprits.is_empty(), "{:?}", c.asked);
        assert_eq!(s.end, End::Done);
        assert_eq!((s.open[0].lo, s.open[0].hi), (7, 15), "{:?}", s.open);
    }

    #[test]
    fn no_pair_of_revisions_is_measured_twice() {
        // The CPU engine's case (8 revisions, the change at 6): the step (5, 6) stays UNKNOWN, its
        // other half (6, 7) is SAME, so 6 is named, and (6, 7) is the check above the culprit.
        let mut c = Script::new(step_at(8, 6, 5.0));
        c.unknown = vec![(5, 6)];
        let s = run(budget(8), &mut c);
        assert_eq!(
            s.culprits.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![6]
        );
        assert_eq!(c.asked, vec![(0, 7), (0, 3), (3, 5), (5, 6), (6, 7)]);
        // Every single UNKNOWN, anywhere, for every change point: no pair asked twice, and the
        // search stays within its planned steps.
        for n in [3, 5, 8, 16, 17] {
            for at in 1..n {
                for u in 0..n {
                    for v in u + 1..n {
                        let mut c = Script::new(step_at(n, at, 5.0));
                        c.unknown = vec![(u, v)];
                        let s = run(budget(n), &mut c);
                        let mut seen = c.asked.clone();
                        seen.sort();
                        seen.dedup();
                        assert_eq!(seen.len(), c.asked.len(), "n {n} at {at}: {:?}", c.asked);
                        assert!(
                            s.steps.len() <= budget(n).planned(),
                            "n {n} at {at} unknown ({u}, {v}): {:?}",
                            c.asked
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_stop_ends_the_search_with_the_range_open() {
        let mut c = Script::new(step_at(16, 11, 5.0));
        c.stop_at = Some(3);
        let s = run(budget(16), &mut c);
        assert_eq!(s.end, End::Stopped("budget spent".into()));
        assert_eq!(s.steps.len(), 3);
        assert!(s.culprits.is_empty());
        assert_eq!((s.open[0].lo, s.open[0].hi), (7, 15), "{:?}", s.open);
    }

    #[test]
    fn the_levels_are_spent_within_alpha() {
        let b = budget(16);
        assert_eq!(b.planned(), 1 + 4 + 2);
        assert_eq!(budget(17).planned(), 1 + 4 + 2);
        assert_eq!(budget(18).planned(), 1 + 5 + 2);
        assert_eq!(budget(2).planned(), 1 + 2);
        let total: f64 = (1..40).map(|k| b.share(k)).sum();
        assert!(total < 1.0 && total > 0.99, "{total}");
        assert!((b.share(1) - 1.0 / 8.0).abs() < 1e-12);
        assert!((b.share(8) - 1.0 / 16.0).abs() < 1e-12);
        let mut c = Script::new(step_at(16, 11, 5.0));
        let s = run(b, &mut c);
        assert!((s.steps[0].request.alpha - 0.05 / 8.0).abs() < 1e-12);
    }
}
