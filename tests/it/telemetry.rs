//! Telemetry beside a run: a fake `nvidia-smi` (a shell script printing canned CSV, `[N/A]`
//! fields included), the fake server's `/metrics` gauges, missing and failing sources, the
//! sampler's stop, and the client's numbers with telemetry on.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use perfgate::client::load::{self, NoProgress};
use perfgate::monitor::{Monitor, MonitorConfig};
use perfgate_fakeserver::FakeConfig;

use crate::support::*;

/// Two GPUs: the second with unreadable fields and a power cap + thermal slowdown active.
const CSV: &str = "0, 1980, 2619, 312.45, 67, 98, 0x0000000000000000\n\
                   1, [N/A], 2619, [Not Supported], 71, [N/A], 0x0000000000000024\n";

/// Write an executable `nvidia-smi` into `dir` whose body is `body`.
fn fake_smi(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("nvidia-smi");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The two GPUs' names and driver, as `--query-gpu=name,driver_version` prints them.
const NAMES: &str = "NVIDIA H100 80GB HBM3, 550.54.15\nNVIDIA H100 80GB HBM3, 550.54.15\n";

fn canned(dir: &Path) -> PathBuf {
    // It must have been asked for the fields perfgate parses, in CSV without header or units,
    // or for the names once.
    fake_smi(
        dir,
        &format!(
            "case \"$*\" in *--query-gpu=index,clocks.sm,*--format=csv,noheader,nounits*) \
             printf '{}' ;; \
             *--query-gpu=name,driver_version\\ --format=csv,noheader*) printf '{}' ;; \
             *) echo \"unexpected args: $*\" >&2; exit 2 ;; esac",
            CSV.replace('\n', "\\n"),
            NAMES.replace('\n', "\\n")
        ),
    )
}

fn cfg(smi: &Path, url: Option<String>) -> MonitorConfig {
    MonitorConfig {
        every: Duration::from_millis(50),
        base_url: url,
        nvidia_smi: smi.display().to_string(),
        calibrate: true,
    }
}

#[test]
fn samples_a_fake_nvidia_smi_the_cpu_and_the_servers_gauges() {
    let server = fake(FakeConfig {
        ttft: ms(20),
        itl: ms(5),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let smi = canned(dir.path());
    let monitor = Monitor::start(cfg(&smi, Some(server.url())));
    let mut c = config(&server.url());
    c.params.max_concurrency = Some(4);
    let r = block_on(30, load::run_scenario(&c, prompts(16, 8, 40), &NoProgress)).unwrap();
    assert_eq!(r.completed, 16);
    let t = monitor.finish();
    assert!(t.samples >= 2, "{t:?}");
    assert!(t.notes.is_empty(), "{:?}", t.notes);
    let cal = t.calibration_ms.unwrap();
    assert!(cal > 0.0 && cal < 1000.0, "{cal}");
    // The same loop on every CPU at once, timed too.
    let all = t.calibration_all_ms.unwrap();
    assert!(all > 0.0 && all < 1000.0, "{all}");
    assert_eq!(t.gpus.len(), 2);
    let (g0, g1) = (&t.gpus[0], &t.gpus[1]);
    assert_eq!(g0.sm_clock_mhz.unwrap().median, 1980.0);
    assert_eq!(g0.power_w.unwrap().max, 312.45);
    assert!(g0.throttle_reasons.is_empty());
    assert_eq!(g1.sm_clock_mhz, None);
    assert_eq!(g1.power_w, None);
    assert_eq!(g1.temperature_c.unwrap().min, 71.0);
    assert_eq!(
        t.throttling().into_iter().collect::<Vec<_>>(),
        ["sw_power_cap", "sw_thermal_slowdown"]
    );
    // The fake server's running gauge saw the streams (4 at a time).
    let running = t.server["running"];
    assert!(running.max >= 1.0 && running.max <= 4.0, "{running:?}");
    assert_eq!(t.server["waiting"].max, 0.0);
    let cpu = t.cpu.as_ref().unwrap();
    assert!(cpu.load1.is_some() && cpu.busy_frac.is_some(), "{cpu:?}");
    let steal = cpu.steal_frac.unwrap();
    assert!((0.0..=1.0).contains(&steal), "{steal}");
    // The platform: this machine's CPU (as /proc/cpuinfo names it) and the GPUs, asked once.
    let p = t.platform.as_ref().unwrap();
    assert_eq!(p.gpus, ["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"]);
    assert_eq!(p.gpu_driver.as_deref(), Some("550.54.15"));
    assert_eq!(p.cpus, cpu.cpus);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let here = perfgate::telemetry::Platform::from_cpuinfo(&cpuinfo, cpu.cpus);
    assert_eq!((&p.cpu, &p.cpu_features), (&here.cpu, &here.cpu_features));
}

#[test]
fn missing_failing_and_hanging_sources_are_noted_once_and_never_hold_the_stop() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg(&dir.path().join("absent/nvidia-smi"), None);
    c.calibrate = false;
    c.base_url = Some(format!("http://127.0.0.1:{}", free_port()));
    let m = Monitor::start(c);
    std::thread::sleep(Duration::from_millis(300));
    let t = m.finish();
    assert!(t.gpus.is_empty() && t.server.is_empty());
    // No GPU list without nvidia-smi; the CPU's part is there.
    let p = t.platform.as_ref().unwrap();
    assert!(
        p.gpus.is_empty() && p.gpu_driver.is_none() && p.cpus.is_some(),
        "{p:?}"
    );
    let smi = smi_notes(&t);
    assert_eq!(smi, ["nvidia-smi: not on PATH (no GPU telemetry)"]);
    assert_eq!(
        t.notes.iter().filter(|n| n.starts_with("/metrics")).count(),
        1,
        "{:?}",
        t.notes
    );

    let failing = fake_smi(
        dir.path(),
        "echo 'NVIDIA-SMI has failed: no driver' >&2; exit 9",
    );
    let mut c = cfg(&failing, None);
    c.calibrate = false;
    let t = Monitor::start(c).finish_after(Duration::from_millis(400));
    let smi = smi_notes(&t);
    assert_eq!(smi.len(), 1, "{:?}", t.notes);
    assert!(smi[0].contains("no driver"), "{smi:?}");

    // Samples that work and a names query that fails: one note, no GPU list.
    let no_names = fake_smi(
        dir.path(),
        &format!(
            "case \"$*\" in *name,driver_version*) echo 'Field \"name\" is not a valid field' \
             >&2; exit 2 ;; esac; printf '{}'",
            CSV.replace('\n', "\\n")
        ),
    );
    let mut c = cfg(&no_names, None);
    c.calibrate = false;
    let t = Monitor::start(c).finish_after(Duration::from_millis(300));
    assert_eq!(t.gpus.len(), 2);
    assert!(t.platform.as_ref().unwrap().gpus.is_empty());
    let smi = smi_notes(&t);
    assert_eq!(smi.len(), 1, "{:?}", t.notes);
    assert!(smi[0].contains("GPU names: exited with"), "{smi:?}");

    // A hanging nvidia-smi: the stop kills and reaps it at once.
    let pid_file = dir.path().join("pid");
    let hanging = fake_smi(
        dir.path(),
        &format!("echo $$ > '{}'; exec sleep 60", pid_file.display()),
    );
    let mut c = cfg(&hanging, None);
    c.calibrate = false;
    let m = Monitor::start(c);
    let t0 = Instant::now();
    while !pid_file.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped = Instant::now();
    let t = m.finish();
    assert!(
        stopped.elapsed() < Duration::from_secs(2),
        "{:?}",
        stopped.elapsed()
    );
    assert!(t.gpus.is_empty());
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(
        !Path::new(&format!("/proc/{}", pid.trim())).exists(),
        "nvidia-smi (pid {pid}) outlived the monitor"
    );
}

/// The notes `nvidia-smi` left.
fn smi_notes(t: &perfgate::telemetry::Telemetry) -> Vec<&String> {
    t.notes
        .iter()
        .filter(|n| n.starts_with("nvidia-smi"))
        .collect()
}

/// Stop after `d`.
trait FinishAfter {
    fn finish_after(self, d: Duration) -> perfgate::telemetry::Telemetry;
}

impl FinishAfter for Monitor {
    fn finish_after(self, d: Duration) -> perfgate::telemetry::Telemetry {
        std::thread::sleep(d);
        self.finish()
    }
}

#[test]
fn the_clients_numbers_are_unchanged_with_telemetry_on() {
    let server = fake(FakeConfig {
        ttft: ms(50),
        itl: ms(10),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let smi = canned(dir.path());
    let mut c = config(&server.url());
    c.params.max_concurrency = Some(8);
    // A sampler far busier than the default (every 10 ms, not 1 s) beside the load.
    let mut mc = cfg(&smi, Some(server.url()));
    mc.every = Duration::from_millis(10);
    let monitor = Monitor::start(mc);
    let r = block_on(60, load::run_scenario(&c, prompts(32, 32, 48), &NoProgress)).unwrap();
    let t = monitor.finish();
    assert!(t.samples >= 5, "{t:?}");
    let truth = server.truth();
    assert_eq!(
        (r.completed, r.failed, r.total_output_tokens),
        (32, 0, 32 * 48)
    );
    // The same bounds as the run without telemetry (run.rs, ttft_and_tpot_agree_with_…).
    let (median, mean) = (r.stats["median_ttft_ms"], r.stats["mean_ttft_ms"]);
    eprintln!(
        "with telemetry: TTFT client median {median:.3} mean {mean:.3} ms, server median {:.3} \
         mean {:.3} ms, {} samples",
        truth.median_ttft_ms, truth.mean_ttft_ms, t.samples
    );
    assert!(
        (median - truth.median_ttft_ms).abs() < 8.0,
        "{median} vs {truth:?}"
    );
    assert!(
        (mean - truth.mean_ttft_ms).abs() < 10.0,
        "{mean} vs {truth:?}"
    );
    let tpot = r.stats["mean_tpot_ms"];
    assert!((tpot - 10.0).abs() < 0.5, "TPOT {tpot} ms");
}

#[test]
fn run_records_telemetry_with_nvidia_smi_first_on_path_and_not_with_the_switch() {
    // Long enough (~0.2 s) for the first sampling round and the names query to answer.
    let server = fake(FakeConfig {
        ttft: ms(200),
        itl: ms(1),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    canned(&bin);
    let tok = word_tokenizer_json(dir.path());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |name: &str, extra: &[&str]| -> serde_json::Value {
        let out = perfgate()
            .env("PATH", &path)
            .args(["run", "--base-url", &server.url(), "--model", "fake-model"])
            .arg("--tokenizer")
            .arg(&tok)
            .args(["--random-input-len", "8", "--random-output-len", "8"])
            .args(["--num-prompts", "8", "--seed", "1", "--no-progress"])
            .args(["--save-result", "--result-filename", name, "--result-dir"])
            .arg(dir.path())
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
    };
    let on = run("on.json", &["--telemetry-interval", "0.05"]);
    let t = &on["telemetry"];
    assert_eq!(t["gpus"].as_array().map(Vec::len), Some(2), "{t}");
    assert_eq!(t["gpus"][1]["throttle_reasons"][0], "sw_power_cap");
    assert_eq!(t["platform"]["gpus"][1], "NVIDIA H100 80GB HBM3", "{t}");
    assert!(t["calibration_ms"].as_f64().unwrap() > 0.0, "{t}");
    assert!(t["calibration_all_ms"].as_f64().unwrap() > 0.0, "{t}");
    let off = run("off.json", &["--no-telemetry"]);
    assert!(off.get("telemetry").is_none(), "{off}");
    // Telemetry adds its one key and changes none of vLLM's.
    for k in [
        "completed",
        "total_input_tokens",
        "total_output_tokens",
        "num_prompts",
    ] {
        assert_eq!(on[k], off[k], "{k}");
    }
}

/// The recorded corpus (tests/data/cpu-llamacpp-telemetry, 16 llama.cpp launches on a loaded
/// 2-core machine): every record carries the calibration covariate, and the leave-one-out CUPED
/// adjustment lowers the launch-to-launch CV of output throughput in each of the 4 scenarios
/// (the figures of docs/check.md, "Machine-state covariates").
#[test]
fn cuped_on_the_recorded_corpus_lowers_the_throughput_cv() {
    use perfgate::telemetry::cuped;
    use std::collections::BTreeMap;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cpu-llamacpp-telemetry");
    let mut rows: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        files += 1;
        for r in perfgate::record::read_jsonl(&p).unwrap() {
            let cal = r.telemetry.as_ref().and_then(|t| t.calibration_ms).unwrap();
            let row = rows.entry(r.scenario_id()).or_default();
            row.0.push(r.output_throughput);
            row.1.push(cal);
        }
    }
    assert_eq!(files, 16);
    assert_eq!(rows.len(), 4);
    for (id, (y, x)) in &rows {
        let raw = cuped::cv(y).unwrap();
        let loo = cuped::cv(&cuped::adjust_loo(y, x).unwrap()).unwrap();
        eprintln!("{id}: CV {:.1}% → {:.1}%", raw * 100.0, loo * 100.0);
        assert!(loo < raw, "{id}: {loo} vs {raw}");
        assert!(
            cuped::theta(y, x).unwrap() < 0.0,
            "{id}: slower machine, less throughput"
        );
    }
}

/// `perfgate check` prints one line under its table when a run saw its GPU throttled, and none
/// otherwise.
#[test]
fn check_names_gpu_throttling_in_one_line() {
    const SEED: &str = "baselines/v0.10.1.toml";
    let dir = tempfile::tempdir().unwrap();
    let o = perfgate()
        .args(["baseline", "show", "--json", SEED])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plain = String::from_utf8(o.stdout).unwrap();
    let throttled: String = plain
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if i == 0 {
                v["telemetry"] = serde_json::json!({"interval_s": 1.0, "samples": 3,
                    "gpus": [{"index": "0", "throttle_reasons": ["gpu_idle", "hw_thermal_slowdown"]}]});
            }
            format!("{v}\n")
        })
        .collect();
    let run = |text: &str| {
        let p = dir.path().join("r.jsonl");
        std::fs::write(&p, text).unwrap();
        let o = perfgate()
            .args(["check", "--baseline", SEED, "--results"])
            .arg(&p)
            .args(["--color", "never"])
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let out = run(&throttled);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("GPU throttling"))
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("GPU throttling in 1 of 1 sampled runs (hw_thermal_slowdown)"),
        "{out}"
    );
    assert!(!run(&plain).contains("GPU throttling"));
}
