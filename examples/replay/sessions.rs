//! Sessions: every launch of one sitting against every launch of another, and `--ab` with its
//! pairs drawn across sittings and within one.

use perfgate::gate::replay::{replay_ab, replay_ab_in_sessions, AbTally, Change, Launch};
use perfgate::gate::{evaluate, GateConfig, Inputs};
use perfgate::record::ScenarioResult;

use crate::util::{pct, wilson};

/// Session splits: every launch of one recording session as the baseline, every launch of
/// another as the candidate (the split a stored baseline and a later check make), each way.
pub(crate) fn whole_sessions(a: &[Launch], cfg: &GateConfig) {
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
pub(crate) fn ab_pairings(a: &[Launch], cfg: &GateConfig, perms: usize) {
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
