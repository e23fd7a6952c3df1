//! `--effect METRIC:PCT:SCENARIO`: a known change applied to the candidate's launches.

use perfgate::gate::replay::{replay_ab, side, splits, Change, Design, Launch};
use perfgate::gate::{confirm_held_out, evaluate, GateConfig, Inputs, TopVerdict, Verdict};

use crate::util::{pct, ratio};

/// `--effect METRIC:PCT:SCENARIO`: a known change the corpus does not hold (the median and every
/// other statistic of one latency family, e.g. `tpot`, × (1 + PCT/100) in one scenario, or in
/// every scenario with `*`, judged then on the engine-wide row), applied
/// to the candidate's unchanged launches: per design up to all launches, the share of checks
/// that FAIL decided once and as `check --results` decides (the last launch held back, a single
/// launch guarded by its own noise), the share in which the row `median_METRIC_ms` of that
/// scenario regressed or passed, and the candidate launches the row says would likely decide it
/// (median over the checks that left it open).
pub(crate) fn effect(
    a: &[Launch],
    cfg: &GateConfig,
    spec: &str,
    max_splits: usize,
) -> Result<(), String> {
    let parts: Vec<&str> = spec.split(':').collect();
    let [metric, p, scenario] = parts[..] else {
        return Err(format!(
            "--effect {spec}: expected METRIC:PCT:SCENARIO, e.g. tpot:16:random-in128-out128-n64-c32"
        ));
    };
    let pct_change: f64 = p
        .parse()
        .map_err(|_| format!("--effect {spec}: {p} is not a percentage"))?;
    // `*`: every scenario, judged on the engine-wide row.
    let all_scenarios = scenario == "*";
    let change = Change::Latency {
        metric: metric.into(),
        pct: pct_change,
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
    Ok(())
}
