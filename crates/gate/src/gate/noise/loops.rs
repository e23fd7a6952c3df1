//! The machine's speed as a source of a stored comparison's offset. perfgate times a fixed
//! calibration loop before every run (`telemetry.calibration_ms`); on the CPU corpora a
//! sitting's mean loop time and its engine's throughput move together (log scale, r −0.85 to
//! −0.92), so sides whose loops differ beyond the loop's own launch-to-launch noise were
//! measured on a machine of another speed, and their difference can be the machine's.
//!
//! The loop is a noisy and engine-dependent proxy: how much of the machine's speed an engine's
//! metric follows (the slope of log metric on log loop time) is 1.6–2.1 between the CPU
//! sittings, 0.7 within them and near 0 between the H200 leases (docs/gate.md, "The loop as a
//! covariate"). So the gate does not rescale a side by it: it widens the comparison's se by
//! what a machine shift of slope `machine_slope` (default 2) could explain ([`machine_var`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{launch_key, Launches};
use crate::gate::stats::{self, StatsError};
use crate::record::ScenarioResult;

/// A stored comparison's machine term: how far the sides' calibration loops moved, and the
/// variance that added to the se² of the difference of their mean log values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MachineTerm {
    /// The candidate's mean loop time over the baseline's, as a percent change.
    pub loop_shift_pct: f64,
    /// slope² · max(0, Δ² − the loop noise's share), added to se² ([`machine_var`]).
    pub var: f64,
}

/// The natural log of a run's calibration loop time (ms), when it recorded a usable one.
pub(crate) fn loop_log(r: &ScenarioResult) -> Option<f64> {
    r.telemetry
        .as_ref()
        .and_then(|t| t.calibration_ms)
        .filter(|c| c.is_finite() && *c > 0.0)
        .map(f64::ln)
}

/// One side's machine speed at each of its launches: the median log loop time over all the
/// launch's runs, every scenario of a model's launch, not only a row's own. The loop is timed
/// before every run, and within a launch its readings scatter (sd 2.0 % on the CPU corpora) in
/// ways the engine does not follow (a reading's deviation from its launch's mean moves the
/// metric at a log slope of −0.14 to +0.47 there, the launch's mean moves it at 0.57 to 1.55:
/// docs/gate.md, "The loop as a covariate"), so the launch's readings together say more about
/// the machine than the one before a row's run.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaunchLoops(BTreeMap<String, BTreeMap<String, Option<f64>>>);

impl LaunchLoops {
    /// From one side's records, keyed by model and launch; a launch with a run that timed no
    /// loop has none.
    pub(crate) fn of(recs: &[ScenarioResult]) -> LaunchLoops {
        let mut runs: BTreeMap<String, BTreeMap<String, Option<Vec<f64>>>> = BTreeMap::new();
        for r in recs {
            let e = runs
                .entry(r.model.clone())
                .or_default()
                .entry(launch_key(r))
                .or_insert_with(|| Some(Vec::new()));
            *e = e.take().zip(loop_log(r)).map(|(mut v, x)| {
                v.push(x);
                v
            });
        }
        let median = |l: BTreeMap<String, Option<Vec<f64>>>| {
            let each = l.into_iter();
            each.map(|(k, v)| (k, v.as_deref().and_then(stats::median)))
                .collect()
        };
        LaunchLoops(runs.into_iter().map(|(m, l)| (m, median(l))).collect())
    }

    /// `metric`'s launches of one row of `model` on both sides (`b` the baseline's records, `c`
    /// the candidate's), each launch with its side's machine speed from `sides`.
    pub(crate) fn row(
        sides: &[LaunchLoops; 2],
        model: &str,
        [b, c]: [&[&ScenarioResult]; 2],
        metric: &str,
    ) -> Result<(Launches, Launches), StatsError> {
        let (mut bl, mut cl) = (Launches::of(b, metric)?, Launches::of(c, metric)?);
        sides[0].apply(model, &mut bl);
        sides[1].apply(model, &mut cl);
        Ok((bl, cl))
    }

    /// Give the launches of one row of `model` their launches' loops (a launch not among this
    /// side's records keeps its own).
    fn apply(&self, model: &str, l: &mut Launches) {
        let Some(mine) = self.0.get(model) else {
            return;
        };
        for (key, lp) in l.keys.iter().zip(l.loops.iter_mut()) {
            if let Some(v) = mine.get(key) {
                *lp = *v;
            }
        }
    }
}

/// Each launch's mean log loop time; `None` when a side has no launch or a launch timed no loop.
pub(crate) fn loop_logs(l: &Launches) -> Option<Vec<f64>> {
    (l.loops.len() == l.n() && l.n() > 0)
        .then(|| l.loops.iter().copied().collect::<Option<Vec<f64>>>())
        .flatten()
}

/// The machine term of a stored comparison of `b` with `c`: the variance a machine shift
/// may add to the difference of the sides' mean log values, slope² · max(0, Δ² − v). Δ is the
/// candidate's mean log loop time minus the baseline's; v = s² (1/n_b + 1/n_c) is what the
/// loop's own launch-to-launch noise puts into Δ², with s² the loops' variance within each
/// side's sessions, pooled over both sides (0 when no session has two launches: then all of Δ
/// counts). Returns (Δ, the variance); `None` when a launch of either side has no loop time.
pub fn machine_var(b: &Launches, c: &Launches, slope: f64) -> Option<(f64, f64)> {
    let (xb, xc) = (loop_logs(b)?, loop_logs(c)?);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let delta = mean(&xc) - mean(&xb);
    // The loops as launch values of their own: `spread` pools them around each sitting's mean.
    let spread = |l: &Launches, x: Vec<f64>| {
        Launches::keyed(l.keys.clone(), x, l.sessions.clone(), l.has_ids).spread()
    };
    let (nb, nc) = (xb.len() as f64, xc.len() as f64);
    let ((ssb, dfb, _), (ssc, dfc, _)) = (spread(b, xb), spread(c, xc));
    let (ss, df) = (ssb + ssc, dfb + dfc);
    let s2 = if df > 0.0 { ss / df } else { 0.0 };
    let noise = s2 * (1.0 / nb + 1.0 / nc);
    Some((delta, slope * slope * (delta * delta - noise).max(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(session: &str, loops_ms: &[f64]) -> Launches {
        let n = loops_ms.len();
        let mut l = Launches::keyed(
            (0..n).map(|i| format!("{session}{i}")).collect(),
            vec![0.0; n],
            vec![Some(session.to_string()); n],
            true,
        );
        l.loops = loops_ms.iter().map(|x| Some(x.ln())).collect();
        l
    }

    #[test]
    fn a_shift_beyond_the_loops_noise_counts_at_the_slope_squared() {
        // Python's statistics: xb = log([4.0, 4.2, 4.1]), xc = log([4.6, 4.5, 4.7]);
        // d = mean(xc) − mean(xb) = 0.1151101; pooled within-session variance
        // s2 = (2 var(xb) + 2 var(xc)) / 4 = 0.00053395; v = s2 (1/3 + 1/3) = 0.00035597;
        // 2² (d² − v) = 0.0515775
        let (b, c) = (side("a", &[4.0, 4.2, 4.1]), side("b", &[4.6, 4.5, 4.7]));
        let (d, v) = machine_var(&b, &c, 2.0).unwrap();
        assert!((d - 0.115_110_1).abs() < 1e-7, "{d}");
        assert!((v - 0.051_577_5).abs() < 1e-7, "{v}");
        // The other way round: the same size.
        let (d2, v2) = machine_var(&c, &b, 2.0).unwrap();
        assert!((d2 + d).abs() < 1e-12 && (v2 - v).abs() < 1e-12);
    }

    #[test]
    fn loops_that_agree_within_their_noise_add_nothing() {
        let (b, c) = (side("a", &[4.0, 4.4, 4.1]), side("b", &[4.3, 4.0, 4.2]));
        let (_, v) = machine_var(&b, &c, 2.0).unwrap();
        assert_eq!(v, 0.0);
    }

    #[test]
    fn a_launch_without_a_loop_leaves_no_term() {
        let (b, mut c) = (side("a", &[4.0, 4.2]), side("b", &[4.6, 4.5]));
        c.loops[1] = None;
        assert_eq!(machine_var(&b, &c, 2.0), None);
        assert_eq!(
            machine_var(&Launches::single(vec![1.0], true), &b, 2.0),
            None
        );
    }

    #[test]
    fn single_launches_count_the_whole_shift() {
        let (b, c) = (side("a", &[4.0]), side("b", &[5.0]));
        let (d, v) = machine_var(&b, &c, 1.0).unwrap();
        assert!((v - d * d).abs() < 1e-15 && (d - (1.25f64).ln()).abs() < 1e-12);
    }
}
