//! Gate settings: which metrics are gated, each metric's direction, tolerance δ and noise prior,
//! and the error rates. Defaults live here (tuned with `examples/gate-sim.rs`); a baseline's
//! `[gate]` table and a `--gate` TOML file override them key by key. Unknown keys are errors.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::{is_stat_key, Direction};

/// Metrics gated by default, in report order. `success_rate` is decided by a rule, not a test.
pub const DEFAULT_GATED: [&str; 9] = [
    "output_throughput",
    "request_throughput",
    "median_ttft_ms",
    "p99_ttft_ms",
    "median_tpot_ms",
    "p99_tpot_ms",
    "median_itl_ms",
    "mean_e2el_ms",
    "success_rate",
];

/// Metrics shown (not gated) by default when both sides have them, after the gated ones.
pub const DEFAULT_SHOWN: [&str; 6] = [
    "total_token_throughput",
    "mean_ttft_ms",
    "mean_tpot_ms",
    "p99_itl_ms",
    "p99_e2el_ms",
    "duration",
];

/// Default family-wise false-alarm rate of one check (Holm over all gated rows).
pub const DEFAULT_ALPHA: f64 = 0.007;
/// Default one-sided level of the interval that must sit within δ for a `pass`.
pub const DEFAULT_EQUIVALENCE_ALPHA: f64 = 0.05;
/// Default weight of the noise prior, in degrees of freedom per side.
pub const DEFAULT_PRIOR_DF: f64 = 30.0;

/// The noise class of a metric: sets its default tolerance and noise prior.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// Default tolerance δ in percent.
    pub fn default_tolerance_pct(self) -> f64 {
        match self {
            MetricClass::Throughput => 5.0,
            MetricClass::Central => 7.0,
            MetricClass::Tail => 15.0,
            MetricClass::Other => 5.0,
        }
    }

    /// Default noise prior: the run-to-run standard deviation of the log value (≈ relative sd).
    pub fn default_noise_pct(self) -> f64 {
        match self {
            MetricClass::Throughput => 2.0,
            MetricClass::Central => 4.0,
            MetricClass::Tail => 10.0,
            MetricClass::Other => 2.0,
        }
    }
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
    /// Noise prior: run-to-run relative standard deviation in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_pct: Option<f64>,
}

/// Per-metric gate settings: which metrics are gated, their tolerances and directions.
/// Lives in a baseline file's `[gate]` table or a `--gate` file.
///
/// ```toml
/// alpha = 0.007             # family-wise false-alarm rate per check (Holm)
/// equivalence_alpha = 0.05  # one-sided level of the interval that must sit within δ to pass
/// prior_df = 30             # weight of the noise prior, degrees of freedom per side
/// gated = ["output_throughput", "p99_ttft_ms", "success_rate"]   # replaces the default list
/// show = ["mean_itl_ms"]    # extra metrics to show, not gate
///
/// [metrics.p99_ttft_ms]
/// tolerance_pct = 20
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gated: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricGate>,
}

/// A setting that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
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
    pub noise_pct: f64,
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
                message: e.message().to_string(),
            }
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Read a `--gate` file.
    pub fn load(path: &std::path::Path) -> Result<GateConfig, ConfigError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: p.clone(),
            source,
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
        if let Some(d) = self.prior_df {
            if !(d.is_finite() && d >= 0.0) {
                return Err(bad("prior_df", format!("must be ≥ 0, got {d}")));
            }
        }
        for (key, list) in [("gated", &self.gated), ("show", &self.show)] {
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
        if other.gated.is_some() {
            out.gated = other.gated.clone();
        }
        if other.show.is_some() {
            out.show = other.show.clone();
        }
        for (name, o) in &other.metrics {
            let e = out.metrics.entry(name.clone()).or_default();
            e.gated = o.gated.or(e.gated);
            e.direction = o.direction.or(e.direction);
            e.tolerance_pct = o.tolerance_pct.or(e.tolerance_pct);
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

    pub fn prior_df(&self) -> f64 {
        self.prior_df.unwrap_or(DEFAULT_PRIOR_DF)
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
            noise_pct: o.noise_pct.unwrap_or_else(|| class.default_noise_pct()),
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
        assert!(r.gated);
        assert_eq!(r.direction, Direction::Lower);
        assert_eq!(r.tolerance_pct, 15.0);
        assert_eq!(c.rule("median_itl_ms").tolerance_pct, 7.0);
        assert!(!c.rule("mean_ttft_ms").gated);
        assert_eq!(c.metric_list()[0], "output_throughput");
        assert!(c.metric_list().contains(&"duration".to_string()));
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
        assert_eq!(r.noise_pct, 12.0);
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
    }

    #[test]
    fn gated_list_replaces_defaults() {
        let c = GateConfig::parse("gated = [\"p99_ttft_ms\"]\n", "g").unwrap();
        assert!(c.rule("p99_ttft_ms").gated);
        assert!(!c.rule("output_throughput").gated);
        let list = c.metric_list();
        assert_eq!(list[0], "p99_ttft_ms");
    }
}
