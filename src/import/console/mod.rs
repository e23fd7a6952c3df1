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

mod block;
mod build;

use super::args::{self, ArgMap};
use super::{parse_u64, ImportError, ImportOptions, Imported};
use crate::launch;
use block::parse_block;
use build::build_record;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bars_keep_what_the_terminal_shows() {
        assert_eq!(visible(" 50%|█ | 5/10\r100%|██| 10/10\r"), "100%|██| 10/10");
    }
}
