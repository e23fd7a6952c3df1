use super::stream::StreamState;
use super::*;

fn state_run(chat: bool, events: &[&str]) -> (RequestRecord, bool, Option<Failure>) {
    let mut rec = RequestRecord::default();
    let t0 = Instant::now();
    let mut st = StreamState::new(&mut rec, t0, chat, Some(TextCap::of(4)));
    for (i, e) in events.iter().enumerate() {
        let (event, data) = match e.strip_prefix("error|") {
            Some(d) => (&b"error"[..], d.as_bytes()),
            None => (&b""[..], e.as_bytes()),
        };
        st.event(
            sse::Event { event, data },
            t0 + Duration::from_millis(10 * i as u64),
        );
    }
    let (done, failure) = (st.done, st.failure.take());
    (rec, done, failure)
}

#[test]
fn completions_stream_counts_text_chunks() {
    let (r, done, f) = state_run(
        false,
        &[
            r#"{"choices":[{"index":0,"text":"Hel","finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"text":"lo\n","finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":2}}"#,
            "[DONE]",
        ],
    );
    assert!(done && f.is_none());
    assert_eq!(r.text, "Hello\n");
    assert_eq!(r.chunks, 2);
    assert_eq!(r.first_token, Some(Duration::ZERO));
    assert_eq!(r.itl_ns, [10_000_000]);
    assert_eq!(r.end, Duration::from_millis(30));
    assert_eq!(
        (r.usage_output_tokens, r.usage_prompt_tokens),
        (Some(2), Some(4))
    );
    assert_eq!(r.finish_reason.as_deref(), Some("length"));
}

#[test]
fn chat_role_chunk_is_not_a_token() {
    let (r, done, _) = state_run(
        true,
        &[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
            r#"{"choices":[],"usage":{"completion_tokens":1}}"#,
            "[DONE]",
        ],
    );
    assert!(done);
    assert_eq!(r.first_token, Some(Duration::from_millis(10)));
    assert_eq!(r.chunks, 1);
    assert_eq!(r.usage_output_tokens, Some(1));
}

#[test]
fn in_band_errors_and_malformed_events_fail() {
    let (_, _, f) = state_run(
        false,
        &[r#"{"error":{"message":"out of memory","code":500}}"#],
    );
    assert_eq!(
        f.unwrap(),
        Failure {
            kind: FailureKind::ErrorEvent,
            message: "out of memory".into()
        }
    );
    let (_, _, f) = state_run(false, &[r#"{"object":"error","message":"bad","code":400}"#]);
    assert_eq!(f.unwrap().kind, FailureKind::ErrorEvent);
    let (_, _, f) = state_run(false, &["error|upstream died"]);
    assert_eq!(f.unwrap().message, "upstream died");
    let (_, _, f) = state_run(false, &[r#"{"choices":[{"text": oops"#]);
    assert_eq!(f.unwrap().kind, FailureKind::MalformedEvent);
    let (_, _, f) = state_run(false, &[r#"{"choices":5}"#]);
    assert_eq!(f.unwrap().kind, FailureKind::MalformedEvent);
}

#[test]
fn the_output_limit_follows_extra_body() {
    let of = |v: serde_json::Value| OutputLimit::of(v.as_object().unwrap());
    assert_eq!(of(serde_json::json!({})), OutputLimit::PerPrompt);
    assert_eq!(
        of(serde_json::json!({"max_tokens": 9})),
        OutputLimit::Fixed(9)
    );
    assert_eq!(
        of(serde_json::json!({"max_tokens": 9, "max_completion_tokens": 9})),
        OutputLimit::Fixed(9)
    );
    assert_eq!(
        of(serde_json::json!({"max_tokens": 9, "max_completion_tokens": 8})),
        OutputLimit::Unknown
    );
    assert_eq!(
        of(serde_json::json!({"max_tokens": null})),
        OutputLimit::Unknown
    );
    assert_eq!(chunk_cap(4), 21);
    assert_eq!(chunk_cap(u32::MAX), u32::MAX);
    // Past the cap, the stream is cut.
    let ev = r#"{"choices":[{"index":0,"text":"a","finish_reason":null}]}"#;
    let (r, _, f) = state_run(false, &[ev; 30]);
    assert_eq!(f.unwrap().kind, FailureKind::OverMaxTokens);
    assert_eq!(r.chunks, 22);
}

#[test]
fn body_asks_for_usage_and_ignore_eos() {
    let c = Client::new(ClientConfig {
        model: "m".into(),
        ignore_eos: true,
        endpoint: "/v1/chat/completions".into(),
        ..Default::default()
    })
    .unwrap();
    let p = Prompt {
        text: "hi".into(),
        input_len: 1,
        output_len: 7,
        ..Default::default()
    };
    let v: serde_json::Value = serde_json::from_slice(&c.body(&p)).unwrap();
    assert_eq!(v["messages"][0]["content"], "hi");
    assert_eq!(v["max_tokens"], 7);
    assert_eq!(v["stream"], true);
    assert_eq!(v["stream_options"]["include_usage"], true);
    assert_eq!(v["ignore_eos"], true);
    assert_eq!(c.target.path, "/v1/chat/completions");
    assert_eq!(c.target.host, "127.0.0.1:8000");
}
