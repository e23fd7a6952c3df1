//! Decision quality of `perfgate bisect`, simulated on the noise of recorded engine launches.
//!
//! `cargo run --release --example bisect-sim -- [--trials N] [--revisions N] [--at K] [--slower PCT]
//! [--max-pairs N] [--seed S] [--unchanged-only]`
//!
//! The same search as `perfgate bisect` ([`perfgate::bisect::search`]) runs against a simulated
//! comparator: every step is a sequential paired A/B comparison judged as `perfgate ab` judges
//! it ([`perfgate::gate::replay::sequential_ab`], at the step's α), whose pairs are a fresh random
//! permutation of a corpus of unchanged launches of one engine cut into pairs (each launch at most
//! once per step, so a step has at most half the corpus's launches as pairs: 4 on the GPU corpus);
//! a revision at or after the change has its launches made slower by `--slower` percent
//! (throughputs × (1 − p), latencies ÷ (1 − p)). Corpora: the GPU corpus
//! (`tests/data/gpu-llamacpp-h100`, 8 launches, its suite's `[gate]`) and the CPU corpus
//! (`tests/data/cpu-llamacpp`, 16 launches in two sessions, `suites/cpu-llamacpp.toml`'s
//! `[gate]`). Printed per corpus: for an unchanged range, the share of bisects that end "not
//! reproduced" (no culprit); for a change at `--at`, the share that name it, that name a wrong
//! revision, the mean steps and the mean launches.

use std::path::Path;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use perfgate::bisect::search::{self, Budget, Comparator, Comparison, End, Request, Verdict};
use perfgate::gate::replay::{sequential_ab, Change, Launch};
use perfgate::gate::{GateConfig, TopVerdict};
use perfgate::record::{read_jsonl, Arm, ScenarioResult};

struct Sim<'a> {
    launches: &'a [Launch],
    cfg: &'a GateConfig,
    /// The first changed revision, if any.
    at: Option<usize>,
    slower: f64,
    max_pairs: u32,
    rng: StdRng,
}

impl Comparator for Sim<'_> {
    fn compare(&mut self, req: &Request) -> Comparison {
        let changed = |rev: usize| self.at.is_some_and(|a| rev >= a);
        let change = |rev: usize| {
            if changed(rev) {
                Change::Slower {
                    pct: self.slower,
                    scenario: None,
                }
            } else {
                Change::None
            }
        };
        let (cb, cc) = (change(req.base), change(req.cand));
        let cfg = GateConfig {
            alpha: Some(req.alpha),
            equivalence_alpha: Some(req.equivalence_alpha),
            ..self.cfg.clone()
        };
        // Each launch at most once per comparison (as `replay` cuts a permutation into pairs):
        // a launch drawn twice would make pairs dependent and the test anti-conservative.
        let mut order: Vec<usize> = (0..self.launches.len()).collect();
        order.shuffle(&mut self.rng);
        let launches = self.launches;
        let max_pairs = self.max_pairs.min((launches.len() / 2) as u32);
        let mut pair = |p: u32| -> Vec<ScenarioResult> {
            let (a, b) = (order[2 * p as usize], order[2 * p as usize + 1]);
            let tag = |r: &ScenarioResult, arm: Arm, ch: &Change| {
                let mut r = ch.apply(r);
                r.arm = Some(arm);
                r.pair = Some(p);
                r
            };
            let mut out: Vec<ScenarioResult> = launches[a]
                .records
                .iter()
                .map(|r| tag(r, Arm::Base, &cb))
                .collect();
            out.extend(
                launches[b]
                    .records
                    .iter()
                    .map(|r| tag(r, Arm::Candidate, &cc)),
            );
            out
        };
        let end = sequential_ab(&mut pair, max_pairs, &cfg);
        Comparison {
            verdict: match end.verdict {
                TopVerdict::Pass => Verdict::Same,
                TopVerdict::Fail => Verdict::Different,
                _ => Verdict::Unknown,
            },
            changes: Vec::new(),
            pairs: end.pairs,
            engine_minutes: 0.0,
            gpu_minutes: 0.0,
            note: String::new(),
            stop: None,
        }
    }
}

#[derive(Default)]
struct Tally {
    trials: usize,
    not_reproduced: usize,
    right: usize,
    wrong: usize,
    steps: usize,
    pairs: u64,
}

fn load(dir: &Path, names: &[String]) -> Vec<Launch> {
    names
        .iter()
        .map(|n| {
            let p = dir.join(format!("{n}.jsonl"));
            Launch::new(n, read_jsonl(&p).unwrap_or_else(|e| panic!("{e}")))
        })
        .collect()
}

fn gate_of(path: &Path) -> GateConfig {
    perfgate::baseline::Baseline::load(path)
        .unwrap_or_else(|e| panic!("{e}"))
        .gate
        .unwrap_or_default()
}

struct Args {
    trials: usize,
    n: usize,
    at: usize,
    slower: f64,
    max_pairs: u32,
    seed: u64,
    /// Only the unchanged range (the false "culprit" rate), not the search for a change.
    unchanged_only: bool,
}

fn run(launches: &[Launch], cfg: &GateConfig, a: &Args, at: Option<usize>) -> Tally {
    let mut t = Tally::default();
    let budget = Budget {
        n: a.n,
        alpha: cfg.alpha(),
        equivalence_alpha: cfg.equivalence_alpha(),
        margin: 2,
    };
    for trial in 0..a.trials {
        let mut sim = Sim {
            launches,
            cfg,
            at,
            slower: a.slower,
            max_pairs: a.max_pairs,
            rng: StdRng::seed_from_u64(a.seed ^ (trial as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        };
        let s = search::run(budget, &mut sim);
        t.trials += 1;
        t.steps += s.steps.len();
        t.pairs += s
            .steps
            .iter()
            .map(|s| u64::from(s.result.pairs))
            .sum::<u64>();
        t.not_reproduced += usize::from(matches!(s.end, End::NotReproduced(_)));
        for c in &s.culprits {
            if Some(c.index) == at {
                t.right += 1;
            } else {
                t.wrong += 1;
            }
        }
    }
    t
}

fn pct(a: usize, b: usize) -> String {
    format!("{:.1} %", 100.0 * a as f64 / b.max(1) as f64)
}

fn main() {
    let mut a = Args {
        trials: 200,
        n: 16,
        at: 11,
        slower: 20.0,
        max_pairs: 10,
        seed: 1,
        unchanged_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        if f == "--unchanged-only" {
            a.unchanged_only = true;
            continue;
        }
        let mut v = || it.next().unwrap_or_else(|| panic!("{f} needs a value"));
        match f.as_str() {
            "--trials" => a.trials = v().parse().expect("--trials N"),
            "--revisions" => a.n = v().parse().expect("--revisions N"),
            "--at" => a.at = v().parse().expect("--at K"),
            "--slower" => a.slower = v().parse().expect("--slower PCT"),
            "--max-pairs" => a.max_pairs = v().parse().expect("--max-pairs N"),
            "--seed" => a.seed = v().parse().expect("--seed S"),
            other => panic!("unknown argument {other}"),
        }
    }
    assert!(
        a.n >= 2 && a.at >= 1 && a.at < a.n,
        "need 1 <= --at < --revisions"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let names = |s: &str| s.split(',').map(String::from).collect::<Vec<_>>();
    let cpu: Vec<String> = (1..=8)
        .flat_map(|i| [format!("s1-same-l{i}"), format!("s2-same-l{i}")])
        .collect();
    let corpora = [
        (
            "GPU llama.cpp (H100)",
            load(
                &root.join("tests/data/gpu-llamacpp-h100"),
                &names("rec,aa,aa1,l1,l2,l3,l4,l5"),
            ),
            gate_of(&root.join("tests/data/gpu-llamacpp-h100/suite-and-baseline.toml")),
        ),
        (
            "CPU llama.cpp",
            load(&root.join("tests/data/cpu-llamacpp"), &cpu),
            gate_of(&root.join("suites/cpu-llamacpp.toml")),
        ),
    ];
    println!(
        "bisect-sim: {} revisions, change at {} ({} % slower), ≤ {} pairs a step, {} trials, seed {}",
        a.n, a.at, a.slower, a.max_pairs, a.trials, a.seed
    );
    println!("| corpus | unchanged: not reproduced | unchanged: mean pairs | change: named | change: wrong culprit | change: mean steps | change: mean pairs |");
    println!("|---|--:|--:|--:|--:|--:|--:|");
    for (name, launches, cfg) in &corpora {
        let same = run(launches, cfg, &a, None);
        let changed = if a.unchanged_only {
            Tally::default()
        } else {
            run(launches, cfg, &a, Some(a.at))
        };
        println!(
            "| {name} | {} | {:.1} | {} | {} | {:.2} | {:.1} |",
            pct(same.not_reproduced, same.trials),
            same.pairs as f64 / same.trials as f64,
            pct(changed.right, changed.trials),
            pct(changed.wrong, changed.trials),
            changed.steps as f64 / changed.trials as f64,
            changed.pairs as f64 / changed.trials as f64,
        );
    }
}
