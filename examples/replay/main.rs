//! Decision quality of the gate on recorded real launches (replay).
//!
//! `cargo run --release --example replay -- [DIR] [--unchanged a,b,…] [--changed x,…] [--splits N] [--gate FILE] [--alarms-only [--confirm N] | --offline N | --delta-only | --ab | --effect METRIC:PCT:SCENARIO] [--by-session | --new-session]`
//!
//! DIR holds one JSON Lines file of records per engine launch (default: the GPU corpus in
//! `tests/data/gpu-llamacpp-h100/`, llama.cpp with CUDA on one H100; its README says which file
//! is which engine). For each design (launches of baseline × candidate) it replays checks of the
//! unchanged engine's launches split into baseline and candidate every way (or a seeded sample of
//! `--splits`), under the default gate settings or a `--gate FILE`, and prints:
//! - false alarms: the share of checks whose verdict is FAIL;
//! - pass: the share of gated rows and engine-wide tests that PASS, per class;
//! - power: the share of checks that FAIL when the candidate's launches are made slower by a
//!   known factor, uniformly (engine-wide) or in one scenario;
//!
//! (`--alarms-only`: the false alarms alone, with their 95 % interval, as decided once and, with
//! `--confirm N`, as `check --confirm N` decides; `--offline N`: the same as `check --results
//! --confirm N` decides records already measured, each check's last N candidate launches held
//! back as the confirmation; `--delta-only`: the worse-by-δ tables alone, on random, session
//! and new-session splits; `--effect`: a known
//! change of one latency family in one scenario, applied to the candidate's launches, caught
//! or not per design up to all launches; `--by-session` with `--alarms-only` or `--offline`:
//! session splits instead of random ones, each side all of one recording session;
//! `--new-session`: the candidate all of one session, the baseline from the others spanning at
//! least two, as a baseline recorded over sittings and checked in a new one; `--ab`: the
//! `perfgate ab` table alone, its pairs drawn across sessions and, as a live `ab` runs, within
//! one; `--candidate-sessions a,b`: session and new-session splits keep only the candidates of
//! those sessions, e.g. sittings recorded after a constant was chosen, and `--delta-only` then
//! leaves out its random splits; `--normalize-loop`: every record's values first rescaled to the
//! machine speed its calibration loop measured, as if that loop had taken the corpus's median
//! time: throughputs × loop / median, durations and latencies × median / loop, an experiment
//! the gate itself does not make; `--loop-slopes`: how much of the machine's speed each metric
//! follows, the slope and correlation of its log on the log calibration loop time within and
//! between sittings, and nothing else)
//! then the same for `perfgate ab` (paired, sequential): each seeded permutation of the unchanged
//! launches cut into pairs of base and candidate (ABBA), judged after each pair until decided or
//! out of pairs, with the mean pairs it took; then checks each changed engine's launches (default
//! `b2` in the default corpus, none elsewhere) against a baseline of all unchanged ones, as
//! `perfgate check` would. `--help` prints the usage line; a bad argument or a missing launch
//! file ends with a message and exit status 2.

mod alarms;
mod delta;
mod effect;
mod full;
mod sessions;
mod slopes;
mod util;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use perfgate::gate::replay::{new_session_splits, session_splits, splits, Design, Launch};
use perfgate::gate::GateConfig;
use perfgate::record::read_jsonl;

use crate::util::list;

const USAGE: &str =
    "usage: replay [DIR] [--unchanged a,b,…] [--changed x,…] [--splits N] [--gate FILE] \
[--alarms-only [--confirm N] | --offline N | --delta-only | --ab | --effect METRIC:PCT:SCENARIO] \
[--by-session | --new-session] [--candidate-sessions a,b,…] [--normalize-loop] [--loop-slopes]
  DIR: one JSON Lines file per engine launch, named by --unchanged / --changed without .jsonl
  (default: tests/data/gpu-llamacpp-h100, its unchanged launches and b2)";

/// What the command line asks for.
struct Options {
    dir: PathBuf,
    unchanged: Vec<String>,
    changed: Option<Vec<String>>,
    max_splits: usize,
    alarms_only: bool,
    delta_only: bool,
    confirm: usize,
    held_out: Option<u32>,
    by_session: bool,
    new_session: bool,
    candidates: Vec<String>,
    normalize_loop: bool,
    loop_slopes: bool,
    ab_only: bool,
    effect: Option<String>,
    cfg: GateConfig,
}

/// The value after `flag`, parsed, or a message naming the flag and what it wants.
fn value<T: std::str::FromStr>(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
    what: &str,
) -> Result<T, String> {
    let v = args.next().ok_or_else(|| format!("{flag} needs {what}"))?;
    v.parse()
        .map_err(|_| format!("{flag} {v}: expected {what}"))
}

/// Parse the arguments; `Ok(None)` for `--help`.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut o = Options {
        dir: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/gpu-llamacpp-h100"
        )),
        unchanged: list("rec,aa,aa1,l1,l2,l3,l4,l5"),
        changed: None,
        max_splits: 400,
        alarms_only: false,
        delta_only: false,
        confirm: 0,
        held_out: None,
        by_session: false,
        new_session: false,
        candidates: Vec::new(),
        normalize_loop: false,
        loop_slopes: false,
        ab_only: false,
        effect: None,
        cfg: GateConfig::default(),
    };
    let mut dir_given = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--unchanged" => o.unchanged = list(&value::<String>(&mut args, &a, "a list")?),
            "--changed" => o.changed = Some(list(&value::<String>(&mut args, &a, "a list")?)),
            "--splits" => o.max_splits = value(&mut args, &a, "a number of splits")?,
            "--alarms-only" => o.alarms_only = true,
            "--delta-only" => o.delta_only = true,
            "--confirm" => o.confirm = value(&mut args, &a, "a number of launches")?,
            "--offline" => o.held_out = Some(value(&mut args, &a, "a number of launches")?),
            "--by-session" => o.by_session = true,
            "--new-session" => o.new_session = true,
            "--normalize-loop" => o.normalize_loop = true,
            "--loop-slopes" => o.loop_slopes = true,
            "--candidate-sessions" => {
                o.candidates = list(&value::<String>(&mut args, &a, "a list of sessions")?)
            }
            "--ab" => o.ab_only = true,
            "--effect" => o.effect = Some(value(&mut args, &a, "METRIC:PCT:SCENARIO")?),
            "--gate" => {
                let p: PathBuf = value(&mut args, &a, "a gate settings file")?;
                o.cfg = GateConfig::load(&p).map_err(|e| e.to_string())?;
            }
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            d => {
                o.dir = PathBuf::from(d);
                dir_given = true;
            }
        }
    }
    let sessions_split = (o.by_session || o.new_session) && (o.alarms_only || o.held_out.is_some());
    let held = !o.candidates.is_empty();
    if held && !(sessions_split || o.delta_only) {
        return Err(
            "--candidate-sessions needs --delta-only, or --by-session or --new-session \
with --alarms-only or --offline"
                .to_string(),
        );
    }
    if o.changed.is_none() && !dir_given {
        o.changed = Some(list("b2"));
    }
    Ok(Some(o))
}

fn load(dir: &Path, names: &[String]) -> Result<Vec<Launch>, String> {
    names
        .iter()
        .map(|n| {
            let p = dir.join(format!("{n}.jsonl"));
            let recs = read_jsonl(&p).map_err(|e| e.to_string())?;
            Ok(Launch::new(n, recs))
        })
        .collect()
}

fn main() -> ExitCode {
    let o = match parse(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("replay: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replay: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(o: &Options) -> Result<(), String> {
    let mut a = load(&o.dir, &o.unchanged)?;
    let mut changed = load(&o.dir, o.changed.as_deref().unwrap_or_default())?;
    if o.normalize_loop {
        let median = util::median_loop(&a)?;
        a = util::normalize_loop(a, median)?;
        changed = util::normalize_loop(changed, median)?;
        println!("values rescaled to a calibration loop of {median:.3} ms");
    }
    if a.len() < 2 {
        return Err(format!(
            "{} unchanged launch(es): a replay needs at least 2",
            a.len()
        ));
    }
    let (cfg, max_splits) = (&o.cfg, o.max_splits);
    let scenarios: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in &a[0].records {
            if !v.contains(&r.scenario_id()) {
                v.push(r.scenario_id());
            }
        }
        v
    };
    println!(
        "corpus {} : {} unchanged launches ({}), scenarios: {}",
        o.dir.display(),
        a.len(),
        o.unchanged.join(" "),
        scenarios.join(", ")
    );
    if o.loop_slopes {
        slopes::loop_slopes(&a, &scenarios);
        return Ok(());
    }
    if o.delta_only {
        delta::worse_by_delta(&a, &scenarios, cfg, max_splits, &o.candidates);
        return Ok(());
    }
    if let Some(spec) = &o.effect {
        return effect::effect(&a, cfg, spec, max_splits);
    }
    if o.ab_only {
        sessions::ab_pairings(&a, cfg, max_splits);
        return Ok(());
    }
    let split = |d: Design, seed: u64| {
        if o.new_session {
            new_session_splits(&a, d, max_splits, seed, &o.candidates)
        } else if o.by_session {
            session_splits(&a, d, max_splits, seed, &o.candidates)
        } else {
            splits(a.len(), d, max_splits, seed)
        }
    };
    if let Some(hold) = o.held_out {
        alarms::offline(&a, cfg, &split, hold);
        return Ok(());
    }
    if o.alarms_only {
        alarms::false_alarms(&a, cfg, &split, o.confirm);
        return Ok(());
    }
    full::tables(&a, &scenarios, cfg, max_splits);
    if !changed.is_empty() {
        full::changed_against_all(&a, &changed, cfg);
    }
    Ok(())
}
