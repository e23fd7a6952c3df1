//! Which look of a sequential check a gate is judged at, and the levels that look gets: the
//! settings' α and pass level whole for a single look, or their share at look k of K
//! (α-spending, [`stats::look_alpha`]). The runner passes the look to the gate as an argument;
//! the settings never carry it.

use super::config::GateConfig;
use super::stats;

/// Look `k` (1-based) of `of` planned looks at the same data as it grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Look {
    pub k: u32,
    pub of: u32,
}

/// The levels one look of a check is judged at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Levels {
    /// The family-wise α over all looks.
    alpha: f64,
    /// The level of the `pass` bound over all looks.
    equivalence_alpha: f64,
    /// The look, `None` for a single look.
    pub look: Option<Look>,
}

impl GateConfig {
    /// The levels of `look` under these settings (`None`: a single look).
    pub fn levels(&self, look: Option<Look>) -> Levels {
        Levels {
            alpha: self.alpha(),
            equivalence_alpha: self.equivalence_alpha(),
            look,
        }
    }
}

impl Levels {
    /// The family-wise α over all looks.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The same look with α shared by `n` families (Bonferroni): `perfgate ab`'s models.
    pub fn shared(self, n: f64) -> Levels {
        Levels {
            alpha: self.alpha / n,
            ..self
        }
    }

    /// The level of this look's "worse than δ" tests: α, or its share under α-spending.
    pub fn look_alpha(&self) -> f64 {
        self.look_alpha_at(1.0)
    }

    /// The family-wise α of this look for a Holm family of `m` equally weighted tests.
    pub fn look_alpha_for(&self, m: usize) -> f64 {
        self.look_alpha_at(1.0 / m.max(1) as f64)
    }

    /// The family-wise α of this look for a weighted Holm family whose smallest weight is
    /// `w_min` (weights summing to 1): α times the share of the level that the group-sequential
    /// boundary gives this look at the family's smallest level, α · w_min
    /// ([`stats::look_ratio`]). The share grows with the level, so every larger Holm
    /// level gets at most its own boundary's level and α holds over all looks.
    pub fn look_alpha_at(&self, w_min: f64) -> f64 {
        let a = self.alpha;
        match self.look {
            Some(l) => a * stats::look_ratio(a * w_min.clamp(f64::MIN_POSITIVE, 1.0), l.k, l.of),
            None => a,
        }
    }

    /// The level of this look's `pass` bound: `equivalence_alpha`, or its share.
    pub fn look_equivalence_alpha(&self) -> f64 {
        match self.look {
            Some(l) => stats::look_alpha(self.equivalence_alpha, l.k, l.of),
            None => self.equivalence_alpha,
        }
    }

    /// The level of this look's `pass` bound for a test with `df` degrees of freedom
    /// ([`stats::look_alpha_df`]): a t statistic with few df keeps less of the boundary.
    pub fn look_equivalence_alpha_df(&self, df: f64) -> f64 {
        match self.look {
            Some(l) => stats::look_alpha_df(self.equivalence_alpha, l.k, l.of, df),
            None => self.equivalence_alpha,
        }
    }

    /// The part of this look's level, for a family's smallest level `level`, that a test with
    /// `df` degrees of freedom keeps: 1 with no looks or a known variance, less for a t statistic
    /// with few df ([`stats::look_alpha_df`]). A test's p-value is divided by it before
    /// Holm, which is the same as judging that test alone at its df-adjusted level.
    pub fn look_df_factor(&self, level: f64, df: f64) -> f64 {
        match self.look {
            Some(l) => {
                let full = stats::look_alpha(level, l.k, l.of);
                if full > 0.0 {
                    stats::look_alpha_df(level, l.k, l.of, df) / full
                } else {
                    1.0
                }
            }
            None => 1.0,
        }
    }
}
