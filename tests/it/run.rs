//! `perfgate run`'s measuring core against the in-repo fake server: its numbers must agree with
//! what the server itself measured.

use perfgate::client::load::{self, NoProgress};
use perfgate::record::{OutputTokenSource, RequestRate};
use perfgate_fakeserver::FakeConfig;

use crate::support::*;

#[test]
fn ttft_and_tpot_agree_with_the_server_truth() {
    let server = fake(FakeConfig {
        ttft: ms(50),
        itl: ms(10),
        ..Default::default()
    });
    // A debug build on a shared 2-core machine: 8 streams keep the CPU out of the picture (the
    // 64-stream, 640-prompt figure is measured with a release build, see docs/run.md).
    let mut cfg = config(&server.url());
    cfg.params.max_concurrency = Some(8);
    cfg.num_warmups = 8;
    let r = block_on(
        60,
        load::run_scenario(&cfg, prompts(32, 32, 48), &NoProgress),
    )
    .unwrap();
    let truth = server.truth();
    assert_eq!((r.completed, r.failed), (32, 0));
    // The cap the load ran under is the one the record names (one field, read by both).
    assert_eq!(r.params.max_concurrency, Some(8));
    assert!(r.scenario_id().ends_with("-c8"), "{}", r.scenario_id());
    assert!(truth.max_in_flight <= 8, "{truth:?}");
    assert_eq!(r.total_output_tokens, 32 * 48);
    assert_eq!(r.total_input_tokens, 32 * 32);
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Usage));
    let ttft = r.stats["mean_ttft_ms"];
    eprintln!(
        "TTFT client mean {ttft:.3} median {:.3} ms, server mean {:.3} median {:.3} ms",
        r.stats["median_ttft_ms"], truth.mean_ttft_ms, truth.median_ttft_ms
    );
    // The bound is 3 ms on the mean, met by the release build on the full workload
    // (figures in docs/run.md). This debug test shares two cores with the rest of the suite (and,
    // on a developer machine, with builds), where each of the two thread wake-ups outside the
    // server's own window (request in, first chunk out) can cost milliseconds; so it holds the
    // median to 8 ms and the mean to 10 ms: enough to catch a client that adds real latency.
    let median = r.stats["median_ttft_ms"];
    assert!(
        (median - truth.median_ttft_ms).abs() < 8.0,
        "client median TTFT {median} ms vs server {} ms",
        truth.median_ttft_ms
    );
    assert!(
        (ttft - truth.mean_ttft_ms).abs() < 10.0,
        "client TTFT {ttft} ms vs server {} ms",
        truth.mean_ttft_ms
    );
    let tpot = r.stats["mean_tpot_ms"];
    assert!((tpot - 10.0).abs() < 0.5, "TPOT {tpot} ms");
    let itl = r.stats["mean_itl_ms"];
    assert!((itl - 10.0).abs() < 0.5, "ITL {itl}");
    assert_eq!(truth.max_in_flight, 8);
    // vLLM's definition: requests active within the same 1 s bucket, so at least the concurrency.
    assert!(r.max_concurrent_requests.unwrap() >= 8);
    assert!(
        r.max_output_tokens_per_s.unwrap() > 500.0,
        "{:?}",
        r.max_output_tokens_per_s
    );
}

#[test]
fn chat_role_chunk_is_not_the_first_token() {
    let server = fake(FakeConfig {
        ttft: ms(60),
        itl: ms(2),
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.client.endpoint = "/v1/chat/completions".into();
    let r = block_on(30, load::run_scenario(&cfg, prompts(8, 4, 16), &NoProgress)).unwrap();
    assert_eq!((r.completed, r.failed, r.total_output_tokens), (8, 0, 128));
    // The role chunk leaves at once; counting it would put TTFT near zero.
    assert!(
        r.stats["mean_ttft_ms"] >= 59.0,
        "{}",
        r.stats["mean_ttft_ms"]
    );
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Usage));
}

#[test]
fn multi_token_chunks_give_per_chunk_itl_and_per_token_tpot() {
    let server = fake(FakeConfig {
        ttft: ms(20),
        itl: ms(5),
        tokens_per_chunk: 4,
        ..Default::default()
    });
    // 33 tokens in chunks of 4: 9 chunks, so 8 ITL gaps per request (one per chunk, as in
    // vLLM), while output tokens and TPOT count tokens.
    let mut cfg = config(&server.url());
    cfg.metrics.detailed = true;
    let out = block_on(30, load::run(&cfg, prompts(4, 4, 33), &NoProgress)).unwrap();
    let (r, d) = (out.result, out.detailed.unwrap());
    assert!(d.itls.iter().all(|g| g.len() == 8), "{:?}", d.itls);
    assert_eq!(d.output_lens, [33; 4]);
    let itl = r.stats["mean_itl_ms"];
    assert!((itl - 20.0).abs() < 5.0, "ITL {itl}");
    // TPOT is per token: about a quarter of the chunk gap.
    let tpot = r.stats["mean_tpot_ms"];
    assert!(tpot > 3.0 && tpot < 6.0, "TPOT {tpot}");
    assert_eq!(r.total_output_tokens, 4 * 33);
}

#[test]
fn without_usage_tokens_are_retokenized_or_counted_from_chunks() {
    let server = fake(FakeConfig {
        ttft: ms(5),
        itl: ms(1),
        tokens_per_chunk: 2,
        usage: false,
        ..Default::default()
    });
    let cfg = with_tokenizer(config(&server.url()));
    let r = block_on(30, load::run_scenario(&cfg, prompts(5, 4, 10), &NoProgress)).unwrap();
    assert_eq!(r.total_output_tokens, 50);
    assert_eq!(r.total_output_tokens_retokenized, Some(50));
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Retokenized));

    let cfg = config(&server.url());
    let r = block_on(30, load::run_scenario(&cfg, prompts(5, 4, 10), &NoProgress)).unwrap();
    // 5 chunks of 2 tokens each, and nothing better to count with.
    assert_eq!(r.total_output_tokens, 25);
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Chunks));
}

#[test]
fn retokenize_flag_reports_the_client_count_beside_usage() {
    let server = fake(FakeConfig {
        ttft: ms(5),
        itl: ms(1),
        ..Default::default()
    });
    let mut cfg = with_tokenizer(config(&server.url()));
    cfg.retokenize = true;
    let r = block_on(30, load::run_scenario(&cfg, prompts(3, 4, 7), &NoProgress)).unwrap();
    assert_eq!(r.total_output_tokens, 21);
    assert_eq!(r.total_output_tokens_retokenized, Some(21));
    assert_eq!(r.output_token_source, Some(OutputTokenSource::Usage));
}

#[test]
fn under_a_request_rate_latency_counts_from_the_scheduled_time() {
    // Each request takes ~80 ms but they are due every ~10 ms with one slot: the queue shows.
    let server = fake(FakeConfig {
        ttft: ms(50),
        itl: ms(10),
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.params.request_rate = RequestRate::PerSecond(100.0);
    cfg.params.max_concurrency = Some(1);
    cfg.seed = 3;
    let r = block_on(30, load::run_scenario(&cfg, prompts(8, 4, 4), &NoProgress)).unwrap();
    assert_eq!(r.completed, 8);
    assert!(
        r.stats["mean_ttft_ms"] > 150.0,
        "{}",
        r.stats["mean_ttft_ms"]
    );
    assert_eq!(server.truth().max_in_flight, 1);
}

#[test]
fn warmups_are_sent_but_not_counted_and_details_are_kept() {
    let server = fake(FakeConfig {
        ttft: ms(5),
        itl: ms(1),
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.num_warmups = 3;
    cfg.metrics.detailed = true;
    let out = block_on(30, load::run(&cfg, prompts(5, 4, 6), &NoProgress)).unwrap();
    assert_eq!(out.result.completed, 5);
    assert_eq!(server.truth().requests, 8);
    let d = out.detailed.expect("details");
    assert_eq!(d.output_lens, [6; 5]);
    assert!(d.itls.iter().all(|g| g.len() == 5));
    assert!(d.generated_texts.iter().all(|t| t == &" tok".repeat(6)));
    assert!(d.ttfts.iter().all(|&t| t > 0.004));
}

#[test]
fn a_time_budget_cycles_the_prompts_then_drains() {
    // ~40 ms a request (20 ms to the first token, 4 more 5 ms apart), 2 at a time, for 0.6 s:
    // about 30 requests from a pool of 3 prompts.
    let server = fake(FakeConfig {
        ttft: ms(20),
        itl: ms(5),
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.params.num_prompts = 3;
    cfg.params.max_concurrency = Some(2);
    cfg.params.duration_s = Some(0.6);
    let r = block_on(30, load::run_scenario(&cfg, prompts(3, 4, 5), &NoProgress)).unwrap();
    let issued = r.completed + r.failed;
    assert!(issued > 6, "{issued} requests: the pool was not cycled");
    // Drained, not cancelled: every request the server saw finished and was counted.
    assert_eq!(server.truth().requests, issued);
    assert_eq!(r.failed, 0);
    assert!(r.duration >= 0.6 && r.duration < 2.0, "{}", r.duration);
    assert_eq!(r.success_rate(), 1.0);
    assert!(!r.is_incomplete());
    assert!(
        r.scenario_id().contains("-n3-d0.6s-c2"),
        "{}",
        r.scenario_id()
    );
    // Fixed concurrency: the steady window is where 2 are in flight.
    let s = r.steady.expect("steady figures");
    assert_eq!(s.rule, "in_flight_cap");
    assert!(s.requests > 0 && s.requests < issued, "{s:?}");
    assert!(s.start_s >= 0.0 && s.end_s <= r.duration, "{s:?}");
    assert!((s.median_tpot_ms - 5.0).abs() < 3.0, "{s:?}");
}

#[test]
fn a_time_budget_under_a_rate_sends_the_schedule_up_to_it() {
    let server = fake(FakeConfig {
        ttft: ms(5),
        itl: ms(1),
        ..Default::default()
    });
    let mut cfg = config(&server.url());
    cfg.params.request_rate = RequestRate::PerSecond(40.0);
    cfg.params.duration_s = Some(0.5);
    cfg.seed = 11;
    let r = block_on(30, load::run_scenario(&cfg, prompts(4, 4, 2), &NoProgress)).unwrap();
    // The same seeded schedule as a counted run, cut at the budget.
    let due = load::schedule(200, RequestRate::PerSecond(40.0), 1.0, 11).unwrap();
    let want = due.iter().filter(|t| t.as_secs_f64() < 0.5).count() as u64;
    assert_eq!(r.completed + r.failed, want);
    assert_eq!(server.truth().requests, want);
    assert_eq!(r.steady.as_ref().map(|s| s.rule.as_str()), Some("mser5"));
}

#[test]
fn a_time_budget_is_checked_before_anything_is_sent() {
    let mut p = perfgate::record::ScenarioParams {
        dataset_name: "random".into(),
        num_prompts: 4,
        duration_s: Some(5.0),
        ..Default::default()
    };
    let err = load::check_scenario(&p).unwrap_err();
    assert!(err.contains("duration_s needs max_concurrency"), "{err}");
    p.max_concurrency = Some(2);
    assert_eq!(load::check_scenario(&p), Ok(()));
    p.duration_s = Some(f64::NAN);
    let err = load::check_scenario(&p).unwrap_err();
    assert!(
        err.starts_with("duration_s must be a finite number"),
        "{err}"
    );
}

mod cli {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;

    use crate::support::*;

    #[test]
    fn fake_server_subcommand_prints_its_url_and_serves() {
        let mut child = perfgate()
            .args(["fake-server", "--ttft-ms", "1", "--itl-ms", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("http://")
            .expect("URL printed")
            .to_string();
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(ms(5000))).unwrap();
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut resp = String::new();
        let _ = s.read_to_string(&mut resp);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        assert!(resp.contains("\"ok\""), "{resp}");
    }

    #[test]
    fn bad_flags_exit_2_with_a_clear_message() {
        let out = perfgate()
            .args([
                "run",
                "--model",
                "m",
                "--tokenizer",
                "x",
                "--percentile-metrics",
                "ttft,bogus",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--percentile-metrics") && err.contains("bogus"),
            "{err}"
        );

        let out = perfgate()
            .args([
                "run",
                "--model",
                "m",
                "--tokenizer",
                "/nonexistent/tok.json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("/nonexistent/tok.json"), "{err}");
    }

    #[test]
    fn run_with_a_time_budget_prints_it_and_the_steady_window() {
        let server = fake(perfgate_fakeserver::FakeConfig {
            ttft: ms(5),
            itl: ms(2),
            ..Default::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let tok = word_tokenizer_json(dir.path());
        let args = "--random-input-len 8 --random-output-len 6 --num-prompts 3 \
                    --max-concurrency 2 --duration-s 0.5";
        let out = perfgate()
            .args(["run", "--base-url", &server.url(), "--model", "fake-model"])
            .arg("--tokenizer")
            .arg(&tok)
            .args(args.split_whitespace())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        assert!(
            stdout.contains("Time budget (s):                         0.50"),
            "{stdout}"
        );
        let issued = stdout
            .lines()
            .find_map(|l| l.strip_prefix("Requests issued:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .expect("requests issued");
        assert!(issued > 3, "{stdout}");
        assert!(
            stdout.contains("Steady Window (in flight = cap)"),
            "{stdout}"
        );
        // A budget needs a cap or a rate: refused before anything is sent, naming the flag.
        let out = perfgate()
            .args(["run", "--base-url", &server.url(), "--model", "fake-model"])
            .args(["--num-prompts", "2", "--duration-s", "1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--duration-s needs max_concurrency"), "{err}");
    }

    #[test]
    fn run_writes_the_vllm_result_json() {
        let server = fake(perfgate_fakeserver::FakeConfig {
            ttft: ms(20),
            itl: ms(2),
            ..Default::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let tok = word_tokenizer_json(dir.path());
        let out = perfgate()
            .args([
                "run",
                "--base-url",
                &server.url(),
                "--model",
                "fake-model",
                "--tokenizer",
            ])
            .arg(&tok)
            .args([
                "--dataset-name",
                "random",
                "--random-input-len",
                "16",
                "--random-output-len",
                "32",
                "--num-prompts",
                "20",
                "--max-concurrency",
                "4",
                "--seed",
                "1",
                "--save-result",
                "--save-detailed",
                "--result-filename",
                "out.json",
                "--result-dir",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.starts_with("============ Serving Benchmark Result ============\n"),
            "{stdout}"
        );
        assert!(
            stdout.contains("Successful requests:                     20        \n"),
            "{stdout}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("out.json")).unwrap())
                .unwrap();
        assert_eq!(v["completed"], 20);
        assert_eq!(v["failed"], 0);
        assert_eq!(v["total_output_tokens"], 640);
        assert_eq!(v["total_input_tokens"], 320);
        assert_eq!(v["request_rate"], "inf");
        assert_eq!(v["max_concurrency"], 4);
        assert_eq!(v["range_convention"], "vllm");
        assert_eq!(v["output_token_source"], "usage");
        for k in [
            "date",
            "backend",
            "model_id",
            "tokenizer_id",
            "num_prompts",
            "burstiness",
            "duration",
            "request_throughput",
            "output_throughput",
            "total_token_throughput",
            "max_output_tokens_per_s",
            "max_concurrent_requests",
            "mean_ttft_ms",
            "median_tpot_ms",
            "std_itl_ms",
            "p99_ttft_ms",
            "seed",
            "perfgate_version",
        ] {
            assert!(v.get(k).is_some(), "missing {k}: {v}");
        }
        assert_eq!(v["output_lens"].as_array().unwrap().len(), 20);
        assert_eq!(v["itls"][0].as_array().unwrap().len(), 31);
    }
}

/// The fake server's `/tokenize` answers with a configured `tokenizer.json`'s ids (as an engine
/// does; clients such as vllm-rs check their prompts against it), else one id per word; a
/// tokenizer file that cannot be read stops the server's start with its path.
#[test]
fn fake_tokenize_uses_a_configured_tokenizer() {
    use perfgate::tokenizer::Tokenize;
    use perfgate_fakeserver::{FakeApi, FakeServer};
    let dir = tempfile::tempdir().unwrap();
    let path = word_tokenizer_json(dir.path());
    for api in [FakeApi::Vllm, FakeApi::LlamaCpp] {
        let server = fake(FakeConfig {
            api,
            tokenizer_json: Some(path.clone()),
            ..FakeConfig::default()
        });
        let tok = perfgate::client::tokenize::ServerTokenizer::connect(&server.url()).unwrap();
        // The word tokenizer's ids: tok 0, alpha 1, beta 2.
        assert_eq!(
            tok.encode("alpha beta alpha").unwrap(),
            [1, 2, 1],
            "{api:?}"
        );
    }
    let plain = fake(FakeConfig {
        api: FakeApi::Vllm,
        ..FakeConfig::default()
    });
    let tok = perfgate::client::tokenize::ServerTokenizer::connect(&plain.url()).unwrap();
    assert_ne!(tok.encode("alpha beta alpha").unwrap(), [1, 2, 1]);
    let bad = FakeServer::start_in_thread(FakeConfig {
        tokenizer_json: Some(dir.path().join("missing.json")),
        ..FakeConfig::default()
    });
    let e = bad
        .err()
        .expect("a missing tokenizer stops the start")
        .to_string();
    assert!(e.contains("missing.json"), "{e}");
}
