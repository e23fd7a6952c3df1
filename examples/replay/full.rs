//! The default run: the launches' correlation between scenarios, false alarms and power per
//! design, `perfgate ab`'s sequential table, the worse-by-δ and session tables, and each changed
//! engine against all unchanged launches.

use perfgate::gate::noise::Launches;
use perfgate::gate::replay::{replay, replay_ab, AbTally, Change, Design, Launch, Tally};
use perfgate::gate::{evaluate, GateConfig, Inputs, Verdict};
use perfgate::record::ScenarioResult;

use crate::util::{corr, pct};

/// Per engine-wide metric, the correlation of the launches' values between every two scenarios
/// (what `examples/gate-sim.rs` takes as its shared launch effect), and their mean over all.
pub(crate) fn launch_correlations(a: &[Launch], scenarios: &[String], cfg: &GateConfig) {
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

/// The default run's tables, in order: correlations, the check designs' false alarms and power,
/// `perfgate ab`'s sequential table, then the worse-by-δ and session tables.
pub(crate) fn tables(a: &[Launch], scenarios: &[String], cfg: &GateConfig, max_splits: usize) {
    println!("correlation of launch values between scenarios (each pair of scenarios):");
    launch_correlations(a, scenarios, cfg);
    println!();
    println!("| launches (base × cand) | checks | false alarms | gated rows PASS | regressed rows | 5 % slower, all scenarios | 5 % slower, one scenario (worst/best) | 10 % slower, all |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let designs = [(2, 1), (3, 1), (2, 2), (3, 2), (3, 3), (4, 3), (5, 3)];
    for (nb, nc) in designs {
        let d = Design {
            n_base: nb,
            n_cur: nc,
        };
        let same = replay(a, d, &Change::None, cfg, max_splits, 1);
        let slower = |pct: f64, scenario: Option<String>| -> Tally {
            replay(a, d, &Change::Slower { pct, scenario }, cfg, max_splits, 2)
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
            replay_ab(a, max_pairs, change, cfg, max_splits, seed)
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

    crate::delta::worse_by_delta(a, scenarios, cfg, max_splits, &[]);
    crate::sessions::whole_sessions(a, cfg);
}

/// Each changed engine's launches against a baseline of all unchanged ones, as `perfgate check`
/// would judge them, with the rows that regressed or improved.
pub(crate) fn changed_against_all(a: &[Launch], changed: &[Launch], cfg: &GateConfig) {
    println!();
    let base: Vec<ScenarioResult> = a.iter().flat_map(|l| l.records.clone()).collect();
    for b in changed {
        let rep = evaluate(Inputs {
            kind: "replay",
            ..Inputs::new(&base, &b.records, cfg)
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
