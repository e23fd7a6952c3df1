//! Gate settings: which metrics are gated, each metric's direction, tolerance δ and noise prior,
//! and the error rates. Defaults live here (tuned with `examples/gate-sim.rs`); a baseline's
//! `[gate]` table and a `--gate` TOML file override them key by key. Unknown keys are errors.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::{is_stat_key, Direction};

/// Metrics gated row by row by default, in report order: one per quantity. Request throughput
/// is output throughput at fixed lengths and mean E2E latency is TTFT plus TPOT × tokens, so
/// they are shown, not gated twice. `success_rate` is decided by a rule, not a test.
pub const DEFAULT_GATED: [&str; 4] = [
    "output_throughput",
    "median_ttft_ms",
    "median_tpot_ms",
    "success_rate",
];

/// Metrics shown (not gated) by default when both sides have them, after the gated ones. Tail
/// percentiles are too noisy to gate row by row with a few launches; they are gated through the
/// engine-wide test ([`DEFAULT_ENGINE_WIDE`]).
pub const DEFAULT_SHOWN: [&str; 11] = [
    "request_throughput",
    "p99_ttft_ms",
    "p99_tpot_ms",
    "median_itl_ms",
    "mean_e2el_ms",
    "total_token_throughput",
    "mean_ttft_ms",
    "mean_tpot_ms",
    "p99_itl_ms",
    "p99_e2el_ms",
    "duration",
];

/// Metrics with an engine-wide test by default: per model, the precision-weighted mean change
/// over its scenarios, launch by launch. It catches a small uniform regression that no single
/// row can show with a few launches.
pub const DEFAULT_ENGINE_WIDE: [&str; 5] = [
    "output_throughput",
    "median_ttft_ms",
    "median_tpot_ms",
    "p99_ttft_ms",
    "p99_tpot_ms",
];

/// Default family-wise false-alarm rate of one check (Holm over the gated rows and the
/// engine-wide tests, each testing "worse than its tolerance").
pub const DEFAULT_ALPHA: f64 = 0.01;
/// Default one-sided level of the bound that must sit within δ for a `pass`.
pub const DEFAULT_EQUIVALENCE_ALPHA: f64 = 0.05;
/// Weight, in degrees of freedom, of a noise prior the settings name (`noise_pct`) when they
/// do not also set `prior_df`: weak, so that a row's own launches dominate as soon as there
/// are a few. A learnt prior carries its own weight (see [`super::moderate`]).
pub const DEFAULT_PRIOR_DF: f64 = 4.0;
/// The largest `prior_df` accepted: beyond it the prior would outweigh any data a check can
/// have, which is a setting error, not a prior.
pub const MAX_PRIOR_DF: f64 = 1000.0;
/// Default share of α that weighted Holm gives the widest engine-wide tests (over all models,
/// or over the model's scenarios when the check has one model); the rows and the narrower
/// tests share the rest. See [`GateConfig::holm_weights`].
pub const DEFAULT_ENGINE_WIDE_SHARE: f64 = 0.25;
/// Default `machine_slope`: a stored check's se widens by 2 × the shift of perfgate's
/// calibration loop between its sides beyond the loop's own noise. Between sittings of one
/// host a metric's log moved 1.6–2.1 × the loop's (pooled per metric, llama.cpp and vLLM on
/// CPU; 0.6–1.9 on the H200 leases), and on those corpora 2 is the smallest of 1 and 2 that kept
/// replayed false alarms ≤ 1 % and a row worse by δ passing ≤ 5 % on session splits
/// (docs/gate.md, "The loop as a covariate"). Five later vLLM sittings of a host that slowed
/// beyond its loop (slopes 1.6–3.4) pass a row worse by δ in 6.5 % of session splits at 2, 4.1 %
/// at 3, at a price in passes for a quiet engine on a noisy host (docs/gate.md, "Five vLLM
/// sittings"). 0 turns the term off.
pub const DEFAULT_MACHINE_SLOPE: f64 = 2.0;
/// The largest `session_ratio` / `unwatched_session_ratio` accepted: a session offset ten
/// launch sd wide.
pub const MAX_SESSION_RATIO: f64 = 100.0;

/// The noise class of a metric: sets its default tolerance, and pools its rows' noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MetricClass {
    /// Throughputs, goodput, duration: steady, a few percent run to run.
    Throughput,
    /// Means and medians of latencies.
    Central,
    /// Tail percentiles, maxima and spreads of latencies.
    Tail,
    /// Counts and anything else.
    Other,
}

impl MetricClass {
    pub fn of(metric: &str) -> MetricClass {
        if metric.ends_with("_throughput")
            || metric == "request_goodput"
            || metric == "max_output_tokens_per_s"
            || metric == "duration"
        {
            MetricClass::Throughput
        } else if metric.starts_with("mean_") || metric.starts_with("median_") {
            MetricClass::Central
        } else if is_stat_key(metric) {
            MetricClass::Tail
        } else {
            MetricClass::Other
        }
    }

    /// Default tolerance δ of one row, in percent.
    pub fn default_tolerance_pct(self) -> f64 {
        match self {
            MetricClass::Throughput => 5.0,
            MetricClass::Central => 10.0,
            MetricClass::Tail => 20.0,
            MetricClass::Other => 5.0,
        }
    }

    /// Default tolerance δ of the engine-wide test, in percent.
    pub fn default_engine_tolerance_pct(self) -> f64 {
        match self {
            MetricClass::Throughput => 2.0,
            MetricClass::Central => 3.0,
            MetricClass::Tail => 6.0,
            MetricClass::Other => 2.0,
        }
    }

    /// A typical launch-to-launch standard deviation of the log value (≈ relative sd) on the
    /// recorded GPU corpus: the scale of `perfgate history`'s change-point search only. The
    /// gate never uses it: it learns each metric's noise from the rows in front of it.
    pub fn typical_noise_pct(self) -> f64 {
        match self {
            MetricClass::Throughput => 4.0,
            MetricClass::Central => 8.0,
            MetricClass::Tail => 12.0,
            MetricClass::Other => 4.0,
        }
    }
}

/// The fewest completed requests a scenario's run needs for its percentile metric `metric`
/// (`p99_ttft_ms`: 100) to enter an engine-wide test: at least one request beyond the percentile,
/// n · (1 − q) ≥ 1. Below that the "p99" of 8 requests is their largest value, an extreme whose
/// launch-to-launch spread is heavy-tailed: on the CPU corpora (4–8 requests a scenario) the
/// engine-wide p99 tests were most of the false alarms (docs/gate.md, "Decision quality"). `None` for a
/// metric that is not a percentile.
pub fn percentile_needs(metric: &str) -> Option<u64> {
    let stat = metric.strip_suffix("_ms")?.split('_').next()?;
    let q: f64 = stat.strip_prefix('p')?.parse().ok()?;
    if !(0.0..100.0).contains(&q) || !is_stat_key(metric) {
        return None;
    }
    // 1 / (1 − q/100), rounded up, with a little slack for the decimal of q (p99 → 100).
    Some((100.0 / (100.0 - q) - 1e-9).ceil() as u64)
}

/// Whether every run in `runs` completed enough requests for the percentile `metric` to enter an
/// engine-wide test ([`percentile_needs`]); true for a metric that is not a percentile.
pub fn percentile_supported(metric: &str, runs: &[&crate::record::ScenarioResult]) -> bool {
    percentile_needs(metric).is_none_or(|n| runs.iter().all(|r| r.completed >= n))
}

/// Overrides for one metric. Every key is optional; what is absent keeps its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricGate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gated: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Tolerance δ in percent: smaller changes never fail the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_pct: Option<f64>,
    /// Tolerance δ of the engine-wide test in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_tolerance_pct: Option<f64>,
    /// Noise prior: launch-to-launch relative standard deviation in percent, worth `prior_df`
    /// degrees of freedom. Absent (the default): learnt from the check's own rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_pct: Option<f64>,
}

/// Per-metric gate settings: which metrics are gated, their tolerances and directions.
/// Lives in a baseline file's `[gate]` table or a `--gate` file.
///
/// ```toml
/// alpha = 0.01              # family-wise rate of "worse than δ" false alarms per check (Holm)
/// equivalence_alpha = 0.05  # one-sided level of the bound that must sit within δ to pass
/// prior_df = 4              # weight of the noise prior in df (default: learnt from the rows)
/// engine_wide_share = 0.25  # least share of α for the widest engine-wide tests (weighted Holm)
/// machine_slope = 2         # se widened by this × the calibration loop's shift (0: off)
/// session_ratio = 1         # λ assumed where no side measures it, the loop watching
/// unwatched_session_ratio = 4  # … and where no loop watches (none timed, machine_slope = 0)
/// gated = ["output_throughput", "p99_ttft_ms", "success_rate"]   # replaces the default list
/// show = ["mean_itl_ms"]    # extra metrics to show, not gate
/// engine_wide = ["output_throughput", "p99_ttft_ms"]            # replaces the default list
///
/// [metrics.p99_ttft_ms]
/// tolerance_pct = 20
/// engine_tolerance_pct = 6
/// noise_pct = 12
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalence_alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior_df: Option<f64>,
    /// Least share of α (weighted Holm) for the widest engine-wide tests: over all models, or
    /// over the model's scenarios when the check has one model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_wide_share: Option<f64>,
    /// How strongly a metric may follow the machine's speed (log slope on perfgate's calibration
    /// loop time): a stored check whose sides' loops differ beyond their noise has its se widened
    /// by this slope times the shift. Absent: 2; 0: no such term; at most 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_slope: Option<f64>,
    /// λ, the between-session variance over the launch variance, assumed where no side of
    /// the check spans two sessions and both sides timed perfgate's calibration loop (the
    /// machine term watches the machine). Absent: 1; at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ratio: Option<f64>,
    /// λ assumed where nothing measures it and nothing watches the machine: a side without
    /// calibration loop times (imports, `--no-telemetry`) or `machine_slope = 0`. Absent: 4;
    /// at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unwatched_session_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gated: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_wide: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricGate>,
}

/// A setting that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {reason}")]
    Io {
        path: String,
        reason: std::io::Error,
    },
    #[error("{path}:{line}:{col}: {message}")]
    Parse {
        path: String,
        line: usize,
        col: usize,
        message: String,
    },
    #[error("gate setting `{key}`: {message}")]
    Invalid { key: String, message: String },
}

/// The resolved rule for one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricRule {
    pub gated: bool,
    pub direction: Direction,
    pub tolerance_pct: f64,
    pub engine_tolerance_pct: f64,
    /// A noise prior the settings name (percent); `None`: learnt from the rows.
    pub noise_pct: Option<f64>,
}

/// Is `name` a metric a record can carry?
pub fn is_known_metric(name: &str) -> bool {
    is_stat_key(name)
        || matches!(
            name,
            "completed"
                | "failed"
                | "duration"
                | "total_input_tokens"
                | "total_output_tokens"
                | "total_output_tokens_retokenized"
                | "request_throughput"
                | "request_goodput"
                | "input_throughput"
                | "output_throughput"
                | "total_token_throughput"
                | "max_output_tokens_per_s"
                | "max_concurrent_requests"
                | "success_rate"
        )
}

impl GateConfig {
    /// Parse a `--gate` file's text.
    pub fn parse(text: &str, path: &str) -> Result<GateConfig, ConfigError> {
        let cfg: GateConfig = toml::from_str(text).map_err(|e| {
            let (line, col) = e
                .span()
                .map_or((1, 1), |s| crate::text::line_col(text, s.start));
            ConfigError::Parse {
                path: path.into(),
                line,
                col,
                message: crate::text::shorten_quoted(e.message(), 80),
            }
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Read a `--gate` file.
    pub fn load(path: &std::path::Path) -> Result<GateConfig, ConfigError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|reason| ConfigError::Io {
            path: p.clone(),
            reason,
        })?;
        GateConfig::parse(&text, &p)
    }

    /// Check ranges and metric names.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, message: String| ConfigError::Invalid {
            key: key.into(),
            message,
        };
        let prob = |key: &str, v: Option<f64>| match v {
            Some(a) if !(a > 0.0 && a < 0.5) => {
                Err(bad(key, format!("must be in (0, 0.5), got {a}")))
            }
            _ => Ok(()),
        };
        prob("alpha", self.alpha)?;
        prob("equivalence_alpha", self.equivalence_alpha)?;
        if let Some(s) = self.engine_wide_share {
            if !(s > 0.0 && s < 1.0) {
                return Err(bad(
                    "engine_wide_share",
                    format!("must be in (0, 1), got {s}"),
                ));
            }
        }
        if let Some(m) = self.machine_slope {
            if !(m.is_finite() && (0.0..=10.0).contains(&m)) {
                return Err(bad("machine_slope", format!("must be in [0, 10], got {m}")));
            }
        }
        for (key, v) in [
            ("session_ratio", self.session_ratio),
            ("unwatched_session_ratio", self.unwatched_session_ratio),
        ] {
            if let Some(r) = v {
                if !(r.is_finite() && (0.0..=MAX_SESSION_RATIO).contains(&r)) {
                    return Err(bad(
                        key,
                        format!("must be in [0, {MAX_SESSION_RATIO}], got {r}"),
                    ));
                }
            }
        }
        if let Some(d) = self.prior_df {
            if !(d.is_finite() && (0.0..=MAX_PRIOR_DF).contains(&d)) {
                return Err(bad(
                    "prior_df",
                    format!("must be in [0, {MAX_PRIOR_DF}], got {d}"),
                ));
            }
        }
        for (key, list) in [
            ("gated", &self.gated),
            ("show", &self.show),
            ("engine_wide", &self.engine_wide),
        ] {
            for m in list.iter().flatten() {
                if !is_known_metric(m) {
                    return Err(bad(key, format!("unknown metric `{m}`")));
                }
            }
        }
        for (name, m) in &self.metrics {
            let key = format!("metrics.{name}");
            if !is_known_metric(name) {
                return Err(bad(&key, format!("unknown metric `{name}`")));
            }
            for (field, v) in [
                ("tolerance_pct", m.tolerance_pct),
                ("engine_tolerance_pct", m.engine_tolerance_pct),
                ("noise_pct", m.noise_pct),
            ] {
                if let Some(v) = v {
                    if !(v.is_finite() && v > 0.0 && v < 100.0) {
                        return Err(bad(
                            &format!("{key}.{field}"),
                            format!("must be in (0, 100), got {v}"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// `other` on top of `self`: every key `other` sets wins.
    pub fn merged(&self, other: &GateConfig) -> GateConfig {
        let mut out = self.clone();
        out.alpha = other.alpha.or(out.alpha);
        out.equivalence_alpha = other.equivalence_alpha.or(out.equivalence_alpha);
        out.prior_df = other.prior_df.or(out.prior_df);
        out.engine_wide_share = other.engine_wide_share.or(out.engine_wide_share);
        out.machine_slope = other.machine_slope.or(out.machine_slope);
        out.session_ratio = other.session_ratio.or(out.session_ratio);
        out.unwatched_session_ratio = other
            .unwatched_session_ratio
            .or(out.unwatched_session_ratio);
        if other.gated.is_some() {
            out.gated = other.gated.clone();
        }
        if other.show.is_some() {
            out.show = other.show.clone();
        }
        if other.engine_wide.is_some() {
            out.engine_wide = other.engine_wide.clone();
        }
        for (name, o) in &other.metrics {
            let e = out.metrics.entry(name.clone()).or_default();
            e.gated = o.gated.or(e.gated);
            e.direction = o.direction.or(e.direction);
            e.tolerance_pct = o.tolerance_pct.or(e.tolerance_pct);
            e.engine_tolerance_pct = o.engine_tolerance_pct.or(e.engine_tolerance_pct);
            e.noise_pct = o.noise_pct.or(e.noise_pct);
        }
        out
    }

    pub fn alpha(&self) -> f64 {
        self.alpha.unwrap_or(DEFAULT_ALPHA)
    }

    pub fn equivalence_alpha(&self) -> f64 {
        self.equivalence_alpha.unwrap_or(DEFAULT_EQUIVALENCE_ALPHA)
    }

    /// The weight of the noise prior the settings fix, if they do.
    pub fn prior_df(&self) -> Option<f64> {
        self.prior_df
    }

    /// The machine term's slope ([`DEFAULT_MACHINE_SLOPE`] unless set; 0: no term).
    pub fn machine_slope(&self) -> f64 {
        self.machine_slope.unwrap_or(DEFAULT_MACHINE_SLOPE)
    }

    /// λ assumed where nothing measures it: [`Self::session_ratio`] or, when nothing watches
    /// the machine (`watched` false), [`Self::unwatched_session_ratio`].
    pub fn assumed_session_ratio(&self, watched: bool) -> f64 {
        if watched {
            self.session_ratio
                .unwrap_or(crate::gate::noise::SESSION_RATIO_PRIOR)
        } else {
            self.unwatched_session_ratio
                .unwrap_or(crate::gate::noise::UNWATCHED_SESSION_RATIO_PRIOR)
        }
    }

    pub fn engine_wide_share(&self) -> f64 {
        self.engine_wide_share.unwrap_or(DEFAULT_ENGINE_WIDE_SHARE)
    }

    /// Weighted Holm's weights for a family of gated tests, `widest[i]` telling whether test
    /// i is one of the widest engine-wide tests: those share [`Self::engine_wide_share`] of α
    /// equally (or their share under equal weights, when that is more), the others the rest
    /// equally; a group that is empty leaves everything to the other. The weights sum to 1.
    ///
    /// Why not equal weights: a uniform slowdown, the commonest regression, is seen by the
    /// engine-wide test long before any row; with equal weights its level shrinks with every
    /// row of the suite (α / 107 on a 6-model, 4-scenario suite), while a row loses little
    /// when its level drops by a quarter (docs/gate.md, "Settings": the measured table). A small suite's
    /// engine-wide tests already hold more than that share, and keep it.
    pub fn holm_weights(&self, widest: &[bool]) -> Vec<f64> {
        let n_wide = widest.iter().filter(|w| **w).count();
        let n_rest = widest.len() - n_wide;
        let share = match (n_wide, n_rest) {
            (0, _) => 0.0,
            (_, 0) => 1.0,
            _ => self
                .engine_wide_share()
                .max(n_wide as f64 / widest.len() as f64),
        };
        widest
            .iter()
            .map(|&w| {
                if w {
                    share / n_wide as f64
                } else {
                    (1.0 - share) / n_rest as f64
                }
            })
            .collect()
    }

    /// The metrics with an engine-wide test: the `engine_wide` list; without one, the default
    /// list, or, when `gated` replaces the default gated list, those of its metrics that the
    /// default engine-wide list names (so `gated = []` gates nothing at all).
    pub fn engine_wide_list(&self) -> Vec<String> {
        match (&self.engine_wide, &self.gated) {
            (Some(l), _) => l.clone(),
            (None, Some(g)) => DEFAULT_ENGINE_WIDE
                .iter()
                .filter(|m| g.iter().any(|x| x == *m))
                .map(|s| s.to_string())
                .collect(),
            (None, None) => DEFAULT_ENGINE_WIDE.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The metrics of a report in order: gated ones first, then shown ones.
    pub fn metric_list(&self) -> Vec<String> {
        let mut out: Vec<String> = match &self.gated {
            Some(g) => g.clone(),
            None => DEFAULT_GATED.iter().map(|s| s.to_string()).collect(),
        };
        let shown: Vec<String> = match &self.show {
            Some(s) => s.clone(),
            None => DEFAULT_SHOWN.iter().map(|s| s.to_string()).collect(),
        };
        for (name, m) in &self.metrics {
            if m.gated == Some(true) && !out.contains(name) {
                out.push(name.clone());
            }
        }
        for s in shown {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    /// The resolved rule for `metric`.
    pub fn rule(&self, metric: &str) -> MetricRule {
        let class = MetricClass::of(metric);
        let o = self.metrics.get(metric).cloned().unwrap_or_default();
        let in_list = match &self.gated {
            Some(g) => g.iter().any(|m| m == metric),
            None => DEFAULT_GATED.contains(&metric),
        };
        MetricRule {
            gated: o.gated.unwrap_or(in_list),
            direction: o.direction.unwrap_or_else(|| Direction::of(metric)),
            tolerance_pct: o
                .tolerance_pct
                .unwrap_or_else(|| class.default_tolerance_pct()),
            engine_tolerance_pct: o
                .engine_tolerance_pct
                .unwrap_or_else(|| class.default_engine_tolerance_pct()),
            noise_pct: o.noise_pct,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_by_class() {
        let c = GateConfig::default();
        let r = c.rule("output_throughput");
        assert!(r.gated);
        assert_eq!(r.direction, Direction::Higher);
        assert_eq!(r.tolerance_pct, 5.0);
        let r = c.rule("p99_ttft_ms");
        assert!(!r.gated, "tails are gated through the engine-wide test");
        assert_eq!(r.direction, Direction::Lower);
        assert_eq!(r.tolerance_pct, 20.0);
        assert_eq!(r.engine_tolerance_pct, 6.0);
        assert!(c.engine_wide_list().contains(&"p99_ttft_ms".to_string()));
        assert_eq!(c.rule("median_itl_ms").tolerance_pct, 10.0);
        assert!(!c.rule("request_throughput").gated, "not gated twice");
        assert!(!c.rule("mean_ttft_ms").gated);
        assert_eq!(c.metric_list()[0], "output_throughput");
        assert!(c.metric_list().contains(&"duration".to_string()));
    }

    #[test]
    fn a_percentile_needs_a_request_beyond_it() {
        assert_eq!(percentile_needs("p99_ttft_ms"), Some(100));
        assert_eq!(percentile_needs("p95_itl_ms"), Some(20));
        assert_eq!(percentile_needs("p90_tpot_ms"), Some(10));
        assert_eq!(percentile_needs("p99.9_e2el_ms"), Some(1000));
        assert_eq!(percentile_needs("p50_ttft_ms"), Some(2));
        for not in [
            "median_ttft_ms",
            "output_throughput",
            "p99_nothing_ms",
            "p100_ttft_ms",
        ] {
            assert_eq!(percentile_needs(not), None, "{not}");
        }
        let run = |n: u64| crate::record::ScenarioResult {
            completed: n,
            ..crate::record::ScenarioResult::synthetic("m", n, 128, 128)
        };
        let (small, large) = (run(8), run(100));
        assert!(!percentile_supported("p99_ttft_ms", &[&large, &small]));
        assert!(percentile_supported("p99_ttft_ms", &[&large, &large]));
        assert!(percentile_supported("median_ttft_ms", &[&small]));
    }

    #[test]
    fn overrides_merge_key_by_key() {
        let base = GateConfig::parse(
            "alpha = 0.02\n[metrics.p99_ttft_ms]\ntolerance_pct = 20\nnoise_pct = 12\n",
            "b",
        )
        .unwrap();
        let over = GateConfig::parse("[metrics.p99_ttft_ms]\ntolerance_pct = 25\n", "g").unwrap();
        let m = base.merged(&over);
        assert_eq!(m.alpha(), 0.02);
        let r = m.rule("p99_ttft_ms");
        assert_eq!(r.tolerance_pct, 25.0);
        assert_eq!(r.noise_pct, Some(12.0));
    }

    #[test]
    fn unknown_keys_and_metrics_are_errors() {
        let e = GateConfig::parse("alpah = 0.1\n", "g.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("g.toml:1:1: unknown field `alpah`"), "{e}");
        let e = GateConfig::parse("[metrics.p99_foo_ms]\ntolerance_pct = 3\n", "g.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "gate setting `metrics.p99_foo_ms`: unknown metric `p99_foo_ms`"
        );
        let e = GateConfig::parse("[metrics.p99_ttft_ms]\ntolerance = 3\n", "g.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `tolerance`"), "{e}");
        let e = GateConfig::parse("alpha = 2\n", "g.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "gate setting `alpha`: must be in (0, 0.5), got 2");
        let e = GateConfig::parse("engine_wide_share = 1\n", "g.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "gate setting `engine_wide_share`: must be in (0, 1), got 1"
        );
    }

    #[test]
    fn holm_weights_give_the_widest_tests_their_share() {
        let c = GateConfig::default();
        // 6 models × 4 scenarios × 3 gated metrics + 6 × 5 per-model tests, then the 5 tests
        // over all models: equal weights would give the 5 a share of 5 / 107.
        let mut widest = vec![false; 102];
        widest.extend([true; 5]);
        let w = c.holm_weights(&widest);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((w[106] - 0.25 / 5.0).abs() < 1e-15, "{}", w[106]);
        assert!((w[0] - 0.75 / 102.0).abs() < 1e-15, "{}", w[0]);
        // One model, 3 scenarios: its 5 engine-wide tests already hold 5 / 14 > 0.25 under
        // equal weights, and keep it.
        let mut small = vec![false; 9];
        small.extend([true; 5]);
        for x in c.holm_weights(&small) {
            assert!((x - 1.0 / 14.0).abs() < 1e-15, "{x}");
        }
        // A group alone takes everything; a set share is used.
        assert_eq!(c.holm_weights(&[false, false]), vec![0.5, 0.5]);
        assert_eq!(c.holm_weights(&[true]), vec![1.0]);
        let half = GateConfig::parse("engine_wide_share = 0.6\n", "g").unwrap();
        let w = half.holm_weights(&small);
        assert!((w[13] - 0.6 / 5.0).abs() < 1e-15 && (w[0] - 0.4 / 9.0).abs() < 1e-15);
        // The look's level is computed at the smallest weight.
        assert_eq!(c.levels(None).look_alpha_at(0.75 / 102.0), c.alpha());
    }

    #[test]
    fn gated_list_replaces_defaults() {
        let c = GateConfig::parse("gated = [\"p99_ttft_ms\"]\n", "g").unwrap();
        assert!(c.rule("p99_ttft_ms").gated);
        assert!(!c.rule("output_throughput").gated);
        let list = c.metric_list();
        assert_eq!(list[0], "p99_ttft_ms");
        assert_eq!(c.engine_wide_list(), vec!["p99_ttft_ms".to_string()]);
        let none = GateConfig::parse("gated = []\n", "g").unwrap();
        assert!(none.engine_wide_list().is_empty());
    }
}
