//! A parsed block and the lines before it turned into a record.

use super::block::Block;
use super::Context;
use crate::import::{parse_f64, parse_u64, ImportError, ImportOptions};
use crate::launch;
use crate::record::{
    OutputTokenSource, RangeConvention, RequestRate, ScenarioParams, ScenarioResult,
};

fn parse_rate(text: &str) -> Option<RequestRate> {
    text.parse().ok()
}

fn opt_none(text: &str) -> Option<&str> {
    let t = text.trim();
    (!matches!(t, "None" | "none" | "not set" | "")).then_some(t)
}

pub(super) fn build_record(
    block: &Block,
    ctx: &Context,
    path: &str,
    opts: &ImportOptions,
    h1: (&Option<String>, &Option<String>),
    warnings: &mut Vec<String>,
) -> Result<ScenarioResult, ImportError> {
    let rd = BlockReader {
        block,
        ctx,
        path,
        opts,
        hl: block.header_line,
    };
    let mut r = rd.outcome()?;
    rd.identity(&mut r)?;
    r.params = rd.scenario(&mut r, warnings)?;
    rd.engine_and_launch(&mut r, h1, warnings);
    Ok(r)
}

/// One result block being turned into a record, with what that needs: the context the lines
/// before it set, the file's path (for messages) and the import options.
struct BlockReader<'a> {
    block: &'a Block,
    ctx: &'a Context,
    path: &'a str,
    opts: &'a ImportOptions,
    /// The line of the block's header.
    hl: usize,
}

impl BlockReader<'_> {
    fn err(&self, line: usize, m: String) -> ImportError {
        ImportError::at(self.path, line, m)
    }

    fn num(&self, key: &str) -> Result<Option<f64>, ImportError> {
        self.block
            .get(key)
            .map(|v| parse_f64(&v.text).map_err(|m| self.err(v.line, m)))
            .transpose()
    }

    fn count(&self, key: &str) -> Result<Option<u64>, ImportError> {
        self.block
            .get(key)
            .map(|v| parse_u64(&v.text).map_err(|m| self.err(v.line, m)))
            .transpose()
    }

    fn required(&self, key: &str, label: &str) -> Result<f64, ImportError> {
        self.num(key)?
            .ok_or_else(|| self.err(self.hl, format!("result block has no `{label}` line")))
    }

    fn required_count(&self, key: &str, label: &str) -> Result<u64, ImportError> {
        self.count(key)?
            .ok_or_else(|| self.err(self.hl, format!("result block has no `{label}` line")))
    }

    fn arg_u64(&self, key: &str) -> Result<Option<u64>, ImportError> {
        self.ctx
            .arg(key)
            .and_then(opt_none)
            .map(|v| parse_u64(v).map_err(|m| self.err(self.hl, format!("argument `{key}`: {m}"))))
            .transpose()
    }

    fn arg_f64(&self, key: &str) -> Result<Option<f64>, ImportError> {
        self.ctx
            .arg(key)
            .and_then(opt_none)
            .map(|v| parse_f64(v).map_err(|m| self.err(self.hl, format!("argument `{key}`: {m}"))))
            .transpose()
    }

    // ---- outcome: the block's own numbers -------------------------------------------------
    fn outcome(&self) -> Result<ScenarioResult, ImportError> {
        let mut r = ScenarioResult {
            completed: self.required_count("completed", "Successful requests")?,
            failed: self.count("failed")?.unwrap_or(0),
            duration: self.required("duration", "Benchmark duration (s)")?,
            total_input_tokens: self.required_count("total_input_tokens", "Total input tokens")?,
            total_output_tokens: self
                .required_count("total_output_tokens", "Total generated tokens")?,
            total_output_tokens_retokenized: self.count("total_output_tokens_retokenized")?,
            request_throughput: self
                .required("request_throughput", "Request throughput (req/s)")?,
            request_goodput: self.num("request_goodput")?,
            input_throughput: self.num("input_throughput")?,
            output_throughput: self
                .required("output_throughput", "Output token throughput (tok/s)")?,
            total_token_throughput: self.num("total_token_throughput")?,
            max_output_tokens_per_s: self.num("max_output_tokens_per_s")?,
            max_concurrent_requests: self.count("max_concurrent_requests")?,
            concurrency: self.num("concurrency")?,
            source: Some(format!("{}:{}", self.path, self.hl)),
            output_token_source: Some(OutputTokenSource::Reported),
            ..Default::default()
        };
        for (k, v) in &self.block.values {
            if k.ends_with("_ms") {
                r.stats.insert(
                    k.clone(),
                    parse_f64(&v.text).map_err(|m| self.err(v.line, m))?,
                );
            }
        }
        Ok(r)
    }

    // ---- identity: the run's own arguments ----------------------------------------------
    fn identity(&self, r: &mut ScenarioResult) -> Result<(), ImportError> {
        let ctx = self.ctx;
        r.model = match ctx.arg("model").and_then(opt_none) {
            Some(m) => m.to_string(),
            None => self.opts.model.clone().ok_or(ImportError::NoModel {
                path: self.path.into(),
                line: self.hl,
            })?,
        };
        r.backend = self
            .block
            .get("backend")
            .map(|v| v.text.clone())
            .or_else(|| ctx.arg("backend").map(str::to_string));
        r.tokenizer_id = ctx.arg("tokenizer").and_then(opt_none).map(str::to_string);
        r.seed = self.arg_u64("seed")?;
        Ok(())
    }

    /// The scenario: the dataset, the prompt count and lengths, then the traffic. `r` holds the
    /// outcome already (some values are derived from it, and listed in its `derived`).
    fn scenario(
        &self,
        r: &mut ScenarioResult,
        warnings: &mut Vec<String>,
    ) -> Result<ScenarioParams, ImportError> {
        let (ctx, opts, path, hl) = (self.ctx, self.opts, self.path, self.hl);
        let dataset = ctx
            .arg("dataset_name")
            .and_then(opt_none)
            .map(str::to_string)
            .or_else(|| opts.dataset_name.clone())
            .ok_or_else(|| {
                self.err(hl, "no dataset name for this result (no `--dataset-name` or `dataset_name=` before it); pass `--dataset-name`".into())
            })?;
        let num_prompts = self.num_prompts(r, warnings)?;
        if self.block.get("failed").is_none() && r.completed > num_prompts {
            return Err(self.err(
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
            p.random_input_len = self.arg_u64("random_input_len")?.or(opts.random_input_len);
            if p.random_input_len.is_none() {
                let (len, derived) = input_len_of_sweep(r, ctx, path, hl, warnings)?;
                p.random_input_len = len;
                if derived {
                    r.derived.push("random_input_len".into());
                }
            }
            p.random_output_len = self
                .arg_u64("random_output_len")?
                .or(opts.random_output_len);
            p.random_range_ratio = self
                .arg_f64("random_range_ratio")?
                .or(opts.random_range_ratio);
            p.range_convention =
                Some(opts.range_convention.unwrap_or(if self.block.sglang_style {
                    RangeConvention::Sglang
                } else {
                    RangeConvention::Vllm
                }));
        }
        if dataset == "sharegpt" {
            p.sharegpt_output_len = self.arg_u64("sharegpt_output_len")?;
        }
        self.traffic(&mut p)?;
        if self.block.get("failed").is_some() && r.completed + r.failed != num_prompts {
            warnings.push(format!(
                "{path}:{hl}: {} succeeded + {} failed ≠ {num_prompts} prompts",
                r.completed, r.failed
            ));
        }
        Ok(p)
    }

    /// The prompt count: the arguments', else the sweep header's count for this block, else
    /// successful + failed requests (derived, with a warning).
    fn num_prompts(
        &self,
        r: &mut ScenarioResult,
        warnings: &mut Vec<String>,
    ) -> Result<u64, ImportError> {
        let (ctx, path, hl) = (self.ctx, self.path, self.hl);
        let block_no = ctx.sweep_next + 1;
        let swept = ctx
            .sweep
            .as_ref()
            .map(|(counts, line)| (counts.get(ctx.sweep_next), *line));
        Ok(match (self.arg_u64("num_prompts")?.or(self.opts.num_prompts), swept) {
            (Some(n), _) => n,
            (None, Some((Some(&n), _))) => n,
            (None, Some((None, line))) => {
                return Err(self.err(
                    hl,
                    format!(
                        "block {block_no} after the `num_prompts:` header of line {line}, which lists only {} counts; pass `--num-prompts`",
                        ctx.sweep.as_ref().map_or(0, |(c, _)| c.len())
                    ),
                ))
            }
            (None, None) if self.block.get("failed").is_some() => {
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
            (None, None) => return Err(self.err(
                hl,
                "no prompt count for this result (no `--num-prompts` before it and no `Failed requests` line to count from); pass `--num-prompts`"
                    .into(),
            )),
        })
    }

    /// Traffic: what the block printed, then vLLM's pre-block lines, then the arguments.
    fn traffic(&self, p: &mut ScenarioParams) -> Result<(), ImportError> {
        let (block, ctx, hl) = (self.block, self.ctx, self.hl);
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
            p.request_rate = parse_rate(&t).ok_or_else(|| {
                self.err(line, format!("request rate `{t}` is not `inf` or a number"))
            })?;
        }
        let conc_text = block
            .get("max_concurrency")
            .map(|v| (v.text.clone(), v.line))
            .or_else(|| ctx.printed.get("max_concurrency").map(|v| (v.clone(), hl)))
            .or_else(|| ctx.arg("max_concurrency").map(|v| (v.to_string(), hl)));
        if let Some((t, line)) = conc_text {
            if let Some(v) = opt_none(&t) {
                p.max_concurrency = Some(parse_u64(v).map_err(|m| self.err(line, m))?);
            }
        }
        if !p.request_rate.is_inf() {
            let b = ctx
                .printed
                .get("burstiness")
                .map(String::as_str)
                .or_else(|| ctx.arg("burstiness"));
            if let Some(b) = b.and_then(opt_none) {
                p.burstiness =
                    Some(parse_f64(b).map_err(|m| self.err(hl, format!("burstiness: {m}")))?);
            }
        }
        Ok(())
    }

    // ---- engine and launch ---------------------------------------------------------------
    fn engine_and_launch(
        &self,
        r: &mut ScenarioResult,
        h1: (&Option<String>, &Option<String>),
        warnings: &mut Vec<String>,
    ) {
        let ctx = self.ctx;
        let launched = ctx.launch.as_deref().map(launch::parse);
        r.engine = self
            .opts
            .engine
            .clone()
            .or_else(|| h1.0.clone())
            .or_else(|| {
                r.backend
                    .as_deref()
                    .and_then(crate::import::known_engine)
                    .map(str::to_string)
            })
            .or_else(|| launched.as_ref().and_then(|l| l.engine.clone()));
        r.engine_version = self.opts.engine_version.clone().or_else(|| h1.1.clone());
        if let (Some(cmd), Some(l)) = (&ctx.launch, &launched) {
            r.launch_command = Some(cmd.clone());
            r.tensor_parallel_size = l.tensor_parallel_size;
            if let Some(m) = l.model.as_deref().filter(|m| *m != r.model) {
                warnings.push(format!(
                    "{}:{}: the launch command above this result names `{m}` but the run's arguments say `{}`; the run's arguments win",
                    self.path, self.hl, r.model
                ));
            }
        }
    }
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
