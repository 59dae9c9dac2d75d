//! The trust store read as files (Linux: `SSL_CERT_FILE` and `SSL_CERT_DIR`, `net::trust_store`),
//! watched with inotify while clients connect over TLS to fronts presenting the test
//! certificates (`tests/vectors/tls`): the store is read once per process while it stays the
//! same and again when it changes, and a store's directory is read only when a certificate does
//! not chain to the file's roots, a certificate chaining to a root of the directory alone still
//! verifying. The two test CAs of `trusted-ca.pem` are split between a file and a directory.
//! Its own test binary, because it sets the process's variables; one test, run in phases.
#![cfg(target_os = "linux")]

mod common;
mod tls_support;

use common::{none, text, HttpFixture, TempPath};
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, HttpConfig, TransportConfig};
use serde_json::json;
use std::ffi::CString;
use std::net::IpAddr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use tls_support::{vector, TlsFront};

/// Opens and reads of what is inside a watched directory (or of a watched file), and opens of
/// the directory itself (listing it).
struct Watch {
    fd: libc::c_int,
}

impl Watch {
    fn new(paths: &[&Path]) -> Watch {
        // SAFETY: plain system calls on a descriptor this struct owns.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify_init1: {}", std::io::Error::last_os_error());
        for path in paths {
            let c = CString::new(path.as_os_str().as_bytes()).unwrap();
            let wd = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_OPEN | libc::IN_ACCESS) };
            assert!(
                wd >= 0,
                "inotify_add_watch {path:?}: {}",
                std::io::Error::last_os_error()
            );
        }
        Watch { fd }
    }

    /// Bytes of events since the last call (0: nothing was opened or read).
    fn events(&self) -> usize {
        let mut total = 0;
        let mut buf = [0u8; 4096];
        loop {
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return total;
            }
            total += n as usize;
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
    }
}

/// The PEM blocks of `trusted-ca.pem`: the CA of `trusted-server.pem`, then the one of
/// `wrong-name-server.pem` and `expired-server.pem`.
fn test_cas() -> (String, String) {
    let all = std::fs::read_to_string(vector("trusted-ca.pem")).unwrap();
    let end = "-----END CERTIFICATE-----";
    let first = all.find(end).unwrap() + end.len();
    (
        all[..first].trim().to_string() + "\n",
        all[first..].trim().to_string() + "\n",
    )
}

fn client(url: &str, pins: &[(&str, IpAddr)]) -> Client {
    let mut http = HttpConfig::new(url.to_string());
    http.resolve = pins.iter().map(|(name, ip)| (name.to_string(), vec![*ip])).collect();
    let mut config = ClientConfig::new(TransportConfig::Http(http));
    config.mode = ConnectMode::Modern;
    Client::new(config)
}

async fn connects_and_echoes(url: &str, pins: &[(&str, IpAddr)], word: &str) {
    let client = client(url, pins);
    client.connect().await.unwrap_or_else(|e| panic!("{url}: {e:?}"));
    let result = client
        .call_tool("echo", Some(json!({"text": word})), &none())
        .await
        .unwrap();
    assert_eq!(text(&result), word);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_is_read_once_while_unchanged_and_its_directory_only_when_needed() {
    let (trusted_ca, checks_ca) = test_cas();
    let server = HttpFixture::start(&["--era", "modern"]);
    let trusted = TlsFront::start("trusted", &server.1).await;
    // Valid for `elsewhere.test` only, which the client is pinned to reach at 127.0.0.1.
    let elsewhere = TlsFront::start("wrong-name", &server.1).await;
    let elsewhere_url = elsewhere.url.replacen("127.0.0.1", "elsewhere.test", 1);
    let pin = [("elsewhere.test", IpAddr::from([127, 0, 0, 1]))];

    // The file holds the trusted server's CA, the directory the other one.
    let file = TempPath::new("ca.pem");
    std::fs::write(file.path(), &trusted_ca).unwrap();
    let dir = TempPath::dir("certs");
    std::fs::write(dir.path().join("checks.pem"), &checks_ca).unwrap();
    std::env::set_var("SSL_CERT_FILE", file.path());
    std::env::set_var("SSL_CERT_DIR", dir.path());
    let watch_dir = Watch::new(&[dir.path()]);
    let watch_file = Watch::new(&[file.path()]);

    // A certificate of the file's CA: the file is read, the directory is not.
    connects_and_echoes(&trusted.url, &[], "file").await;
    assert!(watch_file.events() > 0, "the file was not read");
    assert_eq!(
        watch_dir.events(),
        0,
        "the directory was read for a certificate of the file's CA"
    );

    // A new client after the first closed: the same store, not read again.
    connects_and_echoes(&trusted.url, &[], "again").await;
    assert_eq!(watch_file.events(), 0, "an unchanged store was read again");
    assert_eq!(watch_dir.events(), 0);

    // A certificate of the directory's CA alone: the directory is read, and it verifies.
    connects_and_echoes(&elsewhere_url, &pin, "dir").await;
    assert!(watch_dir.events() > 0, "the directory was not read");
    // Read once: the next such client finds its roots in memory.
    connects_and_echoes(&elsewhere_url, &pin, "dir again").await;
    assert_eq!(watch_dir.events(), 0, "the directory was read again");

    // Still refused: a name the certificate is not valid for (the whole store decides), and
    // the other CA's server once the directory no longer holds its CA (a changed store).
    let err = client(&elsewhere.url, &[]).connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    assert!(
        err.message().contains("certificate not valid for name \"127.0.0.1\""),
        "{err:?}"
    );
    std::fs::rename(dir.path().join("checks.pem"), dir.path().join("checks.old")).unwrap();
    std::fs::write(dir.path().join("checks.old"), "not a certificate\n").unwrap();
    let err = client(&elsewhere_url, &pin).connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    assert!(err.message().to_lowercase().contains("certificate"), "{err:?}");
    assert!(watch_file.events() > 0, "a changed store was not read again");

    // A replaced file (a new inode, as a bundle's update writes it) is read again, and its
    // roots are the new ones: the trusted server's CA gone, the other's in.
    let next = TempPath::new("ca-next.pem");
    std::fs::write(next.path(), &checks_ca).unwrap();
    std::fs::rename(next.path(), file.path()).unwrap();
    let watch_file = Watch::new(&[file.path()]);
    connects_and_echoes(&elsewhere_url, &pin, "replaced").await;
    assert!(watch_file.events() > 0, "the replaced file was not read");
    let err = client(&trusted.url, &[]).connect().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    assert!(err.message().to_lowercase().contains("certificate"), "{err:?}");

    // The variables are part of the store: another directory is another store.
    let other = TempPath::dir("certs-other");
    std::fs::write(other.path().join("trusted.pem"), &trusted_ca).unwrap();
    std::env::set_var("SSL_CERT_DIR", other.path());
    connects_and_echoes(&trusted.url, &[], "other dir").await;

    // A directory alone (no file): read, its roots trusted.
    std::env::remove_var("SSL_CERT_FILE");
    let watch_other = Watch::new(&[other.path()]);
    connects_and_echoes(&trusted.url, &[], "dir alone").await;
    assert!(watch_other.events() > 0, "a store of a directory alone was not read");
}
