//! The measuring client against hostile servers (raw TCP on 127.0.0.1:0, scripted by a closure
//! per connection): floods that write faster than the client reads, endless heads and lines,
//! streams with nothing in them, early answers, stray bytes on idle connections. Each case once
//! hung, ate memory, or was counted wrong; now each ends on time with the right failure kind.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use perfgate::client::{Client, ClientConfig};
use perfgate::dataset::Prompt;
use perfgate::record::RequestRecord;

use crate::support::*;

/// A server that hands every accepted connection (numbered from 0) to `handler` on a thread.
fn serve<F>(handler: F) -> (u16, Arc<AtomicUsize>)
where
    F: Fn(TcpStream, usize) + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let a = accepted.clone();
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let i = a.fetch_add(1, Ordering::SeqCst);
            let h = handler.clone();
            std::thread::spawn(move || h(conn, i));
        }
    });
    (port, accepted)
}

/// Read a request head and then its body (Content-Length); false when the client closed.
fn read_request(conn: &mut TcpStream) -> bool {
    let Some(len) = read_head(conn) else {
        return false;
    };
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).is_ok()
}

/// Read a request head only; its Content-Length.
fn read_head(conn: &mut TcpStream) -> Option<usize> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    Some(
        head.lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0),
    )
}

/// Write `block` until the client goes away.
fn flood(conn: &mut TcpStream, block: &[u8]) {
    while conn.write_all(block).is_ok() {}
}

const SSE_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";

fn event(text: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"finish_reason\":null}}]}}\n\n"
    )
}

fn client(port: u16, timeout_s: f64) -> Client {
    Client::new(ClientConfig {
        base_url: format!("http://127.0.0.1:{port}"),
        model: "m".into(),
        request_timeout: Some(Duration::from_secs_f64(timeout_s)),
        ..Default::default()
    })
    .unwrap()
}

fn prompt(text: String) -> Prompt {
    Prompt {
        text,
        input_len: 2,
        output_len: 3,
        ..Default::default()
    }
}

/// perfgate's own runtime shape: one thread, so a task that never yields starves the rest.
fn on_one_thread<F: std::future::Future>(secs: u64, fut: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(secs), fut)
            .await
            .unwrap_or_else(|_| panic!("did not finish within {secs} s"))
    })
}

fn one(port: u16, timeout_s: f64) -> (RequestRecord, Duration) {
    on_one_thread(60, async move {
        let c = client(port, timeout_s);
        let t = Instant::now();
        let r = c.send(0, &prompt("hi".into()), Instant::now(), None).await;
        (r, t.elapsed())
    })
}

fn kind(r: &RequestRecord) -> String {
    r.failure
        .as_ref()
        .map(|f| f.kind.key())
        .unwrap_or_else(|| "ok".into())
}

#[test]
fn a_comment_flood_times_out_on_time_and_memory_stays_bounded() {
    // Endless `: ping` comment lines, written as fast as the socket takes them, on every
    // connection. `perfgate run` with --request-timeout 2 runs in a child so that its own peak
    // RSS can be read.
    let _serial = serial();
    // The first request is answered (so the run measures something and writes its result), the
    // other three are flooded.
    let requests = Arc::new(AtomicUsize::new(0));
    let (port, _) = serve(move |mut c, _| {
        while let Some(len) = read_head(&mut c) {
            // A bodiless request is the GET of /metrics (read before and after the run for
            // speculative-decoding counters): none here.
            if len == 0 {
                let _ = c.write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
                return;
            }
            let mut body = vec![0u8; len];
            if c.read_exact(&mut body).is_err() {
                return;
            }
            let _ = c.write_all(SSE_HEAD);
            if requests.fetch_add(1, Ordering::SeqCst) == 0 {
                let body = format!("{}data: [DONE]\n\n", event("ok"));
                let _ = c.write_all(body.as_bytes());
                return;
            }
            flood(&mut c, &b": ping\n".repeat(9362));
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let tok = word_tokenizer_json(dir.path());
    let mut child = perfgate()
        .args(["run", "--base-url", &format!("http://127.0.0.1:{port}")])
        .args(["--model", "m", "--tokenizer"])
        .arg(&tok)
        .args([
            "--random-input-len",
            "4",
            "--random-output-len",
            "4",
            "--num-prompts",
            "4",
            "--max-concurrency",
            "4",
            "--request-timeout",
            "2",
            // The scripted connections are all for the measured requests.
            "--ready-check-timeout-sec",
            "0",
            "--no-progress",
            "--save-result",
            "--result-filename",
            "r.json",
            "--result-dir",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The child's own peak RSS: VmHWM of its address space, polled until it exits (the last
    // reading is at most 10 ms old). Not wait4's ru_maxrss: on Linux that keeps the peak of the
    // address space the child was forked with, i.e. this whole test process.
    let status_path = format!("/proc/{}/status", child.id());
    let t = Instant::now();
    let mut peak_kb = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_path) {
            if let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("perfgate run did not end within 30 s under the flood");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = t.elapsed();
    assert!(status.success(), "{status} after {wall:?}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(v["failed"], 3, "{v}");
    assert_eq!(
        v["errors_by_kind"]["timeout"]["count"], 3,
        "{}",
        v["errors_by_kind"]
    );
    let duration = v["duration"].as_f64().unwrap();
    assert!(
        duration <= 3.0,
        "the 2 s timeout fired after {duration} s (limit 1.5 × 2 s)"
    );
    let max_rss_mb = peak_kb as f64 / 1024.0;
    assert!(max_rss_mb < 200.0, "peak RSS {max_rss_mb:.0} MB");
    eprintln!(
        "comment flood: duration {duration:.2} s, wall {wall:?}, peak RSS {max_rss_mb:.0} MB"
    );
}

#[test]
fn an_endless_data_line_is_refused_at_its_bound_not_buffered() {
    let (port, _) = serve(|mut c, _| {
        if read_request(&mut c) {
            let _ = c.write_all(SSE_HEAD);
            let _ = c.write_all(b"data: ");
            flood(&mut c, &[b'x'; 64 * 1024]);
        }
    });
    let (r, took) = one(port, 10.0);
    assert_eq!(kind(&r), "response_too_large", "{:?}", r.failure);
    assert!(r.failure.unwrap().message.contains("8 MiB"));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_flood_on_one_connection_does_not_starve_the_others() {
    // Connection 0 floods with comments; connection 1 streams 10 tokens 20 ms apart. On one
    // runtime thread the flood once held the thread: the other request finished only when the
    // flood's timeout fired.
    let (port, _) = serve(|mut c, i| {
        if !read_request(&mut c) {
            return;
        }
        let _ = c.write_all(SSE_HEAD);
        if i == 0 {
            flood(&mut c, &b": ping\n".repeat(9362));
        } else {
            for _ in 0..10 {
                let _ = c.write_all(event("t").as_bytes());
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.write_all(b"data: [DONE]\n\n");
        }
    });
    let (flooded, normal) = on_one_thread(60, async move {
        let c = std::rc::Rc::new(client(port, 4.0));
        let t0 = Instant::now();
        let c1 = c.clone();
        let a = async move { c1.send(0, &prompt("a".into()), t0, None).await };
        let b = async move {
            // Let the flood start first.
            tokio::time::sleep(Duration::from_millis(100)).await;
            c.send(1, &prompt("b".into()), t0, None).await
        };
        tokio::join!(a, b)
    });
    assert_eq!(kind(&flooded), "timeout");
    assert_eq!(kind(&normal), "ok", "{:?}", normal.failure);
    assert_eq!(normal.chunks, 10);
    assert!(
        normal.end < Duration::from_secs(2),
        "the paced request ended at {:?}, behind the flood",
        normal.end
    );
    assert!(flooded.end <= Duration::from_secs(6), "{:?}", flooded.end);
}

#[test]
fn endless_interim_responses_hit_the_head_bound() {
    let (port, _) = serve(|mut c, _| {
        if read_request(&mut c) {
            flood(&mut c, &b"HTTP/1.1 100 Continue\r\n\r\n".repeat(2000));
        }
    });
    let (r, took) = one(port, 10.0);
    assert_eq!(kind(&r), "response_too_large", "{:?}", r.failure);
    assert!(r.failure.unwrap().message.contains("interim"));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn an_endless_error_body_is_cut_at_its_bound() {
    let (port, _) = serve(|mut c, _| {
        if read_request(&mut c) {
            let _ = c.write_all(b"HTTP/1.1 500 Internal Server Error\r\n\r\n");
            flood(&mut c, &[b'e'; 64 * 1024]);
        }
    });
    let (r, took) = one(port, 10.0);
    assert_eq!(kind(&r), "http_500");
    assert!(r.failure.unwrap().message.len() < 400);
    assert!(took < Duration::from_secs(1), "{took:?}");
}

#[test]
fn a_stream_with_no_text_chunk_is_a_failure_of_its_own() {
    // Straight to [DONE]; and chat-shaped chunks on /v1/completions.
    let bodies = [
        "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".to_string(),
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n".to_string(),
    ];
    for (i, body) in bodies.into_iter().enumerate() {
        let (port, _) = serve(move |mut c, _| {
            if read_request(&mut c) {
                let _ = c.write_all(SSE_HEAD);
                let _ = c.write_all(body.as_bytes());
            }
        });
        let (r, _) = one(port, 10.0);
        assert_eq!(kind(&r), "no_output_tokens", "case {i}: {:?}", r.failure);
        assert_eq!(r.ttft(), None);
        let msg = r.failure.unwrap().message;
        if i == 1 {
            assert!(msg.contains("/v1/chat/completions"), "{msg}");
        }
    }
}

#[test]
fn chunk_sizes_with_many_leading_zeros_are_read() {
    let (port, _) = serve(|mut c, _| {
        if read_request(&mut c) {
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
            let mut body = String::new();
            for t in ["a", "b"] {
                body.push_str(&event(t));
            }
            body.push_str("data: [DONE]\n\n");
            let _ = c.write_all(
                format!(
                    "{:020x}\r\n{body}\r\n00000000000000000000\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    let (r, _) = one(port, 10.0);
    assert_eq!(kind(&r), "ok", "{:?}", r.failure);
    assert_eq!(r.text, "ab");
}

#[test]
fn an_early_413_is_http_413_not_a_connection_error() {
    // The server answers from the head, never reads the 16 MB body, and closes.
    let (port, _) = serve(|mut c, _| {
        if read_head(&mut c).is_some() {
            let _ = c.write_all(
                b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo large",
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let (r, _) = on_one_thread(60, async move {
        let c = client(port, 20.0);
        let t = Instant::now();
        let r = c
            .send(0, &prompt("word ".repeat(3_200_000)), Instant::now(), None)
            .await;
        (r, t.elapsed())
    });
    assert_eq!(kind(&r), "http_413", "{:?}", r.failure);
    assert_eq!(r.failure.unwrap().message, "HTTP 413: too large");
}

#[test]
fn a_stray_response_on_an_idle_connection_is_not_taken_for_the_next_one() {
    // After each real response the server sends a second, unasked-for one 30 ms later. The
    // client's next request comes 100 ms later: the stray bytes wait on the idle connection.
    let real = Arc::new(AtomicUsize::new(0));
    let r2 = real.clone();
    let (port, accepted) = serve(move |mut c, _| {
        while read_request(&mut c) {
            r2.fetch_add(1, Ordering::SeqCst);
            let body = format!("{}data: [DONE]\n\n", event("real"));
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = c.write_all(resp.as_bytes());
            std::thread::sleep(Duration::from_millis(30));
            let stray = format!("{}data: [DONE]\n\n", event("stray"));
            let _ = c.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{stray}",
                    stray.len()
                )
                .as_bytes(),
            );
        }
    });
    let recs = on_one_thread(60, async move {
        let c = client(port, 10.0);
        let t0 = Instant::now();
        let mut out = Vec::new();
        for i in 0..5 {
            out.push(c.send(i, &prompt("x".into()), t0, None).await);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        out
    });
    for r in &recs {
        assert_eq!(kind(r), "ok", "{:?}", r.failure);
        assert_eq!(r.text, "real");
    }
    assert_eq!(
        real.load(Ordering::SeqCst),
        5,
        "every OK is a request the server saw"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        5,
        "no connection with stray bytes reused"
    );
}

#[test]
fn an_api_key_with_a_line_break_is_refused_and_not_printed() {
    let out = perfgate()
        .args([
            "run",
            "--model",
            "m",
            "--tokenizer",
            "x",
            "--num-prompts",
            "1",
        ])
        .env("OPENAI_API_KEY", "sk-secret123456789\r\nX-Evil: 1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("OPENAI_API_KEY") && err.contains("control character"),
        "{err}"
    );
    assert!(!err.contains("secret123456789"), "{err}");
}

#[test]
fn base_urls_with_query_fragment_or_credentials_are_refused() {
    for (url, says) in [
        ("http://127.0.0.1:9/?x=1", "query"),
        ("http://127.0.0.1:9/#frag", "fragment"),
        ("http://user:hunter2@127.0.0.1:9/", "credentials"),
    ] {
        let out = perfgate()
            .args(["run", "--model", "m", "--tokenizer", "x", "--base-url", url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{url}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}

#[test]
fn absurd_numeric_flags_exit_2_naming_the_flag_and_the_bound() {
    for (flag, value, says) in [
        ("--request-rate", "1e-20", "[0.001, 1000000]"),
        ("--request-rate", "1e-12", "[0.001, 1000000]"),
        ("--request-timeout", "1e30", "one week"),
        ("--max-concurrency", "4611686018427387904", "[1, 100000]"),
        ("--num-prompts", "100000000", "[1, 1000000]"),
        ("--random-range-ratio", "NaN", "not a finite number"),
        ("--random-range-ratio", "-0.5", "≥ 0"),
        ("--burstiness", "0", "[0.01, 1000]"),
    ] {
        let t = Instant::now();
        let out = perfgate()
            .args(["run", "--model", "m", "--tokenizer", "x"])
            .arg(format!("{flag}={value}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(flag) && err.contains(says),
            "{flag} {value}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}

#[test]
fn a_failed_write_leaves_the_old_baseline_whole() {
    // `baseline record --runs-from X -o X` with a write that fails part-way (a file-size limit
    // of 1 KiB, SIGXFSZ ignored so the write returns EFBIG): X keeps its old contents.
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("b.toml");
    std::fs::copy("baselines/v0.10.1.toml", &x).unwrap();
    let before = std::fs::read(&x).unwrap();
    assert!(
        before.len() > 4096,
        "the baseline is big enough to cross the limit"
    );
    // Its runs as records (without their source, so they append as new runs).
    let shown = perfgate()
        .args(["baseline", "show", "--json"])
        .arg(&x)
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let mut recs = String::new();
    for line in String::from_utf8(shown.stdout).unwrap().lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        v.as_object_mut().unwrap().remove("source");
        recs.push_str(&v.to_string());
        recs.push('\n');
    }
    let recs_path = dir.path().join("recs.jsonl");
    std::fs::write(&recs_path, recs).unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(
            r#"ulimit -f 4; trap '' XFSZ; exec "$0" baseline record "$2" --runs-from "$1" -o "$1""#,
        )
        .arg(env!("CARGO_BIN_EXE_perfgate"))
        .arg(&x)
        .arg(&recs_path)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "the write was expected to fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write"), "{err}");
    assert_eq!(std::fs::read(&x).unwrap(), before, "the old file is intact");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "no temporary file left behind");
}

#[test]
fn an_error_body_cannot_forge_workflow_commands_or_terminal_escapes() {
    let (port, _) = serve(|mut c, _| {
        if read_request(&mut c) {
            let body = "oops\n::error title=forged::the PR is fine\n\x1b]0;pwned\x07\x1b[2Jdone";
            let _ = c.write_all(
                format!(
                    "HTTP/1.1 500 Internal Server Error\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    let (r, _) = one(port, 10.0);
    assert_eq!(kind(&r), "http_500");
    let msg = r.failure.unwrap().message;
    assert!(msg.contains("oops") && msg.contains("done"), "{msg}");
    assert!(msg.lines().all(|l| !l.starts_with("::")), "{msg}");
    assert!(!msg.contains('\x1b') && !msg.contains('\x07'), "{msg:?}");
}

#[test]
fn an_endless_header_flood_is_response_too_large() {
    let (port, _) = serve(|mut c, _| {
        if read_request(&mut c) {
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n");
            flood(
                &mut c,
                &b"x-flood: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n"
                    .repeat(256),
            );
        }
    });
    let (r, took) = one(port, 10.0);
    assert_eq!(kind(&r), "response_too_large", "{:?}", r.failure);
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A server whose every answer is `200` with an endless body (a `/v1/models`, `/metrics` or
/// `/tokenize` that never ends).
fn endless_answers() -> u16 {
    let (port, _) = serve(|mut c, _| {
        let _ = read_head(&mut c);
        let _ =
            c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{\"data\": [");
        flood(
            &mut c,
            &b"{\"id\": \"padding-padding-padding-padding\"},".repeat(1024),
        );
    });
    port
}

#[test]
fn readiness_and_metrics_bodies_are_bounded() {
    let port = endless_answers();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let t0 = Instant::now();
    let (ready, metrics) = on_one_thread(60, async {
        (
            perfgate::engine::process::probe_ready(&http, &base, "m").await,
            perfgate::engine::metrics::scrape(&http, &base).await,
        )
    });
    let ready = ready.unwrap_err();
    assert!(ready.contains("larger than 8 MiB"), "{ready}");
    let metrics = metrics.unwrap_err().to_string();
    assert!(metrics.contains("larger than"), "{metrics}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

#[test]
fn the_ready_check_of_run_ends_by_its_timeout_and_reads_a_bounded_body() {
    let port = endless_answers();
    ready_check_ends_in_time(port, Duration::from_secs(30));
}

#[test]
fn endless_valid_text_events_are_cut_past_max_tokens() {
    // Valid text events without end and without [DONE], as fast as the socket takes them; and
    // one event whose text alone is far more than 3 tokens can be.
    let (port, _) = serve(|mut c, _| {
        if read_request(&mut c) {
            let _ = c.write_all(SSE_HEAD);
            flood(&mut c, event("tok").repeat(512).as_bytes());
        }
    });
    let (r, took) = one(port, 20.0);
    assert_eq!(kind(&r), "output_over_max_tokens", "{:?}", r.failure);
    let cap = perfgate::client::chunk_cap(3);
    assert_eq!(r.chunks, cap + 1, "cut at the first chunk past the cap");
    assert!(r.text.len() <= (cap as usize + 1) * 3, "{}", r.text.len());
    assert!(r.failure.unwrap().message.contains("max_tokens 3"));
    assert!(took < Duration::from_secs(2), "{took:?}");

    let big = "x".repeat(64 * 1024);
    let (port, _) = serve(move |mut c, _| {
        if read_request(&mut c) {
            let _ = c.write_all(SSE_HEAD);
            let _ = c.write_all(format!("{}data: [DONE]\n\n", event(&big)).as_bytes());
        }
    });
    let (r, _) = one(port, 20.0);
    assert_eq!(kind(&r), "output_over_max_tokens", "{:?}", r.failure);
}

#[test]
fn usage_the_request_cannot_have_is_not_taken() {
    // completion_tokens far above max_tokens (4e9 for 3), and 0 for a response with text.
    for (usage, says) in [
        (4_000_000_000u64, "above the max_tokens 3"),
        (0, "is 0 for a response of 2 text chunks"),
    ] {
        let (port, _) = serve(move |mut c, _| {
            if read_request(&mut c) {
                let _ = c.write_all(SSE_HEAD);
                let body = format!(
                    "{}{}data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":2,\"completion_tokens\":{usage}}}}}\n\ndata: [DONE]\n\n",
                    event("a"),
                    event("b")
                );
                let _ = c.write_all(body.as_bytes());
            }
        });
        let (r, _) = one(port, 10.0);
        assert_eq!(kind(&r), "implausible_usage", "{usage}: {:?}", r.failure);
        let msg = r.failure.unwrap().message;
        assert!(msg.contains(says), "{msg}");
    }
}

/// A server that answers every request, then (a separate write, `delay` later) sends a second,
/// unasked-for response on the same connection; its writes go out at once (TCP_NODELAY, as
/// uvicorn's and most servers'). Counts the requests it read.
fn answers_twice(delay: Duration) -> (u16, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let s2 = seen.clone();
    let (port, _) = serve(move |mut c, _| {
        let _ = c.set_nodelay(true);
        while read_request(&mut c) {
            s2.fetch_add(1, Ordering::SeqCst);
            for text in ["real", "stray"] {
                let body = format!("{}data: [DONE]\n\n", event(text));
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                if c.write_all(resp.as_bytes()).is_err() {
                    return;
                }
                if text == "real" && !delay.is_zero() {
                    std::thread::sleep(delay);
                }
            }
        }
    });
    (port, seen)
}

/// `n` requests sent back to back (the next as soon as the last ended), `lanes` at a time.
fn back_to_back(port: u16, n: u32, lanes: u32) -> Vec<RequestRecord> {
    on_one_thread(60, async move {
        let c = std::rc::Rc::new(client(port, 10.0));
        let t0 = Instant::now();
        let per_lane = futures_util::future::join_all((0..lanes).map(|lane| {
            let c = c.clone();
            async move {
                let mut out = Vec::new();
                for i in 0..n / lanes {
                    out.push(c.send(lane * 1000 + i, &prompt("x".into()), t0, None).await);
                }
                out
            }
        }))
        .await;
        per_lane.into_iter().flatten().collect()
    })
}

#[test]
fn a_response_sent_without_a_request_is_never_another_ones_completion() {
    // With immediate reuse, a second response written right after each answer once passed for
    // the next request's answer: 50 requests reported complete where the server read 26.
    for lanes in [1, 4] {
        let (port, seen) = answers_twice(Duration::ZERO);
        let recs = back_to_back(port, 48, lanes);
        let ok: Vec<_> = recs.iter().filter(|r| r.ok()).collect();
        for r in &ok {
            assert_eq!(r.text, "real", "a stray was counted as an answer");
        }
        let unsolicited = recs
            .iter()
            .filter(|r| kind(r) == "unsolicited_response")
            .count();
        assert_eq!(
            ok.len() + unsolicited,
            recs.len(),
            "{:?}",
            recs.iter().map(kind).collect::<Vec<_>>()
        );
        assert_eq!(ok.len(), seen.load(Ordering::SeqCst) - unsolicited);
        assert!(unsolicited <= lanes as usize, "{unsolicited}");
        eprintln!(
            "lanes {lanes}: {} ok, {unsolicited} unsolicited, server read {}",
            ok.len(),
            seen.load(Ordering::SeqCst)
        );
    }
}

#[test]
fn a_late_stray_that_was_read_as_an_answer_fails_that_request() {
    // The stray comes 20 ms after the answer: the next request is on the wire by then, reads
    // the stray, and the real answer follows it. That request is failed, not counted, and no
    // connection is reused afterwards.
    let (port, seen) = answers_twice(Duration::from_millis(20));
    let recs = back_to_back(port, 6, 1);
    let kinds: Vec<_> = recs.iter().map(kind).collect();
    for r in recs.iter().filter(|r| r.ok()) {
        assert_eq!(r.text, "real", "{kinds:?}");
    }
    assert_eq!(kinds[0], "ok", "{kinds:?}");
    assert_eq!(kinds[1], "unsolicited_response", "{kinds:?}");
    assert!(kinds[2..].iter().all(|k| k == "ok"), "{kinds:?}");
    assert_eq!(seen.load(Ordering::SeqCst), 6);
}

#[test]
fn ramp_and_prefix_flags_and_their_product_are_bounded() {
    // Each once panicked (a 1e20 s gap) or aborted on a 16 GB allocation; the last is within
    // every flag's own limit, but a million prompts of ten million tokens is 10^13 tokens.
    let dir = tempfile::tempdir().unwrap();
    let tok = word_tokenizer_json(dir.path());
    let cases: [(&[&str], &str); 7] = [
        (
            &[
                "--ramp-up-strategy",
                "linear",
                "--ramp-up-start-rps",
                "1e-20",
                "--ramp-up-end-rps",
                "10",
            ],
            "--ramp-up-start-rps",
        ),
        (
            &["--random-prefix-len", "4294967295"],
            "--random-prefix-len",
        ),
        (
            &["--prefix-repetition-prefix-len", "4000000000"],
            "--prefix-repetition-prefix-len",
        ),
        (
            &["--prefix-repetition-num-prefixes", "4000000000"],
            "--prefix-repetition-num-prefixes",
        ),
        (
            &["--prefix-repetition-suffix-len", "4000000000"],
            "--prefix-repetition-suffix-len",
        ),
        (
            &["--num-prompts", "1000000", "--random-input-len", "10000000"],
            "--random-input-len",
        ),
        (
            &[
                "--dataset-name",
                "prefix_repetition",
                "--num-prompts",
                "1000000",
                "--prefix-repetition-suffix-len",
                "1000000",
            ],
            "--prefix-repetition-suffix-len",
        ),
    ];
    for (args, says) in cases {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
            .args(["run", "--model", "m", "--base-url", "http://127.0.0.1:9"])
            .args(["--ready-check-timeout-sec", "0", "--tokenizer"])
            .arg(&tok)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_with_limit(child, Duration::from_secs(30), "perfgate run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "{args:?}: {:?} {err}",
            out.status
        );
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn an_endless_tokenize_answer_is_cut_at_its_bound() {
    // /v1/models answers (llama.cpp's shape, with n_vocab); /tokenize answers 200 and never
    // ends. Once read whole: 3 GB.
    let (port, _) = serve(|mut c, _| {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match c.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        if head.starts_with(b"GET /v1/models") {
            let body = r#"{"data":[{"id":"m","meta":{"n_vocab":100}}]}"#;
            let _ = c.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
            return;
        }
        let _ =
            c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{\"tokens\": [");
        flood(&mut c, &b"1, ".repeat(16 * 1024));
    });
    let t0 = Instant::now();
    let tok =
        perfgate::client::tokenize::ServerTokenizer::connect(&format!("http://127.0.0.1:{port}"))
            .unwrap();
    use perfgate::tokenizer::Tokenize;
    let err = tok.encode("hello").unwrap_err().to_string();
    assert!(err.contains("larger than 64 MiB"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

#[test]
fn a_trickled_models_answer_does_not_outlast_the_ready_check() {
    // /v1/models answers 200 and then one byte every 200 ms: each read is quick, the body
    // never ends. The ready check's deadline covers the body too.
    let (port, _) = serve(|mut c, _| {
        let _ = read_head(&mut c);
        let _ = c.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{");
        while c.write_all(b" ").is_ok() {
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    ready_check_ends_in_time(port, Duration::from_secs(60));
}

/// `perfgate run --ready-check-timeout-sec 3` against the server on `port` (the test's process
/// limit `limit`): it fails, says it was not ready after 3 s, and ends well within 12 s.
fn ready_check_ends_in_time(port: u16, limit: Duration) {
    let dir = tempfile::tempdir().unwrap();
    let tok = word_tokenizer_json(dir.path());
    let t0 = Instant::now();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_perfgate"))
        .args(["run", "--base-url", &format!("http://127.0.0.1:{port}")])
        .args(["--model", "m", "--ready-check-timeout-sec", "3"])
        .arg("--tokenizer")
        .arg(&tok)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_with_limit(child, limit, "perfgate run");
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("not ready after 3 s"), "{err}");
    assert!(took < Duration::from_secs(12), "{took:?}");
}
