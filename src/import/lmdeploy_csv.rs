//! LMDeploy profiler CSV (`profile_restful_api.py` / `profile_throughput.py --csv`): a header
//! row (`batch, num_promts, RPS, RPM, FTL(ave)(s), FTL(min)(s), FTL(max)(s), 50%(s), 75%(s),
//! 95%(s), 99%(s), throughput(out tok/s), throughput(total tok/s)`) and one row per run.
//! Latencies are printed in seconds and become milliseconds by moving the decimal point, so
//! they stay exact; the percentile columns are per-token latencies (ITL). The CSV does not
//! print the duration, the success count or token totals: those are computed from what it does
//! print and listed in the record's `derived` field. No model is written, so `--model` is
//! required; the dataset is ShareGPT (the only one these profilers sample) unless told.

use super::{parse_f64, parse_u64, shift_decimal, ImportError, ImportOptions, Imported};
use crate::record::{OutputTokenSource, ScenarioParams, ScenarioResult};

pub fn parse(text: &str, path: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let mut out = Imported::default();
    // The `csv` crate reads the rows (quoted cells, CRLF, blank lines); `flexible` so that a
    // short or long row is reported below with its line instead of as a generic CSV error.
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut rows = reader.records();
    // The line of a byte offset (the crate's own line count skips blank lines): past the line
    // breaks that follow it, looked up in an index of the text's lines.
    let lines = crate::text::LineIndex::new(text);
    let line_at = |byte: u64| {
        let head = (byte as usize).min(text.len());
        let start = head
            + text.as_bytes()[head..]
                .iter()
                .take_while(|b| **b == b'\n' || **b == b'\r')
                .count();
        lines.line(start)
    };
    let row_line = |rec: &csv::StringRecord| rec.position().map_or(0, |p| line_at(p.byte()));
    let csv_err = |e: csv::Error| {
        let line = e.position().map_or(0, |p| line_at(p.byte()));
        ImportError::at(path, line, format!("not a readable CSV: {e}"))
    };
    let header = match rows.next() {
        None => return Ok(out),
        Some(h) => h.map_err(csv_err)?,
    };
    let cols = Columns::find(&header, path)?;

    for row in rows {
        let row = row.map_err(csv_err)?;
        if row.iter().all(str::is_empty) {
            continue;
        }
        let n = row_line(&row);
        let cells: Vec<&str> = row.iter().collect();
        if cells.len() != cols.names.len() {
            return Err(ImportError::at(
                path,
                n,
                format!("{} values for {} columns", cells.len(), cols.names.len()),
            ));
        }
        let model = opts.model.clone().ok_or(ImportError::NoModel {
            path: path.into(),
            line: n,
        })?;
        out.records.push(cols.record(&cells, model, path, n, opts)?);
    }
    Ok(out)
}

/// Where the header puts the columns a record is read from.
struct Columns {
    names: Vec<String>,
    rps: usize,
    prompts: usize,
    out_tput: usize,
    total_tput: Option<usize>,
    batch: Option<usize>,
    /// The latency columns (in seconds) and the statistic key each becomes.
    seconds: Vec<(usize, &'static str)>,
}

impl Columns {
    fn find(header: &csv::StringRecord, path: &str) -> Result<Self, ImportError> {
        let names: Vec<String> = header.iter().map(str::to_string).collect();
        let idx = |want: &[&str]| names.iter().position(|c| want.contains(&c.as_str()));
        let rps = idx(&["RPS"]).ok_or_else(|| {
            ImportError::at(path, 1, "not an LMDeploy serving CSV: no `RPS` column")
        })?;
        let prompts = idx(&["num_promts", "num_prompts"]).ok_or_else(|| {
            ImportError::at(
                path,
                1,
                "not an LMDeploy serving CSV: no `num_prompts` column",
            )
        })?;
        let out_tput = idx(&["throughput(out tok/s)"]).ok_or_else(|| {
            ImportError::at(
                path,
                1,
                "not an LMDeploy serving CSV: no `throughput(out tok/s)` column",
            )
        })?;
        let total_tput = idx(&["throughput(total tok/s)"]);
        let batch = idx(&["batch"]);
        let seconds: Vec<(usize, &'static str)> = [
            ("FTL(ave)(s)", "mean_ttft_ms"),
            ("FTL(min)(s)", "min_ttft_ms"),
            ("FTL(max)(s)", "max_ttft_ms"),
            ("50%(s)", "p50_itl_ms"),
            ("75%(s)", "p75_itl_ms"),
            ("95%(s)", "p95_itl_ms"),
            ("99%(s)", "p99_itl_ms"),
        ]
        .iter()
        .filter_map(|(c, k)| idx(&[c]).map(|i| (i, *k)))
        .collect();
        Ok(Columns {
            names,
            rps,
            prompts,
            out_tput,
            total_tput,
            batch,
            seconds,
        })
    }

    /// The record of one row (`n` is its line).
    fn record(
        &self,
        cells: &[&str],
        model: String,
        path: &str,
        n: usize,
        opts: &ImportOptions,
    ) -> Result<ScenarioResult, ImportError> {
        let cols = &self.names;
        let cell = |c: usize| cells[c];
        let num = |c: usize| {
            parse_f64(cell(c)).map_err(|m| ImportError::at(path, n, format!("`{}`: {m}", cols[c])))
        };
        let num_prompts = parse_u64(cell(self.prompts))
            .map_err(|m| ImportError::at(path, n, format!("`{}`: {m}", cols[self.prompts])))?;
        let request_throughput = num(self.rps)?;
        let output_throughput = num(self.out_tput)?;
        let total_token_throughput = self.total_tput.map(num).transpose()?;
        if request_throughput <= 0.0 {
            return Err(ImportError::at(path, n, "`RPS` must be positive"));
        }
        let duration = num_prompts as f64 / request_throughput;
        let mut r = ScenarioResult {
            model,
            backend: Some("lmdeploy".into()),
            params: ScenarioParams {
                dataset_name: opts
                    .dataset_name
                    .clone()
                    .unwrap_or_else(|| "sharegpt".into())
                    .into(),
                num_prompts,
                max_concurrency: self
                    .batch
                    .map(|b| {
                        parse_u64(cell(b))
                            .map_err(|m| ImportError::at(path, n, format!("`batch`: {m}")))
                    })
                    .transpose()?,
                ..Default::default()
            },
            completed: num_prompts,
            duration,
            total_output_tokens: (output_throughput * duration).round() as u64,
            total_input_tokens: total_token_throughput
                .map(|t| ((t - output_throughput) * duration).round().max(0.0) as u64)
                .unwrap_or(0),
            request_throughput,
            output_throughput,
            total_token_throughput,
            engine: opts.engine.clone().or_else(|| Some("lmdeploy".into())),
            engine_version: opts.engine_version.clone(),
            source: Some(format!("{path}:{n}")),
            output_token_source: Some(OutputTokenSource::Reported),
            derived: vec![
                "completed".into(),
                "duration".into(),
                "total_input_tokens".into(),
                "total_output_tokens".into(),
            ],
            ..Default::default()
        };
        for (c, key) in &self.seconds {
            let t = cell(*c);
            if t == "-" {
                continue; // not measured (non-streaming run)
            }
            let v = shift_decimal(t, 3)
                .map_err(|m| ImportError::at(path, n, format!("`{}`: {m}", cols[*c])))?;
            r.stats.insert(key.to_string(), v);
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "batch,num_promts,RPS,RPM,FTL(ave)(s),FTL(min)(s),FTL(max)(s),50%(s),75%(s),95%(s),99%(s),throughput(out tok/s),throughput(total tok/s)\n128,2000,10.250,615.000,0.512,0.031,2.004,0.021,0.027,0.045,0.093,2254.110,4912.337\n";

    #[test]
    fn columns_map_exactly() {
        let opts = ImportOptions {
            model: Some("internlm/internlm2_5-7b-chat".into()),
            ..Default::default()
        };
        let got = parse(CSV, "p.csv", &opts).unwrap();
        let r = &got.records[0];
        assert_eq!(r.params.max_concurrency, Some(128));
        assert_eq!(r.params.num_prompts, 2000);
        assert_eq!(r.request_throughput, 10.25);
        assert_eq!(r.stats["mean_ttft_ms"], 512.0);
        assert_eq!(r.stats["min_ttft_ms"], 31.0);
        assert_eq!(r.stats["p99_itl_ms"], 93.0);
        assert_eq!(r.output_throughput, 2254.11);
        assert_eq!(r.total_token_throughput, Some(4912.337));
        assert_eq!(r.scenario_id(), "sharegpt-n2000-c128");
        assert!(r.derived.contains(&"duration".to_string()));
        assert_eq!(r.source.as_deref(), Some("p.csv:2"));
    }

    #[test]
    fn needs_a_model_and_numbers() {
        let err = parse(CSV, "p.csv", &ImportOptions::default()).unwrap_err();
        assert!(err.to_string().contains("pass `--model`"), "{err}");
        let opts = ImportOptions {
            model: Some("m".into()),
            ..Default::default()
        };
        let bad = CSV.replace("10.250", "ten");
        let err = parse(&bad, "p.csv", &opts).unwrap_err();
        assert_eq!(err.to_string(), "p.csv:2: `RPS`: `ten` is not a number");
        let short = format!("{CSV}\n1,2,3\n");
        let err = parse(&short, "p.csv", &opts).unwrap_err();
        assert_eq!(err.to_string(), "p.csv:4: 3 values for 13 columns");
    }

    #[test]
    fn quoted_cells_and_crlf() {
        let opts = ImportOptions {
            model: Some("m".into()),
            ..Default::default()
        };
        let text = CSV.replace('\n', "\r\n").replacen("128,", "\"128\",", 1);
        let got = parse(&text, "p.csv", &opts).unwrap();
        assert_eq!(got.records[0].params.max_concurrency, Some(128));
        assert_eq!(got.records[0].stats["p99_itl_ms"], 93.0);
    }
}
