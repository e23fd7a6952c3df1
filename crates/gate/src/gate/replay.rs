//! Decision quality measured on recorded launches (replay): split the launches of one engine
//! into a baseline and a candidate many ways to count false alarms and passes on an unchanged
//! engine, and apply a known change to the candidate's launches to count detections. Pure: it
//! only calls [`super::evaluate`]; `examples/replay.rs` reads a corpus and prints the tables.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::config::{GateConfig, MetricClass};
use super::verdict::Scope;
use super::{evaluate, Inputs, Report, TopVerdict, Verdict};
use crate::record::ScenarioResult;

mod splits;

#[cfg(test)]
use splits::{choose, LIST_AT_MOST};
use splits::{members, sessions_of};
pub use splits::{new_session_splits, session_splits, splits};

/// One recorded engine launch.
#[derive(Debug, Clone)]
pub struct Launch {
    pub name: String,
    pub records: Vec<ScenarioResult>,
}

impl Launch {
    /// A launch from its records, stamping them with its name as their launch id.
    pub fn new(name: &str, mut records: Vec<ScenarioResult>) -> Launch {
        for r in &mut records {
            r.run_in_launch.get_or_insert(r.run_index);
            r.launch_id = Some(name.to_string());
        }
        Launch {
            name: name.to_string(),
            records,
        }
    }

    /// The recording session of the launch (its first record's).
    fn session(&self) -> Option<String> {
        self.records.first().and_then(|r| r.session_id.clone())
    }
}

/// One way to split launches: the baseline's and the candidate's, as indices.
pub type Split = (Vec<usize>, Vec<usize>);

/// A known change applied to the candidate's launches.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    None,
    /// The engine is slower by `pct` percent: throughputs × (1 − pct/100), durations and every
    /// latency statistic ÷ (1 − pct/100). `scenario`: only that scenario id, else all.
    Slower {
        pct: f64,
        scenario: Option<String>,
    },
    /// One latency metric family (e.g. `ttft`) × (1 + pct/100); `scenario` as above.
    Latency {
        metric: String,
        pct: f64,
        scenario: Option<String>,
    },
}

impl Change {
    pub fn apply(&self, r: &ScenarioResult) -> ScenarioResult {
        let mut r = r.clone();
        let hits = |s: &Option<String>, r: &ScenarioResult| {
            s.as_ref().is_none_or(|id| *id == r.scenario_id())
        };
        match self {
            Change::None => {}
            Change::Slower { pct, scenario } if hits(scenario, &r) => {
                let f = 1.0 - pct / 100.0;
                r.output_throughput *= f;
                r.request_throughput *= f;
                for v in [
                    &mut r.total_token_throughput,
                    &mut r.input_throughput,
                    &mut r.request_goodput,
                    &mut r.max_output_tokens_per_s,
                ]
                .into_iter()
                .flatten()
                {
                    *v *= f;
                }
                r.duration /= f;
                for v in r.stats.values_mut() {
                    *v /= f;
                }
            }
            Change::Latency {
                metric,
                pct,
                scenario,
            } if hits(scenario, &r) => {
                let tag = format!("_{metric}_ms");
                for (k, v) in r.stats.iter_mut() {
                    if k.ends_with(&tag) {
                        *v *= 1.0 + pct / 100.0;
                    }
                }
            }
            _ => {}
        }
        r
    }
}

/// Launches per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Design {
    pub n_base: usize,
    pub n_cur: usize,
}

/// Counts over the replayed checks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    pub checks: usize,
    /// Checks whose top verdict was FAIL.
    pub failed: usize,
    /// Gated rows and engine-wide tests, by verdict.
    pub rows: usize,
    pub pass: usize,
    pub regressed: usize,
    pub inconclusive: usize,
    pub improved: usize,
    /// Per metric class (and the engine-wide tests): (rows, pass, regressed).
    pub by_class: Vec<(String, usize, usize, usize)>,
    /// Per (scenario, metric) of the gated rows: (rows, pass).
    pub by_row: Vec<((String, String), usize, usize)>,
}

impl Tally {
    fn add(&mut self, rep: &Report) {
        self.checks += 1;
        self.failed += usize::from(rep.verdict == TopVerdict::Fail);
        for r in rep
            .rows
            .iter()
            .filter(|r| r.gated && r.metric != "success_rate")
        {
            self.rows += 1;
            let (p, g) = (r.verdict == Verdict::Pass, r.verdict == Verdict::Regressed);
            self.pass += usize::from(p);
            self.regressed += usize::from(g);
            self.inconclusive += usize::from(r.verdict == Verdict::Inconclusive);
            self.improved += usize::from(r.verdict == Verdict::Improved);
            let key = (r.scenario.clone(), r.metric.clone());
            match self.by_row.iter_mut().find(|x| x.0 == key) {
                Some(x) => {
                    x.1 += 1;
                    x.2 += usize::from(p);
                }
                None => self.by_row.push((key, 1, usize::from(p))),
            }
            let class = class_name(r.scope(), &r.metric);
            match self.by_class.iter_mut().find(|c| c.0 == class) {
                Some(c) => {
                    c.1 += 1;
                    c.2 += usize::from(p);
                    c.3 += usize::from(g);
                }
                None => self
                    .by_class
                    .push((class, 1, usize::from(p), usize::from(g))),
            }
        }
    }

    pub fn fail_rate(&self) -> f64 {
        ratio(self.failed, self.checks)
    }

    pub fn pass_share(&self) -> f64 {
        ratio(self.pass, self.rows)
    }

    /// The share of checks whose row (`scenario`, `metric`) passed.
    pub fn row_pass_rate(&self, scenario: &str, metric: &str) -> f64 {
        self.by_row
            .iter()
            .find(|x| x.0 .0 == scenario && x.0 .1 == metric)
            .map_or(0.0, |x| ratio(x.2, x.1))
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn class_name(scope: Scope, metric: &str) -> String {
    let c = match MetricClass::of(metric) {
        MetricClass::Throughput => "throughput",
        MetricClass::Central => "central latency",
        MetricClass::Tail => "tail latency",
        MetricClass::Other => "other",
    };
    if scope != Scope::Scenario {
        format!("engine-wide {c}")
    } else {
        c.to_string()
    }
}

/// Checks of the given splits, decided once, the candidate's launches changed by `change`.
pub fn replay_splits(
    launches: &[Launch],
    splits: &[Split],
    change: &Change,
    cfg: &GateConfig,
) -> Tally {
    replay_confirmed_on(launches, splits, change, cfg, 0, 0)
}

/// Replay checks of `launches` under design `d`, the candidate's launches changed by `change`.
pub fn replay(
    launches: &[Launch],
    d: Design,
    change: &Change,
    cfg: &GateConfig,
    max_splits: usize,
    seed: u64,
) -> Tally {
    replay_confirmed(launches, d, change, cfg, max_splits, seed, 0)
}

/// [`replay`] as `perfgate check --confirm N` decides: a check that FAILs takes `confirm` more
/// candidate launches (drawn, seeded, from the launches in neither side, changed the same way)
/// and is decided again ([`super::confirm`]). Designs that leave fewer than `confirm` launches
/// over are skipped (no checks).
pub fn replay_confirmed(
    launches: &[Launch],
    d: Design,
    change: &Change,
    cfg: &GateConfig,
    max_splits: usize,
    seed: u64,
    confirm: usize,
) -> Tally {
    if d.n_base + d.n_cur + confirm > launches.len() {
        return Tally::default();
    }
    let sp = splits(launches.len(), d, max_splits, seed);
    replay_confirmed_on(launches, &sp, change, cfg, seed, confirm)
}

/// [`replay_confirmed`] over the given splits (e.g. [`session_splits`]); a split that leaves
/// fewer than `confirm` launches over for a FAIL's confirmation is skipped.
pub fn replay_confirmed_on(
    launches: &[Launch],
    splits: &[Split],
    change: &Change,
    cfg: &GateConfig,
    seed: u64,
    confirm: usize,
) -> Tally {
    let mut t = Tally::default();
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed_c0f1);
    let side = |idx: &[usize], changed: bool| side(launches, idx, changed.then_some(change));
    for (b, c) in splits {
        if b.len() + c.len() + confirm > launches.len() {
            continue;
        }
        let (base, cur) = (side(b, false), side(c, true));
        let rep = evaluate(Inputs {
            kind: "replay",
            ..Inputs::new(&base, &cur, cfg)
        });
        if confirm == 0 || rep.verdict != TopVerdict::Fail {
            t.add(&rep);
            continue;
        }
        let rest = confirmation_order(launches, b, c, &mut rng);
        let more: Vec<usize> = c.iter().chain(&rest[..confirm]).copied().collect();
        let all = side(&more, true);
        let again = evaluate(Inputs {
            kind: "replay",
            ..Inputs::new(&base, &all, cfg)
        });
        t.add(&super::confirm(&rep, again, confirm as u32));
    }
    t
}

/// The launches in neither side, in the order a replayed check draws its confirmation launches:
/// a live check launches them in its own session, so first those of the session of the
/// candidate's last launch, then the others, each group in a seeded random order. (Drawn from
/// any session, a confirmation launch of another sitting confirmed a disturbed candidate launch
/// that one of its own session did not: on the llama.cpp CPU corpus, 1,087 of 1,220 against 0 of
/// 1,041 at 8 × 1.)
fn confirmation_order(
    launches: &[Launch],
    base: &[usize],
    cand: &[usize],
    rng: &mut StdRng,
) -> Vec<usize> {
    let mut rest: Vec<usize> = (0..launches.len())
        .filter(|i| !base.contains(i) && !cand.contains(i))
        .collect();
    rest.shuffle(rng);
    let now = cand.last().and_then(|&i| launches[i].session());
    rest.sort_by_key(|&i| launches[i].session() != now); // stable: keeps the seeded order within each
    rest
}

/// [`replay`] as `perfgate check --results --confirm N` decides records already measured: each
/// check holds the candidate's last `hold` launches back as the confirmation of a FAIL
/// ([`super::confirm_held_out`]). `hold` 0 is [`replay`].
pub fn replay_held_out(
    launches: &[Launch],
    d: Design,
    change: &Change,
    cfg: &GateConfig,
    max_splits: usize,
    seed: u64,
    hold: u32,
) -> Tally {
    let sp = splits(launches.len(), d, max_splits, seed);
    replay_held_out_on(launches, &sp, change, cfg, hold)
}

/// [`replay_held_out`] over the given splits (e.g. [`session_splits`]).
pub fn replay_held_out_on(
    launches: &[Launch],
    splits: &[Split],
    change: &Change,
    cfg: &GateConfig,
    hold: u32,
) -> Tally {
    let mut t = Tally::default();
    for (b, c) in splits {
        let (base, cur) = (side(launches, b, None), side(launches, c, Some(change)));
        let input = Inputs {
            kind: "replay",
            ..Inputs::new(&base, &cur, cfg)
        };
        t.add(&super::confirm_held_out(input, hold));
    }
    t
}

/// The records of the launches `idx`, changed by `change` where given.
pub fn side(launches: &[Launch], idx: &[usize], change: Option<&Change>) -> Vec<ScenarioResult> {
    idx.iter()
        .flat_map(|&i| {
            launches[i].records.iter().map(move |r| match change {
                Some(c) => c.apply(r),
                None => r.clone(),
            })
        })
        .collect()
}

/// How one sequential A/B comparison ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AbEnd {
    pub verdict: TopVerdict,
    /// Pairs made before it stopped.
    pub pairs: u32,
    /// Gated rows (success rule aside) and how many of them passed, at the last look.
    pub rows: usize,
    pub pass: usize,
}

/// One A/B comparison as `perfgate ab` runs it: `pair(p)` gives both arms' records of pair `p`
/// (arm and pair set); after each pair the records are judged at look p + 1 of `max_pairs`
/// ([`super::paired::at_look`]) and the comparison stops as `perfgate ab` stops
/// ([`super::paired::stop`]: decided, or no open row decidable within `max_pairs`).
pub fn sequential_ab(
    pair: &mut dyn FnMut(u32) -> Vec<ScenarioResult>,
    max_pairs: u32,
    cfg: &GateConfig,
) -> AbEnd {
    let mut recs = Vec::new();
    let mut end = AbEnd {
        verdict: TopVerdict::Inconclusive,
        pairs: 0,
        rows: 0,
        pass: 0,
    };
    for p in 0..max_pairs {
        recs.extend(pair(p));
        let look = super::Look {
            k: p + 1,
            of: max_pairs,
        };
        let rep = super::paired::at_look(&recs, &[], cfg, look, "replay");
        let gated = rep
            .rows
            .iter()
            .filter(|r| r.gated && r.metric != "success_rate");
        end = AbEnd {
            verdict: rep.verdict,
            pairs: p + 1,
            rows: gated.clone().count(),
            pass: gated.filter(|r| r.verdict == Verdict::Pass).count(),
        };
        if super::paired::stop(&rep, look).is_some() {
            break;
        }
    }
    end
}

/// Counts over replayed A/B comparisons.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AbTally {
    pub checks: usize,
    pub failed: usize,
    pub passed: usize,
    /// Σ pairs made, for the mean.
    pub pairs: u64,
    /// Σ pairs of the comparisons that failed.
    pub pairs_failed: u64,
    /// Gated rows at the last look and their passes.
    pub rows: usize,
    pub pass_rows: usize,
}

impl AbTally {
    pub fn add(&mut self, e: &AbEnd) {
        self.checks += 1;
        self.pairs += u64::from(e.pairs);
        if e.verdict == TopVerdict::Fail {
            self.failed += 1;
            self.pairs_failed += u64::from(e.pairs);
        }
        self.passed += usize::from(e.verdict == TopVerdict::Pass);
        self.rows += e.rows;
        self.pass_rows += e.pass;
    }

    pub fn fail_rate(&self) -> f64 {
        ratio(self.failed, self.checks)
    }

    pub fn pass_rate(&self) -> f64 {
        ratio(self.passed, self.checks)
    }

    pub fn mean_pairs(&self) -> f64 {
        self.pairs as f64 / self.checks.max(1) as f64
    }

    /// Mean pairs of the comparisons that failed (the pairs to a detection).
    pub fn mean_pairs_to_fail(&self) -> f64 {
        self.pairs_failed as f64 / self.failed.max(1) as f64
    }
}

/// Replay A/B comparisons of recorded launches of one engine: each seeded permutation of the
/// launches is cut into pairs (launches 1–2, 3–4, …; ABBA: the first of a pair is the base in
/// pairs 1, 3, …, the candidate in pairs 2, 4, …), the candidate's records changed by `change`,
/// and judged as `perfgate ab` judges them with up to `max_pairs` pairs.
pub fn replay_ab(
    launches: &[Launch],
    max_pairs: u32,
    change: &Change,
    cfg: &GateConfig,
    perms: usize,
    seed: u64,
) -> AbTally {
    let all: Vec<usize> = (0..launches.len()).collect();
    replay_ab_from(launches, &[all], max_pairs, change, cfg, perms, seed)
}

/// [`replay_ab`] as a live `perfgate ab` runs: every pair of a comparison from one recording
/// session (its arms take turns in one sitting), the permutations spread evenly over the
/// sessions that hold `2 · max_pairs` launches. Pairing across sessions, as [`replay_ab`] does,
/// puts the sessions' offset into the pairs' differences.
pub fn replay_ab_in_sessions(
    launches: &[Launch],
    max_pairs: u32,
    change: &Change,
    cfg: &GateConfig,
    perms: usize,
    seed: u64,
) -> AbTally {
    let groups: Vec<Vec<usize>> = sessions_of(launches)
        .iter()
        .map(|s| members(launches, s))
        .collect();
    replay_ab_from(launches, &groups, max_pairs, change, cfg, perms, seed)
}

/// `perms` comparisons, the k-th drawing its pairs from a seeded permutation of the
/// (k mod n)-th of the `groups` large enough for `max_pairs` pairs.
fn replay_ab_from(
    launches: &[Launch],
    groups: &[Vec<usize>],
    max_pairs: u32,
    change: &Change,
    cfg: &GateConfig,
    perms: usize,
    seed: u64,
) -> AbTally {
    let mut t = AbTally::default();
    let need = 2 * max_pairs as usize;
    let mut groups: Vec<Vec<usize>> = groups.iter().filter(|g| g.len() >= need).cloned().collect();
    if groups.is_empty() || max_pairs == 0 {
        return t;
    }
    let mut rng = StdRng::seed_from_u64(seed);
    for k in 0..perms {
        let n = groups.len();
        let order = &mut groups[k % n];
        order.shuffle(&mut rng);
        let mut pair = |p: u32| -> Vec<ScenarioResult> {
            let (first, second) = (order[2 * p as usize], order[2 * p as usize + 1]);
            let (b, c) = if p.is_multiple_of(2) {
                (first, second)
            } else {
                (second, first)
            };
            let tag = |r: &ScenarioResult, arm: crate::record::Arm| {
                let mut r = r.clone();
                r.arm = Some(arm);
                r.pair = Some(p);
                r
            };
            let mut out: Vec<ScenarioResult> = launches[b]
                .records
                .iter()
                .map(|r| tag(r, crate::record::Arm::Base))
                .collect();
            out.extend(
                launches[c]
                    .records
                    .iter()
                    .map(|r| tag(&change.apply(r), crate::record::Arm::Candidate)),
            );
            out
        };
        t.add(&sequential_ab(&mut pair, max_pairs, cfg));
    }
    t
}

#[cfg(test)]
mod tests;
