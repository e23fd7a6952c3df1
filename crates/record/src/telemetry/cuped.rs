//! CUPED-style regression adjustment (Deng et al. 2013): a metric `Y` measured per launch is
//! corrected by a covariate `X` measured before the launch and independent of the change under
//! test (here the pre-launch calibration loop's time): θ = cov(Y, X) / var(X),
//! `Y_adj = Y − θ (X − X̄)`. The adjusted values keep `Y`'s mean; their variance is
//! `var(Y)(1 − ρ²)` in-sample, so an honest judgement of the gain estimates θ without the value
//! it adjusts ([`adjust_loo`]).

/// θ = cov(Y, X) / var(X) (sample moments). `None` with fewer than 2 pairs, lengths that differ,
/// or an `X` with no variance.
pub fn theta(y: &[f64], x: &[f64]) -> Option<f64> {
    let n = y.len();
    if n < 2 || x.len() != n {
        return None;
    }
    let (my, mx) = (mean(y), mean(x));
    let cov: f64 = y.iter().zip(x).map(|(a, b)| (a - my) * (b - mx)).sum();
    let var: f64 = x.iter().map(|b| (b - mx) * (b - mx)).sum();
    (var > 0.0 && var.is_finite()).then(|| cov / var)
}

/// `Y_adj = Y − θ (X − X̄)` with θ from the same data.
pub fn adjust(y: &[f64], x: &[f64]) -> Option<Vec<f64>> {
    let t = theta(y, x)?;
    let mx = mean(x);
    Some(y.iter().zip(x).map(|(a, b)| a - t * (b - mx)).collect())
}

/// Leave-one-out adjustment: each `Y_i` corrected with θ and X̄ of the other pairs, so the
/// adjustment cannot fit the noise it is judged on. Needs at least 3 pairs.
pub fn adjust_loo(y: &[f64], x: &[f64]) -> Option<Vec<f64>> {
    if y.len() < 3 || x.len() != y.len() {
        return None;
    }
    (0..y.len())
        .map(|i| {
            let ys: Vec<f64> = (0..y.len()).filter(|&j| j != i).map(|j| y[j]).collect();
            let xs: Vec<f64> = (0..x.len()).filter(|&j| j != i).map(|j| x[j]).collect();
            let t = theta(&ys, &xs)?;
            Some(y[i] - t * (x[i] - mean(&xs)))
        })
        .collect()
}

/// Coefficient of variation: sample standard deviation over the mean (`None` below 2 values or
/// for a zero mean).
pub fn cv(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let m = mean(v);
    let var = v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / (v.len() - 1) as f64;
    (m != 0.0).then(|| var.sqrt() / m.abs())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const Y: [f64; 6] = [10.2, 11.5, 9.8, 12.1, 10.9, 11.0];
    const X: [f64; 6] = [0.21, 0.25, 0.20, 0.27, 0.23, 0.22];

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
    }

    // Reference values from numpy 1.x:
    //   th = np.cov(y, x)[0, 1] / np.cov(y, x)[1, 1]; adj = y - th * (x - x.mean())
    //   cv = lambda v: np.std(v, ddof=1) / np.mean(v)
    #[test]
    fn in_sample_adjustment_matches_numpy() {
        close(theta(&Y, &X).unwrap(), 31.176470588235276);
        let adj = adjust(&Y, &X).unwrap();
        let want = [
            10.823529411764705,
            10.876470588235295,
            10.735294117647058,
            10.852941176470587,
            10.9,
            11.311764705882352,
        ];
        for (a, b) in adj.iter().zip(want) {
            close(*a, b);
        }
        close(cv(&Y).unwrap(), 0.07673179769849808);
        close(cv(&adj).unwrap(), 0.018486006891789572);
    }

    // numpy: for each i, th_i and x̄_i from the other five pairs; y[i] - th_i * (x[i] - x̄_i).
    #[test]
    fn leave_one_out_matches_numpy() {
        let adj = adjust_loo(&Y, &X).unwrap();
        let want = [
            10.929863013698629,
            10.743835616438357,
            10.82103448275862,
            10.504324324324323,
            10.9,
            11.391463414634146,
        ];
        for (a, b) in adj.iter().zip(want) {
            close(*a, b);
        }
        close(cv(&adj).unwrap(), 0.026874559373165137);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(theta(&[1.0, 2.0], &[3.0, 3.0]), None);
        assert_eq!(theta(&[1.0], &[3.0]), None);
        assert_eq!(theta(&[1.0, 2.0], &[3.0]), None);
        assert_eq!(adjust_loo(&[1.0, 2.0], &[1.0, 2.0]), None);
        assert_eq!(cv(&[0.0, 0.0]), None);
        // An uncorrelated covariate leaves Y as it was.
        let y = [1.0, 2.0, 1.0, 2.0];
        assert_eq!(adjust(&y, &[1.0, 1.0, 2.0, 2.0]).unwrap(), y);
    }
}
