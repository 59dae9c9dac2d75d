//! A TLS endpoint on 127.0.0.1 in front of a plain-HTTP fixture, presenting one of the test
//! certificates (`tests/vectors/tls`), recording what each client hello offered and how each
//! handshake went, and able to drop every connection it holds; and a small CONNECT proxy.
#![allow(dead_code)]

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::HandshakeKind;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::LazyConfigAcceptor;

pub fn vector(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/tls")
        .join(name)
}

/// One completed handshake: the protocols the client offered by ALPN, and whether it resumed
/// an earlier session.
#[derive(Debug, Clone)]
pub struct Handshake {
    pub alpn: Vec<String>,
    pub resumed: bool,
}

#[derive(Default)]
struct Seen {
    handshakes: Vec<Handshake>,
    connections: Vec<JoinHandle<()>>,
}

pub struct TlsFront {
    /// The endpoint's URL: `https://127.0.0.1:<port>` and the backend's path.
    pub url: String,
    seen: Arc<Mutex<Seen>>,
}

impl TlsFront {
    /// Fronts the plain-HTTP `backend_url` with `who`'s certificate (`trusted`, `rogue`,
    /// `wrong-name`, `expired`).
    pub async fn start(who: &str, backend_url: &str) -> TlsFront {
        let cert = CertificateDer::from_pem_file(vector(&format!("{who}-server.pem"))).unwrap();
        let key = PrivateKeyDer::from_pem_file(vector(&format!("{who}-server-key.pem"))).unwrap();
        let mut config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![cert], key)
                .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let rest = backend_url.strip_prefix("http://").unwrap();
        let (backend, path) = rest.split_once('/').unwrap();
        let backend = backend.to_string();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let record = seen.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (config, backend, record2) = (config.clone(), backend.clone(), record.clone());
                let task = tokio::spawn(async move {
                    let Ok(start) = LazyConfigAcceptor::new(rustls::server::Acceptor::default(), tcp).await else {
                        return;
                    };
                    let alpn: Vec<String> = start
                        .client_hello()
                        .alpn()
                        .map(|list| list.map(|p| String::from_utf8_lossy(p).into_owned()).collect())
                        .unwrap_or_default();
                    // A refused handshake ends here: the client hangs up.
                    let Ok(mut tls) = start.into_stream(config).await else {
                        return;
                    };
                    let resumed = tls.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed);
                    record2.lock().unwrap().handshakes.push(Handshake { alpn, resumed });
                    let Ok(mut plain) = TcpStream::connect(&backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
                record.lock().unwrap().connections.push(task);
            }
        });
        TlsFront {
            url: format!("https://127.0.0.1:{port}/{path}"),
            seen,
        }
    }

    /// The handshakes completed so far, in order.
    pub fn handshakes(&self) -> Vec<Handshake> {
        self.seen.lock().unwrap().handshakes.clone()
    }

    /// Closes every connection accepted so far (the server going away between calls), returning
    /// once they are closed.
    pub async fn drop_connections(&self) {
        let tasks: Vec<_> = self.seen.lock().unwrap().connections.drain(..).collect();
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

/// A tunnel a proxy opened: its target and the `Proxy-Authorization` it was asked with.
pub type Tunnel = (String, Option<String>);

/// A CONNECT-only HTTP proxy on 127.0.0.1: every tunnel it opened is recorded with the
/// `Proxy-Authorization` it came with; with `credentials`, a tunnel asked without exactly
/// `Basic base64(credentials)` gets 407. Names resolve as the system does.
pub struct ConnectProxy {
    pub url: String,
    /// (target, Proxy-Authorization) per CONNECT answered 200, in order.
    tunnels: Arc<Mutex<Vec<Tunnel>>>,
}

impl ConnectProxy {
    pub async fn start(credentials: Option<&str>) -> ConnectProxy {
        use base64::Engine;
        let wanted = credentials.map(|c| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(c)));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let tunnels = Arc::new(Mutex::new(Vec::new()));
        let record = tunnels.clone();
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let (wanted, record) = (wanted.clone(), record.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        if client.read(&mut byte).await.unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0]);
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let mut lines = head.split("\r\n");
                    let request: Vec<&str> = lines.next().unwrap_or_default().split(' ').collect();
                    let auth = lines
                        .filter_map(|l| l.split_once(':'))
                        .find(|(name, _)| name.eq_ignore_ascii_case("proxy-authorization"))
                        .map(|(_, v)| v.trim().to_string());
                    if request.first() != Some(&"CONNECT") {
                        let _ = client
                            .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                            .await;
                        return;
                    }
                    if wanted.is_some() && auth != wanted {
                        let _ = client
                            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\ncontent-length: 0\r\n\r\n")
                            .await;
                        return;
                    }
                    let target = request.get(1).copied().unwrap_or_default().to_string();
                    let Ok(mut upstream) = TcpStream::connect(&target).await else {
                        let _ = client
                            .write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
                            .await;
                        return;
                    };
                    record.lock().unwrap().push((target, auth));
                    let _ = client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await;
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                });
            }
        });
        ConnectProxy {
            url: format!("http://127.0.0.1:{port}"),
            tunnels,
        }
    }

    /// The URL with `user:password@` (as a host would write it).
    pub fn url_with(&self, credentials: &str) -> String {
        self.url.replacen("http://", &format!("http://{credentials}@"), 1)
    }

    /// The tunnels opened so far: (target, Proxy-Authorization).
    pub fn tunnels(&self) -> Vec<Tunnel> {
        self.tunnels.lock().unwrap().clone()
    }
}

/// An HTTP/2 server over TLS (the trusted test certificate, `h2` and `http/1.1` offered by
/// ALPN) in front of the plain-HTTP/1.1 `backend_url`: each stream is forwarded as a request of
/// its own. It counts the connections it accepted and can end them: with a GOAWAY (streams
/// in flight finish) or at once (their calls lose the connection).
pub struct H2Front {
    pub url: String,
    connections: Arc<std::sync::atomic::AtomicUsize>,
    /// Streams forwarded so far.
    streams: Arc<std::sync::atomic::AtomicUsize>,
    goaway: tokio::sync::watch::Sender<u32>,
    kill: tokio::sync::watch::Sender<u32>,
}

impl H2Front {
    pub async fn start(backend_url: &str) -> H2Front {
        use hyper::server::conn::http2;
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let cert = CertificateDer::from_pem_file(vector("trusted-server.pem")).unwrap();
        let key = PrivateKeyDer::from_pem_file(vector("trusted-server-key.pem")).unwrap();
        let mut config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![cert], key)
                .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let rest = backend_url.strip_prefix("http://").unwrap();
        let (backend, path) = rest.split_once('/').unwrap();
        let backend = backend.to_string();
        let connections = Arc::new(AtomicUsize::new(0));
        let streams = Arc::new(AtomicUsize::new(0));
        let (goaway, goaway_rx) = tokio::sync::watch::channel(0u32);
        let (kill, kill_rx) = tokio::sync::watch::channel(0u32);
        let (counted, streamed) = (connections.clone(), streams.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                counted.fetch_add(1, SeqCst);
                let (acceptor, backend, streamed) = (acceptor.clone(), backend.clone(), streamed.clone());
                let (mut goaway_rx, mut kill_rx) = (goaway_rx.clone(), kill_rx.clone());
                goaway_rx.mark_unchanged();
                kill_rx.mark_unchanged();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let (backend, streamed) = (backend.clone(), streamed.clone());
                        async move {
                            streamed.fetch_add(1, SeqCst);
                            forward(&backend, request).await
                        }
                    });
                    let connection = http2::Builder::new(TokioExecutor::new())
                        .max_concurrent_streams(256)
                        .serve_connection(TokioIo::new(tls), service);
                    let mut connection = std::pin::pin!(connection);
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        _ = kill_rx.changed() => {}
                        _ = goaway_rx.changed() => {
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.await;
                        }
                    }
                });
            }
        });
        H2Front {
            url: format!("https://127.0.0.1:{port}/{path}"),
            connections,
            streams,
            goaway,
            kill,
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Streams (requests) received so far.
    pub fn streams(&self) -> usize {
        self.streams.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Sends a GOAWAY on every open connection: streams in flight finish, no new ones.
    pub fn goaway(&self) {
        self.goaway.send_modify(|n| *n += 1);
    }

    /// Drops every open connection at once, streams in flight with it.
    pub fn kill(&self) {
        self.kill.send_modify(|n| *n += 1);
    }
}

/// One request to the plain-HTTP/1.1 `backend`, on a connection of its own, its answer
/// streamed back (an SSE answer as it comes).
async fn forward(
    backend: &str,
    request: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<hyper::body::Incoming>, hyper::Error> {
    use hyper::client::conn::http1;
    use hyper_util::rt::TokioIo;
    let tcp = TcpStream::connect(backend).await.expect("the backend accepts");
    let (mut sender, connection) = http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(connection);
    let (mut parts, body) = request.into_parts();
    let target = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or("/".into());
    parts.uri = target.parse().unwrap();
    parts.version = hyper::Version::HTTP_11;
    parts.headers.insert(hyper::header::HOST, backend.parse().unwrap());
    sender.send_request(hyper::Request::from_parts(parts, body)).await
}
