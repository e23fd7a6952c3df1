//! Per-request export: one row per measured request, as JSON Lines or CSV
//! (`--save-detailed-format jsonl,csv`). vLLM's `--save-detailed` writes the same facts as
//! parallel arrays inside the result JSON (`input_lens`, `ttfts`, `itls`, `start_times`,
//! `errors`, …); these files hold them row by row, in request order, for tools that read tables.
//!
//! Times are in seconds, as in vLLM's arrays: `start_time` and `scheduled_time` from the start
//! of the run, `ttft` and `latency` from the scheduled time (no coordinated omission).

use std::fmt::Write as _;

use serde::Serialize;

/// One request of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RequestRow {
    /// The request's position in the run (its `x-request-id` ends with it).
    pub index: u32,
    /// The `x-request-id` sent (filled in by [`rows_with_ids`]).
    pub request_id: Option<String>,
    /// The request's own model (a LoRA adapter), when it was not the run's.
    pub model: Option<String>,
    /// The conversation and turn (from 0) of a multi-turn run.
    pub conversation: Option<u32>,
    pub turn: Option<u32>,
    pub input_len: u32,
    pub output_len: u32,
    pub ttft: Option<f64>,
    pub tpot: Option<f64>,
    /// Gaps between successive text chunks.
    pub itl: Vec<f64>,
    /// End-to-end latency (vLLM's `latencies`).
    pub latency: Option<f64>,
    pub start_time: f64,
    pub scheduled_time: f64,
    /// Why the request failed; `None` for a success.
    pub error: Option<String>,
}

/// A per-request file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    Jsonl,
    Csv,
}

impl Format {
    /// The file extension (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
        }
    }

    /// The rows in this format.
    pub fn render(self, rows: &[RequestRow]) -> String {
        match self {
            Format::Jsonl => jsonl(rows),
            Format::Csv => csv(rows),
        }
    }
}

/// The value of `--save-detailed-format`: `json` (vLLM's arrays in the result JSON), `jsonl`,
/// `csv`, comma-separated. Returns whether `json` was asked for and the file formats.
pub fn parse_formats(s: &str) -> Result<(bool, Vec<Format>), String> {
    let mut json = false;
    let mut files = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.to_ascii_lowercase().as_str() {
            "json" => json = true,
            "jsonl" => files.push(Format::Jsonl),
            "csv" => files.push(Format::Csv),
            other => {
                return Err(format!(
                    "unknown format `{other}` (expected json, jsonl or csv)"
                ))
            }
        }
    }
    if !json && files.is_empty() {
        return Err("no format given (expected json, jsonl or csv)".into());
    }
    files.sort();
    files.dedup();
    Ok((json, files))
}

/// The rows sorted by index, each with its `x-request-id` (`prefix` and the index) when the run
/// sent one.
pub fn rows_with_ids(rows: &[RequestRow], prefix: Option<&str>) -> Vec<RequestRow> {
    let mut rows = rows.to_vec();
    rows.sort_by_key(|r| r.index);
    if let Some(p) = prefix {
        for r in &mut rows {
            r.request_id = Some(format!("{p}{}", r.index));
        }
    }
    rows
}

/// One JSON object per line.
pub fn jsonl(rows: &[RequestRow]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&serde_json::to_string(r).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// The CSV header: the columns of [`csv()`].
pub const CSV_HEADER: &str = "request_id,index,model,conversation,turn,input_len,output_len,\
ttft,tpot,latency,start_time,scheduled_time,itl_count,itl,error";

/// RFC 4180 CSV with a header line; `itl` holds the gaps separated by spaces, `itl_count` their
/// number; an absent value is an empty field.
pub fn csv(rows: &[RequestRow]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push_str("\r\n");
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let num = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    for r in rows {
        let itl = r
            .itl
            .iter()
            .map(f64::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        let fields = [
            field(r.request_id.as_deref().unwrap_or("")),
            r.index.to_string(),
            field(r.model.as_deref().unwrap_or("")),
            num(r.conversation),
            num(r.turn),
            r.input_len.to_string(),
            r.output_len.to_string(),
            opt(r.ttft),
            opt(r.tpot),
            opt(r.latency),
            r.start_time.to_string(),
            r.scheduled_time.to_string(),
            r.itl.len().to_string(),
            itl,
            field(r.error.as_deref().unwrap_or("")),
        ];
        let _ = write!(out, "{}\r\n", fields.join(","));
    }
    out
}

/// A CSV field: quoted (its quotes doubled) when it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<RequestRow> {
        vec![
            RequestRow {
                index: 1,
                input_len: 4,
                error: Some("http_500: boom, \"bad\"\nline".into()),
                start_time: 0.5,
                scheduled_time: 0.5,
                ..Default::default()
            },
            RequestRow {
                index: 0,
                model: Some("lora-a".into()),
                input_len: 4,
                output_len: 3,
                ttft: Some(0.25),
                tpot: Some(0.125),
                itl: vec![0.125, 0.125],
                latency: Some(0.5),
                ..Default::default()
            },
        ]
    }

    #[test]
    fn rows_come_in_request_order_with_their_ids() {
        let r = rows_with_ids(&rows(), Some("bench-1-"));
        assert_eq!(r[0].index, 0);
        assert_eq!(r[1].request_id.as_deref(), Some("bench-1-1"));
        assert!(rows_with_ids(&rows(), None)[0].request_id.is_none());
    }

    #[test]
    fn jsonl_is_one_object_per_request() {
        let text = jsonl(&rows_with_ids(&rows(), Some("x-")));
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["request_id"], "x-0");
        assert_eq!(lines[0]["itl"], serde_json::json!([0.125, 0.125]));
        assert_eq!(lines[0]["error"], serde_json::Value::Null);
        assert_eq!(lines[1]["ttft"], serde_json::Value::Null);
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let text = csv(&rows_with_ids(&rows(), None));
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(
            lines[1],
            ",0,lora-a,,,4,3,0.25,0.125,0.5,0,0,2,0.125 0.125,"
        );
        assert!(
            text.contains(",,,0.5,0.5,0,,\"http_500: boom, \"\"bad\"\"\nline\"\r\n"),
            "{text}"
        );
    }

    #[test]
    fn formats_parse() {
        assert_eq!(
            parse_formats("csv, JSONL,csv").unwrap(),
            (false, vec![Format::Jsonl, Format::Csv])
        );
        assert_eq!(parse_formats("json").unwrap(), (true, vec![]));
        assert!(parse_formats("xml").unwrap_err().contains("`xml`"));
        assert!(parse_formats(",").is_err());
    }
}
