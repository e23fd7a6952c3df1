//! The engine's own view while a scenario runs: Prometheus `/metrics` scraped before, during
//! (sampled) and after each scenario, parsed with `prometheus-parse`, and summarised into KV cache
//! usage, running/waiting requests, preemptions and prefix cache hit rate — under whichever names
//! the engine exposes them (vLLM `vllm:*`, SGLang `sglang:*`, LMDeploy `lmdeploy:*`, llama.cpp
//! `llamacpp:*`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One scrape: every counter/gauge/untyped value, summed over label sets, by full metric name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub values: BTreeMap<String, f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("GET /metrics: {0}")]
    Http(String),
    #[error("GET /metrics answered {0}")]
    Status(u16),
    #[error("/metrics is not Prometheus text: {0}")]
    Parse(String),
}

/// What we look for, under the local names engines use (the part after `namespace:`).
const RUNNING: &[&str] = &[
    "num_requests_running",
    "num_running_reqs",
    "requests_processing",
];
const WAITING: &[&str] = &[
    "num_requests_waiting",
    "num_queue_reqs",
    "requests_deferred",
];
/// Fractions in [0, 1].
const KV_USAGE: &[&str] = &[
    "kv_cache_usage_perc",
    "gpu_cache_usage_perc",
    "token_usage",
    "kv_cache_usage_ratio",
];
const PREEMPTIONS: &[&str] = &[
    "num_preemptions_total",
    "num_preemptions",
    "num_retracted_reqs_total",
];
/// (hits, other, other_includes_hits) counter pairs: vLLM counts prefix-cache tokens hit out of
/// all queried; llama.cpp counts prompt tokens served from its cache next to the prompt tokens
/// it computed (which exclude the cached ones).
const PREFIX_PAIRS: &[(&str, &str, bool)] = &[
    (
        "prefix_cache_hits_total",
        "prefix_cache_queries_total",
        true,
    ),
    ("prefix_cache_hits", "prefix_cache_queries", true),
    ("prompt_tokens_cached_total", "prompt_tokens_total", false),
];
/// Hit-rate gauges in [0, 1], for engines without hit/query counters.
const PREFIX_RATE: &[&str] = &["gpu_prefix_cache_hit_rate", "cache_hit_rate"];

// prometheus-parse only accepts `\w` in metric names; engines use `namespace:name`.
const COLON: &str = "__pgcolon__";

/// Parse Prometheus text exposition.
pub fn parse(text: &str) -> Result<Snapshot, MetricsError> {
    let lines = text.lines().map(|l| Ok(escape_colons(l)));
    let scrape =
        prometheus_parse::Scrape::parse(lines).map_err(|e| MetricsError::Parse(e.to_string()))?;
    let mut values: BTreeMap<String, f64> = BTreeMap::new();
    for s in scrape.samples {
        let v = match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            _ => continue,
        };
        if !v.is_finite() {
            continue;
        }
        *values.entry(s.metric.replace(COLON, ":")).or_default() += v;
    }
    Ok(Snapshot { values })
}

/// Replace `:` in the metric-name position of a sample, `# HELP` or `# TYPE` line.
fn escape_colons(line: &str) -> String {
    let t = line.trim_start();
    let (prefix, rest) = if let Some(r) = t.strip_prefix("# HELP ") {
        ("# HELP ", r)
    } else if let Some(r) = t.strip_prefix("# TYPE ") {
        ("# TYPE ", r)
    } else if t.starts_with('#') {
        return line.to_string();
    } else {
        ("", t)
    };
    let end = rest
        .find(|c: char| c == '{' || c.is_whitespace())
        .unwrap_or(rest.len());
    format!(
        "{prefix}{}{}",
        rest[..end].replace(':', COLON),
        &rest[end..]
    )
}

impl Snapshot {
    /// The first of `names` (by local name) this engine exposes, with its full name.
    fn find(&self, names: &[&str]) -> Option<(&str, f64)> {
        for want in names {
            for (k, v) in &self.values {
                let local = k.rsplit(':').next().unwrap_or(k);
                if local == *want {
                    return Some((k.as_str(), *v));
                }
            }
        }
        None
    }

    /// The gauges telemetry keeps, by perfgate's name (`running`, `waiting`, `kv_cache_usage`:
    /// [`crate::telemetry::SERVER_GAUGES`]), under whichever names this engine exposes them.
    pub fn gauges(&self) -> Vec<(&'static str, f64)> {
        [
            ("running", RUNNING),
            ("waiting", WAITING),
            ("kv_cache_usage", KV_USAGE),
        ]
        .into_iter()
        .filter_map(|(n, names)| self.find(names).map(|(_, v)| (n, v)))
        .collect()
    }

    /// The namespace of the engine's metrics (`vllm`, `sglang`, `lmdeploy`, `llamacpp`), if any.
    pub fn namespace(&self) -> Option<String> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for k in self.values.keys() {
            if let Some((ns, _)) = k.split_once(':') {
                *counts.entry(ns).or_default() += 1;
            }
        }
        counts
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(ns, _)| ns.to_string())
    }
}

/// The engine-side summary of one scenario run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineStats {
    /// Successful scrapes (before + during + after).
    pub scrapes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_max: Option<f64>,
    /// Preemptions during the scenario (counter after − before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<f64>,
    /// Prefix cache hit rate during the scenario (hits/queries deltas, else the engine's gauge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache_hit_rate: Option<f64>,
    /// The metric names the numbers above came from.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sources: BTreeMap<String, String>,
    /// Scrapes that failed, and the first reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_error: Option<String>,
}

/// Scrapes of one scenario run.
#[derive(Debug, Clone, Default)]
pub struct Sampler {
    pub before: Option<Snapshot>,
    pub during: Vec<Snapshot>,
    pub after: Option<Snapshot>,
    pub failures: usize,
    pub first_error: Option<String>,
}

impl Sampler {
    pub fn record_error(&mut self, e: &MetricsError) {
        self.failures += 1;
        if self.first_error.is_none() {
            self.first_error = Some(e.to_string());
        }
    }

    /// Summarise everything scraped.
    pub fn summarize(&self) -> EngineStats {
        let all: Vec<&Snapshot> = self
            .before
            .iter()
            .chain(self.during.iter())
            .chain(self.after.iter())
            .collect();
        let mut st = EngineStats {
            scrapes: all.len(),
            namespace: all.iter().find_map(|s| s.namespace()),
            scrape_error: self
                .first_error
                .as_ref()
                .map(|e| format!("{} failed scrape(s); first: {e}", self.failures)),
            ..Default::default()
        };
        // Gauges: over the samples taken while the scenario ran (fall back to all).
        let gauge_pool: Vec<&Snapshot> = if self.during.is_empty() {
            all.clone()
        } else {
            self.during.iter().collect()
        };
        let gauge = |names: &[&str]| -> Option<(String, f64, f64, f64)> {
            let vals: Vec<(String, f64)> = gauge_pool
                .iter()
                .filter_map(|s| s.find(names).map(|(n, v)| (n.to_string(), v)))
                .collect();
            let (name, _) = vals.first()?;
            let max = vals.iter().map(|(_, v)| *v).fold(f64::MIN, f64::max);
            let mean = vals.iter().map(|(_, v)| *v).sum::<f64>() / vals.len() as f64;
            let last = vals.last().map_or(mean, |(_, v)| *v);
            Some((name.clone(), max, mean, last))
        };
        if let Some((name, max, mean, _)) = gauge(KV_USAGE) {
            st.sources.insert("kv_cache_usage".into(), name);
            st.kv_cache_usage_max = Some(max);
            st.kv_cache_usage_mean = Some(mean);
        }
        if let Some((name, max, mean, _)) = gauge(RUNNING) {
            st.sources.insert("running".into(), name);
            st.running_max = Some(max);
            st.running_mean = Some(mean);
        }
        if let Some((name, max, _, _)) = gauge(WAITING) {
            st.sources.insert("waiting".into(), name);
            st.waiting_max = Some(max);
        }
        // Counters: last − first scrape.
        let first = all.first().copied();
        let last = all.last().copied();
        let delta = |names: &[&str]| -> Option<(String, f64)> {
            let (a, b) = (first?.find(names)?, last?.find(names)?);
            Some((b.0.to_string(), (b.1 - a.1).max(0.0)))
        };
        if let Some((name, d)) = delta(PREEMPTIONS) {
            st.sources.insert("preemptions".into(), name);
            st.preemptions = Some(d);
        }
        let pair =
            PREFIX_PAIRS
                .iter()
                .find_map(|(h, q, includes)| match (delta(&[h]), delta(&[q])) {
                    (Some(hits), Some((qn, other))) => {
                        let queries = if *includes { other } else { other + hits.1 };
                        (queries > 0.0).then_some((hits, (qn, queries)))
                    }
                    _ => None,
                });
        match pair {
            Some(((hn, h), (qn, q))) => {
                st.sources
                    .insert("prefix_cache_hit_rate".into(), format!("{hn} / {qn}"));
                st.prefix_cache_hit_rate = Some(h / q);
            }
            None => {
                // The engine's own (cumulative or windowed) hit-rate gauge, as last seen.
                if let Some((name, _, _, last)) = gauge(PREFIX_RATE) {
                    st.sources.insert("prefix_cache_hit_rate".into(), name);
                    st.prefix_cache_hit_rate = Some(last);
                }
            }
        }
        st
    }
}

/// Scrape `/metrics` once.
pub async fn scrape(http: &reqwest::Client, base_url: &str) -> Result<Snapshot, MetricsError> {
    let r = http
        .get(format!("{base_url}/metrics"))
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .map_err(|e| MetricsError::Http(e.to_string()))?;
    if !r.status().is_success() {
        return Err(MetricsError::Status(r.status().as_u16()));
    }
    let text = crate::client::body::text_limited(r, crate::client::body::LARGE_BODY)
        .await
        .map_err(MetricsError::Http)?;
    parse(&text)
}

/// Sample `/metrics` every `every` into `sampler` until cancelled (drop the future).
pub async fn sample_loop(
    http: &reqwest::Client,
    base_url: &str,
    every: Duration,
    sampler: &std::sync::Mutex<Sampler>,
) {
    loop {
        tokio::time::sleep(every).await;
        let r = scrape(http, base_url).await;
        let mut s = sampler.lock().unwrap_or_else(|p| p.into_inner());
        match r {
            Ok(snap) => s.during.push(snap),
            Err(e) => s.record_error(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VLLM: &str = r#"# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 12.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-8B"} 3.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-8B"} 0.5
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="Qwen/Qwen3-8B"} 4.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="Qwen/Qwen3-8B"} 1000.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="Qwen/Qwen3-8B"} 250.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.001",model_name="Qwen/Qwen3-8B"} 0.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="Qwen/Qwen3-8B"} 7.0
vllm:time_to_first_token_seconds_count{model_name="Qwen/Qwen3-8B"} 7.0
vllm:time_to_first_token_seconds_sum{model_name="Qwen/Qwen3-8B"} 1.5
"#;

    #[test]
    fn parses_namespaced_names() {
        let s = parse(VLLM).unwrap();
        assert_eq!(s.values["vllm:num_requests_running"], 12.0);
        assert_eq!(s.values["vllm:kv_cache_usage_perc"], 0.5);
        assert_eq!(s.namespace().as_deref(), Some("vllm"));
    }

    #[test]
    fn summarises_gauges_and_counter_deltas() {
        let before = parse(VLLM).unwrap();
        let during = parse(&VLLM.replace("} 12.0", "} 20.0").replace("} 0.5", "} 0.9")).unwrap();
        let after = parse(
            &VLLM
                .replace("} 12.0", "} 0.0")
                .replace("} 4.0", "} 10.0")
                .replace("} 1000.0", "} 2000.0")
                .replace("} 250.0", "} 750.0"),
        )
        .unwrap();
        let s = Sampler {
            before: Some(before.clone()),
            during: vec![before, during],
            after: Some(after),
            ..Default::default()
        };
        let st = s.summarize();
        assert_eq!(st.scrapes, 4);
        assert_eq!(st.running_max, Some(20.0));
        assert_eq!(st.running_mean, Some(16.0));
        assert_eq!(st.kv_cache_usage_max, Some(0.9));
        assert!((st.kv_cache_usage_mean.unwrap() - 0.7).abs() < 1e-12);
        assert_eq!(st.waiting_max, Some(3.0));
        assert_eq!(st.preemptions, Some(6.0));
        assert_eq!(st.prefix_cache_hit_rate, Some(0.5));
        assert_eq!(st.sources["kv_cache_usage"], "vllm:kv_cache_usage_perc");
    }

    #[test]
    fn sglang_and_llamacpp_names() {
        let sg = "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=\"m\"} 5\n\
                  # TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{model_name=\"m\"} 2\n\
                  # TYPE sglang:token_usage gauge\nsglang:token_usage{model_name=\"m\"} 0.25\n\
                  # TYPE sglang:cache_hit_rate gauge\nsglang:cache_hit_rate{model_name=\"m\"} 0.125\n";
        let s = Sampler {
            during: vec![parse(sg).unwrap()],
            ..Default::default()
        }
        .summarize();
        assert_eq!(s.namespace.as_deref(), Some("sglang"));
        assert_eq!(s.running_max, Some(5.0));
        assert_eq!(s.waiting_max, Some(2.0));
        assert_eq!(s.kv_cache_usage_max, Some(0.25));
        assert_eq!(s.prefix_cache_hit_rate, Some(0.125));

        let ll = "# HELP llamacpp:requests_processing Number of requests processing.\n\
                  # TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 2\n\
                  # TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 1\n\
                  # TYPE llamacpp:kv_cache_usage_ratio gauge\nllamacpp:kv_cache_usage_ratio 0.0625\n";
        let s = Sampler {
            during: vec![parse(ll).unwrap()],
            ..Default::default()
        }
        .summarize();
        assert_eq!(s.running_max, Some(2.0));
        assert_eq!(s.waiting_max, Some(1.0));
        assert_eq!(s.kv_cache_usage_max, Some(0.0625));
        assert_eq!(s.preemptions, None);

        let c = |cached: u32, total: u32| {
            parse(&format!(
                "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total {total}\n\
                 # TYPE llamacpp:prompt_tokens_cached_total counter\nllamacpp:prompt_tokens_cached_total {cached}\n"
            ))
            .unwrap()
        };
        let s = Sampler {
            before: Some(c(10, 100)),
            after: Some(c(40, 300)),
            ..Default::default()
        }
        .summarize();
        assert_eq!(s.prefix_cache_hit_rate, Some(30.0 / 230.0));
    }

    #[test]
    fn garbage_yields_no_values_not_a_panic() {
        let s = parse("<html>not metrics</html>\n\u{0}\n").unwrap();
        assert!(s.values.is_empty());
        assert_eq!(Sampler::default().summarize().scrapes, 0);
    }
}
