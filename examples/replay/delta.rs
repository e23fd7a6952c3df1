//! `--delta-only` and the default run's worse-by-δ tables: a row made worse by exactly its
//! tolerance, on random, session and new-session splits.

use perfgate::gate::replay::{
    new_session_splits, replay_splits, session_splits, splits, Change, Design, Launch, Tally,
};
use perfgate::gate::GateConfig;

use crate::util::{pct, ratio, wilson, SplitFn};

/// A row made worse by exactly its tolerance must rarely pass (its pass bound is one-sided at
/// `equivalence_alpha`, 5 %): per scenario, the candidate's throughput × 0.95 (δ 5 %) or its median
/// TTFT × 1.10 (δ 10 %) in that scenario only, and the share of checks that row passes.
pub(crate) fn worse_by_delta(
    a: &[Launch],
    scenarios: &[String],
    cfg: &GateConfig,
    max_splits: usize,
    candidates: &[String],
) {
    println!();
    println!("a row worse by exactly δ: share of checks in which it PASSes (should be ≤ 5 %):");
    if candidates.is_empty() {
        let random = |d: Design, seed: u64| splits(a.len(), d, max_splits, seed);
        delta_table(a, scenarios, cfg, &random, (5, 6));
    } else {
        println!(
            "(candidates only of the sessions {})",
            candidates.join(", ")
        );
    }
    // The same on session splits (each side all of one session, the candidate's another) and
    // on new-session splits (a baseline over ≥ 2 sessions, the candidate's another).
    let by_session = |d: Design, seed: u64| session_splits(a, d, max_splits, seed, candidates);
    let new_session = |d: Design, seed: u64| new_session_splits(a, d, max_splits, seed, candidates);
    let kinds: [(SplitFn<'_>, &str, (u64, u64)); 2] = [
        (&by_session, "session splits (the baseline's launches of one session, the candidate's of another)", (7, 7)),
        (&new_session, "new-session splits (the baseline's launches spanning ≥ 2 sessions, the candidate's of another)", (9, 9)),
    ];
    for (split, what, seeds) in kinds {
        if split(DELTA_DESIGNS[0], 0).is_empty() {
            return;
        }
        println!();
        println!("the same on {what}:");
        delta_table(a, scenarios, cfg, split, seeds);
    }
}

pub(crate) const DELTA_DESIGNS: [Design; 3] = [
    Design {
        n_base: 2,
        n_cur: 2,
    },
    Design {
        n_base: 3,
        n_cur: 3,
    },
    Design {
        n_base: 5,
        n_cur: 3,
    },
];

/// One worse-by-δ table over the splits `split` draws (seeded `seeds.0` for the throughput row,
/// `seeds.1` for the TTFT row): per scenario and design, the share of checks in which the row
/// passes, with Wilson's 95 % interval and the checks behind it.
pub(crate) fn delta_table(
    a: &[Launch],
    scenarios: &[String],
    cfg: &GateConfig,
    split: SplitFn<'_>,
    seeds: (u64, u64),
) {
    // The share with Wilson's 95 % interval, from the row's (rows, pass) counts.
    let share = |t: &Tally, s: &str, metric: &str| -> String {
        let Some(&(_, n, k)) = t.by_row.iter().find(|x| x.0 .0 == *s && x.0 .1 == metric) else {
            return "–".into();
        };
        let (lo, hi) = wilson(k, n);
        format!("{} ({} – {}; {n})", pct(ratio(k, n)), pct(lo), pct(hi))
    };
    println!();
    println!("| scenario | design | output_throughput × 0.95: PASS (95 % interval; checks) | median_ttft_ms × 1.10: PASS (95 % interval; checks) |");
    println!("|---|---|--:|--:|");
    for s in scenarios {
        let thr = Change::Slower {
            pct: 5.0,
            scenario: Some(s.clone()),
        };
        let ttft = Change::Latency {
            metric: "ttft".into(),
            pct: 10.0,
            scenario: Some(s.clone()),
        };
        for d in DELTA_DESIGNS {
            let t = replay_splits(a, &split(d, seeds.0), &thr, cfg);
            let l = replay_splits(a, &split(d, seeds.1), &ttft, cfg);
            let (t, l) = (
                share(&t, s, "output_throughput"),
                share(&l, s, "median_ttft_ms"),
            );
            println!("| {s} | {} × {} | {t} | {l} |", d.n_base, d.n_cur);
        }
    }
}
