//! Decision quality of the gate on recorded real launches (replay).
//!
//! `cargo run --release --example replay -- [DIR] [--unchanged a,b,…] [--changed x,…] [--splits N] [--gate FILE] [--alarms-only [--confirm N] | --offline N | --delta-only | --ab | --effect METRIC:PCT:SCENARIO] [--by-session | --new-session]`
//!
//! DIR holds one JSON Lines file of records per engine launch (default: the GPU corpus in
//! `tests/data/gpu-llamacpp-h100/`, llama.cpp with CUDA on one H100; its README says which file
//! is which engine). For each design (launches of baseline × candidate) it replays checks of the
//! unchanged engine's launches split into baseline and candidate every way (or a seeded sample of
//! `--splits`), under the default gate settings or a `--gate FILE`, and prints:
//! - false alarms: the share of checks whose verdict is FAIL;
//! - pass: the share of gated rows and engine-wide tests that PASS, per class;
//! - power: the share of checks that FAIL when the candidate's launches are made slower by a
//!   known factor, uniformly (engine-wide) or in one scenario;
//!
//! (`--alarms-only`: the false alarms alone, with their 95 % interval, as decided once and, with
//! `--confirm N`, as `check --confirm N` decides; `--offline N`: the same as `check --results
//! --confirm N` decides records already measured, each check's last N candidate launches held
//! back as the confirmation; `--delta-only`: the worse-by-δ tables alone, on random, session
//! and new-session splits; `--effect`: a known
//! change of one latency family in one scenario, applied to the candidate's launches, caught
//! or not per design up to all launches; `--by-session` with `--alarms-only` or `--offline`:
//! session splits instead of random ones, each side all of one recording session;
//! `--new-session`: the candidate all of one session, the baseline from the others spanning at
//! least two, as a baseline recorded over sittings and checked in a new one; `--ab`: the
//! `perfgate ab` table alone, its pairs drawn across sessions and, as a live `ab` runs, within
//! one)
//! then the same for `perfgate ab` (paired, sequential): each seeded permutation of the unchanged
//! launches cut into pairs of base and candidate (ABBA), judged after each pair until decided or
//! out of pairs, with the mean pairs it took; then checks each changed engine's launches (default
//! `b2`) against a baseline of all unchanged ones, as `perfgate check` would.

use std::path::{Path, PathBuf};

use perfgate::gate::noise::Launches;
use perfgate::gate::replay::{
    new_session_splits, replay, replay_ab, replay_ab_in_sessions, replay_confirmed_on,
    replay_held_out_on, replay_splits, session_splits, side, splits, AbTally, Change, Design,
    Launch, Split, Tally,
};
use perfgate::gate::{confirm_held_out, evaluate, GateConfig, Inputs, TopVerdict, Verdict};
use perfgate::record::{read_jsonl, ScenarioResult};

fn load(dir: &Path, names: &[String]) -> Vec<Launch> {
    names
        .iter()
        .map(|n| {
            let p = dir.join(format!("{n}.jsonl"));
            let recs = read_jsonl(&p).unwrap_or_else(|e| panic!("{e}"));
            Launch::new(n, recs)
        })
        .collect()
}

fn list(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// Pearson correlation of two equally long series.
fn corr(a: &[f64], b: &[f64]) -> f64 {
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (m(a), m(b));
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let ss = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    cov / (ss(a, ma) * ss(b, mb)).sqrt()
}

/// Per engine-wide metric, the correlation of the launches' values between every two scenarios
/// (what `examples/gate-sim.rs` takes as its shared launch effect), and their mean over all.
fn launch_correlations(a: &[Launch], scenarios: &[String], cfg: &GateConfig) {
    let recs: Vec<&ScenarioResult> = a.iter().flat_map(|l| &l.records).collect();
    let mut all = Vec::new();
    for metric in cfg.engine_wide_list() {
        let series: Vec<Launches> = scenarios
            .iter()
            .filter_map(|s| {
                let mine: Vec<&ScenarioResult> = recs
                    .iter()
                    .copied()
                    .filter(|r| r.scenario_id() == *s)
                    .collect();
                Launches::of(&mine, &metric).ok()
            })
            .collect();
        let mut rs = Vec::new();
        for i in 0..series.len() {
            for j in i + 1..series.len() {
                // The launches both scenarios have, in one order.
                let (x, y): (Vec<f64>, Vec<f64>) = series[i]
                    .keys
                    .iter()
                    .zip(&series[i].values)
                    .filter_map(|(k, v)| {
                        let at = series[j].keys.iter().position(|q| q == k)?;
                        Some((*v, series[j].values[at]))
                    })
                    .unzip();
                if x.len() >= 3 {
                    rs.push(corr(&x, &y));
                }
            }
        }
        let shown: Vec<String> = rs.iter().map(|r| format!("{r:.2}")).collect();
        println!(
            "  {metric}: {} (mean {:.2})",
            shown.join(", "),
            rs.iter().sum::<f64>() / rs.len().max(1) as f64
        );
        all.extend(rs);
    }
    println!(
        "  all: mean {:.2} over {} pairs of scenarios and metrics",
        all.iter().sum::<f64>() / all.len().max(1) as f64,
        all.len()
    );
}

/// A row made worse by exactly its tolerance must rarely pass (its pass bound is one-sided at
/// `equivalence_alpha`, 5 %): per scenario, the candidate's throughput × 0.95 (δ 5 %) or its median
/// TTFT × 1.10 (δ 10 %) in that scenario only, and the share of checks that row passes.
fn worse_by_delta(a: &[Launch], scenarios: &[String], cfg: &GateConfig, max_splits: usize) {
    println!();
    println!("a row worse by exactly δ: share of checks in which it PASSes (should be ≤ 5 %):");
    let random = |d: Design, seed: u64| splits(a.len(), d, max_splits, seed);
    delta_table(a, scenarios, cfg, &random, (5, 6));
    // The same on session splits (each side all of one session, the candidate's another) and
    // on new-session splits (a baseline over ≥ 2 sessions, the candidate's another).
    let by_session = |d: Design, seed: u64| session_splits(a, d, max_splits, seed);
    let new_session = |d: Design, seed: u64| new_session_splits(a, d, max_splits, seed);
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

const DELTA_DESIGNS: [Design; 3] = [
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
fn delta_table(
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

/// `--effect METRIC:PCT:SCENARIO`: a known change the corpus does not hold (the median and every
/// other statistic of one latency family, e.g. `tpot`, × (1 + PCT/100) in one scenario, or in
/// every scenario with `*`, judged then on the engine-wide row), applied
/// to the candidate's unchanged launches: per design up to all launches, the share of checks
/// that FAIL decided once and as `check --results` decides (the last launch held back, a single
/// launch guarded by its own noise), the share in which the row `median_METRIC_ms` of that
/// scenario regressed or passed, and the candidate launches the row says would likely decide it
/// (median over the checks that left it open).
fn effect(a: &[Launch], cfg: &GateConfig, spec: &str, max_splits: usize) {
    let parts: Vec<&str> = spec.split(':').collect();
    let [metric, p, scenario] = parts[..] else {
        panic!("--effect METRIC:PCT:SCENARIO, e.g. tpot:16:random-in128-out128-n64-c32")
    };
    // `*`: every scenario, judged on the engine-wide row.
    let all_scenarios = scenario == "*";
    let change = Change::Latency {
        metric: metric.into(),
        pct: p.parse().expect("PCT"),
        scenario: (!all_scenarios).then(|| scenario.to_string()),
    };
    let scenario = if all_scenarios {
        perfgate::gate::ENGINE_WIDE
    } else {
        scenario
    };
    let row = format!("median_{metric}_ms");
    println!("{row} × (1 + {p} %) in {scenario}, on the candidate's launches:");
    println!();
    println!("| launches (base × cand) | checks | FAIL once | FAIL as `check --results` | row regressed | row PASS | launches the open row asks for (median) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let n = a.len();
    let mut designs: Vec<(usize, usize)> = Vec::new();
    let last = |k: usize| n.saturating_sub(k);
    for d in [
        (2, 1),
        (3, 1),
        (5, 1),
        (last(1), 1),
        (2, 2),
        (3, 2),
        (last(2), 2),
        (3, 3),
        (last(3), 3),
        (n / 2, n / 2),
    ] {
        if d.0 > 0 && d.0 + d.1 <= n && !designs.contains(&d) {
            designs.push(d);
        }
    }
    for (nb, nc) in designs {
        let d = Design {
            n_base: nb,
            n_cur: nc,
        };
        let (mut fail, mut fail_held, mut reg, mut pass) = (0, 0, 0, 0);
        let mut asks: Vec<u32> = Vec::new();
        let all = splits(n, d, max_splits, 7);
        for (b, c) in &all {
            let (base, cur) = (side(a, b, None), side(a, c, Some(&change)));
            let once = evaluate(Inputs::new(&base, &cur, cfg));
            let held = confirm_held_out(Inputs::new(&base, &cur, cfg), 1);
            fail += usize::from(once.verdict == TopVerdict::Fail);
            fail_held += usize::from(held.verdict == TopVerdict::Fail);
            if let Some(r) = once
                .rows
                .iter()
                .find(|r| r.scenario == scenario && r.metric == row)
            {
                reg += usize::from(r.verdict == Verdict::Regressed);
                pass += usize::from(r.verdict == Verdict::Pass);
                if r.verdict == Verdict::Inconclusive {
                    asks.push(r.launches_needed.unwrap_or(u32::MAX));
                }
            }
        }
        asks.sort_unstable();
        let ask = match asks.get(asks.len() / 2) {
            None => "–".to_string(),
            Some(&u32::MAX) => "none: bounded by the session offset, or over 50".to_string(),
            Some(k) => k.to_string(),
        };
        let k = all.len();
        println!(
            "| {nb} × {nc} | {k} | {} | {} | {} | {} | {ask} |",
            pct(ratio(fail, k)),
            pct(ratio(fail_held, k)),
            pct(ratio(reg, k)),
            pct(ratio(pass, k)),
        );
    }
    println!();
    println!("`perfgate ab` (pairs share their session), sequential, up to K pairs:");
    println!();
    println!("| most pairs | FAIL | mean pairs to FAIL |");
    println!("|---|---:|---:|");
    for max_pairs in 2..=(n as u32 / 2) {
        let t = replay_ab(a, max_pairs, &change, cfg, max_splits, 17);
        println!(
            "| {max_pairs} | {} | {:.2} |",
            pct(t.fail_rate()),
            t.mean_pairs_to_fail()
        );
    }
}

/// Session splits: every launch of one recording session as the baseline, every launch of
/// another as the candidate (the split a stored baseline and a later check make), each way.
fn whole_sessions(a: &[Launch], cfg: &GateConfig) {
    let mut sessions: Vec<String> = Vec::new();
    for l in a {
        let s = l.records[0].session_id.clone().unwrap_or_default();
        if !sessions.contains(&s) {
            sessions.push(s);
        }
    }
    if sessions.len() < 2 {
        println!("session splits: the launches carry one session only");
        return;
    }
    println!();
    println!("session splits (every launch of one session against every launch of another):");
    println!();
    println!(
        "| baseline | candidate | verdict | gated rows PASS | regressed | smallest Holm p (row) |"
    );
    println!("|---|---|---|---:|---:|---|");
    let of = |s: &str| -> Vec<ScenarioResult> {
        a.iter()
            .filter(|l| l.records[0].session_id.as_deref().unwrap_or_default() == s)
            .flat_map(|l| l.records.clone())
            .collect()
    };
    for sb in &sessions {
        for sc in sessions.iter().filter(|s| *s != sb) {
            let rep = evaluate(Inputs {
                kind: "replay",
                ..Inputs::new(&of(sb), &of(sc), cfg)
            });
            let gated = rep.rows.iter().filter(|r| r.gated).count().max(1);
            let worst = rep
                .rows
                .iter()
                .filter(|r| r.gated && r.p_value.is_some())
                .min_by(|x, y| x.p_value.unwrap().total_cmp(&y.p_value.unwrap()));
            let worst = worst.map_or("–".to_string(), |r| {
                format!(
                    "{:.4} ({} {} {:+.1} %)",
                    r.p_value.unwrap(),
                    r.scenario,
                    r.metric,
                    r.change_pct.unwrap_or(0.0)
                )
            });
            println!(
                "| {sb} ({} launches) | {sc} ({} launches) | {:?} | {} | {} | {worst} |",
                a.iter()
                    .filter(|l| l.records[0].session_id.as_deref() == Some(sb))
                    .count(),
                a.iter()
                    .filter(|l| l.records[0].session_id.as_deref() == Some(sc))
                    .count(),
                rep.verdict,
                pct(rep.counts.pass as f64 / gated as f64),
                rep.counts.regressed,
            );
        }
    }
}

/// `--ab`: `perfgate ab` replayed with its pairs drawn from all launches (as the default run's
/// table does) and from one session each (as a live `ab` runs): false alarms with Wilson's 95 %
/// interval, gated rows that PASS, and a uniform 10 % slowdown caught, per most pairs.
fn ab_pairings(a: &[Launch], cfg: &GateConfig, perms: usize) {
    println!(
        "perfgate ab, {perms} permutations a cell: pairs across sessions → within one session"
    );
    println!();
    println!("| most pairs | comparisons | false alarms | 95 % interval | gated rows PASS | 10 % slower, all: FAIL |");
    println!("|---|---|---|---|---|---|");
    let slower = Change::Slower {
        pct: 10.0,
        scenario: None,
    };
    for max_pairs in 2..=(a.len() as u32 / 2) {
        let across = [
            replay_ab(a, max_pairs, &Change::None, cfg, perms, 11),
            replay_ab(a, max_pairs, &slower, cfg, perms, 12),
        ];
        let within = [
            replay_ab_in_sessions(a, max_pairs, &Change::None, cfg, perms, 11),
            replay_ab_in_sessions(a, max_pairs, &slower, cfg, perms, 12),
        ];
        let cell = |t: &AbTally| -> [String; 4] {
            let (lo, hi) = wilson(t.failed, t.checks);
            [
                t.checks.to_string(),
                pct(t.fail_rate()),
                format!("{} – {}", pct(lo), pct(hi)),
                pct(t.pass_rate()),
            ]
        };
        let (x, w) = (cell(&across[0]), cell(&within[0]));
        let w_power = if within[1].checks == 0 {
            "–".to_string()
        } else {
            pct(within[1].fail_rate())
        };
        if within[0].checks == 0 {
            println!(
                "| {max_pairs} | {} → – | {} → – | {} → – | {} → – | {} → – |",
                x[0],
                x[1],
                x[2],
                x[3],
                pct(across[1].fail_rate())
            );
        } else {
            println!(
                "| {max_pairs} | {} → {} | {} → {} | {} → {} | {} → {} | {} → {w_power} |",
                x[0],
                w[0],
                x[1],
                w[1],
                x[2],
                w[2],
                x[3],
                w[3],
                pct(across[1].fail_rate())
            );
        }
    }
}

fn ratio(k: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        k as f64 / n as f64
    }
}

/// Wilson's 95 % interval for a share of `k` in `n`.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n, z) = (k as f64, n as f64, 1.959964);
    let p = k / n;
    let mid = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((mid - half).max(0.0), (mid + half).min(1.0))
}

/// The designs (launches of baseline × candidate) of the `--alarms-only` and `--offline` tables.
/// One candidate launch also at 5 and 8 baseline launches: a single launch is what neither
/// held-out nor live confirmation can replicate before the first decision.
const DESIGNS: [(usize, usize); 12] = [
    (1, 1),
    (2, 1),
    (3, 1),
    (5, 1),
    (8, 1),
    (2, 2),
    (3, 2),
    (3, 3),
    (4, 3),
    (5, 3),
    (5, 5),
    (8, 8),
];

/// The splits of one design, seeded: random ([`splits`]), with `--by-session` each side of one
/// recording session ([`session_splits`]), with `--new-session` the baseline over ≥ 2 sessions
/// and the candidate of another ([`new_session_splits`]).
type SplitFn<'a> = &'a dyn Fn(Design, u64) -> Vec<Split>;

/// `--alarms-only`: the false alarms of an unchanged engine per design, with Wilson's 95 %
/// interval, decided once and, with `--confirm N`, as `check --confirm N` decides (the
/// confirmation launches drawn from those in neither side, the candidate's session first).
fn false_alarms(a: &[Launch], cfg: &GateConfig, split: SplitFn<'_>, confirm: usize) {
    if confirm > 0 {
        println!("| launches (base × cand) | checks | false alarms | 95 % interval | confirmed (+{confirm}): false alarms | 95 % interval | gated rows PASS | 10 % slower, all: FAIL | confirmed |");
        println!("|---|---:|---:|---|---:|---|---:|---:|---:|");
        let again =
            |sp: &[Split], c: &Change, seed: u64| replay_confirmed_on(a, sp, c, cfg, seed, confirm);
        once_and_again(a, cfg, split, confirm, &again);
        return;
    }
    println!("| launches (base × cand) | checks | false alarms | 95 % interval | regressed rows | gated rows PASS |");
    println!("|---|---:|---:|---|---:|---:|");
    for (nb, nc) in DESIGNS.into_iter().filter(|(nb, nc)| nb + nc <= a.len()) {
        let d = Design {
            n_base: nb,
            n_cur: nc,
        };
        let t = replay_splits(a, &split(d, 1), &Change::None, cfg);
        if t.checks == 0 {
            continue;
        }
        let (lo, hi) = wilson(t.failed, t.checks);
        println!(
            "| {nb} × {nc} | {} | {} | {} – {} | {} | {} |",
            t.checks,
            pct(t.fail_rate()),
            pct(lo),
            pct(hi),
            t.regressed,
            pct(t.pass_share())
        );
    }
}

/// `--offline N`: false alarms of `perfgate check --results` (records already measured) decided
/// once and with each check's last N candidate launches held back as the confirmation
/// (`check --results --confirm N`), with Wilson's 95 % interval, beside the share of checks that
/// catch a uniform 10 % slowdown either way and the gated rows that pass.
fn offline(a: &[Launch], cfg: &GateConfig, split: SplitFn<'_>, hold: u32) {
    println!("| launches (base × cand) | checks | false alarms, once | 95 % interval | held out ({hold}): false alarms | 95 % interval | gated rows PASS | 10 % slower, all: FAIL once | held out |");
    println!("|---|---:|---:|---|---:|---|---:|---:|---:|");
    let again = |sp: &[Split], c: &Change, _seed: u64| replay_held_out_on(a, sp, c, cfg, hold);
    once_and_again(a, cfg, split, 0, &again);
}

/// One table row per design (those that leave `extra` launches over): false alarms decided once
/// and by `again`, each with Wilson's 95 % interval, the gated rows `again` passes, and the
/// share of checks that catch a uniform 10 % slowdown, once and by `again`.
fn once_and_again(
    a: &[Launch],
    cfg: &GateConfig,
    split: SplitFn<'_>,
    extra: usize,
    again: &dyn Fn(&[Split], &Change, u64) -> Tally,
) {
    let slower = Change::Slower {
        pct: 10.0,
        scenario: None,
    };
    for (nb, nc) in DESIGNS {
        if nb + nc + extra > a.len() {
            continue;
        }
        let d = Design {
            n_base: nb,
            n_cur: nc,
        };
        let (sp1, sp2) = (split(d, 1), split(d, 2));
        let t = replay_splits(a, &sp1, &Change::None, cfg);
        if t.checks == 0 {
            continue;
        }
        let t2 = again(&sp1, &Change::None, 1);
        let p = replay_splits(a, &sp2, &slower, cfg);
        let p2 = again(&sp2, &slower, 2);
        let (lo, hi) = wilson(t.failed, t.checks);
        let (lo2, hi2) = wilson(t2.failed, t2.checks);
        println!(
            "| {nb} × {nc} | {} | {} | {} – {} | {} | {} – {} | {} | {} | {} |",
            t.checks,
            pct(t.fail_rate()),
            pct(lo),
            pct(hi),
            pct(t2.fail_rate()),
            pct(lo2),
            pct(hi2),
            pct(t2.pass_share()),
            pct(p.fail_rate()),
            pct(p2.fail_rate()),
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/gpu-llamacpp-h100"
    ));
    let mut unchanged = list("rec,aa,aa1,l1,l2,l3,l4,l5");
    let mut changed = list("b2");
    let mut max_splits = 400;
    let mut alarms_only = false;
    let mut delta_only = false;
    let mut confirm = 0;
    let mut held_out = None;
    let mut by_session = false;
    let mut new_session = false;
    let mut ab_only = false;
    let mut effect_spec = None;
    let mut cfg = GateConfig::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--unchanged" => unchanged = list(&args.next().expect("--unchanged LIST")),
            "--changed" => changed = list(&args.next().expect("--changed LIST")),
            "--splits" => max_splits = args.next().and_then(|v| v.parse().ok()).expect("N"),
            "--alarms-only" => alarms_only = true,
            "--delta-only" => delta_only = true,
            "--confirm" => confirm = args.next().and_then(|v| v.parse().ok()).expect("N"),
            "--offline" => held_out = args.next().and_then(|v| v.parse().ok()),
            "--by-session" => by_session = true,
            "--new-session" => new_session = true,
            "--ab" => ab_only = true,
            "--effect" => effect_spec = Some(args.next().expect("--effect METRIC:PCT:SCENARIO")),
            "--gate" => {
                let p = PathBuf::from(args.next().expect("--gate FILE"));
                cfg = GateConfig::load(&p).unwrap_or_else(|e| panic!("{e}"));
            }
            d => dir = PathBuf::from(d),
        }
    }
    let a = load(&dir, &unchanged);
    let scenarios: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in &a[0].records {
            if !v.contains(&r.scenario_id()) {
                v.push(r.scenario_id());
            }
        }
        v
    };
    println!(
        "corpus {} : {} unchanged launches ({}), scenarios: {}",
        dir.display(),
        a.len(),
        unchanged.join(" "),
        scenarios.join(", ")
    );
    if delta_only {
        worse_by_delta(&a, &scenarios, &cfg, max_splits);
        return;
    }
    if let Some(spec) = &effect_spec {
        effect(&a, &cfg, spec, max_splits);
        return;
    }
    if ab_only {
        ab_pairings(&a, &cfg, max_splits);
        return;
    }
    let split = |d: Design, seed: u64| {
        if new_session {
            new_session_splits(&a, d, max_splits, seed)
        } else if by_session {
            session_splits(&a, d, max_splits, seed)
        } else {
            splits(a.len(), d, max_splits, seed)
        }
    };
    if let Some(hold) = held_out {
        offline(&a, &cfg, &split, hold);
        return;
    }
    if alarms_only {
        false_alarms(&a, &cfg, &split, confirm);
        return;
    }
    println!("correlation of launch values between scenarios (each pair of scenarios):");
    launch_correlations(&a, &scenarios, &cfg);
    println!();
    println!("| launches (base × cand) | checks | false alarms | gated rows PASS | regressed rows | 5 % slower, all scenarios | 5 % slower, one scenario (worst/best) | 10 % slower, all |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let designs = [(2, 1), (3, 1), (2, 2), (3, 2), (3, 3), (4, 3), (5, 3)];
    for (nb, nc) in designs {
        let d = Design {
            n_base: nb,
            n_cur: nc,
        };
        let same = replay(&a, d, &Change::None, &cfg, max_splits, 1);
        let slower = |pct: f64, scenario: Option<String>| -> Tally {
            replay(
                &a,
                d,
                &Change::Slower { pct, scenario },
                &cfg,
                max_splits,
                2,
            )
        };
        let all5 = slower(5.0, None);
        let one: Vec<f64> = scenarios
            .iter()
            .map(|s| slower(5.0, Some(s.clone())).fail_rate())
            .collect();
        let all10 = slower(10.0, None);
        let (lo, hi) = one
            .iter()
            .fold((1.0f64, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
        println!(
            "| {nb} × {nc} | {} | {} | {} | {} | {} | {} / {} | {} |",
            same.checks,
            pct(same.fail_rate()),
            pct(same.pass_share()),
            same.regressed,
            pct(all5.fail_rate()),
            pct(lo),
            pct(hi),
            pct(all10.fail_rate()),
        );
        if (nb, nc) == (3, 3) {
            let mut by = same.by_class.clone();
            by.sort();
            for (class, n, p, g) in by {
                eprintln!(
                    "  3 × 3 unchanged, {class}: {n} rows, {} pass, {g} regressed",
                    pct(p as f64 / n as f64)
                );
            }
        }
    }

    println!();
    println!("perfgate ab on the same launches (paired, sequential; {max_splits} permutations per cell):");
    println!();
    println!("| most pairs | false alarms | PASS | mean pairs (unchanged) | 5 % slower, all: FAIL · mean pairs | 5 % slower, one scenario (worst/best) | 10 % slower, one scenario (worst/best) | 20 % slower, one scenario (worst/best) |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for max_pairs in 2..=(a.len() as u32 / 2) {
        let run = |change: &Change, seed: u64| -> AbTally {
            replay_ab(&a, max_pairs, change, &cfg, max_splits, seed)
        };
        let same = run(&Change::None, 11);
        let all5 = run(
            &Change::Slower {
                pct: 5.0,
                scenario: None,
            },
            12,
        );
        let one = |pct: f64| -> (f64, f64) {
            scenarios
                .iter()
                .map(|s| {
                    run(
                        &Change::Slower {
                            pct,
                            scenario: Some(s.clone()),
                        },
                        13,
                    )
                    .fail_rate()
                })
                .fold((1.0f64, 0.0f64), |(l, h), x| (l.min(x), h.max(x)))
        };
        let (o5, o10, o20) = (one(5.0), one(10.0), one(20.0));
        println!(
            "| {max_pairs} | {} | {} | {:.2} | {} · {:.2} | {} / {} | {} / {} | {} / {} |",
            pct(same.fail_rate()),
            pct(same.pass_rate()),
            same.mean_pairs(),
            pct(all5.fail_rate()),
            all5.mean_pairs_to_fail(),
            pct(o5.0),
            pct(o5.1),
            pct(o10.0),
            pct(o10.1),
            pct(o20.0),
            pct(o20.1),
        );
    }

    worse_by_delta(&a, &scenarios, &cfg, max_splits);
    whole_sessions(&a, &cfg);

    println!();
    let base: Vec<ScenarioResult> = a.iter().flat_map(|l| l.records.clone()).collect();
    for b in load(&dir, &changed) {
        let rep = evaluate(Inputs {
            kind: "replay",
            ..Inputs::new(&base, &b.records, &cfg)
        });
        println!(
            "{} against all {} unchanged launches: {}",
            b.name,
            a.len(),
            rep.verdict.as_str().to_uppercase()
        );
        for r in rep
            .rows
            .iter()
            .filter(|r| r.gated && matches!(r.verdict, Verdict::Regressed | Verdict::Improved))
        {
            println!(
                "  {} {} {}: {:+.1} % [{:+.1}, {:+.1}] {}",
                r.scenario,
                r.metric,
                r.verdict.as_str(),
                r.change_pct.unwrap_or(f64::NAN),
                r.interval.map_or(f64::NAN, |i| i[0]),
                r.interval.map_or(f64::NAN, |i| i[1]),
                r.note.as_deref().unwrap_or("")
            );
        }
    }
}
