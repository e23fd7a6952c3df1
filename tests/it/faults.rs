//! Faults from the fake server are failed requests of the right kind — never successes, never a
//! hang — and a run where nothing succeeds is an error.

use std::time::Duration;

use perfgate::client::load::{self, LoadError, NoProgress};
use perfgate_fakeserver::{FakeConfig, Fault};

use crate::support::*;

/// Run 6 prompts against a server that applies `fault` to every second request.
fn half_faulty(fault: Fault, timeout: Option<Duration>) -> perfgate::record::ScenarioResult {
    let server = fake(FakeConfig {
        ttft: ms(5),
        itl: ms(2),
        fault,
        fault_every: 2,
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.client.request_timeout = timeout;
    cfg.params.max_concurrency = Some(3);
    block_on(30, load::run_scenario(&cfg, prompts(6, 4, 8), &NoProgress)).unwrap()
}

fn assert_kind(r: &perfgate::record::ScenarioResult, kind: &str) {
    assert_eq!((r.completed, r.failed), (3, 3), "{:?}", r.errors);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert_eq!(r.errors[kind].count, 3, "{:?}", r.errors);
    // Only the good requests' tokens are counted.
    assert_eq!(r.total_output_tokens, 24);
}

#[test]
fn http_500() {
    let r = half_faulty(Fault::Http500, None);
    assert_kind(&r, "http_500");
    assert!(r.errors["http_500"]
        .first_message
        .contains("fake internal server error"));
}

#[test]
fn in_band_error_event() {
    let r = half_faulty(Fault::ErrorEvent { after: 3 }, None);
    assert_kind(&r, "sse_error_event");
    assert_eq!(
        r.errors["sse_error_event"].first_message,
        "fake in-band error"
    );
}

#[test]
fn malformed_json() {
    let r = half_faulty(Fault::Malformed { after: 2 }, None);
    assert_kind(&r, "malformed_event");
}

#[test]
fn mid_stream_close() {
    let r = half_faulty(Fault::Close { after: 2 }, None);
    assert_kind(&r, "connection_reset");
}

#[test]
fn missing_done() {
    let r = half_faulty(Fault::NoDone, None);
    assert_kind(&r, "stream_ended_without_done");
}

#[test]
fn stall_hits_the_request_timeout() {
    let started = std::time::Instant::now();
    let r = half_faulty(Fault::Stall { after: 2 }, Some(Duration::from_millis(400)));
    assert_kind(&r, "timeout");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn every_request_failing_is_an_error_not_a_result() {
    let server = fake(FakeConfig {
        fault: Fault::Http500,
        ..Default::default()
    });
    let cfg = config(&server.url());
    let err = block_on(30, load::run_scenario(&cfg, prompts(4, 4, 4), &NoProgress)).unwrap_err();
    match err {
        LoadError::AllFailed { failed, summary } => {
            assert_eq!(failed, 4);
            assert!(summary.contains("http_500 ×4"), "{summary}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn unreachable_server_fails_fast_as_connection_errors() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cfg = config(&format!("http://127.0.0.1:{port}"));
    let err = block_on(30, load::run_scenario(&cfg, prompts(3, 4, 4), &NoProgress)).unwrap_err();
    let LoadError::AllFailed { summary, .. } = err else {
        panic!("unexpected {err:?}")
    };
    assert!(summary.contains("connection_error ×3"), "{summary}");
}

mod cli {
    use perfgate_fakeserver::{FakeConfig, Fault};

    use crate::support::*;

    fn run_against(url: &str, dir: &std::path::Path) -> std::process::Output {
        let tok = word_tokenizer_json(dir);
        perfgate()
            .args([
                "run",
                "--base-url",
                url,
                "--model",
                "fake-model",
                "--tokenizer",
            ])
            .arg(&tok)
            .args([
                "--random-input-len",
                "8",
                "--random-output-len",
                "4",
                "--num-prompts",
                "6",
                "--request-timeout",
                "5",
            ])
            .output()
            .unwrap()
    }

    #[test]
    fn failures_are_listed_by_kind_and_the_run_still_exits_0() {
        let server = fake(FakeConfig {
            ttft: ms(2),
            itl: ms(1),
            fault: Fault::ErrorEvent { after: 1 },
            fault_every: 3,
            ..Default::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = run_against(&server.url(), dir.path());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        assert!(
            stdout.contains("Successful requests:                     4 "),
            "{stdout}"
        );
        assert!(
            stdout.contains("Failed requests:                         2 "),
            "{stdout}"
        );
        assert!(
            stdout.contains("sse_error_event:                         2 "),
            "{stdout}"
        );
        assert!(stdout.contains("  first: fake in-band error\n"), "{stdout}");
    }

    #[test]
    fn nothing_measured_exits_3_with_the_reason() {
        let server = fake(FakeConfig {
            fault: Fault::Http500,
            ..Default::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let out = run_against(&server.url(), dir.path());
        assert_eq!(out.status.code(), Some(3));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("all 6 requests failed") && err.contains("http_500"),
            "{err}"
        );
    }
}
