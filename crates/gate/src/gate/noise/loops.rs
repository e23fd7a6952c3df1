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
//!
//! Two readings of the loop, two [`Probe`]s: on one CPU (`calibration_ms`), and on every CPU
//! at once (`calibration_all_ms`, since 2026-12-08). Other work on the machine can leave one
//! CPU free for the first while an engine with a thread on every CPU shares its CPUs with it;
//! the second reads that. The term takes whichever probe, timed on both sides, moved more.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{launch_key, Launches};
use crate::gate::stats::{self, StatsError};
use crate::record::ScenarioResult;

/// Which reading of perfgate's calibration loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Probe {
    /// On one CPU (`telemetry.calibration_ms`), timed before every run since 2026-11-28.
    #[default]
    OneCpu,
    /// On every CPU at once (`telemetry.calibration_all_ms`), since 2026-12-08.
    AllCpus,
}

impl Probe {
    /// Both, in the order a tie is settled.
    pub const BOTH: [Probe; 2] = [Probe::OneCpu, Probe::AllCpus];

    /// The reading in a run's telemetry (ms), when it recorded a usable one.
    fn ms(self, t: &perfgate_record::telemetry::Telemetry) -> Option<f64> {
        match self {
            Probe::OneCpu => t.calibration_ms,
            Probe::AllCpus => t.calibration_all_ms,
        }
        .filter(|c| c.is_finite() && *c > 0.0)
    }

    /// How a row's note names it.
    pub fn label(self) -> &'static str {
        match self {
            Probe::OneCpu => "calibration loop",
            Probe::AllCpus => "calibration loop on every CPU",
        }
    }
}

/// A stored comparison's machine term: how far the sides' calibration loops moved, and the
/// variance that added to the se² of the difference of their mean log values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MachineTerm {
    /// The candidate's mean loop time over the baseline's, as a percent change.
    pub loop_shift_pct: f64,
    /// slope² · max(0, Δ² − the loop noise's share), added to se² ([`machine_var`]).
    pub var: f64,
    /// The reading of the loop that gave the term (the one that moved more).
    #[serde(default)]
    pub probe: Probe,
}

/// The natural log of a run's calibration loop time (ms) by `probe`, when it recorded a usable
/// one.
pub(crate) fn loop_log(r: &ScenarioResult, probe: Probe) -> Option<f64> {
    r.telemetry.as_ref().and_then(|t| probe.ms(t)).map(f64::ln)
}

/// Both probes' log readings of a launch's runs, gathered run by run; a run without a probe's
/// reading leaves that probe none for the launch.
#[derive(Debug, Clone)]
pub(crate) struct Readings([Option<Vec<f64>>; 2]);

impl Default for Readings {
    fn default() -> Self {
        Readings([Some(Vec::new()), Some(Vec::new())])
    }
}

impl Readings {
    /// Add the readings of run `r`.
    pub(crate) fn add(&mut self, r: &ScenarioResult) {
        for (p, readings) in Probe::BOTH.into_iter().zip(self.0.iter_mut()) {
            *readings = readings.take().zip(loop_log(r, p)).map(|(mut v, x)| {
                v.push(x);
                v
            });
        }
    }

    /// Each probe's median log reading ([`Probe`] as the index).
    pub(crate) fn medians(&self) -> [Option<f64>; 2] {
        self.0
            .each_ref()
            .map(|v| v.as_deref().and_then(stats::median))
    }
}

/// One side's machine speed at each of its launches: the median log loop time over all the
/// launch's runs, every scenario of a model's launch, not only a row's own. The loop is timed
/// before every run, and within a launch its readings scatter (sd 2.0 % on the CPU corpora) in
/// ways the engine does not follow (a reading's deviation from its launch's mean moves the
/// metric at a log slope of −0.14 to +0.47 there, the launch's mean moves it at 0.57 to 1.55:
/// docs/gate.md, "The loop as a covariate"), so the launch's readings together say more about
/// the machine than the one before a row's run.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaunchLoops(BTreeMap<String, BTreeMap<String, [Option<f64>; 2]>>);

impl LaunchLoops {
    /// From one side's records, keyed by model and launch; a launch with a run that timed no
    /// loop (of a probe) has none.
    pub(crate) fn of(recs: &[ScenarioResult]) -> LaunchLoops {
        let mut runs: BTreeMap<String, BTreeMap<String, Readings>> = BTreeMap::new();
        for r in recs {
            let model = runs.entry(r.model.clone()).or_default();
            model.entry(launch_key(r)).or_default().add(r);
        }
        let medians =
            |l: BTreeMap<String, Readings>| l.into_iter().map(|(k, v)| (k, v.medians())).collect();
        LaunchLoops(runs.into_iter().map(|(m, l)| (m, medians(l))).collect())
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
        for (i, key) in l.keys.iter().enumerate() {
            if let Some(v) = mine.get(key) {
                for (series, x) in l.loops.iter_mut().zip(v) {
                    series[i] = *x;
                }
            }
        }
    }
}

/// Each launch's mean log loop time by `probe`; `None` when a side has no launch or a launch
/// timed no loop.
pub(crate) fn loop_logs(l: &Launches, probe: Probe) -> Option<Vec<f64>> {
    let series = &l.loops[probe as usize];
    (series.len() == l.n() && l.n() > 0)
        .then(|| series.iter().copied().collect::<Option<Vec<f64>>>())
        .flatten()
}

/// Whether some probe timed every launch of `l`.
pub(crate) fn watched(l: &Launches) -> bool {
    Probe::BOTH.iter().any(|p| loop_logs(l, *p).is_some())
}

/// The machine term of a stored comparison of `b` with `c`: the variance a machine shift
/// may add to the difference of the sides' mean log values, slope² · max(0, Δ² − v), by the
/// probe, timed on every launch of both sides, that gives the larger ([`Probe::BOTH`] order on
/// a tie). Δ is the candidate's mean log loop time minus the baseline's; v = s² (1/n_b + 1/n_c)
/// is what the loop's own launch-to-launch noise puts into Δ², with s² the loops' variance
/// within each side's sessions, pooled over both sides (0 when no session has two launches:
/// then all of Δ counts). `None` when no probe timed every launch of both sides.
pub fn machine_var(b: &Launches, c: &Launches, slope: f64) -> Option<MachineTerm> {
    let term = |probe: Probe| {
        let (xb, xc) = (loop_logs(b, probe)?, loop_logs(c, probe)?);
        let (delta, var) = shift_var(b, c, xb, xc, slope);
        Some(MachineTerm {
            loop_shift_pct: stats::pct(delta),
            var,
            probe,
        })
    };
    Probe::BOTH
        .into_iter()
        .filter_map(term)
        .reduce(|a, t| if t.var > a.var { t } else { a })
}

/// (Δ, slope² · max(0, Δ² − v)) of one probe's readings `xb`, `xc` ([`machine_var`]).
fn shift_var(b: &Launches, c: &Launches, xb: Vec<f64>, xc: Vec<f64>, slope: f64) -> (f64, f64) {
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
    (delta, slope * slope * (delta * delta - noise).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side of one session whose launches read `one` on one CPU and `all` on every CPU.
    fn side2(session: &str, one: &[f64], all: Option<&[f64]>) -> Launches {
        let n = one.len();
        let mut l = Launches::keyed(
            (0..n).map(|i| format!("{session}{i}")).collect(),
            vec![0.0; n],
            vec![Some(session.to_string()); n],
            true,
        );
        let logs = |v: &[f64]| v.iter().map(|x| Some(x.ln())).collect();
        l.loops[0] = logs(one);
        if let Some(all) = all {
            l.loops[1] = logs(all);
        }
        l
    }

    fn side(session: &str, loops_ms: &[f64]) -> Launches {
        side2(session, loops_ms, None)
    }

    /// (Δ, var) of a term, Δ back on the log scale.
    fn dv(t: MachineTerm) -> (f64, f64) {
        ((t.loop_shift_pct / 100.0).ln_1p(), t.var)
    }

    #[test]
    fn a_shift_beyond_the_loops_noise_counts_at_the_slope_squared() {
        // Python's statistics: xb = log([4.0, 4.2, 4.1]), xc = log([4.6, 4.5, 4.7]);
        // d = mean(xc) − mean(xb) = 0.1151101; pooled within-session variance
        // s2 = (2 var(xb) + 2 var(xc)) / 4 = 0.00053395; v = s2 (1/3 + 1/3) = 0.00035597;
        // 2² (d² − v) = 0.0515775
        let (b, c) = (side("a", &[4.0, 4.2, 4.1]), side("b", &[4.6, 4.5, 4.7]));
        let t = machine_var(&b, &c, 2.0).unwrap();
        assert_eq!(t.probe, Probe::OneCpu);
        let (d, v) = dv(t);
        assert!((d - 0.115_110_1).abs() < 1e-7, "{d}");
        assert!((v - 0.051_577_5).abs() < 1e-7, "{v}");
        // The other way round: the same size.
        let (d2, v2) = dv(machine_var(&c, &b, 2.0).unwrap());
        assert!((d2 + d).abs() < 1e-12 && (v2 - v).abs() < 1e-12);
    }

    #[test]
    fn loops_that_agree_within_their_noise_add_nothing() {
        let (b, c) = (side("a", &[4.0, 4.4, 4.1]), side("b", &[4.3, 4.0, 4.2]));
        assert_eq!(machine_var(&b, &c, 2.0).unwrap().var, 0.0);
    }

    #[test]
    fn a_launch_without_a_loop_leaves_no_term() {
        let (b, mut c) = (side("a", &[4.0, 4.2]), side("b", &[4.6, 4.5]));
        c.loops[0][1] = None;
        assert_eq!(machine_var(&b, &c, 2.0), None);
        assert_eq!(
            machine_var(&Launches::single(vec![1.0], true), &b, 2.0),
            None
        );
    }

    #[test]
    fn single_launches_count_the_whole_shift() {
        let (b, c) = (side("a", &[4.0]), side("b", &[5.0]));
        let (d, v) = dv(machine_var(&b, &c, 1.0).unwrap());
        assert!((v - d * d).abs() < 1e-12 && (d - (1.25f64).ln()).abs() < 1e-12);
    }

    #[test]
    fn the_probe_that_moved_more_gives_the_term() {
        // One CPU steady, every CPU 1.5× slower on the candidate's side (a job on the other
        // CPU): the term is every CPU's, 2² (ln 1.5)² with no spread within the sessions.
        let b = side2("a", &[4.0, 4.0], Some(&[4.2, 4.2]));
        let c = side2("b", &[4.0, 4.0], Some(&[6.3, 6.3]));
        let t = machine_var(&b, &c, 2.0).unwrap();
        assert_eq!(t.probe, Probe::AllCpus);
        let want = 4.0 * 1.5f64.ln().powi(2);
        assert!((t.var - want).abs() < 1e-12, "{t:?}");
        assert!((t.loop_shift_pct - 50.0).abs() < 1e-9, "{t:?}");
        // The one-CPU loop moving more wins the other way.
        let c = side2("b", &[6.0, 6.0], Some(&[4.6, 4.6]));
        assert_eq!(machine_var(&b, &c, 2.0).unwrap().probe, Probe::OneCpu);
        // A side without every-CPU readings (older records) leaves the one-CPU term.
        let old = side("b", &[4.0, 4.0]);
        let t = machine_var(&b, &old, 2.0).unwrap();
        assert_eq!((t.probe, t.var), (Probe::OneCpu, 0.0));
        // Only every-CPU readings on both sides still watch the machine.
        let mut b1 = b.clone();
        let mut c1 = side2("b", &[4.0, 4.0], Some(&[6.3, 6.3]));
        b1.loops[0] = vec![None; 2];
        c1.loops[0] = vec![None; 2];
        assert!(watched(&b1) && !watched(&Launches::single(vec![1.0], true)));
        assert_eq!(machine_var(&b1, &c1, 2.0).unwrap().probe, Probe::AllCpus);
    }
}
