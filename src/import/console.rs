//! Console logs with `Serving Benchmark Result` blocks, in both print styles:
//!
//! * SGLang / LMDeploy (`bench_serving`, `profile_restful_api.py`, the seeds): the block opens
//!   with `Backend:` and `Traffic request rate:`, E2E latency comes first, and the run's
//!   arguments are in a `Namespace(...)` line and a `Running benchmark … with backend: X` line;
//! * vLLM (`benchmark_serving.py`, `vllm bench serve`): the command line precedes the block,
//!   `Traffic request rate:`/`Burstiness factor:`/`Maximum request concurrency:` are printed
//!   before it, and the block has optional lines (`Failed requests`, goodput, peaks, P90/P95,
//!   an E2EL section).
//!
//! Everything else — markdown (headings reset the context, shell code blocks give the launch
//! command), pip noise, progress bars, engine log lines — is tolerated. Unknown lines *inside* a
//! block are errors, so nothing printed is silently lost.

use super::args::{self, ArgMap};
use super::{parse_f64, parse_u64, ImportError, ImportOptions, Imported};
use crate::launch;
use crate::record::{
    OutputTokenSource, RangeConvention, RequestRate, ScenarioParams, ScenarioResult,
};

/// The run context collected from the lines before a block.
#[derive(Debug, Default, Clone)]
struct Context {
    running: ArgMap,
    cmdline: ArgMap,
    namespace: ArgMap,
    /// vLLM's pre-block lines (`Traffic request rate`, `Burstiness factor`, …).
    printed: ArgMap,
    launch: Option<String>,
    /// A sweep header (`num_prompts: 1, 2, 4, …`): one prompt count per following block, in
    /// order, with the header's line.
    sweep: Option<(Vec<u64>, usize)>,
    /// Blocks read since the sweep header.
    sweep_next: usize,
    /// A sweep header's `seq_length: N` (the prompt length of every block), with its line.
    seq_length: Option<(u64, usize)>,
}

impl Context {
    /// An argument by canonical name: the Namespace wins over the command line, which wins
    /// over the `Running benchmark` line.
    fn arg(&self, key: &str) -> Option<&str> {
        self.namespace
            .get(key)
            .or_else(|| self.cmdline.get(key))
            .or_else(|| self.running.get(key))
            .map(String::as_str)
    }

    fn new_run(&mut self) {
        self.running.clear();
        self.cmdline.clear();
        self.namespace.clear();
        self.printed.clear();
    }
}

/// Normalise a raw line: drop a trailing `\r` and keep what a terminal would show after the
/// last carriage return (progress bars redraw with `\r`).
fn visible(raw: &str) -> &str {
    let l = raw.strip_suffix('\r').unwrap_or(raw);
    match l.rfind('\r') {
        Some(i) => &l[i + 1..],
        None => l,
    }
}

/// A command and its `\` continuation lines, as printed (lines joined with `\n`, trailing
/// whitespace dropped); returns the text and the index of the last line used.
fn join_continued(lines: &[&str], start: usize, first: &str) -> (String, usize) {
    let mut cmd = first.trim_end().to_string();
    let mut i = start;
    while cmd.ends_with('\\') && i + 1 < lines.len() {
        i += 1;
        cmd.push('\n');
        cmd.push_str(visible(lines[i]).trim_end());
    }
    (cmd.trim_end_matches('\\').trim().to_string(), i)
}

fn is_heading(l: &str) -> Option<(usize, &str)> {
    let hashes = l.len() - l.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && l[hashes..].starts_with(' ') {
        Some((hashes, l[hashes..].trim()))
    } else {
        None
    }
}

fn is_block_start(l: &str) -> bool {
    l.contains("Serving Benchmark Result") && l.trim_start().starts_with('=')
}

fn is_rule(l: &str, c: char) -> bool {
    let t = l.trim();
    t.len() >= 10 && t.chars().all(|x| x == c)
}

fn looks_like_log_line(l: &str) -> bool {
    const PREFIXES: [&str; 11] = [
        "INFO",
        "WARNING",
        "WARN",
        "DEBUG",
        "ERROR",
        "CRITICAL",
        "[",
        "(",
        "Traceback",
        "  File",
        "\x1b[",
    ];
    let t = l.trim_start();
    PREFIXES.iter().any(|p| t.starts_with(p))
        || (t.len() > 5
            && t.as_bytes()[..4].iter().all(u8::is_ascii_digit)
            && t.as_bytes()[4] == b'-')
}

/// Parse a console log.
pub fn parse(text: &str, path: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Imported::default();
    let mut ctx = Context::default();
    let (mut h1_engine, mut h1_version): (Option<String>, Option<String>) = (None, None);
    let mut in_fence = false;
    let mut i = 0;
    while i < lines.len() {
        let l = visible(lines[i]);
        let t = l.trim();
        if t.starts_with("```") {
            in_fence = !in_fence;
            i += 1;
            continue;
        }
        if is_block_start(l) {
            let parsed = parse_block(&lines, i, path, &mut out.warnings);
            let end = match &parsed {
                Ok((_, end)) => *end,
                Err(_) => block_end(&lines, i),
            };
            let rec = parsed.and_then(|(block, _)| {
                let h1 = (&h1_engine, &h1_version);
                build_record(&block, &ctx, path, opts, h1, &mut out.warnings)
            });
            match rec {
                Ok(rec) => out.records.push(rec),
                Err(e) => out.skip(e, opts)?,
            }
            ctx.printed.clear();
            ctx.sweep_next += 1;
            i = end + 1;
            continue;
        }
        if !in_fence {
            if let Some((level, title)) = is_heading(l) {
                ctx.new_run();
                ctx.launch = None;
                ctx.sweep = None;
                ctx.seq_length = None;
                if level == 1 {
                    let mut words = title.split_whitespace();
                    if let Some(e) = words.next().and_then(super::known_engine) {
                        h1_engine = Some(e.to_string());
                        h1_version = words
                            .next()
                            .filter(|v| {
                                v.trim_start_matches('v')
                                    .starts_with(|c: char| c.is_ascii_digit())
                            })
                            .map(str::to_string);
                    }
                }
                i += 1;
                continue;
            }
        }
        // Only a benchmark's own arguments; an engine's `args: Namespace(...)` log line is not.
        let bench_ns = args::parse_namespace(t)
            .filter(|ns| ns.contains_key("dataset_name") || ns.contains_key("num_prompts"));
        if let Some(ns) = bench_ns {
            ctx.namespace = ns;
        } else if let Some(run) = args::parse_running_line(t) {
            ctx.new_run();
            ctx.running = run;
        } else if let Some(cmd) = args::benchmark_command(t) {
            let (cmd, last) = join_continued(&lines, i, cmd);
            ctx.new_run();
            ctx.cmdline = args::parse_options(&crate::text::shell_words(&cmd));
            i = last;
        } else if launch::is_launch_command(t.trim_start_matches("$ ")) {
            let (cmd, last) = join_continued(&lines, i, t.trim_start_matches("$ "));
            if !launch::is_template(&cmd) {
                ctx.launch = Some(cmd);
            }
            i = last;
        } else if let Some((header, value)) = sweep_header(t) {
            let read = match header {
                // The prompt counts of the blocks that follow, one per block in order.
                Header::Prompts => sweep_counts(value).map(|c| ctx.sweep = Some((c, i + 1))),
                Header::SeqLength => parse_u64(value).map(|n| ctx.seq_length = Some((n, i + 1))),
            };
            ctx.sweep_next = 0;
            if let Err(m) = read {
                let label = t.split([':', '=']).next().unwrap_or(t).trim();
                if header == Header::Prompts {
                    ctx.sweep = None;
                }
                out.skip(
                    ImportError::at(path, i + 1, format!("`{label}` header: {m}")),
                    opts,
                )?;
            }
        } else if let Some((label, value)) = t.split_once(':') {
            // vLLM prints the traffic settings before the block.
            let value = value.trim();
            match label.trim() {
                "Traffic request rate" => {
                    ctx.printed.insert("request_rate".into(), value.to_string());
                }
                "Burstiness factor" => {
                    let v = value.split_whitespace().next().unwrap_or("");
                    ctx.printed.insert("burstiness".into(), v.to_string());
                }
                "Maximum request concurrency" | "Max request concurrency" => {
                    ctx.printed
                        .insert("max_concurrency".into(), value.to_string());
                }
                _ => {}
            }
        } else if let Some(e) = super::known_engine(t).filter(|_| h1_engine.is_none()) {
            // A bare engine name on a line of its own heads a sweep log (`vllm`).
            h1_engine = Some(e.to_string());
        }
        i += 1;
    }
    Ok(out)
}

/// The two header lines of a sweep log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Header {
    /// `num_prompts: 1, 2, 4, …`: the prompt count of each following block, in order.
    Prompts,
    /// `seq_length: 80`: the prompt length of every block.
    SeqLength,
}

/// A sweep header as people write it: `num_prompts: 1, 2, 4`, `num_prompt:1` (one per block),
/// `num-prompts = 1 2 4`, `seq_length: 80`, `seq_len=80`; the header and its value.
fn sweep_header(t: &str) -> Option<(Header, &str)> {
    let (label, value) = t.split_once([':', '='])?;
    let label = label.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    let header = match label.as_str() {
        "num_prompts" | "num_prompt" => Header::Prompts,
        "seq_length" | "seq_len" => Header::SeqLength,
        _ => return None,
    };
    Some((header, value.trim()))
}

/// The counts of a `num_prompts` header: separated by commas or spaces, maybe in brackets, an
/// ellipsis ignored.
fn sweep_counts(value: &str) -> Result<Vec<u64>, String> {
    value
        .trim_matches(['[', ']', '(', ')'])
        .split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|v| !v.is_empty() && *v != "…" && *v != "...")
        .map(parse_u64)
        .collect()
}

/// The last line of a block that could not be parsed: its closing rule, else the line before
/// the next block, else the end of the file.
fn block_end(lines: &[&str], start: usize) -> usize {
    for (j, raw) in lines.iter().enumerate().skip(start + 1) {
        let l = visible(raw);
        if is_block_start(l) {
            return j - 1;
        }
        if is_rule(l, '=') {
            return j;
        }
    }
    lines.len().saturating_sub(1)
}

/// One parsed value of a block, with the line it came from.
#[derive(Debug, Clone)]
struct Value {
    text: String,
    line: usize,
}

#[derive(Debug, Default)]
struct Block {
    header_line: usize,
    /// Canonical key (`completed`, `mean_ttft_ms`, `backend`, `request_rate`, …) → value.
    values: Vec<(String, Value)>,
    /// SGLang/LMDeploy style (the block names its backend) rather than vLLM style.
    sglang_style: bool,
}

impl Block {
    fn get(&self, key: &str) -> Option<&Value> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Sections whose lines are printed but not kept (they are not part of the record shape).
const IGNORED_SECTIONS: [&str; 7] = [
    "Client-side Queueing",
    "Queue-inclusive End-to-end Latency",
    "Speculative Decoding",
    "Diffusion Decoding",
    "Probe Requests",
    "Accuracy",
    "Per-position acceptance",
];

/// Lines inside a block that are printed but not kept.
const IGNORED_LABELS: [&str; 5] = [
    "Total input text tokens",
    "Total input vision tokens",
    "Accept length",
    "RTFx (Inverse Real-Time Factor)",
    "Input throughput (inputs/s)",
];

/// The record key of a block label.
fn key_of(label: &str) -> Option<String> {
    let k = match label {
        "Backend" => "backend",
        "Traffic request rate" => "request_rate",
        "Request rate configured (RPS)" => "request_rate_configured",
        "Max request concurrency" | "Maximum request concurrency" => "max_concurrency",
        "Successful requests" => "completed",
        "Failed requests" => "failed",
        "Benchmark duration (s)" => "duration",
        "Total input tokens" => "total_input_tokens",
        "Total generated tokens" => "total_output_tokens",
        "Total generated tokens (retokenized)" => "total_output_tokens_retokenized",
        "Request throughput (req/s)" => "request_throughput",
        "Request goodput (req/s)" => "request_goodput",
        "Input token throughput (tok/s)" => "input_throughput",
        "Output token throughput (tok/s)" => "output_throughput",
        "Peak output token throughput (tok/s)" => "max_output_tokens_per_s",
        "Peak concurrent requests" | "Peak concurrent requests (1 s buckets)" => {
            "max_concurrent_requests"
        }
        "Total Token throughput (tok/s)"
        | "Total token throughput (tok/s)"
        | "Total throughput (tok/s)" => "total_token_throughput",
        "Concurrency" => "concurrency",
        other => return stat_key(other),
    };
    Some(k.to_string())
}

/// `Mean TTFT (ms)` → `mean_ttft_ms`, `P99.9 E2E Latency (ms)` → `p99.9_e2el_ms`.
fn stat_key(label: &str) -> Option<String> {
    let body = label.strip_suffix(" (ms)")?;
    let (stat, metric) = body.split_once(' ')?;
    let metric = match metric {
        "TTFT" => "ttft",
        "TPOT" => "tpot",
        "ITL" => "itl",
        "E2EL" | "E2E Latency" | "E2E" => "e2el",
        _ => return None,
    };
    let stat = match stat {
        "Mean" => "mean".to_string(),
        "Median" => "median".to_string(),
        "Std" => "std".to_string(),
        "Min" => "min".to_string(),
        "Max" => "max".to_string(),
        p => {
            let n = p.strip_prefix('P')?;
            n.parse::<f64>().ok()?;
            format!("p{n}")
        }
    };
    Some(format!("{stat}_{metric}_ms"))
}

/// Parse the block whose header is at `start`; returns it and the index of its closing line.
fn parse_block(
    lines: &[&str],
    start: usize,
    path: &str,
    warnings: &mut Vec<String>,
) -> Result<(Block, usize), ImportError> {
    let mut block = Block {
        header_line: start + 1,
        ..Default::default()
    };
    let mut section: Option<String> = None;
    let mut i = start + 1;
    while i < lines.len() {
        let l = visible(lines[i]);
        let t = l.trim();
        let n = i + 1;
        if t.is_empty() {
            i += 1;
            continue;
        }
        if is_block_start(l) {
            break;
        }
        if is_rule(t, '=') {
            if block.get("completed").is_none() {
                return Err(ImportError::at(
                    path,
                    block.header_line,
                    "result block has no `Successful requests` line",
                ));
            }
            return Ok((block, i));
        }
        if t.starts_with('-') && t.ends_with('-') {
            let name = t.trim_matches('-').trim();
            section = (!name.is_empty()).then(|| name.to_string());
            i += 1;
            continue;
        }
        if section
            .as_deref()
            .is_some_and(|s| IGNORED_SECTIONS.iter().any(|x| s.starts_with(x)))
        {
            i += 1;
            continue;
        }
        let Some((label, value)) = t.split_once(':') else {
            if looks_like_log_line(t) {
                i += 1;
                continue;
            }
            return Err(ImportError::at(
                path,
                n,
                format!("unexpected line in a result block: `{t}`"),
            ));
        };
        let label = label.trim();
        if IGNORED_LABELS.contains(&label) {
            i += 1;
            continue;
        }
        let Some(key) = key_of(label) else {
            if looks_like_log_line(t) {
                i += 1;
                continue;
            }
            return Err(ImportError::at(
                path,
                n,
                format!("unknown line in a result block: `{t}`"),
            ));
        };
        if key == "backend" {
            block.sglang_style = true;
        }
        if let Some(first) = block.get(&key) {
            // A line printed twice (an edited log): harmless when it says the same.
            if first.text == value.trim() {
                warnings.push(format!(
                    "{path}:{n}: `{label}` printed twice in one result block (line {}, the same value); read once",
                    first.line
                ));
                i += 1;
                continue;
            }
            return Err(ImportError::at(
                path,
                n,
                format!(
                    "`{label}` appears twice in one result block with different values (line {}: `{}`, here: `{}`)",
                    first.line,
                    first.text,
                    value.trim()
                ),
            ));
        }
        if value.trim().eq_ignore_ascii_case("nan") && key.ends_with("_ms") {
            warnings.push(format!("{path}:{n}: `{label}` is nan; left out"));
            i += 1;
            continue;
        }
        block.values.push((
            key,
            Value {
                text: value.trim().to_string(),
                line: n,
            },
        ));
        i += 1;
    }
    Err(ImportError::at(
        path,
        block.header_line,
        "result block is truncated (no closing `=====` line)",
    ))
}

fn parse_rate(text: &str) -> Option<RequestRate> {
    text.parse().ok()
}

fn opt_none(text: &str) -> Option<&str> {
    let t = text.trim();
    (!matches!(t, "None" | "none" | "not set" | "")).then_some(t)
}

fn build_record(
    block: &Block,
    ctx: &Context,
    path: &str,
    opts: &ImportOptions,
    h1: (&Option<String>, &Option<String>),
    warnings: &mut Vec<String>,
) -> Result<ScenarioResult, ImportError> {
    let hl = block.header_line;
    let err = |line: usize, m: String| ImportError::at(path, line, m);
    let num = |key: &str| -> Result<Option<f64>, ImportError> {
        block
            .get(key)
            .map(|v| parse_f64(&v.text).map_err(|m| err(v.line, m)))
            .transpose()
    };
    let count = |key: &str| -> Result<Option<u64>, ImportError> {
        block
            .get(key)
            .map(|v| parse_u64(&v.text).map_err(|m| err(v.line, m)))
            .transpose()
    };
    let required = |key: &str, label: &str| -> Result<f64, ImportError> {
        num(key)?.ok_or_else(|| err(hl, format!("result block has no `{label}` line")))
    };
    let required_count = |key: &str, label: &str| -> Result<u64, ImportError> {
        count(key)?.ok_or_else(|| err(hl, format!("result block has no `{label}` line")))
    };
    let arg_u64 = |key: &str| -> Result<Option<u64>, ImportError> {
        ctx.arg(key)
            .and_then(opt_none)
            .map(|v| parse_u64(v).map_err(|m| err(hl, format!("argument `{key}`: {m}"))))
            .transpose()
    };
    let arg_f64 = |key: &str| -> Result<Option<f64>, ImportError> {
        ctx.arg(key)
            .and_then(opt_none)
            .map(|v| parse_f64(v).map_err(|m| err(hl, format!("argument `{key}`: {m}"))))
            .transpose()
    };

    let mut r = ScenarioResult {
        completed: required_count("completed", "Successful requests")?,
        failed: count("failed")?.unwrap_or(0),
        duration: required("duration", "Benchmark duration (s)")?,
        total_input_tokens: required_count("total_input_tokens", "Total input tokens")?,
        total_output_tokens: required_count("total_output_tokens", "Total generated tokens")?,
        total_output_tokens_retokenized: count("total_output_tokens_retokenized")?,
        request_throughput: required("request_throughput", "Request throughput (req/s)")?,
        request_goodput: num("request_goodput")?,
        input_throughput: num("input_throughput")?,
        output_throughput: required("output_throughput", "Output token throughput (tok/s)")?,
        total_token_throughput: num("total_token_throughput")?,
        max_output_tokens_per_s: num("max_output_tokens_per_s")?,
        max_concurrent_requests: count("max_concurrent_requests")?,
        concurrency: num("concurrency")?,
        source: Some(format!("{path}:{hl}")),
        output_token_source: Some(OutputTokenSource::Reported),
        ..Default::default()
    };
    for (k, v) in &block.values {
        if k.ends_with("_ms") {
            r.stats
                .insert(k.clone(), parse_f64(&v.text).map_err(|m| err(v.line, m))?);
        }
    }

    // ---- identity: the run's own arguments ----------------------------------------------
    r.model = match ctx.arg("model").and_then(opt_none) {
        Some(m) => m.to_string(),
        None => opts.model.clone().ok_or(ImportError::NoModel {
            path: path.into(),
            line: hl,
        })?,
    };
    r.backend = block
        .get("backend")
        .map(|v| v.text.clone())
        .or_else(|| ctx.arg("backend").map(str::to_string));
    r.tokenizer_id = ctx.arg("tokenizer").and_then(opt_none).map(str::to_string);
    r.seed = arg_u64("seed")?;

    let dataset = ctx
        .arg("dataset_name")
        .and_then(opt_none)
        .map(str::to_string)
        .or_else(|| opts.dataset_name.clone())
        .ok_or_else(|| {
            err(hl, "no dataset name for this result (no `--dataset-name` or `dataset_name=` before it); pass `--dataset-name`".into())
        })?;
    let block_no = ctx.sweep_next + 1;
    let swept = ctx
        .sweep
        .as_ref()
        .map(|(counts, line)| (counts.get(ctx.sweep_next), *line));
    let num_prompts = match (arg_u64("num_prompts")?.or(opts.num_prompts), swept) {
        (Some(n), _) => n,
        (None, Some((Some(&n), _))) => n,
        (None, Some((None, line))) => {
            return Err(err(
                hl,
                format!(
                    "block {block_no} after the `num_prompts:` header of line {line}, which lists only {} counts; pass `--num-prompts`",
                    ctx.sweep.as_ref().map_or(0, |(c, _)| c.len())
                ),
            ))
        }
        (None, None) if block.get("failed").is_some() => {
            // vLLM's `num_prompts` is every request sent: successful + failed.
            r.derived.push("num_prompts".into());
            warnings.push(format!(
                "{path}:{hl}: num_prompts = {} derived from {} successful + {} failed requests",
                r.completed + r.failed,
                r.completed,
                r.failed
            ));
            r.completed + r.failed
        }
        (None, None) => return Err(err(
            hl,
            "no prompt count for this result (no `--num-prompts` before it and no `Failed requests` line to count from); pass `--num-prompts`"
                .into(),
        )),
    };
    if block.get("failed").is_none() && r.completed > num_prompts {
        return Err(err(
            hl,
            format!(
                "{} successful requests but {num_prompts} prompts; pass the right `--num-prompts`",
                r.completed
            ),
        ));
    }
    let mut p = ScenarioParams {
        dataset_name: dataset.clone().into(),
        num_prompts,
        ..Default::default()
    };
    if dataset == "random" {
        p.random_input_len = arg_u64("random_input_len")?.or(opts.random_input_len);
        if p.random_input_len.is_none() {
            let (len, derived) = input_len_of_sweep(&r, ctx, path, hl, warnings)?;
            p.random_input_len = len;
            if derived {
                r.derived.push("random_input_len".into());
            }
        }
        p.random_output_len = arg_u64("random_output_len")?.or(opts.random_output_len);
        p.random_range_ratio = arg_f64("random_range_ratio")?.or(opts.random_range_ratio);
        p.range_convention = Some(opts.range_convention.unwrap_or(if block.sglang_style {
            RangeConvention::Sglang
        } else {
            RangeConvention::Vllm
        }));
    }
    if dataset == "sharegpt" {
        p.sharegpt_output_len = arg_u64("sharegpt_output_len")?;
    }
    // Traffic: what the block printed, then vLLM's pre-block lines, then the arguments.
    let rate_text = block
        .get("request_rate")
        .map(|v| (v.text.clone(), v.line))
        .or_else(|| {
            block
                .get("request_rate_configured")
                .map(|v| (v.text.clone(), v.line))
        })
        .or_else(|| ctx.printed.get("request_rate").map(|v| (v.clone(), hl)))
        .or_else(|| ctx.arg("request_rate").map(|v| (v.to_string(), hl)));
    if let Some((t, line)) = rate_text {
        p.request_rate = parse_rate(&t)
            .ok_or_else(|| err(line, format!("request rate `{t}` is not `inf` or a number")))?;
    }
    let conc_text = block
        .get("max_concurrency")
        .map(|v| (v.text.clone(), v.line))
        .or_else(|| ctx.printed.get("max_concurrency").map(|v| (v.clone(), hl)))
        .or_else(|| ctx.arg("max_concurrency").map(|v| (v.to_string(), hl)));
    if let Some((t, line)) = conc_text {
        if let Some(v) = opt_none(&t) {
            p.max_concurrency = Some(parse_u64(v).map_err(|m| err(line, m))?);
        }
    }
    if !p.request_rate.is_inf() {
        let b = ctx
            .printed
            .get("burstiness")
            .map(String::as_str)
            .or_else(|| ctx.arg("burstiness"));
        if let Some(b) = b.and_then(opt_none) {
            p.burstiness = Some(parse_f64(b).map_err(|m| err(hl, format!("burstiness: {m}")))?);
        }
    }
    r.params = p;

    if block.get("failed").is_some() && r.completed + r.failed != num_prompts {
        warnings.push(format!(
            "{path}:{hl}: {} succeeded + {} failed ≠ {num_prompts} prompts",
            r.completed, r.failed
        ));
    }

    // ---- engine and launch ---------------------------------------------------------------
    let launched = ctx.launch.as_deref().map(launch::parse);
    r.engine = opts
        .engine
        .clone()
        .or_else(|| h1.0.clone())
        .or_else(|| {
            r.backend
                .as_deref()
                .and_then(super::known_engine)
                .map(str::to_string)
        })
        .or_else(|| launched.as_ref().and_then(|l| l.engine.clone()));
    r.engine_version = opts.engine_version.clone().or_else(|| h1.1.clone());
    if let (Some(cmd), Some(l)) = (&ctx.launch, &launched) {
        r.launch_command = Some(cmd.clone());
        r.tensor_parallel_size = l.tensor_parallel_size;
        if let Some(m) = l.model.as_deref().filter(|m| *m != r.model) {
            warnings.push(format!(
                "{path}:{hl}: the launch command above this result names `{m}` but the run's arguments say `{}`; the run's arguments win",
                r.model
            ));
        }
    }
    Ok(r)
}

/// The prompt length of a random-dataset block whose arguments are not in the log: the sweep
/// header's `seq_length:` (checked against the block's totals), else the totals themselves when
/// they divide evenly (total input tokens / successful requests; recorded as derived, with a
/// note). `None` when neither justifies a value.
fn input_len_of_sweep(
    r: &ScenarioResult,
    ctx: &Context,
    path: &str,
    hl: usize,
    warnings: &mut Vec<String>,
) -> Result<(Option<u64>, bool), ImportError> {
    let even = (r.completed > 0 && r.total_input_tokens.is_multiple_of(r.completed))
        .then(|| r.total_input_tokens / r.completed);
    if let Some((n, line)) = ctx.seq_length {
        if even != Some(n) {
            return Err(ImportError::at(
                path,
                hl,
                format!(
                    "the `seq_length: {n}` header of line {line} disagrees with this block's {} input tokens over {} requests; pass `--random-input-len`",
                    r.total_input_tokens, r.completed
                ),
            ));
        }
        return Ok((Some(n), false));
    }
    if let Some(n) = even {
        warnings.push(format!(
            "{path}:{hl}: random_input_len = {n} derived from {} input tokens / {} requests (assumes every prompt had the same length)",
            r.total_input_tokens, r.completed
        ));
    }
    Ok((even, even.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_labels() {
        assert_eq!(stat_key("Mean TTFT (ms)").as_deref(), Some("mean_ttft_ms"));
        assert_eq!(stat_key("P99.9 ITL (ms)").as_deref(), Some("p99.9_itl_ms"));
        assert_eq!(
            stat_key("Median E2E Latency (ms)").as_deref(),
            Some("median_e2el_ms")
        );
        assert_eq!(stat_key("Max ITL (ms)").as_deref(), Some("max_itl_ms"));
        assert_eq!(stat_key("Mean Foo (ms)"), None);
        assert_eq!(
            key_of("Total Token throughput (tok/s)").as_deref(),
            Some("total_token_throughput")
        );
    }

    #[test]
    fn progress_bars_keep_what_the_terminal_shows() {
        assert_eq!(visible(" 50%|█ | 5/10\r100%|██| 10/10\r"), "100%|██| 10/10");
    }
}
