//! One sampled quantity over a run: an accumulator with bounded memory and its summary.

use serde::{Deserialize, Serialize};

/// The most values an accumulator keeps; past it, it keeps every second one and samples half
/// as often, so a run of any length costs at most this many values per series.
const CAP: usize = 1024;

/// Summary of one series: how many samples, and their minimum, median and maximum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Series {
    pub n: u64,
    pub min: f64,
    /// The median of the kept values (exact up to 1,024 samples, of an even thinning beyond).
    pub median: f64,
    pub max: f64,
}

/// Values of one series as they arrive. Non-finite values are ignored.
#[derive(Debug, Clone, Default)]
pub struct SeriesAcc {
    kept: Vec<f64>,
    /// Keep one value of every `stride` pushed.
    stride: u64,
    n: u64,
    min: f64,
    max: f64,
}

impl SeriesAcc {
    pub fn push(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        if self.n == 0 {
            self.min = v;
            self.max = v;
            self.stride = 1;
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if self.n.is_multiple_of(self.stride) {
            if self.kept.len() == CAP {
                let thinned: Vec<f64> = self.kept.iter().copied().step_by(2).collect();
                self.kept = thinned;
                self.stride *= 2;
            }
            if self.n.is_multiple_of(self.stride) {
                self.kept.push(v);
            }
        }
        self.n += 1;
    }

    /// `None` when nothing finite was pushed.
    pub fn summary(&self) -> Option<Series> {
        if self.n == 0 {
            return None;
        }
        let mut v = self.kept.clone();
        v.sort_by(f64::total_cmp);
        let m = v.len();
        let median = if m % 2 == 1 {
            v[m / 2]
        } else {
            (v[m / 2 - 1] + v[m / 2]) / 2.0
        };
        Some(Series {
            n: self.n,
            min: self.min,
            median,
            max: self.max,
        })
    }

    /// Values kept (for the memory bound's test).
    pub fn kept(&self) -> usize {
        self.kept.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_few_values() {
        let mut a = SeriesAcc::default();
        assert_eq!(a.summary(), None);
        for v in [3.0, f64::NAN, 1.0, 4.0, 1.5] {
            a.push(v);
        }
        let s = a.summary().unwrap();
        assert_eq!((s.n, s.min, s.median, s.max), (4, 1.0, 2.25, 4.0));
    }

    #[test]
    fn memory_is_bounded_and_extremes_exact() {
        let mut a = SeriesAcc::default();
        for i in 0..100_000u32 {
            a.push(f64::from(i));
        }
        assert!(a.kept() <= CAP, "{}", a.kept());
        let s = a.summary().unwrap();
        assert_eq!((s.n, s.min, s.max), (100_000, 0.0, 99_999.0));
        // An even thinning of 0..100000 keeps its median near 50000.
        assert!((s.median - 50_000.0).abs() < 200.0, "{}", s.median);
    }
}
