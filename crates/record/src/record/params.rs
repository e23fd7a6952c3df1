//! The scenario identity ([`ScenarioParams::id`]) and the request fields a scenario sends.

use serde::{Deserialize, Serialize};

use super::{JsonObject, RequestRate, ScenarioParams};

/// The streaming API a scenario measures.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Endpoint {
    /// `/v1/completions`: the prompt as text.
    #[default]
    Completions,
    /// `/v1/chat/completions`: the prompt as one user message.
    Chat,
}

impl Endpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Completions => "completions",
            Endpoint::Chat => "chat",
        }
    }

    /// The path of the API on an OpenAI-compatible server.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Completions => "/v1/completions",
            Endpoint::Chat => "/v1/chat/completions",
        }
    }

    /// The API an endpoint path (`--endpoint`) names: `…/chat/completions` is chat.
    pub fn of_path(path: &str) -> Endpoint {
        match path.trim_end_matches('/').ends_with("chat/completions") {
            true => Endpoint::Chat,
            false => Endpoint::Completions,
        }
    }
}

/// The sampling fields of [`ScenarioParams`] as request fields, in the order they are sent
/// (after `temperature`).
const SAMPLING_KEYS: [&str; 6] = [
    "top_p",
    "top_k",
    "min_p",
    "frequency_penalty",
    "presence_penalty",
    "repetition_penalty",
];

/// How the request rate ramps up over a run (vLLM's `--ramp-up-strategy`): the rate of request
/// `i` of `n` is `start + (end − start)·i/(n−1)` (linear) or `start·(end/start)^(i/(n−1))`
/// (exponential); each gap is then drawn as for a fixed rate.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RampUpStrategy {
    Linear,
    Exponential,
}

impl RampUpStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            RampUpStrategy::Linear => "linear",
            RampUpStrategy::Exponential => "exponential",
        }
    }

    /// The rate of request `i` of `n`, in requests per second.
    pub fn rate(self, start: f64, end: f64, i: usize, n: usize) -> f64 {
        let progress = if n > 1 {
            i as f64 / (n - 1) as f64
        } else {
            0.0
        };
        match self {
            RampUpStrategy::Linear => start + (end - start) * progress,
            RampUpStrategy::Exponential => start * (end / start).powf(progress),
        }
    }
}

impl ScenarioParams {
    /// A stable, human-readable identity, e.g. `sharegpt-n10000`, `random-in1024-out1024-n2000`,
    /// `random-in900..1100-out128-n500-c64-r4`. Length ranges are normalised through the range
    /// convention, so SGLang's ratio 1.0 and vLLM's ratio 0.0 name the same scenario.
    pub fn id(&self) -> String {
        let mut s = self.dataset_name.to_string();
        let (ratio, conv) = (
            self.random_range_ratio.unwrap_or(0.0),
            self.range_convention.unwrap_or_default(),
        );
        let len = |l: u64| {
            let (lo, hi) = conv.bounds(l, ratio);
            if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo}..{hi}")
            }
        };
        if self.dataset_name.uses_random_lens() {
            if let Some(i) = self.random_input_len {
                s.push_str(&format!("-in{}", len(i)));
            }
            if let Some(o) = self.random_output_len {
                s.push_str(&format!("-out{}", len(o)));
            }
        }
        if self.dataset_name == "sharegpt" {
            if let Some(o) = self.sharegpt_output_len {
                s.push_str(&format!("-out{o}"));
            }
        }
        if self.dataset_name.uses_random_lens() {
            if let Some(p) = self.random_prefix_len.filter(|p| *p > 0) {
                s.push_str(&format!("-prefix{p}"));
            }
        }
        if self.dataset_name == "prefix_repetition" {
            let part = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
            s.push_str(&format!(
                "-prefix{}x{}-suffix{}-out{}",
                part(self.prefix_repetition_prefix_len),
                part(self.prefix_repetition_num_prefixes),
                part(self.prefix_repetition_suffix_len),
                part(self.prefix_repetition_output_len),
            ));
        }
        if self.dataset_name == "custom" {
            if let Some(o) = self.custom_output_len {
                s.push_str(&format!("-out{o}"));
            }
        }
        if self.dataset_name == "spec_bench" {
            if let Some(c) = &self.spec_bench_category {
                s.push_str(&format!("-{c}"));
            }
            if let Some(o) = self.spec_bench_output_len {
                s.push_str(&format!("-out{o}"));
            }
        }
        if self.no_oversample == Some(true) {
            s.push_str("-nooversample");
        }
        s.push_str(&format!("-n{}", self.num_prompts));
        if let Some(d) = self.duration_s {
            s.push_str(&format!("-d{d}s"));
        }
        if let Some(c) = self.max_concurrency {
            s.push_str(&format!("-c{c}"));
        }
        let ramp = match (
            self.ramp_up_strategy,
            self.ramp_up_start_rps,
            self.ramp_up_end_rps,
        ) {
            (Some(k), Some(a), Some(b)) => Some(format!("-ramp{}{a}..{b}", &k.as_str()[..3])),
            _ => None,
        };
        if let RequestRate::PerSecond(r) = self.request_rate {
            s.push_str(&format!("-r{r}"));
        }
        if let Some(ramp) = &ramp {
            s.push_str(ramp);
        }
        if !self.request_rate.is_inf() || ramp.is_some() {
            if let Some(b) = self.burstiness.filter(|b| *b != 1.0) {
                s.push_str(&format!("-b{b}"));
            }
        }
        s.push_str(&self.request_id_part());
        s
    }

    /// The part of [`ScenarioParams::id`] that names what each request asks for beyond its
    /// prompt: empty for a completions scenario with the live check's defaults (every scenario
    /// written before these fields existed), so older baselines keep their ids. A value equal
    /// to that default (`temperature` 0, `ignore_eos` on: what `--temperature 0 --ignore-eos`
    /// in vLLM's CI command lines says) adds nothing either, so such results still meet the
    /// baselines imported from logs that did not record them.
    fn request_id_part(&self) -> String {
        let mut s = String::new();
        if self.endpoint == Some(Endpoint::Chat) {
            s.push_str("-chat");
        }
        let floats = [
            ("temp", self.temperature.filter(|t| *t != 0.0)),
            ("topp", self.top_p),
            ("minp", self.min_p),
            ("freqpen", self.frequency_penalty),
            ("prespen", self.presence_penalty),
            ("reppen", self.repetition_penalty),
        ];
        for (tag, v) in floats {
            if let Some(v) = v {
                s.push_str(&format!("-{tag}{v}"));
            }
        }
        if let Some(k) = self.top_k {
            s.push_str(&format!("-topk{k}"));
        }
        if self.ignore_eos == Some(false) {
            s.push_str("-eos");
        }
        // Objects are named by a digest of their canonical JSON (keys sorted): the record holds
        // them whole.
        let digest = |o: &JsonObject| {
            let text = canonical_json(&serde_json::Value::Object(o.clone())).to_string();
            crate::text::sha256_hex(text.as_bytes())[..8].to_string()
        };
        if let Some(o) = &self.chat_template_kwargs {
            s.push_str(&format!("-ctk{}", digest(o)));
        }
        if let Some(o) = &self.extra_body {
            s.push_str(&format!("-body{}", digest(o)));
        }
        s
    }

    /// The sampling fields that are set (`top_p`, `top_k`, …; `temperature` is the client's),
    /// then `chat_template_kwargs`, then `extra_body` (which wins where it names a field too):
    /// what the scenario adds to every request body.
    pub fn body_fields(&self) -> JsonObject {
        let mut m = JsonObject::new();
        let values = [
            self.top_p.map(serde_json::Value::from),
            self.top_k.map(serde_json::Value::from),
            self.min_p.map(serde_json::Value::from),
            self.frequency_penalty.map(serde_json::Value::from),
            self.presence_penalty.map(serde_json::Value::from),
            self.repetition_penalty.map(serde_json::Value::from),
        ];
        for (key, v) in SAMPLING_KEYS.iter().zip(values) {
            if let Some(v) = v {
                m.insert((*key).to_string(), v);
            }
        }
        if let Some(o) = &self.chat_template_kwargs {
            m.insert("chat_template_kwargs".into(), o.clone().into());
        }
        if let Some(o) = &self.extra_body {
            m.extend(o.clone());
        }
        m
    }

    /// The checks of the request fields (endpoint, sampling, `extra_body`); the message names
    /// the field. Run by every path that makes a scenario: a suite or baseline file on load,
    /// `perfgate run`'s flags, a library caller's `perfgate::runner::scenario_run`.
    pub fn check_request_fields(&self) -> Result<(), String> {
        if let Some(d) = self.duration_s {
            if !(d.is_finite() && d > 0.0) {
                return Err(format!(
                    "duration_s must be a finite number of seconds > 0, got {d}"
                ));
            }
            if self.request_rate.is_inf() && self.max_concurrency.is_none() {
                return Err(
                    "duration_s needs max_concurrency or a finite request_rate (with \
                     neither, requests would be issued without bound)"
                        .into(),
                );
            }
            if self.ramp_up_strategy.is_some() {
                return Err(
                    "duration_s cannot be used with a ramp-up (the ramp is spread over \
                     num_prompts)"
                        .into(),
                );
            }
        }
        let inf = f64::INFINITY;
        let ranges = [
            (
                "temperature",
                self.temperature,
                0.0,
                inf,
                "a finite number ≥ 0",
            ),
            ("top_p", self.top_p, f64::MIN_POSITIVE, 1.0, "in (0, 1]"),
            ("min_p", self.min_p, 0.0, 1.0, "in [0, 1]"),
            (
                "frequency_penalty",
                self.frequency_penalty,
                -2.0,
                2.0,
                "in [-2, 2]",
            ),
            (
                "presence_penalty",
                self.presence_penalty,
                -2.0,
                2.0,
                "in [-2, 2]",
            ),
            (
                "repetition_penalty",
                self.repetition_penalty,
                f64::MIN_POSITIVE,
                inf,
                "a finite number > 0",
            ),
        ];
        for (field, v, lo, hi, what) in ranges {
            if let Some(v) = v.filter(|v| !v.is_finite() || *v < lo || *v > hi) {
                return Err(format!("{field} must be {what}, got {v}"));
            }
        }
        if let Some(k) = self.top_k.filter(|k| *k < -1) {
            return Err(format!("top_k must be -1 (off) or more, got {k}"));
        }
        if self.chat_template_kwargs.is_some() && self.endpoint != Some(Endpoint::Chat) {
            return Err(
                "chat_template_kwargs needs endpoint = \"chat\" (a completions request has no \
                 chat template)"
                    .into(),
            );
        }
        let owned = ["model", "prompt", "messages", "stream"];
        if let Some(k) = self
            .extra_body
            .iter()
            .flat_map(|o| o.keys())
            .find(|k| owned.contains(&k.as_str()))
        {
            return Err(format!(
                "extra_body must not set `{k}`: perfgate writes it (the measured stream depends \
                 on it)"
            ));
        }
        Ok(())
    }
}

/// `v` with every object's keys in sorted order, so equal objects print equal.
fn canonical_json(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let sorted: JsonObject = keys
                .into_iter()
                .map(|k| (k.clone(), canonical_json(&o[k])))
                .collect();
            serde_json::Value::Object(sorted)
        }
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(canonical_json).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> ScenarioParams {
        ScenarioParams {
            dataset_name: "random".into(),
            num_prompts: 8,
            random_input_len: Some(32),
            random_output_len: Some(16),
            max_concurrency: Some(2),
            ..Default::default()
        }
    }

    #[test]
    fn request_fields_name_the_scenario_and_the_defaults_add_nothing() {
        let p = plain();
        assert_eq!(p.id(), "random-in32-out16-n8-c2");
        // Today's record of a plain scenario: none of the new keys.
        let json = serde_json::to_string(&p).unwrap();
        for key in [
            "endpoint",
            "temperature",
            "top_p",
            "ignore_eos",
            "extra_body",
        ] {
            assert!(!json.contains(key), "{key}: {json}");
        }
        // The live check's defaults written out name the same scenario.
        let same = ScenarioParams {
            temperature: Some(0.0),
            ignore_eos: Some(true),
            endpoint: Some(Endpoint::Completions),
            ..plain()
        };
        assert_eq!(same.id(), p.id());
        let chat = ScenarioParams {
            endpoint: Some(Endpoint::Chat),
            temperature: Some(0.7),
            top_p: Some(0.8),
            top_k: Some(20),
            repetition_penalty: Some(1.1),
            ignore_eos: Some(false),
            ..plain()
        };
        assert_eq!(
            chat.id(),
            "random-in32-out16-n8-c2-chat-temp0.7-topp0.8-reppen1.1-topk20-eos"
        );
        // Objects are named by their content, whatever the order of their keys.
        let body = |text: &str| ScenarioParams {
            extra_body: serde_json::from_str(text).unwrap(),
            ..plain()
        };
        let a = body(r#"{"seed": 1, "stop": ["x"]}"#);
        assert_eq!(a.id(), body(r#"{"stop": ["x"], "seed": 1}"#).id());
        assert_ne!(a.id(), body(r#"{"seed": 2, "stop": ["x"]}"#).id());
        assert!(
            a.id().starts_with("random-in32-out16-n8-c2-body"),
            "{}",
            a.id()
        );
    }

    #[test]
    fn the_body_fields_come_in_order_and_extra_body_wins() {
        let p = ScenarioParams {
            endpoint: Some(Endpoint::Chat),
            top_p: Some(0.5),
            chat_template_kwargs: serde_json::json!({"enable_thinking": false})
                .as_object()
                .cloned(),
            extra_body: serde_json::json!({"top_p": 0.9, "seed": 3})
                .as_object()
                .cloned(),
            ..plain()
        };
        let b = serde_json::Value::Object(p.body_fields());
        assert_eq!(
            b,
            serde_json::json!({
                "top_p": 0.9, "chat_template_kwargs": {"enable_thinking": false}, "seed": 3
            })
        );
        assert_eq!(p.check_request_fields(), Ok(()));
    }

    #[test]
    fn out_of_range_or_misplaced_request_fields_are_named() {
        type Case = (fn(&mut ScenarioParams), &'static str);
        let cases: [Case; 6] = [
            (|p| p.top_p = Some(0.0), "top_p must be in (0, 1], got 0"),
            (|p| p.min_p = Some(1.5), "min_p must be in [0, 1], got 1.5"),
            (
                |p| p.temperature = Some(f64::NAN),
                "temperature must be a finite number",
            ),
            (
                |p| p.top_k = Some(-2),
                "top_k must be -1 (off) or more, got -2",
            ),
            (
                |p| p.chat_template_kwargs = Some(JsonObject::new()),
                "chat_template_kwargs needs endpoint = \"chat\"",
            ),
            (
                |p| p.extra_body = serde_json::json!({"stream": false}).as_object().cloned(),
                "extra_body must not set `stream`",
            ),
        ];
        for (set, says) in cases {
            let mut p = plain();
            set(&mut p);
            let err = p.check_request_fields().unwrap_err();
            assert!(err.starts_with(says), "{err}");
        }
    }
}
