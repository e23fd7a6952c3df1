//! The measuring client's HTTP/1.1 against a scripted raw TCP server: every body framing a server
//! may choose, heads and chunks split at awkward places, connection reuse, connections the server
//! closed while idle, and responses that are not HTTP at all.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use perfgate::client::{Client, ClientConfig};
use perfgate::dataset::Prompt;
use perfgate::record::RequestRecord;

use crate::support::*;

/// What the server does with each request on a connection.
#[derive(Clone)]
struct Script {
    /// Response pieces, each written separately with a short pause (so reads split there).
    pieces: Vec<Vec<u8>>,
    /// Close the connection this long after the response (`None`: keep it open for more).
    close_after: Option<Duration>,
}

struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

/// A server on its own threads: one per connection, serving requests one after another.
fn serve(script: Script) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(AtomicUsize::new(0));
    let (a, r) = (accepted.clone(), requests.clone());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            a.fetch_add(1, Ordering::SeqCst);
            let (script, r) = (script.clone(), r.clone());
            std::thread::spawn(move || connection(conn, &script, &r));
        }
    });
    Server {
        port,
        accepted,
        requests,
    }
}

fn connection(mut conn: TcpStream, script: &Script, requests: &AtomicUsize) {
    conn.set_nodelay(true).unwrap();
    loop {
        if !read_request(&mut conn) {
            return;
        }
        requests.fetch_add(1, Ordering::SeqCst);
        for p in &script.pieces {
            if conn.write_all(p).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(3));
        }
        if let Some(d) = script.close_after {
            std::thread::sleep(d);
            return;
        }
    }
}

/// Read one request (head plus Content-Length body); false when the client closed.
fn read_request(conn: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => return false,
        }
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).is_ok()
}

fn event(text: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"text\":\"{text}\",\"finish_reason\":null}}]}}\n\n"
    )
}

/// Three tokens, usage, `[DONE]`.
fn sse_body() -> String {
    let mut s = String::new();
    for t in ["a", "b", "c"] {
        s.push_str(&event(t));
    }
    s.push_str(
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3}}\n\n",
    );
    s.push_str("data: [DONE]\n\n");
    s
}

fn chunked(pieces: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for p in pieces {
        let mut c = format!("{:x}\r\n", p.len()).into_bytes();
        c.extend_from_slice(p);
        c.extend_from_slice(b"\r\n");
        out.push(c);
    }
    out.push(b"0\r\n\r\n".to_vec());
    out
}

fn client(port: u16, keep_alive: bool) -> Client {
    Client::new(ClientConfig {
        base_url: format!("http://127.0.0.1:{port}"),
        model: "m".into(),
        keep_alive,
        request_timeout: Some(Duration::from_secs(10)),
        ..Default::default()
    })
    .unwrap()
}

fn prompt() -> Prompt {
    Prompt {
        text: "hello there".into(),
        input_len: 2,
        output_len: 3,
        ..Default::default()
    }
}

/// Send `n` requests one after another, `gap` apart.
fn send_seq(port: u16, keep_alive: bool, n: usize, gap: Duration) -> Vec<RequestRecord> {
    block_on(30, async move {
        let c = client(port, keep_alive);
        let t0 = Instant::now();
        let mut out = Vec::new();
        for i in 0..n {
            out.push(c.send(i as u32, &prompt(), t0, None).await);
            tokio::time::sleep(gap).await;
        }
        out
    })
}

fn assert_complete(r: &RequestRecord) {
    assert!(r.ok(), "{:?}", r.failure);
    assert_eq!(r.text, "abc");
    assert_eq!(r.chunks, 3);
    assert_eq!(r.usage_output_tokens, Some(3));
    assert_eq!(r.itl_ns.len(), 2);
}

#[test]
fn chunked_body_split_everywhere_and_connection_reused() {
    let body = sse_body();
    // The head arrives in two writes, the first chunk's size line in two, then one chunk per
    // body byte pair, so reads split heads, size lines, events and CRLFs.
    let mut pieces = vec![
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-".to_vec(),
        b"stream\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
    ];
    let pairs: Vec<&[u8]> = body.as_bytes().chunks(2).collect();
    let wire: Vec<u8> = chunked(&pairs).concat();
    pieces.extend(wire.chunks(7).map(|c| c.to_vec()));
    let server = serve(Script {
        pieces,
        close_after: None,
    });
    let recs = send_seq(server.port, true, 3, Duration::ZERO);
    recs.iter().for_each(assert_complete);
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        1,
        "one kept-alive connection"
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 3);
}

#[test]
fn content_length_and_close_delimited_bodies() {
    let body = sse_body();
    let with_length = serve(Script {
        pieces: vec![
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes(),
            body.as_bytes().to_vec(),
        ],
        close_after: None,
    });
    let recs = send_seq(with_length.port, true, 2, Duration::ZERO);
    recs.iter().for_each(assert_complete);
    assert_eq!(with_length.accepted.load(Ordering::SeqCst), 1);

    // HTTP/1.0 style: no length, the body ends when the server closes.
    let until_close = serve(Script {
        pieces: vec![
            b"HTTP/1.0 200 OK\r\n\r\n".to_vec(),
            body.as_bytes().to_vec(),
        ],
        close_after: Some(Duration::ZERO),
    });
    let recs = send_seq(until_close.port, true, 2, Duration::ZERO);
    recs.iter().for_each(assert_complete);
    assert_eq!(until_close.accepted.load(Ordering::SeqCst), 2, "not reused");
}

#[test]
fn a_connection_the_server_closed_while_idle_is_not_reused() {
    let body = sse_body();
    let server = serve(Script {
        pieces: vec![
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes(),
            body.into_bytes(),
        ],
        // The server keeps the connection open just a moment after each response (like an
        // idle keep-alive timeout), and says nothing about it.
        close_after: Some(Duration::from_millis(20)),
    });
    let recs = send_seq(server.port, true, 3, Duration::from_millis(150));
    recs.iter().for_each(assert_complete);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 3);
}

#[test]
fn connection_close_header_and_no_keep_alive_mean_new_connections() {
    let body = sse_body();
    let server = serve(Script {
        pieces: vec![
            format!(
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes(),
            body.clone().into_bytes(),
        ],
        close_after: Some(Duration::from_millis(500)),
    });
    let recs = send_seq(server.port, true, 2, Duration::ZERO);
    recs.iter().for_each(assert_complete);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);

    let server = serve(Script {
        pieces: vec![
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes(),
            body.into_bytes(),
        ],
        close_after: None,
    });
    let recs = send_seq(server.port, false, 2, Duration::ZERO);
    recs.iter().for_each(assert_complete);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn error_statuses_keep_their_body_and_garbage_is_a_connection_error() {
    let server = serve(Script {
        pieces: chunked(&[b"{\"error\":", b"\"model overloaded\"}"])
            .into_iter()
            .fold(
                vec![
                    b"HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n"
                        .to_vec(),
                ],
                |mut v, c| {
                    v.push(c);
                    v
                },
            ),
        close_after: None,
    });
    let r = &send_seq(server.port, true, 1, Duration::ZERO)[0];
    let f = r.failure.as_ref().expect("failed");
    assert_eq!(f.kind.key(), "http_503");
    assert_eq!(f.message, "HTTP 503: {\"error\":\"model overloaded\"}");

    let server = serve(Script {
        pieces: vec![b"SSH-2.0-OpenSSH_9.6\r\n\r\n".to_vec()],
        close_after: Some(Duration::ZERO),
    });
    let r = &send_seq(server.port, true, 1, Duration::ZERO)[0];
    let f = r.failure.as_ref().expect("failed");
    assert_eq!(f.kind.key(), "connection_error");
    assert!(f.message.contains("invalid HTTP response"), "{}", f.message);

    // The server closes before answering at all.
    let server = serve(Script {
        pieces: vec![],
        close_after: Some(Duration::ZERO),
    });
    let r = &send_seq(server.port, true, 1, Duration::ZERO)[0];
    let f = r.failure.as_ref().expect("failed");
    assert_eq!(f.kind.key(), "connection_error");
    assert!(f.message.contains("before answering"), "{}", f.message);
}

#[test]
fn a_body_that_stops_mid_chunk_is_a_reset_and_the_token_times_are_kept() {
    let mut wire = chunked(&[sse_body().as_bytes()]).concat();
    wire.truncate(5 + event("a").len() + 10); // size line, the first event, a bit of the next
    let server = serve(Script {
        pieces: vec![
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
            wire,
        ],
        close_after: Some(Duration::ZERO),
    });
    let r = &send_seq(server.port, true, 1, Duration::ZERO)[0];
    let f = r.failure.as_ref().expect("failed");
    assert_eq!(f.kind.key(), "connection_reset");
    assert!(
        r.first_token.is_some(),
        "the first event arrived before the cut"
    );
}
