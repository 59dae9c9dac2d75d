//! The certificate verifier over a trust store of files (Linux and the other Unix systems without
//! an OS verification service), and what identifies that store for `net::tls`'s cache.
//!
//! The platform verifier (`rustls-platform-verifier`) reads the store there through
//! `rustls-native-certs`: the files `SSL_CERT_FILE` and `SSL_CERT_DIR` name when either is set,
//! else what OpenSSL's usual places hold (a bundle such as `/etc/ssl/certs/ca-certificates.crt`
//! and the directory `/etc/ssl/certs`, ~150 files of PEM, most of them the bundle's certificates
//! again). It parses all of them for every verifier, where OpenSSL itself reads the directory
//! lazily (by subject hash). [`verifier`] reads the same files and trusts the same roots, the
//! directories later: a certificate is first checked against the file's roots, and only when that
//! fails are the directories read (once) and the certificate checked against the whole store,
//! whose answer (success or the error) is the result. Whatever chains to a root of the file
//! chains to it in the whole store too, so each decision is the whole store's.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, RootCertStore};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

const CERT_FILE: &str = "SSL_CERT_FILE";
const CERT_DIR: &str = "SSL_CERT_DIR";

/// Where the store is read from, as `rustls-native-certs` decides: the variables when either
/// names something, else OpenSSL's usual places (`openssl-probe`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Paths {
    file: Option<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Paths {
    pub(crate) fn current() -> Paths {
        let file = std::env::var_os(CERT_FILE).map(PathBuf::from);
        let dirs: Vec<PathBuf> = std::env::var_os(CERT_DIR)
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if file.is_some() || !dirs.is_empty() {
            return Paths { file, dirs };
        }
        let probed = openssl_probe::probe();
        Paths {
            file: probed.cert_file,
            dirs: probed.cert_dir,
        }
    }
}

/// What a store's files were when read: the variables, and for the file and each directory its
/// device, inode, size, modification and change times (absent: `None`). Rewriting the bundle
/// (as `update-ca-certificates` does), adding, removing or renaming a directory's entries, or
/// changing a variable gives another identity; a file edited in place inside a directory, with no
/// entry added, removed or renamed, does not (the directory's own times stay).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    vars: (Option<OsString>, Option<OsString>),
    paths: Paths,
    stamps: Vec<Option<Stamp>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        modified: (m.mtime(), m.mtime_nsec()),
        changed: (m.ctime(), m.ctime_nsec()),
    })
}

impl Identity {
    pub(crate) fn paths(&self) -> &Paths {
        &self.paths
    }
}

/// The store's identity now (a few `stat` calls).
pub(crate) fn identity() -> Identity {
    let paths = Paths::current();
    let stamps = paths.file.iter().chain(paths.dirs.iter()).map(|p| stamp(p)).collect();
    Identity {
        vars: (std::env::var_os(CERT_FILE), std::env::var_os(CERT_DIR)),
        paths,
        stamps,
    }
}

/// A verifier of the store at `paths`; an error when the whole store has no usable root (the
/// platform verifier's condition).
pub(crate) fn verifier(paths: &Paths, provider: &Arc<CryptoProvider>) -> Result<Arc<dyn ServerCertVerifier>, String> {
    let file_roots = match &paths.file {
        Some(file) => sorted(rustls_native_certs::load_certs_from_paths(Some(file), None).certs),
        None => Vec::new(),
    };
    let store = Arc::new(Store {
        paths: paths.clone(),
        provider: provider.clone(),
        whole: OnceLock::new(),
    });
    let first = if paths.dirs.is_empty() {
        let whole = build(&file_roots, provider).map_err(|e| e.to_string())?;
        let _ = store.whole.set(Ok(whole.clone()));
        whole
    } else {
        match build(&file_roots, provider) {
            Ok(first) => first,
            // No root in the file: the directories decide at once (none at all is an error now).
            Err(_) => {
                let whole = store.read_whole().map_err(|e| e.to_string())?;
                let _ = store.whole.set(Ok(whole.clone()));
                whole
            }
        }
    };
    Ok(Arc::new(FilesFirst { first, store }))
}

fn sorted(mut certs: Vec<CertificateDer<'static>>) -> Vec<CertificateDer<'static>> {
    certs.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
    certs.dedup();
    certs
}

/// A verifier of `certs`; failing, as the platform verifier does, when none is usable.
fn build(
    certs: &[CertificateDer<'static>],
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, rustls::Error> {
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(certs.iter().cloned());
    if roots.is_empty() {
        return Err(rustls::Error::General(
            "No CA certificates were loaded from the system".into(),
        ));
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| rustls::Error::Other(OtherError(Arc::new(e))))
}

#[derive(Debug)]
struct Store {
    paths: Paths,
    provider: Arc<CryptoProvider>,
    /// The whole store's verifier (the file's roots and the directories'), read on first need.
    whole: OnceLock<Result<Arc<WebPkiServerVerifier>, rustls::Error>>,
}

impl Store {
    /// Reads the file and every directory (as `rustls-native-certs` does, the file's own entry
    /// in a directory read once).
    fn read_whole(&self) -> Result<Arc<WebPkiServerVerifier>, rustls::Error> {
        let mut certs = Vec::new();
        let mut file = self.paths.file.as_deref();
        for dir in &self.paths.dirs {
            certs.extend(rustls_native_certs::load_certs_from_paths(file.take(), Some(dir)).certs);
        }
        if let Some(file) = file {
            certs.extend(rustls_native_certs::load_certs_from_paths(Some(file), None).certs);
        }
        build(&sorted(certs), &self.provider)
    }

    fn whole(&self) -> Result<&Arc<WebPkiServerVerifier>, rustls::Error> {
        self.whole
            .get_or_init(|| self.read_whole())
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// The file's roots first, the whole store when they do not verify a certificate.
#[derive(Debug)]
struct FilesFirst {
    first: Arc<WebPkiServerVerifier>,
    store: Arc<Store>,
}

impl ServerCertVerifier for FilesFirst {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let first = self
            .first
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        let whole = match first {
            Ok(verified) => return Ok(verified),
            Err(e) if self.store.paths.dirs.is_empty() => return Err(eku(e)),
            Err(_) => self.store.whole()?,
        };
        whole
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map_err(eku)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.first.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.first.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.first.supported_verify_schemes()
    }
}

/// A certificate not allowed for server authentication reads as the platform verifier words it.
fn eku(err: rustls::Error) -> rustls::Error {
    match &err {
        rustls::Error::InvalidCertificate(CertificateError::InvalidPurpose)
        | rustls::Error::InvalidCertificate(CertificateError::InvalidPurposeContext { .. }) => {
            rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(ExtensionsError))))
        }
        _ => err,
    }
}

#[derive(Debug)]
struct ExtensionsError;

impl std::fmt::Display for ExtensionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("certificate had invalid extensions")
    }
}

impl std::error::Error for ExtensionsError {}
