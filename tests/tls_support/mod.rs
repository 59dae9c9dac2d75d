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
