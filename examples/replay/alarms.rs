//! `--alarms-only` and `--offline N`: false alarms of an unchanged engine per design, decided
//! once and as a confirmed or held-out check decides.

use perfgate::gate::replay::{
    replay_confirmed_on, replay_held_out_on, replay_splits, Change, Design, Launch, Split, Tally,
};
use perfgate::gate::GateConfig;

use crate::util::{pct, wilson, SplitFn};

/// The designs (launches of baseline × candidate) of the `--alarms-only` and `--offline` tables.
/// One candidate launch also at 5 and 8 baseline launches: a single launch is what neither
/// held-out nor live confirmation can replicate before the first decision. Up to 10 × 10, the
/// largest design the README's bounds cover (session splits reach it only where one session
/// holds ≥ 10 launches).
pub(crate) const DESIGNS: [(usize, usize); 13] = [
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
    (10, 10),
];

/// `--alarms-only`: the false alarms of an unchanged engine per design, with Wilson's 95 %
/// interval, decided once and, with `--confirm N`, as `check --confirm N` decides (the
/// confirmation launches drawn from those in neither side, the candidate's session first).
pub(crate) fn false_alarms(a: &[Launch], cfg: &GateConfig, split: SplitFn<'_>, confirm: usize) {
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
pub(crate) fn offline(a: &[Launch], cfg: &GateConfig, split: SplitFn<'_>, hold: u32) {
    println!("| launches (base × cand) | checks | false alarms, once | 95 % interval | held out ({hold}): false alarms | 95 % interval | gated rows PASS | 10 % slower, all: FAIL once | held out |");
    println!("|---|---:|---:|---|---:|---|---:|---:|---:|");
    let again = |sp: &[Split], c: &Change, _seed: u64| replay_held_out_on(a, sp, c, cfg, hold);
    once_and_again(a, cfg, split, 0, &again);
}

/// One table row per design (those that leave `extra` launches over): false alarms decided once
/// and by `again`, each with Wilson's 95 % interval, the gated rows `again` passes, and the
/// share of checks that catch a uniform 10 % slowdown, once and by `again`.
pub(crate) fn once_and_again(
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
