use super::*;

#[test]
fn plain_vllm_and_chat_chunks() {
    let f = fast(br#"{"id":"cmpl-1","object":"text_completion","created":1700000000,"model":"m","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}"#).unwrap();
    let c = f.choice.unwrap();
    assert_eq!(c.text.as_deref(), Some(" the"));
    assert!(matches!(c.text, Some(Cow::Borrowed(_))));
    assert_eq!((c.finish_reason, f.usage), (None, None));

    let f = fast(br#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi\n\"x\" \u00e9\ud83d\ude00"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"total_tokens":9,"completion_tokens":5}}"#).unwrap();
    let c = f.choice.unwrap();
    assert_eq!(c.content.as_deref(), Some("Hi\n\"x\" é😀"));
    assert_eq!(c.finish_reason.as_deref(), Some("stop"));
    assert_eq!(f.usage, Some((Some(5), Some(4))));

    let f = fast(br#" { "choices" : [ ] , "usage" : { "completion_tokens" : 7 } } "#).unwrap();
    assert_eq!((f.choice, f.usage), (None, Some((Some(7), None))));
}

#[test]
fn anything_unusual_is_left_to_serde() {
    for data in [
        &br#"{"error":{"message":"oom"}}"#[..],
        br#"{"object":"error","message":"bad"}"#,
        br#"{"choices":5}"#,
        br#"{"choices":[{"text":3}]}"#,
        br#"{"choices":[{"text":"a","text":"b"}]}"#,
        br#"{"usage":{"completion_tokens":3.0}}"#,
        br#"{"usage":{"completion_tokens":-1}}"#,
        br#"{"usage":{"completion_tokens":99999999999}}"#,
        br#"{"choices":[{"text": oops"#,
        br#"{"choices":[]} x"#,
        br#"{"a":[1,2,]}"#,
        br#"{"a":01}"#,
        br#"{"a":"\x"}"#,
        br#"{"\u0063hoices":[]}"#,
        b"{\"a\":\"\x01\"}",
        b"{\"a\":\"\xff\"}",
        br#"[1]"#,
        b"",
    ] {
        assert_eq!(fast(data), None, "{}", String::from_utf8_lossy(data));
    }
    let deep = format!("{{\"a\":{}1{}}}", "[".repeat(80), "]".repeat(80));
    assert_eq!(fast(deep.as_bytes()), None);
}

use proptest::prelude::*;

/// A JSON string literal of `s` (serde's escaping) or, for the odd case, with every
/// character `\u`-escaped (surrogate pairs included).
fn lit(s: &str, all_escaped: bool) -> String {
    if !all_escaped {
        return serde_json::to_string(s).unwrap();
    }
    let mut out = String::from("\"");
    for u in s.encode_utf16() {
        out.push_str(&format!("\\u{u:04x}"));
    }
    out.push('"');
    out
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,6}",
        "\\PC{0,6}",
        proptest::collection::vec(any::<char>(), 0..5).prop_map(|v| v.into_iter().collect()),
        Just("\"\\\n\t/\u{1}".to_string()),
    ]
}

fn opt_str() -> impl Strategy<Value = Option<(String, bool)>> {
    proptest::option::of((text(), proptest::bool::weighted(0.2)))
}

fn render(v: &Option<(String, bool)>) -> String {
    v.as_ref()
        .map_or("null".to_string(), |(s, esc)| lit(s, *esc))
}

fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("-12.5e+3".to_string()),
        Just("0".to_string()),
        Just(r#"{"a":[1,{"b":null},"x\"y"],"c":{}}"#.to_string()),
        Just("[]".to_string()),
        "[a-z]{0,8}".prop_map(|s| format!("\"{s}\"")),
    ]
}

#[derive(Debug, Clone)]
struct Gen {
    members: Vec<(String, String)>,
    ws: String,
}

/// A chunk of the shapes servers send, members in any order, extra members anywhere.
fn chunk_json() -> impl Strategy<Value = Gen> {
    let choice = (
        opt_str(),
        proptest::option::of((opt_str(), opt_str(), any::<bool>())),
        opt_str(),
        proptest::collection::vec(("[a-z_]{1,8}", junk()), 0..3),
    )
        .prop_map(|(text, delta, finish, extra)| {
            let mut m = vec![format!("\"index\":0")];
            if let Some(t) = &text {
                m.push(format!("\"text\":{}", lit(&t.0, t.1)));
            } else if extra.len() == 1 {
                m.push("\"text\":null".into());
            }
            if let Some((c, r, role)) = &delta {
                let mut d = Vec::new();
                if *role {
                    d.push("\"role\":\"assistant\"".to_string());
                }
                d.push(format!("\"content\":{}", render(c)));
                if r.is_some() {
                    d.push(format!("\"reasoning_content\":{}", render(r)));
                }
                m.push(format!("\"delta\":{{{}}}", d.join(",")));
            }
            m.push(format!("\"finish_reason\":{}", render(&finish)));
            for (k, v) in extra {
                if !["text", "delta", "finish_reason", "index"].contains(&k.as_str()) {
                    m.push(format!("\"x{k}\":{v}"));
                }
            }
            format!("{{{}}}", m.join(","))
        });
    let usage = proptest::option::of((
        proptest::option::of(0u32..5000),
        proptest::option::of(any::<u32>()),
    ));
    (
        proptest::collection::vec(choice, 0..3),
        proptest::option::of(usage),
        proptest::collection::vec(("[a-z]{1,6}", junk()), 0..4),
        "[ \t\n]{0,2}",
        any::<bool>(),
    )
        .prop_map(|(choices, usage, extra, ws, null_choices)| {
            let mut members = vec![
                ("id".to_string(), "\"cmpl-1\"".to_string()),
                ("object".to_string(), "\"text_completion\"".to_string()),
                ("created".to_string(), "1700000000".to_string()),
            ];
            let ch = if null_choices && choices.is_empty() {
                "null".to_string()
            } else {
                format!("[{}]", choices.join(","))
            };
            members.push(("choices".to_string(), ch));
            if let Some(u) = usage {
                let v = match u {
                    None => "null".to_string(),
                    Some((c, p)) => {
                        let mut f = vec!["\"total_tokens\":3".to_string()];
                        if let Some(c) = c {
                            f.push(format!("\"completion_tokens\":{c}"));
                        }
                        if let Some(p) = p {
                            f.push(format!("\"prompt_tokens\":{p}"));
                        }
                        format!("{{{}}}", f.join(","))
                    }
                };
                members.push(("usage".to_string(), v));
            }
            for (k, v) in extra {
                members.push((format!("y{k}"), v));
            }
            Gen { members, ws }
        })
        .prop_shuffle_members()
}

trait ShuffleMembers {
    fn prop_shuffle_members(self) -> BoxedStrategy<Gen>;
}
impl<S: Strategy<Value = Gen> + 'static> ShuffleMembers for S {
    fn prop_shuffle_members(self) -> BoxedStrategy<Gen> {
        self.prop_flat_map(|g| {
            let n = g.members.len();
            (Just(g), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
        })
        .prop_map(|(g, order)| Gen {
            members: order.into_iter().map(|i| g.members[i].clone()).collect(),
            ws: g.ws,
        })
        .boxed()
    }
}

fn to_json(g: &Gen) -> String {
    let w = &g.ws;
    let body: Vec<String> = g
        .members
        .iter()
        .map(|(k, v)| format!("{w}\"{k}\"{w}:{w}{v}{w}"))
        .collect();
    format!("{w}{{{}}}{w}", body.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Every chunk of the usual shapes is read by the fast path, with serde's answer.
    #[test]
    fn fast_path_reads_usual_chunks_as_serde_does(g in chunk_json()) {
        let json = to_json(&g);
        let fast = fast(json.as_bytes());
        let slow = parse_serde(json.as_bytes()).unwrap();
        prop_assert!(fast.is_some(), "fast path declined {json}");
        prop_assert_eq!(Parsed::Fields(fast.unwrap()), slow, "{}", json);
    }

    /// Cut or damaged chunks: when the fast path answers, serde accepts and agrees.
    #[test]
    fn fast_path_never_accepts_what_serde_refuses(
        g in chunk_json(),
        cut in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
    ) {
        let mut bytes = to_json(&g).into_bytes();
        for (at, b) in flips {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if !bytes.is_empty() && cut.index(4) == 0 {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Some(f) = fast(&bytes) {
            let slow = parse_serde(&bytes);
            prop_assert!(slow.is_ok(), "fast accepted what serde refuses: {}", String::from_utf8_lossy(&bytes));
            prop_assert_eq!(Parsed::Fields(f), slow.unwrap());
        }
    }
}

/// Token events as servers send them, the text at `{T}` (between its quotes).
const SKELETONS: &[&str] = &[
    r#"{"id":"cmpl-9","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"{T}","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
    r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"{T}"},"logprobs":null,"finish_reason":null}]}"#,
    r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"{T}"},"finish_reason":null}],"usage":null}"#,
    r#"{"choices":[{"text":"{T}","index":0,"logprobs":null,"finish_reason":null}],"created":1,"id":"x","model":"m","object":"text_completion"}"#,
    r#"{"choices":[{"text":"{T}","finish_reason":"stop"}]}"#,
    r#"{"choices":[{"text":"{T}"}],"usage":{"completion_tokens":3,"prompt_tokens":1}}"#,
    r#"{"choices":[{"delta":{"content":null,"reasoning_content":"{T}"}}]}"#,
];

fn piece() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        4 => "[a-z ]{1,4}".prop_map(String::into_bytes),
        1 => Just(b"\"".to_vec()),
        1 => Just(b"\\".to_vec()),
        1 => Just(b"\\n".to_vec()),
        1 => Just(b"\\u00e9".to_vec()),
        1 => Just(b"\\ud83d\\ude00".to_vec()),
        1 => Just(b"\n".to_vec()),
        1 => Just("é😀".as_bytes().to_vec()),
        1 => Just(b"\xff".to_vec()),
        1 => Just(b"\"}]}".to_vec()),
    ];
    proptest::collection::vec(atom, 0..5).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// A stream of events sharing a skeleton (the template path), texts of every kind
    /// (valid, escaped, or breaking the JSON): each answer is serde's.
    #[test]
    fn stream_parsing_agrees_with_serde_event_by_event(
        events in proptest::collection::vec((0..SKELETONS.len(), piece(), proptest::bool::weighted(0.8)), 1..8),
    ) {
        let mut stream = Stream::new();
        let mut last = 0;
        for (k, text, same) in events {
            let k = if same { last } else { k };
            last = k;
            let (pre, post) = SKELETONS[k].split_once("{T}").unwrap();
            let data = [pre.as_bytes(), &text, post.as_bytes()].concat();
            let ours = stream.parse(&data).map_err(|e| e.to_string());
            let reference = parse_serde(&data).map_err(|e| e.to_string());
            prop_assert_eq!(ours, reference, "{}", String::from_utf8_lossy(&data));
        }
    }
}
