//! `perfgate run`: one scenario against a server that is already running (like `vllm bench
//! serve`). The pieces around the load client: the server's readiness and model list, the
//! tokenizer vLLM would choose, what `--metadata` and `--header` add, the progress bar,
//! and the `--save-result` JSON and its file name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::client::load::{self, Progress};
use crate::tokenizer::{Tokenize, TokenizerError};
use crate::workload::spec_decode;

/// Why `perfgate run` could not start against the server.
#[derive(Debug, thiserror::Error)]
pub enum SingleError {
    #[error("building the HTTP client: {0}")]
    Http(String),
    /// The server did not answer in time (an infrastructure error).
    #[error("{0}")]
    NotReady(String),
}

/// `--base-url`, else `http://HOST:PORT` (vLLM's rule).
pub fn base_url(base_url: Option<&str>, host: &str, port: u16) -> String {
    match base_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None if host.contains(':') && !host.starts_with('[') => format!("http://[{host}]:{port}"),
        None => format!("http://{host}:{port}"),
    }
}

/// What `--metadata` and `--header` add to a run (the request fields are the scenario's).
#[derive(Debug, Clone, Default)]
pub struct Extras {
    pub metadata: BTreeMap<String, String>,
    pub headers: Vec<(String, String)>,
}

/// Wait for the server to answer `GET /v1/models` (any status below 500), up to `timeout`
/// (vLLM's `--ready-check-timeout-sec`; 0: one attempt only when the model list is needed).
/// Returns the listed model ids when the server gave them.
pub async fn ready_check(
    base_url: &str,
    timeout: Duration,
    need_models: bool,
) -> Result<Option<Vec<String>>, SingleError> {
    if timeout.is_zero() && !need_models {
        return Ok(None);
    }
    if !timeout.is_zero() {
        eprintln!(
            "perfgate: waiting up to {} s for {base_url}/v1/models to answer \
             (--ready-check-timeout-sec; vLLM 0.33 waits 0 s)",
            timeout.as_secs()
        );
    }
    let http = reqwest::Client::builder()
        .build()
        .map_err(|e| SingleError::Http(e.to_string()))?;
    let url = format!("{base_url}/v1/models");
    let start = std::time::Instant::now();
    let mut last_err;
    loop {
        // Each attempt, its body included, ends by the check's deadline (at least 1 s, at most
        // 10 s), and the body is bounded: a server trickling or flooding cannot hold the check.
        let left = timeout.saturating_sub(start.elapsed());
        let attempt = if timeout.is_zero() {
            Duration::from_secs(10)
        } else {
            left.clamp(Duration::from_secs(1), Duration::from_secs(10))
        };
        let got = tokio::time::timeout(attempt, async {
            let resp = http
                .get(&url)
                .send()
                .await
                .map_err(|e| e.without_url().to_string())?;
            let status = resp.status();
            if !status.is_success() {
                return Ok((status, None));
            }
            let body =
                crate::client::body::read_limited(resp, crate::client::body::SMALL_BODY).await?;
            Ok::<_, String>((status, Some(body)))
        })
        .await
        .unwrap_or_else(|_| Err(format!("no whole answer within {} s", attempt.as_secs())));
        match got {
            Ok((status, _)) if status.as_u16() < 500 && !status.is_success() => return Ok(None),
            Ok((status, Some(bytes))) if status.is_success() => {
                let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
                let ids = body["data"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|m| m["id"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                return Ok(Some(ids));
            }
            Ok((status, _)) => last_err = format!("HTTP {status}"),
            Err(e) => last_err = e,
        }
        if start.elapsed() >= timeout {
            return Err(SingleError::NotReady(format!(
                "the server at {base_url} is not ready after {} s ({url}: {last_err}); \
                 raise --ready-check-timeout-sec or check the server",
                timeout.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The tokenizer to load, as vLLM finds it: `--tokenizer` (a path, `server`, or a Hugging Face
/// id found in the local cache), else `--model` as a path or a cached Hugging Face id, else the
/// server's own `/tokenize` (perfgate downloads nothing). The note says which was chosen.
pub fn tokenizer_spec(tokenizer: Option<&str>, model: Option<&str>) -> (String, Option<String>) {
    let hf = |id: &str| crate::tokenizer::hf_cached(id).map(|p| p.display().to_string());
    if let Some(t) = tokenizer {
        if t.eq_ignore_ascii_case("server") || Path::new(t).exists() {
            return (t.to_string(), None);
        }
        return match hf(t) {
            Some(p) => (
                p.clone(),
                Some(format!("tokenizer `{t}` from the Hugging Face cache: {p}")),
            ),
            None => (t.to_string(), None),
        };
    }
    match model.filter(|m| !m.is_empty()) {
        Some(m) if Path::new(m).exists() => (m.to_string(), None),
        Some(m) => match hf(m) {
            Some(p) => (
                p.clone(),
                Some(format!(
                    "tokenizer of `{m}` from the Hugging Face cache: {p}"
                )),
            ),
            None => (
                "server".into(),
                Some(format!(
                    "no local tokenizer for `{m}` (not a path, not in the Hugging Face cache); \
                     counting tokens with the server's /tokenize (pass --tokenizer to choose)"
                )),
            ),
        },
        None => (
            "server".into(),
            Some("counting tokens with the server's /tokenize (pass --tokenizer to choose)".into()),
        ),
    }
}

/// Load the tokenizer [`tokenizer_spec`] chose (`server`: the server's `/tokenize`).
pub fn load_tokenizer(name: &str, base_url: &str) -> Result<Arc<dyn Tokenize>, TokenizerError> {
    crate::client::tokenize::load(name, base_url).map(Arc::from)
}

/// The `--save-result` JSON: the record under vLLM's keys, the `--save-detailed` arrays (with
/// vLLM's per-request `errors` list), and the `--metadata` pairs also as top-level keys, as vLLM
/// writes them (a pair whose key the record already uses stays only under `metadata`). Like
/// vLLM's, it has `endpoint_type` (the backend), `label` and `request_goodput` (null when
/// unset).
pub fn result_json(
    outcome: &load::RunOutcome,
    label: Option<&str>,
) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(&outcome.result)?;
    if let Some(obj) = value.as_object_mut() {
        let backend = obj.get("backend").cloned().unwrap_or_default();
        obj.insert("endpoint_type".into(), backend);
        obj.insert("label".into(), label.into());
        obj.entry("request_goodput")
            .or_insert(serde_json::Value::Null);
        if let Some(d) = &outcome.detailed {
            if let serde_json::Value::Object(extra) = serde_json::to_value(d)? {
                obj.extend(extra);
            }
        }
        for (k, v) in &outcome.extra {
            obj.insert(k.clone(), v.clone());
        }
        for (k, v) in &outcome.result.metadata {
            if !obj.contains_key(k) && !crate::record::is_stat_key(k) {
                obj.insert(k.clone(), v.clone().into());
            }
        }
    }
    let mut text = serde_json::to_string(&value)?;
    text.push('\n');
    Ok(text)
}

/// Write the result JSON `text` to `path` (its folder made), or append it as a new line
/// (`--append-result`, as vLLM does).
pub fn save_result(path: &Path, text: &str, append: bool) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    if !append {
        return crate::atomic::write(path, text).map_err(|e| std::io::Error::other(e.to_string()));
    }
    use std::io::{Read, Seek, Write};
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)?;
    // One object per line; a file vLLM wrote ends without a newline.
    let mut last = [b'\n'];
    if f.metadata()?.len() > 0 {
        f.seek(std::io::SeekFrom::End(-1))?;
        f.read_exact(&mut last)?;
    }
    let sep = if last[0] == b'\n' { "" } else { "\n" };
    f.write_all(format!("{sep}{}\n", text.trim_end()).as_bytes())
}

/// One measured run and what is read beside it: the server's speculative-decoding counters
/// before and after (their difference), and telemetry sampled every `telemetry` while it runs
/// (on a thread of its own, off the measuring client's).
pub async fn measure(
    cfg: &load::RunConfig,
    work: load::Work,
    progress: &dyn Progress,
    base_url: &str,
    telemetry: Option<Duration>,
) -> Result<(load::RunOutcome, Option<spec_decode::Stats>), load::LoadError> {
    use crate::monitor::{Monitor, MonitorConfig};
    let before = spec_decode_counters(base_url).await;
    let monitor = telemetry
        .map(|every| Monitor::start(MonitorConfig::new(every, Some(base_url.to_string()))));
    let mut outcome = load::run_work(cfg, work, progress).await?;
    outcome.result.telemetry = monitor.map(Monitor::finish);
    let after = spec_decode_counters(base_url).await;
    Ok((outcome, spec_decode::delta(before.as_ref(), after.as_ref())))
}

/// The server's speculative-decoding counters at `/metrics`, as vLLM reads them before and
/// after a run; `None` when it has none or does not answer within 5 s.
pub async fn spec_decode_counters(base_url: &str) -> Option<spec_decode::Counters> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let resp = http.get(format!("{base_url}/metrics")).send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let text = crate::client::body::text_limited(resp, crate::client::body::LARGE_BODY)
        .await
        .ok()?;
    spec_decode::parse(&text)
}

/// The workloads' sections of the result block, before its closing line (where vLLM prints
/// its speculative-decoding section): the mean TTFT of each turn of a multi-turn run, and the
/// speculative-decoding statistics, which are also kept under vLLM's keys for the result JSON.
pub fn add_workload_sections(
    block: String,
    outcome: &mut load::RunOutcome,
    stats: Option<&spec_decode::Stats>,
) -> String {
    let mut sections = String::new();
    if let Some(turns) = outcome
        .extra
        .get("mean_ttft_ms_by_turn")
        .and_then(|t| t.as_array())
    {
        sections += &format!("{:-^50}\n", "Multi-turn Time to First Token");
        for (i, ms) in turns.iter().enumerate() {
            let label = format!("Mean TTFT, turn {i} (ms):");
            sections += &format!("{label:<40} {:<10.2}\n", ms.as_f64().unwrap_or(0.0));
        }
    }
    if let Some(s) = stats {
        if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(s) {
            outcome.extra.extend(m);
        }
        sections += &spec_decode::block(s);
    }
    let end = format!("{}\n", "=".repeat(50));
    match block.strip_suffix(&end) {
        Some(head) => format!("{head}{sections}{end}"),
        None => block + &sections,
    }
}

/// `--save-detailed-format`: the run's requests, one row each, in the files beside `result`
/// (its name with `.requests.jsonl` / `.requests.csv` for `.json`; each path is printed); and
/// without `json`, no per-request arrays in the result JSON. `formats` is
/// [`crate::export::parse_formats`]'s answer.
pub fn save_request_rows(
    outcome: &mut load::RunOutcome,
    (json_arrays, formats): (bool, Vec<crate::export::Format>),
    result: &Path,
    request_id_prefix: Option<&str>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let rows = outcome.detailed.as_ref().map_or(&[][..], |d| &d.rows[..]);
    let rows = crate::export::rows_with_ids(rows, request_id_prefix);
    let stem = result.with_extension("");
    for f in formats {
        let mut name = stem.clone().into_os_string();
        name.push(format!(".requests.{}", f.extension()));
        let path = PathBuf::from(name);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        crate::atomic::write(&path, f.render(&rows))?;
        eprintln!("perfgate: wrote {}", path.display());
    }
    if !json_arrays {
        outcome.detailed = None;
    }
    Ok(())
}

/// Where `--save-result` writes: `--result-filename` (in `--result-dir`), else vLLM's name
/// `LABEL-RATEqps[-concurrencyN]-MODEL-DATE.json` (the label defaults to the backend).
pub struct ResultName<'a> {
    pub filename: Option<&'a str>,
    pub dir: Option<&'a Path>,
    pub backend: &'a str,
    pub request_rate: String,
    pub max_concurrency: Option<u64>,
    pub model: &'a str,
}

impl ResultName<'_> {
    pub fn path(&self, date: &str) -> PathBuf {
        let name = self.filename.map(str::to_string).unwrap_or_else(|| {
            // The model id may be the server's choice (no --model): no control characters, and
            // cut with a hash suffix so the whole name fits a file name (255 bytes).
            let model = self.model.rsplit('/').next().unwrap_or(self.model);
            let conc = self
                .max_concurrency
                .map(|c| format!("-concurrency{c}"))
                .unwrap_or_default();
            let rest = format!(
                "{}-{}qps{conc}--{date}.json",
                self.backend, self.request_rate
            );
            let model = crate::text::file_name_part(model, 255usize.saturating_sub(rest.len()));
            format!(
                "{}-{}qps{conc}-{model}-{date}.json",
                self.backend, self.request_rate
            )
        });
        match self.dir {
            Some(d) => d.join(name),
            None => PathBuf::from(name),
        }
    }
}

/// Progress on stderr: a bar on a terminal, else (CI logs, files) a line every
/// [`LINE_EVERY`] at most, as requests complete; nothing when `show` is false.
pub struct Bar(
    Option<indicatif::ProgressBar>,
    Option<std::sync::Mutex<Lines>>,
);

/// The most often a progress line is printed when stderr is not a terminal.
pub const LINE_EVERY: Duration = Duration::from_secs(5);

/// The state of the progress lines.
pub struct Lines {
    start: std::time::Instant,
    last: std::time::Instant,
    total: u64,
    done: u64,
    failed: u64,
}

impl Lines {
    fn line(&self) -> String {
        format!(
            "perfgate: {}/{} requests done ({} failed), {:.0} s",
            self.done,
            self.total,
            self.failed,
            self.start.elapsed().as_secs_f64()
        )
    }
}

impl Bar {
    pub fn new(show: bool) -> Self {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        let now = std::time::Instant::now();
        let lines = Lines {
            start: now,
            last: now,
            total: 0,
            done: 0,
            failed: 0,
        };
        Bar(
            (show && terminal).then(indicatif::ProgressBar::hidden),
            (show && !terminal).then(|| std::sync::Mutex::new(lines)),
        )
    }

    fn lines(&self, f: impl FnOnce(&mut Lines)) {
        if let Some(m) = &self.1 {
            f(&mut m.lock().unwrap_or_else(|p| p.into_inner()));
        }
    }
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.lines(|l| {
            let now = std::time::Instant::now();
            (l.start, l.last, l.total) = (now, now, total);
            eprintln!("perfgate: sending {total} requests");
        });
        if let Some(b) = &self.0 {
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            b.set_length(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} requests [{elapsed_precise} < {eta_precise}] {msg}",
            ) {
                b.set_style(style);
            }
        }
    }
    fn request_done(&self, ok: bool) {
        self.lines(|l| {
            l.done += 1;
            l.failed += u64::from(!ok);
            if l.last.elapsed() >= LINE_EVERY {
                l.last = std::time::Instant::now();
                eprintln!("{}", l.line());
            }
        });
        if let Some(b) = &self.0 {
            if !ok {
                b.set_message("(failures)");
            }
            b.inc(1);
        }
    }
    fn finish(&self) {
        self.lines(|l| eprintln!("{}", l.line()));
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_adds_one_line_after_a_file_without_a_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/r.json");
        save_result(&p, "{\"a\":1}\n", true).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n");
        // vLLM appends without a final newline.
        std::fs::write(&p, "{\"a\":1}\n{\"b\":2}").unwrap();
        save_result(&p, "{\"c\":3}\n", true).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"
        );
        save_result(&p, "{\"d\":4}\n", false).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"d\":4}\n");
    }
}
