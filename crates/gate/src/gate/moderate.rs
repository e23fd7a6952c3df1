//! The noise prior learnt from the rows in front of the gate (empirical Bayes, Smyth 2004:
//! "Linear models and empirical Bayes methods for assessing differential expression", the
//! method behind limma's `squeezeVar`). Every row of one kind (a metric class) has a sample
//! variance s²ᵢ on dᵢ degrees of freedom; they are modelled as draws of s₀² · χ²_{d₀}/d₀ scaled by
//! χ²_{dᵢ}/dᵢ, and (s₀², d₀) are estimated by moments of log s²ᵢ. When the rows agree, d₀ is large
//! and a row with few launches borrows their precision; when they differ, d₀ falls toward 0 and
//! each row stands on its own launches. No constant decides it.
//!
//! One departure from limma, in the weight the gate gives the prior ([`Prior::weight`]): never
//! more degrees of freedom than the average row it was estimated from (d₀ ≤ Σ dᵢ / rows).
//! limma's d₀ = ∞ (rows agreeing better than chance) is safe over thousands of genes; over the
//! dozen rows of a benchmark suite, whose launches are few, the spread of log s²ᵢ is mostly
//! sampling noise, so rows that differ several-fold (the GPU corpus: 1.3 % to 25 %) look alike
//! and a prior worth Σ dᵢ drowned the noisy rows' own evidence. The replay of the GPU corpus
//! measured it (docs/gate.md, "Method": false alarms 1–4.2 % with the cap at Σ dᵢ, 0–0.5 % with it at
//! the average row).

use statrs::function::gamma::digamma;

/// The learnt prior of one kind of row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    /// s₀²: the prior variance of one launch's log value.
    pub var: f64,
    /// d₀ as limma estimates it (∞ when the rows agree better than sampling alone allows).
    pub df: f64,
    /// Rows with replicated data it was estimated from.
    pub rows: usize,
    /// Σ dᵢ of those rows.
    pub data_df: f64,
}

impl Prior {
    /// The weight the gate gives the prior: d₀, at most the average row's own df.
    pub fn weight(&self) -> f64 {
        self.df.min(self.data_df / self.rows.max(1) as f64)
    }

    /// A row's moderated variance from its own sum of squares `ss` on `nu` degrees of freedom
    /// with the prior worth d₀ (limma's `squeezeVar`): (d₀ s₀² + ss) / (d₀ + ν), on d₀ + ν df,
    /// by the gate's own [`super::stats::shrunk_variance`] (which the gate calls with
    /// [`Prior::weight`] instead of d₀). `None` when both weigh nothing.
    pub fn squeeze(&self, ss: f64, nu: f64) -> Option<(f64, f64)> {
        super::stats::shrunk_variance(ss, nu, self.var.sqrt(), self.df)
    }
}

/// Trigamma ψ₁(x) for x > 0: the recurrence ψ₁(x) = ψ₁(x + 1) + 1/x² up to x ≥ 12, then the
/// asymptotic series.
pub fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 12.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let r = 1.0 / x;
    let r2 = r * r;
    // 1/x + 1/2x² + 1/6x³ − 1/30x⁵ + 1/42x⁷ − 1/30x⁹ + 5/66x¹¹
    let series = r
        + r2 / 2.0
        + r * r2
            * (1.0 / 6.0
                - r2 * (1.0 / 30.0 - r2 * (1.0 / 42.0 - r2 * (1.0 / 30.0 - r2 * 5.0 / 66.0))));
    acc + series
}

/// Tetragamma ψ₂(x) for x > 0, by the recurrence ψ₂(x) = ψ₂(x + 1) − 2/x³ and the asymptotic
/// series.
pub fn tetragamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 12.0 {
        acc -= 2.0 / (x * x * x);
        x += 1.0;
    }
    let r = 1.0 / x;
    let r2 = r * r;
    // −1/x² − 1/x³ − 1/2x⁴ + 1/6x⁶ − 1/6x⁸ + 3/10x¹⁰ − 5/6x¹²
    let series = -r2 - r2 * r
        + r2 * r2
            * (-0.5 + r2 * (1.0 / 6.0 - r2 * (1.0 / 6.0 - r2 * (3.0 / 10.0 - r2 * 5.0 / 6.0))));
    acc + series
}

/// The x with ψ₁(x) = y, y > 0: Newton's method on 1/ψ₁, which is nearly linear (Smyth 2004,
/// appendix), from x = 0.5 + 1/y; the asymptotes for very large and very small y.
pub fn trigamma_inverse(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let mut x = 0.5 + 1.0 / y;
    for _ in 0..50 {
        let tri = trigamma(x);
        let step = tri * (1.0 - tri / y) / tetragamma(x);
        x += step;
        if -step / x < 1e-8 {
            break;
        }
    }
    x
}

/// Estimate the prior of rows whose sample variances and degrees of freedom are `rows`
/// ((s², d) pairs; rows with d = 0 carry nothing and are skipped). `None` without any row of
/// replicated data. One row: its own variance worth 0 df (it cannot be told from its prior).
pub fn fit(rows: &[(f64, f64)]) -> Option<Prior> {
    let ok: Vec<(f64, f64)> = rows
        .iter()
        .copied()
        .filter(|(v, d)| v.is_finite() && *v >= 0.0 && d.is_finite() && *d > 0.0)
        .collect();
    let data_df: f64 = ok.iter().map(|r| r.1).sum();
    match ok.len() {
        0 => return None,
        1 => {
            return Some(Prior {
                var: ok[0].0,
                df: 0.0,
                rows: 1,
                data_df,
            })
        }
        _ => {}
    }
    let n = ok.len() as f64;
    // Variances of exactly zero (rounded metrics) are offset away from zero, as limma does.
    let mut vs: Vec<f64> = ok.iter().map(|r| r.0).collect();
    vs.sort_by(f64::total_cmp);
    let med = super::stats::median(&vs).unwrap_or(0.0);
    let floor = if med > 0.0 {
        1e-5 * med
    } else {
        f64::MIN_POSITIVE
    };
    // eᵢ = log s²ᵢ − ψ(dᵢ/2) + log(dᵢ/2): an unbiased estimate of log s₀² + (ψ(d₀/2) − log(d₀/2)).
    let e: Vec<f64> = ok
        .iter()
        .map(|(v, d)| v.max(floor).ln() - digamma(d / 2.0) + (d / 2.0).ln())
        .collect();
    let emean = e.iter().sum::<f64>() / n;
    let evar = e.iter().map(|x| (x - emean).powi(2)).sum::<f64>() / (n - 1.0)
        - ok.iter().map(|(_, d)| trigamma(d / 2.0)).sum::<f64>() / n;
    let (var, df) = if evar > 0.0 {
        let d0 = 2.0 * trigamma_inverse(evar);
        (
            emean.exp() * (digamma(d0 / 2.0) - (d0 / 2.0).ln()).exp(),
            d0,
        )
    } else {
        // The rows agree at least as well as sampling alone allows: limma's d₀ = ∞ with the
        // mean variance as the scale.
        let mean = ok.iter().map(|r| r.0.max(floor)).sum::<f64>() / n;
        (mean, f64::INFINITY)
    };
    Some(Prior {
        var,
        df,
        rows: ok.len(),
        data_df,
    })
}

#[cfg(test)]
// Reference values as R prints them (17 significant digits).
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) {
        assert!(
            (a - b).abs() <= rel * b.abs().max(1e-300),
            "{a} vs {b} (rel {rel})"
        );
    }

    #[test]
    fn polygammas_match_r() {
        // R: trigamma(c(0.3, 1, 2.5, 7, 40)); psigamma(x, 2)
        let x = [0.3, 1.0, 2.5, 7.0, 40.0];
        let tri = [
            12.245_364_546_107_732,
            1.644_934_066_848_226_4,
            0.490_357_756_100_234_91,
            0.153_545_177_959_337_5,
            0.025_315_103_841_291_028,
        ];
        let tetra = [
            -75.272_536_588_726_027,
            -2.404_113_806_319_188_5,
            -0.236_204_051_641_727_42,
            -0.023_530_472_985_855_231,
            -0.000_640_820_271_835_298_58,
        ];
        for i in 0..x.len() {
            close(trigamma(x[i]), tri[i], 1e-12);
            close(tetragamma(x[i]), tetra[i], 1e-11);
        }
        // R: limma::trigammaInverse(c(0.05, 0.5, 2, 10, 1e-4))
        let y = [0.05, 0.5, 2.0, 10.0, 1e-4];
        let inv = [
            20.495_835_239_154_601,
            2.459_952_948_352_307_3,
            0.876_664_077_464_260_12,
            0.335_081_044_378_035_65,
            10_000.499_991_666_666,
        ];
        for i in 0..y.len() {
            close(trigamma_inverse(y[i]), inv[i], 1e-8);
        }
    }

    #[test]
    fn the_prior_matches_limma_fit_f_dist() {
        // R 4.2 / limma 3.54:
        //   v <- c(0.00031, 0.0012, 0.00047, 0.0021, 0.00066, 0.0009, 0.0032, 0.00015)
        //   d <- c(4, 4, 6, 2, 5, 3, 2, 4); fitFDist(v, d); squeezeVar(v, d)$var.post
        let v = [
            0.00031, 0.0012, 0.00047, 0.0021, 0.00066, 0.0009, 0.0032, 0.00015,
        ];
        let d = [4.0, 4.0, 6.0, 2.0, 5.0, 3.0, 2.0, 4.0];
        let rows: Vec<(f64, f64)> = v.iter().copied().zip(d).collect();
        let p = fit(&rows).unwrap();
        close(p.var, 0.000_893_136_731_549_496_97, 1e-8);
        close(p.df, 6.149_214_368_755_667_5, 1e-8);
        assert_eq!((p.rows, p.data_df), (8, 30.0));
        // The gate weighs it at most as the average row: 30 / 8 df.
        assert_eq!(p.weight(), 3.75);
        let post = [
            0.000_663_311_363_649_225_84,
            0.001_014_077_429_933_080_4,
            0.000_684_166_808_701_966_34,
            0.001_189_328_048_611_336,
            0.000_788_583_745_196_111_02,
            0.000_895_387_176_726_715_93,
            0.001_459_292_722_560_136_1,
            0.000_600_252_295_553_252_02,
        ];
        for i in 0..v.len() {
            let (var, df) = p.squeeze(v[i] * d[i], d[i]).unwrap();
            close(var, post[i], 1e-8);
            close(df, p.df + d[i], 1e-12);
        }
    }

    #[test]
    fn rows_that_differ_give_a_weak_prior_and_rows_that_agree_a_capped_weight() {
        // R: fitFDist(c(1e-6, 0.01, 0.0001, 0.04, 2e-5), 2): scale 2.3918601050218945e-05,
        // df2 0.49357699520420817
        let rows: Vec<(f64, f64)> = [1e-6, 0.01, 0.0001, 0.04, 2e-5]
            .iter()
            .map(|v| (*v, 2.0))
            .collect();
        let p = fit(&rows).unwrap();
        close(p.var, 2.391_860_105_021_894_5e-5, 1e-8);
        close(p.df, 0.493_576_995_204_208_17, 1e-8);
        assert_eq!(p.weight(), p.df);
        // R: fitFDist(c(4, 9, 2.5, 16, 6, 11) * 1e-4, c(4, 4, 6, 2, 5, 3)): scale
        // 0.00080833333333333332 (the mean), df2 Inf; the gate weighs it as the average row.
        let v = [0.0004, 0.0009, 0.00025, 0.0016, 0.0006, 0.0011];
        let d = [4.0, 4.0, 6.0, 2.0, 5.0, 3.0];
        let rows: Vec<(f64, f64)> = v.iter().copied().zip(d).collect();
        let p = fit(&rows).unwrap();
        close(p.var, 0.000_808_333_333_333_333_32, 1e-12);
        assert_eq!(p.df, f64::INFINITY);
        assert_eq!(p.weight(), 4.0);
    }

    #[test]
    fn no_replicated_row_gives_no_prior_and_one_row_a_weightless_one() {
        assert_eq!(fit(&[]), None);
        assert_eq!(fit(&[(0.01, 0.0), (0.02, 0.0)]), None);
        let p = fit(&[(0.01, 0.0), (0.0004, 3.0)]).unwrap();
        assert_eq!((p.var, p.df, p.rows), (0.0004, 0.0, 1));
        // A weightless prior leaves a row's own variance alone.
        let (v, d) = p.squeeze(0.0009 * 3.0, 3.0).unwrap();
        assert!((v - 0.0009).abs() < 1e-15 && d == 3.0, "{v} {d}");
    }
}
