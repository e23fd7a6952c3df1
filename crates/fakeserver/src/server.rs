//! The running server: a thread of its own with a one-thread tokio runtime (so it shares no
//! scheduler with the code under test, and the benchmark can pin and prioritise it), the accept
//! loop, and what tests read back (truth, the last request).

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::net::TcpSocket;
use tokio::sync::oneshot;

use super::config::FakeConfig;
use super::routes::{serve_conn, SeenRequest, Shared};
use super::truth::{Recorder, Truth};

/// A running fake server. Dropping it stops it and joins its thread.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Start on 127.0.0.1, any free port, in a thread of its own.
    pub fn start_in_thread(cfg: FakeConfig) -> io::Result<FakeServer> {
        FakeServer::start_on(cfg, 0, || {})
    }

    /// Start on 127.0.0.1:`port` (0: any free port) in a thread of its own, which first runs
    /// `on_thread` (the client benchmark pins it to a core and raises its priority there).
    pub fn start_on(
        cfg: FakeConfig,
        port: u16,
        on_thread: impl FnOnce() + Send + 'static,
    ) -> io::Result<FakeServer> {
        let spec = cfg.spec_decode;
        let tok = match &cfg.tokenizer_json {
            Some(p) => {
                let file = if p.is_dir() {
                    p.join("tokenizer.json")
                } else {
                    p.clone()
                };
                Some(tokenizers::Tokenizer::from_file(&file).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{}: {e}", file.display()),
                    )
                })?)
            }
            None => None,
        };
        let shared = Arc::new(Shared {
            tok,
            cfg: cfg.sanitized(),
            truth: Recorder::new(spec),
            last: Mutex::new(None),
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, mut stop_rx) = oneshot::channel::<()>();
        let shared2 = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fakeserver".into())
            .spawn(move || {
                on_thread();
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                rt.block_on(async move {
                    let bound = (|| {
                        let sock = TcpSocket::new_v4()?;
                        sock.set_reuseaddr(true)?;
                        sock.bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
                        let listener = sock.listen(4096)?;
                        let addr = listener.local_addr()?;
                        Ok((listener, addr))
                    })();
                    let listener = match bound {
                        Ok((listener, addr)) => {
                            let _ = ready_tx.send(Ok(addr));
                            listener
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    loop {
                        tokio::select! {
                            _ = &mut stop_rx => break,
                            acc = listener.accept() => {
                                let Ok((sock, _)) = acc else { continue };
                                let _ = sock.set_nodelay(true);
                                perfgate_stamp::enable(&sock);
                                tokio::spawn(serve_conn(sock, shared2.clone()));
                            }
                        }
                    }
                });
                // Dropping the runtime cancels the connection tasks and closes their sockets.
                drop(rt);
            })?;
        let addr = ready_rx
            .recv()
            .map_err(|_| io::Error::other("fake server thread died"))??;
        Ok(FakeServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The last generation request received, if any.
    pub fn last_request(&self) -> Option<SeenRequest> {
        self.shared
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Generation requests received so far (counted when read, before any token).
    pub fn requests_arrived(&self) -> u64 {
        self.shared.truth.requests()
    }

    /// What the server measured so far.
    pub fn truth(&self) -> Truth {
        self.shared.truth.snapshot()
    }

    pub fn config(&self) -> &FakeConfig {
        &self.shared.cfg
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `perfgate fake-server`: serve on 127.0.0.1:`port` (0: any) until SIGINT or SIGTERM, calling
/// `ready` with the URL once listening; returns the server's truth at the end.
pub fn serve_until_signal(
    cfg: FakeConfig,
    port: u16,
    ready: impl FnOnce(&str),
) -> io::Result<Truth> {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        // Handlers first, so a signal right after `ready` is not fatal.
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let server = FakeServer::start_on(cfg, port, || {})?;
        ready(&server.url());
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        Ok(server.truth())
    })
}
