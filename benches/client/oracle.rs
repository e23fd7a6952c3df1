//! An outside oracle for the client benchmark: a streaming completions server written here, on
//! purpose sharing no code with `perfgate_fakeserver` (a bug both sides share cannot hide), run on
//! one thread of its own core. It stamps each request when its first bytes are read, writes the
//! first token `ttft` later and the rest every `itl`, and keeps per request (arrival, first token
//! written). The first token's text names the request (`o17 `), so any client's per-request
//! output (generated text beside its TTFT) pairs with the server's own record of that request:
//! the error of a client is measured request by request, not as a difference of two percentiles.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perfgate::tokenizer::{HfTokenizer, Tokenize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The server's record of one generation request.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    pub arrival: Instant,
    pub first_token: Option<Instant>,
}

impl Served {
    /// The server's TTFT of this request, ms.
    pub fn ttft_ms(&self) -> Option<f64> {
        self.first_token
            .map(|f| f.duration_since(self.arrival).as_secs_f64() * 1e3)
    }
}

#[derive(Default)]
struct Book {
    next: u64,
    served: HashMap<u64, Served>,
}

pub struct Oracle {
    addr: SocketAddr,
    book: Arc<Mutex<Book>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Oracle {
    /// Start on a thread of its own; `on_thread` runs first on it (pinning, priority).
    /// `tokenizer`: answers `/tokenize` (vllm-rs checks its prompts' lengths against it); it is
    /// never on the path of a generation request.
    pub fn start(
        ttft: Duration,
        itl: Duration,
        tokenizer: Option<Arc<HfTokenizer>>,
        on_thread: impl FnOnce() + Send + 'static,
    ) -> io::Result<Oracle> {
        // A deep accept queue: a client that opens all its connections at once must not have
        // its SYNs dropped (and retried a second later) by the oracle's bookkeeping.
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        socket.set_reuse_address(true)?;
        socket.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())?;
        socket.listen(4096)?;
        socket.set_nonblocking(true)?;
        let std_listener: std::net::TcpListener = socket.into();
        let addr = std_listener.local_addr()?;
        let book = Arc::new(Mutex::new(Book::default()));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let b = book.clone();
        let thread = std::thread::spawn(move || {
            on_thread();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("oracle runtime");
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("oracle listener");
                let accept = async {
                    loop {
                        let Ok((sock, _)) = listener.accept().await else {
                            continue;
                        };
                        let _ = sock.set_nodelay(true);
                        perfgate_stamp::enable(&sock);
                        tokio::spawn(connection(sock, b.clone(), tokenizer.clone(), ttft, itl));
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = rx => {}
                }
            });
        });
        Ok(Oracle {
            addr,
            book,
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Generation requests seen so far.
    pub fn requests(&self) -> u64 {
        self.book.lock().unwrap().next
    }

    /// The server's record of request `id` (the number in its first token's text).
    pub fn served(&self, id: u64) -> Option<Served> {
        self.book.lock().unwrap().served.get(&id).copied()
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The request id that `text` (a client's generated text for one request) starts with.
pub fn id_of(text: &str) -> Option<u64> {
    text.trim_start()
        .strip_prefix('o')?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

async fn connection(
    mut sock: TcpStream,
    book: Arc<Mutex<Book>>,
    tokenizer: Option<Arc<HfTokenizer>>,
    ttft: Duration,
    itl: Duration,
) {
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut tmp = vec![0u8; 65536];
    loop {
        // The request's arrival: the kernel's receive time of its first bytes, so the time
        // this one thread spends writing other streams' tokens is not taken from its TTFT.
        let mut arrival = (!buf.is_empty()).then(Instant::now);
        let head_end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            match perfgate_stamp::read(&sock, &mut tmp).await {
                Ok((0, _)) | Err(_) => return,
                Ok((n, at)) => {
                    arrival.get_or_insert_with(|| at.unwrap_or_else(Instant::now));
                    buf.extend_from_slice(&tmp[..n]);
                }
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            match sock.read(&mut tmp).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&tmp[..n]),
            }
        }
        let body: Vec<u8> = buf[head_end..head_end + length].to_vec();
        buf.drain(..head_end + length);
        let path = head.split(' ').nth(1).unwrap_or("").to_string();
        let arrival = arrival.unwrap_or_else(Instant::now);
        let ok = if path.starts_with("/tokenize") {
            let answer = tokenize(tokenizer.as_deref(), &body);
            respond(&mut sock, "200 OK", "application/json", &answer).await
        } else if path.starts_with("/v1/models") {
            let models =
                r#"{"object":"list","data":[{"id":"bench","object":"model","owned_by":"oracle"}]}"#;
            respond(&mut sock, "200 OK", "application/json", models).await
        } else if path.starts_with("/v1/completions") || path.starts_with("/v1/chat/completions") {
            let chat = path.starts_with("/v1/chat");
            stream(&mut sock, &book, &body, chat, arrival, ttft, itl).await
        } else {
            respond(&mut sock, "200 OK", "application/json", "{}").await
        };
        if ok.is_err() {
            return;
        }
    }
}

/// vLLM's `/tokenize` answer for a `{"prompt": …}` body.
fn tokenize(tokenizer: Option<&HfTokenizer>, body: &[u8]) -> String {
    let req: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let prompt = req.get("prompt").and_then(|p| p.as_str()).unwrap_or("");
    let tokens = tokenizer
        .and_then(|t| t.encode(prompt).ok())
        .unwrap_or_default();
    serde_json::json!({"count": tokens.len(), "max_model_len": 32768, "tokens": tokens}).to_string()
}

async fn respond(sock: &mut TcpStream, status: &str, kind: &str, body: &str) -> io::Result<()> {
    let msg = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(msg.as_bytes()).await
}

/// One chunk of a chunked body holding one SSE event.
fn event(data: &str) -> Vec<u8> {
    let payload = format!("data: {data}\n\n");
    let mut out = format!("{:x}\r\n", payload.len()).into_bytes();
    out.extend_from_slice(payload.as_bytes());
    out.extend_from_slice(b"\r\n");
    out
}

fn token_event(chat: bool, text: &str, finish: Option<&str>) -> String {
    let finish = finish.map_or("null".to_string(), |f| format!("\"{f}\""));
    if chat {
        format!(
            r#"{{"id":"chatcmpl-o","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{{"index":0,"delta":{{"content":"{text}"}},"finish_reason":{finish}}}]}}"#
        )
    } else {
        format!(
            r#"{{"id":"cmpl-o","object":"text_completion","created":0,"model":"bench","choices":[{{"index":0,"text":"{text}","logprobs":null,"finish_reason":{finish}}}]}}"#
        )
    }
}

async fn stream(
    sock: &mut TcpStream,
    book: &Mutex<Book>,
    body: &[u8],
    chat: bool,
    arrival: Instant,
    ttft: Duration,
    itl: Duration,
) -> io::Result<()> {
    let req: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let n = req
        .get("max_tokens")
        .or_else(|| req.get("max_completion_tokens"))
        .and_then(|v| v.as_u64())
        .unwrap_or(16)
        .max(1);
    let id = {
        let mut b = book.lock().unwrap();
        let id = b.next;
        b.next += 1;
        b.served.insert(
            id,
            Served {
                arrival,
                first_token: None,
            },
        );
        id
    };
    sock.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    )
    .await?;
    let first_due = tokio::time::Instant::from_std(arrival + ttft);
    tokio::time::sleep_until(first_due).await;
    sock.write_all(&event(&token_event(chat, &format!("o{id} "), None)))
        .await?;
    let first = Instant::now();
    if let Some(s) = book.lock().unwrap().served.get_mut(&id) {
        s.first_token = Some(first);
    }
    for k in 1..n {
        tokio::time::sleep_until(tokio::time::Instant::from_std(first + itl * k as u32)).await;
        let finish = (k + 1 == n).then_some("length");
        sock.write_all(&event(&token_event(chat, "x ", finish)))
            .await?;
    }
    let prompt = 1;
    let usage = format!(
        r#"{{"id":"cmpl-o","object":"text_completion","created":0,"model":"bench","choices":[],"usage":{{"prompt_tokens":{prompt},"completion_tokens":{n},"total_tokens":{}}}}}"#,
        prompt + n
    );
    let mut tail = event(&usage);
    tail.extend_from_slice(&event("[DONE]"));
    tail.extend_from_slice(b"0\r\n\r\n");
    sock.write_all(&tail).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_read_from_the_first_token() {
        assert_eq!(super::id_of("o17 x x"), Some(17));
        assert_eq!(super::id_of(" o3 "), Some(3));
        assert_eq!(super::id_of("x o3"), None);
    }
}
