//! Hostile file targets (issue 24, item 9) and promotion bound to the checked bytes (item 10):
//! outputs aimed at a FIFO or a device are refused, live mode's appended files replace a planted
//! symbolic link instead of truncating its target, a write past `ulimit -f` fails cleanly without
//! a temporary file, a server's 300-character model id still gets its result file, and
//! `baseline promote` refuses results that are not the bytes its report judged.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use crate::support::fixture::scaled;
use crate::support::*;

const SEED: &str = "baselines/v0.10.1.toml";

fn pg(cmd: &mut std::process::Command) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_with_limit(child, Duration::from_secs(60), "perfgate")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The seed baseline's own records as results (a check of them against the seed passes).
fn seed_results(dir: &Path) -> std::path::PathBuf {
    let o = pg(perfgate().args(["baseline", "show", "--json", SEED]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let p = dir.join("results.jsonl");
    std::fs::write(&p, &o.stdout).unwrap();
    p
}

fn check(results: &Path, extra: &[&str]) -> std::process::Command {
    let mut c = perfgate();
    c.args(["check", "--baseline", SEED, "--results"])
        .arg(results)
        .args(["--color", "never"])
        .args(extra);
    c
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".perfgate-"))
        .collect()
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only reads it.
    let made = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo {p:?}");
}

#[test]
fn outputs_aimed_at_a_fifo_or_a_device_are_refused_and_left_as_they_are() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let results = seed_results(dir.path());
    let fifo = dir.path().join("report.fifo");
    mkfifo(&fifo);
    // A link to /dev/null: the device behind it is what the output is aimed at. (The test never
    // aims at /dev/null itself: before the fix, as root, that replaced the machine's /dev/null.)
    let null = dir.path().join("report.md");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    for (flag, path, what) in [("--json", &fifo, "FIFO"), ("--markdown", &null, "device")] {
        let o = pg(&mut check(&results, &[flag, path.to_str().unwrap()]));
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag}: {err}");
        assert!(
            err.contains(&path.display().to_string()) && err.contains(what),
            "{flag}: {err}"
        );
    }
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::symlink_metadata(&null).unwrap().is_symlink());
    assert!(temporaries(dir.path()).is_empty());
    // `completions --dir` writes whole files too: a FIFO there is refused, not blocked on.
    let comp = dir.path().join("comp");
    std::fs::create_dir(&comp).unwrap();
    mkfifo(&comp.join("perfgate.bash"));
    let o = pg(perfgate().args(["completions", "--dir"]).arg(&comp));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("FIFO"), "{}", text(&o.stderr));
}

#[test]
fn live_output_files_replace_a_planted_link_and_never_truncate_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mut victims = Vec::new();
    for name in ["results.jsonl", "engine-metrics.jsonl", "errors.jsonl"] {
        let victim = dir.path().join(format!("precious-{name}"));
        std::fs::write(&victim, "precious\n").unwrap();
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
        victims.push((name, victim));
    }
    let port = free_port().to_string();
    let b = crate::engine::live_baseline("exec sleep 60", &[("model-a", 4, 8)]);
    let o = pg(&mut crate::engine::live_command(
        dir.path(),
        &b,
        &["--port", &port, "--start-timeout", "1"],
    ));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    for (name, victim) in &victims {
        assert_eq!(
            std::fs::read_to_string(victim).unwrap(),
            "precious\n",
            "{name}"
        );
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name} is still a link");
    }
    // The error row went to the new errors.jsonl.
    let errors = std::fs::read_to_string(out.join("errors.jsonl")).unwrap();
    assert!(errors.contains("model-a"), "{errors}");
    // The report holds the digest of the results file it gated.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let digests = report["current"]["sha256"].as_object().unwrap();
    let bytes = std::fs::read(out.join("results.jsonl")).unwrap();
    assert_eq!(
        digests.values().next().unwrap(),
        &perfgate::text::sha256_hex(&bytes),
        "{report:#}"
    );
}

#[test]
fn a_write_past_the_file_size_limit_fails_cleanly_without_a_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let results = seed_results(dir.path());
    let report = dir.path().join("report.json");
    std::fs::write(&report, "old report\n").unwrap();
    let mut cmd = check(&results, &["--json", report.to_str().unwrap()]);
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            use nix::sys::resource::{setrlimit, Resource};
            setrlimit(Resource::RLIMIT_FSIZE, 2048, 2048).map_err(std::io::Error::from)
        });
    }
    let o = pg(&mut cmd);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "killed? {:?}: {err}", o.status);
    assert!(err.contains("File too large"), "{err}");
    assert!(err.contains(&report.display().to_string()), "{err}");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "old report\n");
    assert!(
        temporaries(dir.path()).is_empty(),
        "{:?}",
        temporaries(dir.path())
    );
}

#[test]
fn a_long_model_id_chosen_by_the_server_keeps_its_result_under_a_safe_name() {
    let model = format!("org/bad\u{1b}[31m\nname-{}", "x".repeat(300));
    let server = fake(perfgate_fakeserver::FakeConfig {
        ttft: ms(1),
        itl: ms(1),
        model: model.clone(),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let tok = word_tokenizer_json(dir.path());
    let results = dir.path().join("results");
    let o = pg(perfgate()
        .args(["run", "--base-url", &server.url(), "--tokenizer"])
        .arg(&tok)
        .args(["--dataset-name", "random", "--random-input-len", "8"])
        .args(["--random-output-len", "4", "--num-prompts", "2"])
        .args(["--save-result", "--result-dir"])
        .arg(&results));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let names: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let name = &names[0];
    assert!(name.len() <= 255, "{} bytes", name.len());
    assert!(!name.chars().any(char::is_control), "{name:?}");
    assert!(
        name.starts_with("openai-infqps-bad_[31m_name-xxx"),
        "{name}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join(name)).unwrap()).unwrap();
    assert!(
        v["model"] == model.as_str() || v["model_id"] == model.as_str(),
        "{v:#}"
    );
}

/// A passing check of the seed's records, its report next to them.
fn checked(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let results = seed_results(dir);
    let report = dir.join("report.json");
    let o = pg(&mut check(&results, &["--json", report.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    (results, report)
}

fn promote(results: &Path, to: &Path, extra: &[&str]) -> Output {
    pg(perfgate()
        .args(["baseline", "promote", "--from"])
        .arg(results)
        .arg("--to")
        .arg(to)
        .args(extra))
}

#[test]
fn promote_refuses_results_edited_after_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let (results, _) = checked(dir.path());
    // One number changed after the check, same file name, same number of records.
    let edited = std::fs::read_to_string(&results).unwrap().replacen(
        "\"output_throughput\":",
        "\"output_throughput\":1e9,\"x\":",
        1,
    );
    std::fs::write(&results, edited).unwrap();
    let to = dir.path().join("new.toml");
    let o = promote(&results, &to, &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&results.display().to_string()), "{err}");
    assert!(
        err.contains("SHA-256") && err.contains("check it again"),
        "{err}"
    );
    assert!(!to.exists());
    let o = promote(&results, &to, &["--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("warning:"), "{}", text(&o.stderr));
}

#[test]
fn promote_refuses_a_stale_report_beside_an_interrupted_slower_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let (results, report) = checked(dir.path());
    // The rerun (40× slower, interrupted: half its records) rewrote results.jsonl and was killed
    // before it wrote a report: the old report.json still says pass.
    let recs = perfgate::record::read_jsonl(&results).unwrap();
    let half = recs.len().div_ceil(2);
    let slow: Vec<_> = recs[..half]
        .iter()
        .map(|r| scaled(r, 1.0 / 40.0, 40.0))
        .collect();
    std::fs::write(&results, perfgate::record::to_jsonl(&slow)).unwrap();
    let to = dir.path().join("new.toml");
    let o = promote(&results, &to, &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&report.display().to_string()), "{err}");
    assert!(err.contains("SHA-256"), "{err}");
    assert!(!to.exists());
}

#[test]
fn promote_refuses_a_report_without_digests_or_whose_check_failed() {
    let dir = tempfile::tempdir().unwrap();
    let (results, report) = checked(dir.path());
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let to = dir.path().join("new.toml");
    // A failed or errored check: refused, naming the results file.
    for verdict in ["fail", "error"] {
        v["verdict"] = verdict.into();
        std::fs::write(&report, v.to_string()).unwrap();
        let o = promote(&results, &to, &[]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("did not pass (verdict {verdict}")),
            "{err}"
        );
        assert!(err.contains(&results.display().to_string()), "{err}");
    }
    // A report that holds no digest (an older perfgate's, or hand-made).
    v["verdict"] = "pass".into();
    v["current"].as_object_mut().unwrap().remove("sha256");
    std::fs::write(&report, v.to_string()).unwrap();
    let o = promote(&results, &to, &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("holds no digest"), "{err}");
    assert!(!to.exists());
}
