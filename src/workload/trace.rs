//! Timed-trace replay (`--trace FILE`): a JSON Lines trace of requests, each sent at its own
//! time, with a random prompt of its input length asking for its output length. The lines are
//! Mooncake's (`{"timestamp": 27482, "input_length": 6955, "output_length": 52, …}`, the time in
//! milliseconds); `input_len`, `output_len` and `timestamp_ms` are read too. Other keys (such
//! as Mooncake's `hash_ids`) are ignored. Times count from the trace's first request.

use std::path::Path;

use crate::dataset::{DatasetError, Prompt};
use crate::tokenizer::Tokenize;

/// One request of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceRow {
    /// When it is due, seconds from the first request of the trace.
    pub at: f64,
    pub input_len: u32,
    pub output_len: u32,
}

/// Read a trace whose timestamps are milliseconds (`--trace`): [`parse_in`] with 0.001 s.
pub fn parse(path: &Path, text: &str) -> Result<Vec<TraceRow>, String> {
    parse_in(path, text, 1e-3)
}

/// Read a trace (the text of `path`, named in errors with the line) whose timestamps count
/// `unit_s` seconds each (vLLM's `--timed-trace-sec-multiplier`). Blank lines are skipped; rows
/// are put in time order (ties keep the file's order).
pub fn parse_in(path: &Path, text: &str, unit_s: f64) -> Result<Vec<TraceRow>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = |msg: String| format!("{}:{}: {msg}", path.display(), i + 1);
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
        if !v.is_object() {
            return Err(at("expected a JSON object".into()));
        }
        let field = |names: &[&'static str]| field(&v, names);
        let stamp = match field(&["timestamp", "timestamp_ms"]) {
            Some((_, x)) => x
                .as_f64()
                .filter(|t| t.is_finite() && *t >= 0.0)
                .ok_or_else(|| {
                    at(format!(
                        "`timestamp` must be a non-negative number, got {x}"
                    ))
                })?,
            None => return Err(at("no `timestamp`".into())),
        };
        let len = |names: &[&'static str], min: u64| -> Result<u32, String> {
            let (name, x) = field(names).ok_or_else(|| at(format!("no `{}`", names[0])))?;
            x.as_u64()
                .filter(|n| *n >= min)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| at(format!("`{name}` must be a whole number ≥ {min}, got {x}")))
        };
        rows.push(TraceRow {
            at: stamp * unit_s,
            input_len: len(&["input_length", "input_len"], 1)?,
            output_len: len(&["output_length", "output_len"], 1)?,
        });
    }
    if rows.is_empty() {
        return Err(format!("{}: the trace has no requests", path.display()));
    }
    rows.sort_by(|a, b| a.at.total_cmp(&b.at));
    let first = rows[0].at;
    for r in &mut rows {
        r.at -= first;
    }
    Ok(rows)
}

/// The first of `names` that `v` has, with its value.
fn field<'a>(
    v: &'a serde_json::Value,
    names: &[&'static str],
) -> Option<(&'static str, &'a serde_json::Value)> {
    names.iter().find_map(|n| v.get(*n).map(|x| (*n, x)))
}

/// The prompts of the first `n` rows: random texts of their input lengths (seeded), due at the
/// rows' times. Returns the prompts and notes.
pub fn prompts(
    rows: &[TraceRow],
    n: usize,
    tok: &dyn Tokenize,
    seed: u64,
) -> Result<(Vec<Prompt>, Vec<String>), DatasetError> {
    let rows = &rows[..n.min(rows.len())];
    let lens: Vec<u32> = rows.iter().map(|r| r.input_len).collect();
    let (texts, note) = crate::dataset::exact_texts(tok, &lens, seed)?;
    let prompts = texts
        .into_iter()
        .zip(rows)
        .map(|(text, r)| Prompt {
            text,
            input_len: r.input_len,
            output_len: r.output_len,
            arrival: Some(r.at),
            ..Default::default()
        })
        .collect();
    let span = rows.last().map_or(0.0, |r| r.at);
    let mut notes = vec![format!(
        "trace: {} requests over {span:.3} s, sent at the trace's times (--request-rate, \
         --burstiness and --ramp-up-strategy do not apply)",
        rows.len()
    )];
    notes.extend(note);
    Ok((prompts, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mooncake_lines_are_read_in_time_order() {
        let text =
            "{\"timestamp\": 1500, \"input_length\": 7, \"output_length\": 3, \"hash_ids\": [1]}\n\
                    \n\
                    {\"timestamp\": 500, \"input_len\": 4, \"output_len\": 2}\n";
        let rows = parse(Path::new("t.jsonl"), text).unwrap();
        assert_eq!(
            rows,
            [
                TraceRow {
                    at: 0.0,
                    input_len: 4,
                    output_len: 2
                },
                TraceRow {
                    at: 1.0,
                    input_len: 7,
                    output_len: 3
                },
            ]
        );
    }

    #[test]
    fn a_bad_line_is_named_with_its_file_and_number() {
        let p = Path::new("trace.jsonl");
        let bad = |text: &str| parse(p, text).unwrap_err();
        let ok = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n";
        assert!(bad(&format!("{ok}{{oops")).starts_with("trace.jsonl:2: not JSON"));
        let e = bad(&format!(
            "{ok}{ok}{{\"timestamp\": 5, \"input_length\": 3}}"
        ));
        assert_eq!(e, "trace.jsonl:3: no `output_length`");
        let e = bad("{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 1}");
        assert!(e.starts_with("trace.jsonl:1: `timestamp` must be"), "{e}");
        let e = bad("{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 1}");
        assert!(
            e.contains("`input_length` must be a whole number ≥ 1, got 0"),
            "{e}"
        );
        assert!(bad("[1]").ends_with("expected a JSON object"));
        assert!(bad("{\"input_length\": 1}").contains("no `timestamp`"));
        assert!(bad("\n\n").contains("no requests"));
    }
}
