//! Importers: turn the output of other benchmark tools into [`ScenarioResult`] records, exactly.
//!
//! Formats (detected from the text, see [`detect`]): console logs in the SGLang/LMDeploy print
//! style (the seeds) and in vLLM's `benchmark_serving.py` / `vllm bench serve` style (both in
//! [`console`]), vLLM `--save-result` JSON ([`vllm_json`]), SGLang JSONL ([`sglang_jsonl`]),
//! LMDeploy CSV ([`lmdeploy_csv`]) and perfgate's own JSON Lines. Every printed number is parsed
//! from its text with `str::parse::<f64>`, so it serialises back identically; the run's own
//! arguments (`Namespace(...)`, the command line) identify the scenario, never a position.
//! A block that cannot be parsed is an error naming the file and line. Pure but for
//! [`read_file`], which reads a file to import with its lines bounded.

use crate::record::{check_metric_value, RangeConvention, ScenarioResult};

pub mod args;
pub mod console;
pub mod lmdeploy_csv;
pub mod sglang_jsonl;
pub mod vllm_json;

/// What the user told `perfgate import` on the command line. Every field is a fallback for
/// what the source does not say (the source wins), except `engine`/`engine_version`, which
/// name the engine when the source cannot.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub model: Option<String>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub dataset_name: Option<String>,
    pub num_prompts: Option<u64>,
    pub random_input_len: Option<u64>,
    pub random_output_len: Option<u64>,
    pub random_range_ratio: Option<f64>,
    /// Overrides the convention implied by the format (SGLang-style output → `sglang`).
    pub range_convention: Option<RangeConvention>,
    /// Import every result that can be read and list the others in [`Imported::skipped`],
    /// instead of refusing the file at its first bad result.
    pub keep_going: bool,
}

/// The formats `perfgate import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Console output with `Serving Benchmark Result` blocks (SGLang/LMDeploy or vLLM style).
    Console,
    /// vLLM `--save-result` JSON: one object, or many appended.
    VllmJson,
    /// SGLang `bench_serving` JSON Lines.
    SglangJsonl,
    /// LMDeploy profiler CSV.
    LmdeployCsv,
    /// perfgate's own records (JSON Lines).
    PerfgateJsonl,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Console => "console log",
            Format::VllmJson => "vLLM --save-result JSON",
            Format::SglangJsonl => "SGLang JSONL",
            Format::LmdeployCsv => "LMDeploy CSV",
            Format::PerfgateJsonl => "perfgate JSONL",
        }
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ImportError {
    #[error("{path}: the file is empty")]
    Empty { path: String },
    #[error("{path}: no benchmark results found (expected `Serving Benchmark Result` blocks, vLLM/SGLang JSON, or an LMDeploy CSV)")]
    NoResults { path: String },
    #[error("{path}:{line}: {message}")]
    At {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path}:{line}: no model found for this result (no `--model` on a command line, no `model=` in a `Namespace(...)` line); pass `--model`")]
    NoModel { path: String, line: usize },
}

impl ImportError {
    pub(crate) fn at(path: &str, line: usize, message: impl Into<String>) -> ImportError {
        ImportError::At {
            path: path.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// The outcome of importing one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub records: Vec<ScenarioResult>,
    /// Things worth telling the user that are not errors (incomplete runs, ignored keys,
    /// launch commands that disagree with the run's arguments).
    pub warnings: Vec<String>,
    /// With [`ImportOptions::keep_going`]: the results (or header lines) that could not be
    /// read, each naming its file, line and why.
    pub skipped: Vec<ImportError>,
}

impl Imported {
    /// A file refused whole (with `--keep-going`, listed with the bad results).
    fn skipped_whole(e: ImportError) -> Imported {
        Imported {
            skipped: vec![e],
            ..Default::default()
        }
    }

    /// A result that cannot be read: kept in `skipped` with `--keep-going`, else the error.
    pub(crate) fn skip(&mut self, e: ImportError, opts: &ImportOptions) -> Result<(), ImportError> {
        if opts.keep_going {
            self.skipped.push(e);
            Ok(())
        } else {
            Err(e)
        }
    }
}

/// Guess the format of a file from its text (and its extension, as a tie-breaker).
pub fn detect(text: &str, path: &str) -> Format {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first.starts_with('{') {
        let looks_sglang = text.contains("\"median_e2e_latency_ms\"")
            || text.contains("\"total_output_tokens_retokenized\"")
            || text.contains("\"mean_e2e_latency_ms\"");
        let looks_perfgate = text.contains("\"run_index\"") && text.contains("\"model\"");
        if looks_perfgate {
            return Format::PerfgateJsonl;
        }
        if looks_sglang {
            return Format::SglangJsonl;
        }
        return Format::VllmJson;
    }
    let lower = path.to_ascii_lowercase();
    if (first.contains("RPS") && first.contains(','))
        || (lower.ends_with(".csv") && !text.contains("Serving Benchmark Result"))
    {
        return Format::LmdeployCsv;
    }
    Format::Console
}

/// Import one file's text. `path` is used in messages and in each record's `source`. With
/// [`ImportOptions::keep_going`] a file that gives nothing is listed in `skipped`, not an error.
pub fn import_text(text: &str, path: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    match import_all(text, path, opts) {
        Err(e) if opts.keep_going => Ok(Imported::skipped_whole(e)),
        other => other,
    }
}

fn import_all(text: &str, path: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    // A UTF-8 byte-order mark (Windows editors write one) is not part of the text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ImportError::Empty { path: path.into() });
    }
    let mut imported = match detect(text, path) {
        Format::Console => console::parse(text, path, opts)?,
        Format::VllmJson => vllm_json::parse(text, path, opts)?,
        Format::SglangJsonl => sglang_jsonl::parse(text, path, opts)?,
        Format::LmdeployCsv => lmdeploy_csv::parse(text, path, opts)?,
        Format::PerfgateJsonl => {
            let read =
                crate::record::parse_jsonl_with_warnings(text, path).map_err(|e| match e {
                    crate::record::RecordError::Parse {
                        path,
                        line,
                        message,
                    } => ImportError::At {
                        path,
                        line,
                        message,
                    },
                    other => ImportError::at(path, 0, other.to_string()),
                })?;
            Imported {
                records: read.records,
                warnings: read.warnings,
                skipped: Vec::new(),
            }
        }
    };
    if imported.records.is_empty() && imported.skipped.is_empty() {
        return Err(ImportError::NoResults { path: path.into() });
    }
    for r in &imported.records {
        if r.is_incomplete() {
            imported.warnings.push(format!(
                "{}: incomplete run kept and flagged: {} of {} requests succeeded ({} failed)",
                r.source.as_deref().unwrap_or(path),
                r.completed,
                r.params.num_prompts,
                r.failed
            ));
        }
    }
    for r in &imported.records {
        check_record(r, path)?;
    }
    number_runs(&mut imported.records);
    Ok(imported)
}

/// The longest line a console log or CSV may have: 16 MiB (a log line is a few hundred bytes;
/// a hostile or broken file can hold one of a gigabyte). JSON files are exempt: vLLM writes its
/// `--save-detailed` result, hundreds of megabytes, as one line.
pub const MAX_LINE: usize = 16 << 20;

/// Open and read a file to import ([`read_capped`]); `path` names it in errors.
pub fn read_file(file: &std::path::Path, path: &str) -> Result<String, ImportError> {
    let f = std::fs::File::open(file)
        .map_err(|e| ImportError::at(path, 0, format!("cannot read: {e}")))?;
    read_capped(f, path)
}

/// Read a file to import from `r`, line by line, refusing (as `PATH:LINE`) a line over
/// [`MAX_LINE`] unless the file is JSON (its first byte other than a byte-order mark or
/// whitespace is `{` or `[`). Reading stops at the first over-long line, so such a file never
/// sits in memory whole.
pub fn read_capped(r: impl std::io::Read, path: &str) -> Result<String, ImportError> {
    use std::io::BufRead;
    let io = |e: std::io::Error| ImportError::at(path, 0, format!("cannot read: {e}"));
    let mut r = std::io::BufReader::new(r);
    let mut out: Vec<u8> = Vec::new();
    let mut json: Option<bool> = None;
    let mut line = 0usize;
    loop {
        line += 1;
        let start = out.len();
        let cap = if json == Some(true) {
            u64::MAX
        } else {
            MAX_LINE as u64 + 1
        };
        let n = std::io::Read::take(&mut r, cap)
            .read_until(b'\n', &mut out)
            .map_err(io)?;
        if n == 0 {
            break;
        }
        if json.is_none() {
            let text = &out[..];
            let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
            json = text
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .map(|b| matches!(b, b'{' | b'['));
        }
        let body = out.len() - start - usize::from(out.ends_with(b"\n"));
        if json != Some(true) && body > MAX_LINE {
            return Err(ImportError::at(
                path,
                line,
                format!(
                    "a line longer than {} MiB: not a benchmark log (reading stopped here)",
                    MAX_LINE >> 20
                ),
            ));
        }
    }
    String::from_utf8(out).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1;
        ImportError::at(path, line, "not UTF-8 text")
    })
}

/// What no benchmark can have measured, whichever tool printed it: a metric outside its range
/// ([`check_metric_value`]: a negative duration, a TTFT of 0 or below), no prompts, more
/// requests completed than sent, a range ratio that is not a number ≥ 0. The error names the
/// record's `FILE:LINE` and the field.
fn check_record(r: &ScenarioResult, path: &str) -> Result<(), ImportError> {
    let (file, line) = r
        .source
        .as_deref()
        .and_then(|s| s.rsplit_once(':'))
        .and_then(|(f, l)| Some((f, l.parse::<usize>().ok()?)))
        .unwrap_or((path, 0));
    let at = |m: String| ImportError::at(file, line, m);
    for (key, v) in r.metrics() {
        check_metric_value(&key, v).map_err(|m| at(format!("`{key}`: {m}")))?;
    }
    let n = r.params.num_prompts;
    if n == 0 {
        return Err(at(
            "`num_prompts`: 0 (a run sends at least one prompt)".into()
        ));
    }
    if r.completed > n {
        return Err(at(format!(
            "`completed`: {} requests completed of `num_prompts` {n} sent",
            r.completed
        )));
    }
    if let Some(q) = r.params.random_range_ratio {
        if !(q.is_finite() && q >= 0.0) {
            return Err(at(format!("`random_range_ratio`: {q} is not a number ≥ 0")));
        }
    }
    Ok(())
}

/// Python's `NaN` is read as "not measured" ([`python_json`]), which fits a statistic (SGLang
/// writes `"std_ttft_ms": NaN` for one request) but nothing else: a `NaN` under any other key (a
/// parameter like `random_range_ratio`, a count, the duration) is an error naming its line and
/// key, not a silent `null`.
pub(crate) fn nan_only_in_statistics(text: &str, path: &str) -> Result<(), ImportError> {
    if !text.contains("NaN") {
        return Ok(());
    }
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("NaN") {
            let before = rest[..at].trim_end();
            let after = &rest[at + 3..];
            rest = after;
            let word_end = !after
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
            let Some(before) = before.strip_suffix(':').map(str::trim_end) else {
                continue;
            };
            let Some(key) = before
                .strip_suffix('"')
                .and_then(|b| b.rsplit_once('"'))
                .map(|(_, k)| k)
            else {
                continue;
            };
            if word_end && !crate::record::is_stat_key(key) {
                return Err(ImportError::at(
                    path,
                    i + 1,
                    format!(
                        "`{}`: NaN is not a value (NaN reads as \"not measured\" only for a \
                         latency statistic)",
                        key.chars().take(60).collect::<String>()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Python's `json` writes the non-standard tokens `Infinity`, `-Infinity` and `NaN` (SGLang's
/// `bench_serving` saves its default `request_rate` as `Infinity`). Outside strings they become
/// `"Infinity"` / `"-Infinity"` (read like `"inf"` where a rate may be infinite, refused with the
/// key's name elsewhere) and `null` (NaN: not measured). Lines stay where they were.
pub(crate) fn python_json(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("Infinity") && !text.contains("NaN") {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let (mut i, mut from) = (0, 0);
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let word_start =
            i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] >= 0x80);
        // Bytes, not `&str`: `i` may sit inside a multi-byte character outside any string.
        let rest = &b[i..];
        let ends = |n: usize| {
            b.get(i + n)
                .is_none_or(|x| !(x.is_ascii_alphanumeric() || *x == b'_'))
        };
        let (token, with): (usize, &str) = if !word_start {
            (0, "")
        } else if rest.starts_with(b"-Infinity") && ends(9) {
            (9, "\"-Infinity\"")
        } else if rest.starts_with(b"Infinity") && ends(8) {
            (8, "\"Infinity\"")
        } else if rest.starts_with(b"NaN") && ends(3) {
            (3, "null")
        } else {
            (0, "")
        };
        if token > 0 {
            out.push_str(&text[from..i]);
            out.push_str(with);
            i += token;
            from = i;
            continue;
        }
        if c == b'"' {
            in_string = true;
        }
        i += 1;
    }
    out.push_str(&text[from..]);
    std::borrow::Cow::Owned(out)
}

/// Give repeated runs of the same model × scenario increasing `run_index` values, in order.
pub fn number_runs(records: &mut [ScenarioResult]) {
    let mut seen: std::collections::HashMap<(String, String), u32> = Default::default();
    for r in records.iter_mut() {
        let n = seen.entry((r.model.clone(), r.scenario_id())).or_insert(0);
        r.run_index = *n;
        *n += 1;
    }
}

/// Parse a printed number exactly: `f64::from_str` of the text. `nan`/`inf` are refused.
pub(crate) fn parse_f64(text: &str) -> Result<f64, String> {
    let t = text.trim();
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("`{t}` is not a number")),
    }
}

/// Parse a printed count: an integer, or a float with no fractional part (`64.00`).
pub(crate) fn parse_u64(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if let Ok(v) = t.parse::<u64>() {
        return Ok(v);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9.0e15 => Ok(v as u64),
        _ => Err(format!("`{t}` is not a whole number")),
    }
}

/// Multiply a printed decimal by 10^`places` by moving the decimal point in the text, so that
/// `0.123` seconds become exactly `123` ms (plain float multiplication would give
/// `123.00000000000001`).
pub(crate) fn shift_decimal(text: &str, places: usize) -> Result<f64, String> {
    let t = text.trim();
    let err = || format!("`{t}` is not a number");
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if body.is_empty()
        || !body.chars().all(|c| c.is_ascii_digit() || c == '.')
        || body.matches('.').count() > 1
    {
        return parse_f64(t)
            .map(|v| v * 10f64.powi(places as i32))
            .map_err(|_| err());
    }
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let mut digits = String::from(int);
    let mut frac = frac.to_string();
    while frac.len() < places {
        frac.push('0');
    }
    digits.push_str(&frac[..places]);
    let rest = &frac[places..];
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    s.push_str(&digits);
    if !rest.is_empty() {
        s.push('.');
        s.push_str(rest);
    }
    parse_f64(&s).map_err(|_| err())
}

/// Is this one of the engines perfgate knows by name?
pub(crate) fn known_engine(name: &str) -> Option<&'static str> {
    match name.to_ascii_lowercase().as_str() {
        "vllm" => Some("vllm"),
        "sglang" => Some("sglang"),
        "lmdeploy" => Some("lmdeploy"),
        "llama.cpp" | "llamacpp" | "llama-cpp" => Some("llama.cpp"),
        "tgi" => Some("tgi"),
        "trt" | "tensorrt-llm" | "trtllm" => Some("tensorrt-llm"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_exactly() {
        for t in ["578.48", "289213.70", "0.21", "1768755.83", "17.29"] {
            let v = parse_f64(t).unwrap();
            let back = serde_json::to_string(&v).unwrap();
            assert_eq!(back.parse::<f64>().unwrap(), v);
            assert_eq!(back, t.trim_end_matches('0'));
        }
        assert!(parse_f64("12.3.4").is_err());
        assert!(parse_f64("nan").is_err());
        assert_eq!(parse_u64("64.00").unwrap(), 64);
        assert!(parse_u64("64.5").is_err());
    }

    #[test]
    fn shifting_decimals_is_exact() {
        assert_eq!(shift_decimal("0.123", 3).unwrap(), 123.0);
        assert_eq!(shift_decimal("1.5", 3).unwrap(), 1500.0);
        assert_eq!(shift_decimal("0.0001", 3).unwrap(), 0.1);
        assert_eq!(shift_decimal("12", 3).unwrap(), 12000.0);
        assert_eq!(shift_decimal("-0.25", 3).unwrap(), -250.0);
        assert!(shift_decimal("abc", 3).is_err());
    }

    #[test]
    fn detects_formats() {
        assert_eq!(detect("{\"model_id\": \"m\"}", "a.json"), Format::VllmJson);
        assert_eq!(
            detect("{\"median_e2e_latency_ms\": 1}\n", "a.jsonl"),
            Format::SglangJsonl
        );
        assert_eq!(
            detect("batch,num_promts,RPS,RPM\n1,2,3,4\n", "x.csv"),
            Format::LmdeployCsv
        );
        assert_eq!(detect("hello\n", "x.txt"), Format::Console);
    }

    #[test]
    fn python_json_tokens_and_a_bom_are_read() {
        // SGLang writes its default rate as Python's `Infinity`; NaN where nothing was measured.
        let line = r#"{"backend": "sglang", "model_id": "m", "dataset_name": "sharegpt", "num_prompts": 10, "request_rate": Infinity, "duration": 1.0, "completed": 10, "total_input_tokens": 1, "total_output_tokens": 1, "request_throughput": 1.0, "output_throughput": 1.0, "median_e2e_latency_ms": 3.0, "std_ttft_ms": NaN, "note": "NaN and Infinity in a string stay"}"#;
        let text = format!("\u{feff}{line}\n");
        let got = import_text(&text, "s.jsonl", &ImportOptions::default()).unwrap();
        assert_eq!(got.records.len(), 1);
        assert!(got.records[0].params.request_rate.is_inf());
        assert!(!got.records[0].stats.contains_key("std_ttft_ms"));
        // A multi-byte character outside a string (found by the fuzzer: a panic on slicing).
        assert_eq!(python_json("ȩ NaN ȩInfinity"), "ȩ null ȩInfinity");
        assert_eq!(
            python_json(r#"{"a": -Infinity, "b": "x NaN", "c": [NaN], "NaNa": 1}"#),
            r#"{"a": "-Infinity", "b": "x NaN", "c": [null], "NaNa": 1}"#
        );
        // Infinity where a number must be finite is refused by name.
        let bad = line.replace("\"duration\": 1.0", "\"duration\": Infinity");
        let e = import_text(&bad, "s.jsonl", &ImportOptions::default()).unwrap_err();
        assert!(e.to_string().contains("`duration`"), "{e}");
    }

    #[test]
    fn a_huge_value_is_named_by_its_key_not_dumped() {
        let huge = "9".repeat(1_000_000);
        let line = format!(
            r#"{{"backend": "vllm", "model_id": "m", "dataset_name": "sharegpt", "num_prompts": 10, "duration": "{huge}x", "completed": 10}}"#
        );
        let e = import_text(&line, "v.json", &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("`duration`"), "{}", &e[..200.min(e.len())]);
        assert!(e.len() < 300, "{} bytes of message", e.len());
    }

    #[test]
    fn impossible_values_are_refused_naming_file_line_and_field() {
        let good = r#"{"backend": "vllm", "model_id": "m", "dataset_name": "random", "num_prompts": 10, "random_input_len": 4, "random_output_len": 4, "random_range_ratio": 0.5, "duration": 1.5, "completed": 10, "total_input_tokens": 40, "total_output_tokens": 40, "request_throughput": 6.6, "output_throughput": 26.6, "mean_ttft_ms": 5.0, "std_ttft_ms": NaN}"#;
        let opts = ImportOptions::default();
        let got = import_text(&format!("{good}\n"), "v.json", &opts).unwrap();
        assert_eq!(got.records[0].params.random_range_ratio, Some(0.5));
        for (from, to, says) in [
            (
                "\"duration\": 1.5",
                "\"duration\": -1.5",
                "`duration`: -1.5 is negative",
            ),
            (
                "\"mean_ttft_ms\": 5.0",
                "\"mean_ttft_ms\": 0",
                "`mean_ttft_ms`: 0 is not",
            ),
            (
                "\"mean_ttft_ms\": 5.0",
                "\"mean_ttft_ms\": -5",
                "`mean_ttft_ms`: -5 is negative",
            ),
            (
                "\"completed\": 10",
                "\"completed\": 11",
                "`completed`: 11 requests",
            ),
            (
                "\"num_prompts\": 10",
                "\"num_prompts\": 0",
                "`num_prompts`: 0",
            ),
            (
                "\"random_range_ratio\": 0.5",
                "\"random_range_ratio\": NaN",
                "`random_range_ratio`: NaN is not a value",
            ),
            (
                "\"random_range_ratio\": 0.5",
                "\"random_range_ratio\": -0.5",
                "`random_range_ratio`: -0.5",
            ),
        ] {
            let bad = format!("{good}\n{}\n", good.replace(from, to));
            let e = import_text(&bad, "v.json", &opts).unwrap_err().to_string();
            assert!(e.starts_with("v.json:2: "), "{to}: {e}");
            assert!(e.contains(says), "{to}: {e}");
        }
    }

    #[test]
    fn an_over_long_line_is_refused_by_its_place_unless_json() {
        let long = "x".repeat(MAX_LINE + 1);
        let text = format!("a log\nline two\n{long}\nmore\n");
        let e = read_capped(text.as_bytes(), "l.txt")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("l.txt:3: a line longer than 16 MiB"),
            "{}",
            &e[..100]
        );
        let exact = "y".repeat(MAX_LINE);
        let ok = format!("a\n{exact}\n");
        assert_eq!(read_capped(ok.as_bytes(), "l.txt").unwrap(), ok);
        let json = format!("\n {{\"a\": \"{long}\"}}\n");
        assert_eq!(read_capped(json.as_bytes(), "r.json").unwrap(), json);
        let e = read_capped(&b"ok\n\xff\n"[..], "b.txt").unwrap_err();
        assert_eq!(e.to_string(), "b.txt:2: not UTF-8 text");
    }

    #[test]
    fn empty_file_is_an_error() {
        let err = import_text(" \n\n", "e.txt", &ImportOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "e.txt: the file is empty");
    }
}
