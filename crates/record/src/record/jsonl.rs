//! Reading and writing records as JSON Lines, with errors naming the file, line and key.

use std::collections::BTreeMap;

use super::{check_metric_value, is_stat_key, ScenarioResult};

/// Every top-level key a record may have besides the statistics (`mean_ttft_ms`, …): the fields
/// of [`ScenarioResult`] and of the flattened [`ScenarioParams`](super::ScenarioParams) as serde
/// names them (read from their derived JSON Schema, so a new field is known without a list to
/// update), and the old name `errors` of the by-kind counts.
pub fn record_keys() -> &'static std::collections::BTreeSet<String> {
    static KEYS: std::sync::OnceLock<std::collections::BTreeSet<String>> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let schema = schemars::schema_for!(ScenarioResult);
        let mut keys: std::collections::BTreeSet<String> = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        keys.insert("errors".into());
        keys
    })
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}:{line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path}: {reason}")]
    Io {
        path: String,
        reason: std::io::Error,
    },
}

/// Records read from JSON Lines, with what was ignored on the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadRecords {
    pub records: Vec<ScenarioResult>,
    /// One line per unknown key (its first line and how many lines had it): unknown keys are
    /// ignored, so that a record written by a newer perfgate or extended by hand still reads.
    pub warnings: Vec<String>,
    /// The SHA-256 (hex) of the bytes read: a check's report keeps it per results file and
    /// `baseline promote` compares it with the file it promotes.
    pub sha256: String,
}

/// Parse JSON Lines of records. Blank lines are skipped; every other line must be a record.
/// Unknown keys are ignored (see [`parse_jsonl_with_warnings`] for the warnings).
pub fn parse_jsonl(text: &str, path: &str) -> Result<Vec<ScenarioResult>, RecordError> {
    parse_jsonl_with_warnings(text, path).map(|r| r.records)
}

/// Parse JSON Lines of records. A line that is not a JSON object, a key whose value has the
/// wrong type and a missing required key are errors naming the file, line and key; a key that
/// is neither a record field nor a statistic (`p99_ttft_ms`, …) is ignored with a warning.
pub fn parse_jsonl_with_warnings(text: &str, path: &str) -> Result<ReadRecords, RecordError> {
    let mut out = ReadRecords::default();
    // unknown key -> (first line, lines)
    let mut unknown: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        // The key by name, a wrong value cut short (serde quotes it whole).
        let at = |message: String| RecordError::Parse {
            path: path.to_string(),
            line: i + 1,
            message: crate::redact::shorten(&message, 240),
        };
        let value: serde_json::Value =
            serde_json::from_str(t).map_err(|e| at(format!("not valid JSON: {e}")))?;
        let serde_json::Value::Object(mut map) = value else {
            return Err(at("a record must be a JSON object".into()));
        };
        let metadata = map.get("metadata").cloned();
        typed_echoes(&mut map, metadata.as_ref());
        map.retain(|k, v| {
            if record_keys().contains(k) || is_stat_key(k) {
                return true;
            }
            // Keys of vLLM's result JSON that `perfgate run --save-result` writes too and a
            // record does not keep.
            if k == "endpoint_type" || k == "label" {
                return false;
            }
            // `--save-result` repeats the metadata as top-level keys, as vLLM does.
            let echoed = metadata
                .as_ref()
                .and_then(|m| m.get(k))
                .is_some_and(|m| m == v);
            if !echoed {
                let e = unknown.entry(k.clone()).or_insert((i + 1, 0));
                e.1 += 1;
            }
            false
        });
        for (k, v) in &map {
            if is_stat_key(k) && !v.is_number() {
                return Err(at(format!("`{k}`: expected a number, got {}", kind_of(v))));
            }
        }
        let rec = record_from_map(map).map_err(at)?;
        for (key, v) in rec.metrics() {
            if let Err(m) = check_metric_value(&key, v) {
                return Err(at(format!("`{key}`: {m}")));
            }
        }
        out.records.push(rec);
    }
    for (key, (first, lines)) in unknown {
        let more = if lines > 1 {
            format!(" (and {} more lines)", lines - 1)
        } else {
            String::new()
        };
        out.warnings.push(format!(
            "{path}:{first}: unknown field `{key}` ignored{more}"
        ));
    }
    Ok(out)
}

/// `--metadata tensor_parallel_size=1` is echoed as the top-level string `"1"` (vLLM writes its
/// metadata values as strings): where such an echo lands on a record field that the string
/// does not fit (a count), the value the string spells (`1`) takes its place when that fits.
fn typed_echoes(
    map: &mut serde_json::Map<String, serde_json::Value>,
    metadata: Option<&serde_json::Value>,
) {
    let Some(serde_json::Value::Object(meta)) = metadata else {
        return;
    };
    for (k, m) in meta {
        let Some(text) = m.as_str() else { continue };
        if !record_keys().contains(k) || map.get(k) != Some(m) || field_fits(k, m) {
            continue;
        }
        if let Ok(typed) = serde_json::from_str::<serde_json::Value>(text.trim()) {
            if !typed.is_object() && !typed.is_array() && field_fits(k, &typed) {
                map.insert(k.clone(), typed);
            }
        }
    }
}

/// A minimal valid record, to try one key's value on.
fn skeleton() -> serde_json::Value {
    serde_json::json!({
        "model": "m", "dataset_name": "random", "num_prompts": 1, "completed": 1,
        "duration": 1.0, "total_input_tokens": 1, "total_output_tokens": 1,
        "request_throughput": 1.0, "output_throughput": 1.0
    })
}

/// Whether `k: v` alone is a valid value of the record field `k`.
fn field_fits(k: &str, v: &serde_json::Value) -> bool {
    let mut s = skeleton();
    if let Some(obj) = s.as_object_mut() {
        obj.insert(k.to_string(), v.clone());
    }
    serde_json::from_value::<ScenarioResult>(s).is_ok()
}

/// A short description of a JSON value for messages: `string "l6"`, `an object`, …
fn kind_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(b) => format!("{b}"),
        serde_json::Value::Number(n) => format!("number {n}"),
        serde_json::Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            format!("string {short:?}")
        }
        serde_json::Value::Array(_) => "a list".into(),
        serde_json::Value::Object(_) => "an object".into(),
    }
}

/// Deserialize one record; a type error names the key that caused it (serde's own message for a
/// flattened struct does not).
fn record_from_map(
    map: serde_json::Map<String, serde_json::Value>,
) -> Result<ScenarioResult, String> {
    let whole = serde_json::Value::Object(map.clone());
    let err = match serde_json::from_value::<ScenarioResult>(whole) {
        Ok(r) => return Ok(r),
        Err(e) => e.to_string(),
    };
    if err.starts_with("missing field") {
        return Err(err);
    }
    // Find the key: each one alone on a minimal valid record.
    let mut skeleton = skeleton();
    for (k, v) in &map {
        let obj = skeleton.as_object_mut().expect("an object");
        let before = obj.insert(k.clone(), v.clone());
        let res = serde_json::from_value::<ScenarioResult>(skeleton.clone());
        let obj = skeleton.as_object_mut().expect("an object");
        match before {
            Some(b) => obj.insert(k.clone(), b),
            None => obj.remove(k),
        };
        if let Err(e) = res {
            return Err(format!("`{k}`: {e} (got {})", kind_of(v)));
        }
    }
    Err(err)
}

/// Read a JSON Lines file of records (unknown keys ignored; see [`read_jsonl_with_warnings`]).
pub fn read_jsonl(path: &std::path::Path) -> Result<Vec<ScenarioResult>, RecordError> {
    read_jsonl_with_warnings(path).map(|r| r.records)
}

/// Read a JSON Lines file of records, with the warnings about ignored keys.
pub fn read_jsonl_with_warnings(path: &std::path::Path) -> Result<ReadRecords, RecordError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|reason| RecordError::Io {
        path: p.clone(),
        reason,
    })?;
    let mut read = parse_jsonl_with_warnings(&text, &p)?;
    read.sha256 = crate::text::sha256_hex(text.as_bytes());
    Ok(read)
}

/// Render records as JSON Lines (one compact object per line, trailing newline).
pub fn to_jsonl(records: &[ScenarioResult]) -> String {
    let mut s = String::new();
    for r in records {
        s.push_str(&serde_json::to_string(r).expect("records serialize"));
        s.push('\n');
    }
    s
}
