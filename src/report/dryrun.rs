//! The `--dry-run` plan of a live check: every launch command, how readiness is probed, how the
//! engine is stopped, and every scenario as the equivalent `vllm bench serve` line. Nothing runs.

use std::fmt::Write as _;

use crate::suite::{run_command, shell_quote, slug, CacheReset, Plan, StopMethod};

/// How a live run repeats the suite: launches, runs per launch, warm-up, order, cache reset.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Engine launches per model (`--runs`).
    pub launches: u32,
    pub runs_per_launch: u32,
    /// The warm-up pass, in words (e.g. `every scenario's shape, max-concurrency requests each`).
    pub warmup: String,
    pub shuffle: bool,
    /// `false` with `--no-cache-reset`.
    pub cache_reset: bool,
}

impl Schedule {
    /// `launches` launches of one run each, with the default warm-up and cache reset.
    pub fn launches(launches: u32) -> Schedule {
        Schedule {
            launches,
            runs_per_launch: 1,
            warmup: WARMUP_AUTO.into(),
            shuffle: false,
            cache_reset: true,
        }
    }

    /// The cache reset for an engine under this schedule.
    pub fn cache_reset(&self, engine: &str) -> CacheReset {
        if self.cache_reset {
            CacheReset::for_engine(engine)
        } else {
            CacheReset::Off
        }
    }
}

/// The default warm-up, in words.
pub const WARMUP_AUTO: &str =
    "one pass of every scenario's shape (its lengths and concurrency; max-concurrency requests, other prompts), discarded";

/// Render the plan for `--dry-run`: every launch command and every scenario, nothing run.
pub fn render_dry_run(plan: &Plan, source: &str, sch: &Schedule) -> String {
    let mut s = String::new();
    let n_scen: usize = plan.models.iter().map(|m| m.scenarios.len()).sum();
    let version = plan.engine_version.as_deref().unwrap_or("(no version)");
    let preset = plan.models.first().map_or("-", |m| m.launch.preset.name());
    let distinct: std::collections::BTreeSet<&str> = plan
        .models
        .iter()
        .flat_map(|m| m.scenarios.iter().map(|s| s.id.as_str()))
        .collect();
    let _ = writeln!(
        s,
        "perfgate check --dry-run: {source}\nengine {} {version}, preset {preset}: {} model(s), {} distinct scenario(s), \
         {n_scen} model × scenario pair(s), {} × {} each; nothing is run.",
        plan.engine,
        plan.models.len(),
        distinct.len(),
        plural(sch.launches, "launch"),
        plural(sch.runs_per_launch, "run"),
    );
    let _ = writeln!(
        s,
        "each launch: {}; warm-up: {}; then the scenarios in {}, {} (records carry the \
         launch id); caches between scenarios: {}.",
        if plan.models.iter().all(|m| m.launch.command.is_none()) {
            "nothing is launched (--base-url): all runs share the running server"
        } else {
            "a fresh engine"
        },
        sch.warmup,
        if sch.shuffle {
            "a shuffled order (the same for every model)"
        } else {
            "the file's order"
        },
        plural(sch.runs_per_launch, "time"),
        sch.cache_reset(&plan.engine).describe(),
    );
    let runs = sch.launches * sch.runs_per_launch;
    for (i, m) in plan.models.iter().enumerate() {
        let l = &m.launch;
        let _ = writeln!(
            s,
            "\n== model {}/{}: {} (tensor parallel {})",
            i + 1,
            plan.models.len(),
            m.name,
            m.tensor_parallel_size
        );
        match &l.command {
            Some(cmd) => {
                let _ = writeln!(s, "launch:");
                for line in cmd.lines() {
                    let _ = writeln!(s, "    {line}");
                }
                for (k, v) in &l.env {
                    let _ = writeln!(s, "  env {k}={}", shell_quote(v));
                }
                let _ = writeln!(
                    s,
                    "ready:  GET {0}/health, then GET {0}/v1/models lists `{1}` (start timeout {2} s)",
                    l.base_url,
                    m.served_model_name,
                    l.start_timeout.as_secs()
                );
                let stop = match &l.stop {
                    StopMethod::Docker { container } => format!(
                        "docker stop {container}, then SIGTERM → grace → SIGKILL to the process group"
                    ),
                    StopMethod::ProcessGroup => {
                        "SIGTERM → grace → SIGKILL to the process group".to_string()
                    }
                };
                let _ = writeln!(s, "stop:   {stop}; wait until port {} is free", l.port);
                let _ = writeln!(
                    s,
                    "logs:   logs/{}.log in the output directory",
                    slug(&m.name)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "launch: none (--base-url {}); ready: GET /health, then /v1/models lists `{}`",
                    l.base_url, m.served_model_name
                );
            }
        }
        let _ = writeln!(s, "scenarios ({} each):", plural(runs, "run"));
        for (j, sc) in m.scenarios.iter().enumerate() {
            let _ = writeln!(s, "  {}. {}", j + 1, sc.id);
            let _ = writeln!(s, "     {}", run_command(&l.base_url, m, sc));
        }
    }
    s
}

fn plural(n: u32, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        _ if word.ends_with('h') => format!("{n} {word}es"),
        _ => format!("{n} {word}s"),
    }
}
