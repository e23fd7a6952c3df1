//! Change points in a short series of positive values (one per baseline, in release order) by a
//! two-window test on the log scale. Pure and deterministic.
//!
//! # Method
//! 1. Work on `c_i = ln(x_i)`, so a step is a ratio and the test is scale-invariant.
//! 2. Noise: `τ`, the standard deviation of one point, is the larger of the noise it is given
//!    (the gate's run-to-run noise for the metric) and a robust estimate from the series itself:
//!    the median absolute first difference divided by `√2 · Φ⁻¹(0.75)` (for i.i.d. normal
//!    points `|c_i − c_{i−1}|` has median `√2 · 0.6745 · τ`; one step moves one difference only,
//!    so the estimate ignores it). With neither (fewer than three points and no noise given)
//!    nothing is tested.
//! 3. At every boundary `k` (between points `k−1` and `k`) compare the mean of up to `w` points
//!    before with the mean of up to `w` points after: `z = Δ / (τ · √(1/n_L + 1/n_R))`,
//!    two-sided normal p-value.
//! 4. A boundary is a change point when `p < α / (n − 1)` (Bonferroni over the `n − 1`
//!    boundaries, so a flat series is flagged anywhere with probability at most α) AND the
//!    step is at least the tolerance δ on the log scale, `|Δ| ≥ ln(1 + δ/100)` (the gate's δ,
//!    so that a real but harmless shift in a very quiet series is not flagged).
//! 5. Overlapping windows see the same step several times: candidates are taken by decreasing
//!    `|z|`, and one closer than `w` points to a change point already taken is dropped.

use statrs::distribution::{ContinuousCDF, Normal};

/// Settings of the two-window test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Points on each side of a boundary (at most).
    pub window: usize,
    /// Family-wise false-alarm rate over the boundaries of one series.
    pub alpha: f64,
    /// The smallest step flagged, in percent.
    pub min_change_pct: f64,
    /// The noise of one point as the sd of its log value (≈ relative sd), if known.
    pub noise_sigma: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            window: 3,
            alpha: 0.05,
            min_change_pct: 5.0,
            noise_sigma: None,
        }
    }
}

/// A flagged step between point `index − 1` and point `index`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The first point after the step.
    pub index: usize,
    /// Geometric mean of the window before.
    pub before: f64,
    /// Geometric mean of the window after.
    pub after: f64,
    /// (after / before − 1) × 100.
    pub change_pct: f64,
    pub z: f64,
    /// Two-sided p-value (not adjusted).
    pub p: f64,
}

/// The outcome for one series: the noise used and the change points, by index.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// `τ`: the sd of one point's log value used by the test; `None` when nothing was tested.
    pub sigma: Option<f64>,
    pub changes: Vec<ChangePoint>,
}

/// Robust sd of one point from the series: median |first difference| / (√2 · Φ⁻¹(0.75)).
/// `None` for fewer than three points (one difference says nothing about the noise).
pub fn robust_sigma(logs: &[f64]) -> Option<f64> {
    if logs.len() < 3 {
        return None;
    }
    let mut d: Vec<f64> = logs.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    d.sort_by(f64::total_cmp);
    let m = d.len();
    let med = if m % 2 == 1 {
        d[m / 2]
    } else {
        (d[m / 2 - 1] + d[m / 2]) / 2.0
    };
    let q75 = Normal::standard().inverse_cdf(0.75);
    Some(med / (std::f64::consts::SQRT_2 * q75))
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Find the change points of `values` (positive; non-positive values make the series untested).
pub fn detect(values: &[f64], s: &Settings) -> Detection {
    let none = Detection {
        sigma: None,
        changes: Vec::new(),
    };
    let n = values.len();
    if n < 2 || s.window == 0 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return none;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let sigma = match (s.noise_sigma.filter(|x| *x > 0.0), robust_sigma(&logs)) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => return none,
    };
    let normal = Normal::standard();
    let threshold = s.alpha / (n - 1) as f64;
    let min_step = (1.0 + s.min_change_pct / 100.0).ln();
    let mut cands = Vec::new();
    for k in 1..n {
        let left = &logs[k.saturating_sub(s.window)..k];
        let right = &logs[k..(k + s.window).min(n)];
        let delta = mean(right) - mean(left);
        let se = sigma * (1.0 / left.len() as f64 + 1.0 / right.len() as f64).sqrt();
        let z = if se > 0.0 {
            delta / se
        } else if delta == 0.0 {
            0.0
        } else {
            delta.signum() * f64::INFINITY
        };
        let p = 2.0 * normal.sf(z.abs());
        if p < threshold && delta.abs() >= min_step {
            cands.push(ChangePoint {
                index: k,
                before: mean(left).exp(),
                after: mean(right).exp(),
                change_pct: (delta.exp() - 1.0) * 100.0,
                z,
                p,
            });
        }
    }
    cands.sort_by(|a, b| b.z.abs().total_cmp(&a.z.abs()).then(a.index.cmp(&b.index)));
    let mut taken: Vec<ChangePoint> = Vec::new();
    for c in cands {
        if taken.iter().all(|t| t.index.abs_diff(c.index) >= s.window) {
            taken.push(c);
        }
    }
    taken.sort_by_key(|c| c.index);
    Detection {
        sigma: Some(sigma),
        changes: taken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic "noisy" multiplier series: ±2 % and smaller, no trend.
    const WIGGLE: [f64; 12] = [
        1.000, 1.018, 0.987, 1.006, 0.981, 1.012, 0.995, 1.021, 0.990, 1.004, 0.984, 1.015,
    ];

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn planted_step_is_found_where_it_is() {
        // 12 releases of throughput ≈ 1000 tok/s with ±2 % noise; a 15 % drop from release 7 on.
        let v: Vec<f64> = WIGGLE
            .iter()
            .enumerate()
            .map(|(i, w)| 1000.0 * w * if i >= 7 { 0.85 } else { 1.0 })
            .collect();
        let d = detect(
            &v,
            &Settings {
                noise_sigma: Some(0.02),
                ..Default::default()
            },
        );
        assert_eq!(d.changes.len(), 1, "{d:?}");
        let c = &d.changes[0];
        assert_eq!(c.index, 7);
        assert!(c.change_pct < -10.0 && c.change_pct > -20.0, "{c:?}");
        assert!(c.z < 0.0);
    }

    #[test]
    fn flat_noisy_series_has_no_change_point() {
        let v: Vec<f64> = WIGGLE.iter().map(|w| 1000.0 * w).collect();
        for noise in [None, Some(0.005), Some(0.02)] {
            let d = detect(
                &v,
                &Settings {
                    noise_sigma: noise,
                    ..Default::default()
                },
            );
            assert!(d.changes.is_empty(), "noise {noise:?}: {d:?}");
            assert!(d.sigma.is_some());
        }
        // Also with the tolerance switched off: the test alone keeps quiet.
        let d = detect(
            &v,
            &Settings {
                min_change_pct: 0.0,
                ..Default::default()
            },
        );
        assert!(d.changes.is_empty(), "{d:?}");
    }

    #[test]
    fn a_real_but_small_step_is_below_the_tolerance() {
        // A clean 3 % step in a near-silent series is significant but under δ = 5 %.
        let v: Vec<f64> = (0..10)
            .map(|i| if i < 5 { 100.0 } else { 103.0 } * (1.0 + 0.0005 * (i % 2) as f64))
            .collect();
        let s = Settings::default();
        assert!(detect(&v, &s).changes.is_empty());
        let d = detect(
            &v,
            &Settings {
                min_change_pct: 2.0,
                ..s
            },
        );
        assert_eq!(d.changes.iter().map(|c| c.index).collect::<Vec<_>>(), [5]);
    }

    #[test]
    fn two_steps_in_both_directions() {
        let v: Vec<f64> = WIGGLE
            .iter()
            .enumerate()
            .map(|(i, w)| {
                50.0 * w
                    * match i {
                        0..=3 => 1.0,
                        4..=7 => 1.3,
                        _ => 1.05,
                    }
            })
            .collect();
        let d = detect(
            &v,
            &Settings {
                noise_sigma: Some(0.02),
                ..Default::default()
            },
        );
        let idx: Vec<usize> = d.changes.iter().map(|c| c.index).collect();
        assert_eq!(idx, [4, 8], "{d:?}");
        assert!(d.changes[0].change_pct > 0.0 && d.changes[1].change_pct < 0.0);
    }

    #[test]
    fn scale_invariant() {
        let v: Vec<f64> = WIGGLE
            .iter()
            .enumerate()
            .map(|(i, w)| w * if i >= 6 { 1.2 } else { 1.0 })
            .collect();
        let s = Settings::default();
        let a = detect(&v, &s);
        let b = detect(&v.iter().map(|x| x * 1e4).collect::<Vec<_>>(), &s);
        assert_eq!(a.changes.len(), b.changes.len());
        for (x, y) in a.changes.iter().zip(&b.changes) {
            assert_eq!(x.index, y.index);
            close(x.z, y.z, 1e-9);
        }
    }

    /// Reference values from Python's standard library (statistics.NormalDist, statistics.median):
    ///   logs = [math.log(x) for x in (100, 104, 99, 120, 118, 121)]
    ///   d = [abs(b - a) for a, b in zip(logs, logs[1:])]
    ///   sigma = statistics.median(d) / (math.sqrt(2) * NormalDist().inv_cdf(0.75))
    ///   z = (fmean(logs[3:6]) - fmean(logs[0:3])) / (sigma * math.sqrt(2/3))
    ///   p = 2 * NormalDist().cdf(-abs(z))
    #[test]
    fn pinned_against_reference_values() {
        let v = [100.0, 104.0, 99.0, 120.0, 118.0, 121.0];
        let logs: Vec<f64> = v.iter().map(|x: &f64| x.ln()).collect();
        close(robust_sigma(&logs).unwrap(), 0.04111735163595122, 1e-12);
        let d = detect(&v, &Settings::default());
        close(d.sigma.unwrap(), 0.04111735163595122, 1e-12);
        assert_eq!(d.changes.len(), 1, "{d:?}");
        let c = &d.changes[0];
        assert_eq!(c.index, 3);
        close(c.z, 5.056627468259003, 1e-9);
        close(c.p, 4.2673567679507585e-07, 1e-12);
        close(c.before, 100.97708855200108, 1e-9);
        close(c.after, 119.66014953356327, 1e-9);
    }

    #[test]
    fn degenerate_inputs() {
        let s = Settings::default();
        assert_eq!(detect(&[], &s).sigma, None);
        assert_eq!(detect(&[1.0], &s).sigma, None);
        // Two points and no noise given: nothing to estimate the noise from.
        assert_eq!(detect(&[1.0, 2.0], &s).sigma, None);
        // Two points with a known noise: a doubling is a change point.
        let d = detect(
            &[1.0, 2.0],
            &Settings {
                noise_sigma: Some(0.05),
                ..s
            },
        );
        assert_eq!(d.changes.len(), 1);
        assert!(detect(&[1.0, -2.0, 3.0], &s).sigma.is_none());
        assert!(detect(&[1.0, f64::NAN, 3.0], &s).sigma.is_none());
        // A perfectly flat series: zero noise, nothing flagged.
        let d = detect(&[5.0; 6], &s);
        assert_eq!(d.sigma, Some(0.0));
        assert!(d.changes.is_empty());
    }
}
