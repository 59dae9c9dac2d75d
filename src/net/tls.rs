//! The library's HTTP clients' TLS and connection setup, one place for the MCP server's client,
//! the authorization flows' guarded client and one-off requests.

use crate::error::{Error, ErrorKind, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::DigitallySignedStruct;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// An HTTP client with this crate's TLS setup and no redirects, for one-off requests to `url`.
pub(crate) fn plain_client(url: &str, connect_timeout: Duration) -> Result<reqwest::Client> {
    client_builder(url.starts_with("https:"), connect_timeout)?
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot create the HTTP client: {}", super::redact::chain(&e)),
            )
        })
}

/// An HTTP client builder with this crate's TLS setup ([`config`]): HTTP/1.1 with keep-alive
/// and `TCP_NODELAY`, no redirects.
/// No retries either: reqwest's default policy retries only HTTP/2 refusals (not compiled in),
/// yet it copies every request (headers, URI, extensions) in case it has to; off, it does not.
pub(crate) fn client_builder(https: bool, connect_timeout: Duration) -> Result<reqwest::ClientBuilder> {
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(config(https)?)
        .tcp_nodelay(true)
        .connect_timeout(connect_timeout)
        .pool_idle_timeout(Duration::from_secs(90))
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never().max_retries_per_request(0)))
}

/// The TLS configuration of every client of the library (reqwest's and the direct connections
/// of `net::direct`): rustls with the `ring` provider, certificates checked by the platform
/// verifier (the OS trust store, so enterprise roots work; shared by the clients alive at once,
/// see [`platform_verifier`]), rustls's in-memory session store (a reconnect through the same
/// configuration resumes its session).
///
/// `https`: the client is for an https:// server (a missing trust store is then an error at
/// once). Otherwise the trust store is not even read unless a handshake needs it (a plain-http
/// client makes none, save through an https proxy), and then a missing one refuses the
/// handshake saying why.
pub(crate) fn config(https: bool) -> Result<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = if https {
        platform_verifier(&provider).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot set up TLS certificate verification: {e}"),
            )
        })?
    } else {
        Arc::new(OnFirstHandshake {
            provider: provider.clone(),
            verifier: OnceLock::new(),
        })
    };
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorKind::Internal, format!("TLS setup failed: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// The platform verifier, one per process for as long as the trust store stays the same:
/// reading and parsing the OS store costs milliseconds (the system's ~150 files of PEM) and
/// its roots ~110 KiB. Where the store is files (Linux, the BSDs: `net::trust_store`), each new
/// client checks that the variables naming them and the files' and directories' inodes, sizes
/// and times are unchanged (a few `stat` calls) and reads the store again otherwise, so a
/// long-running host sees roots added or removed between its connections as before (a file
/// edited in place inside a directory, its entries unchanged, is the one change not seen).
/// Elsewhere the verifier asks the OS for each certificate and keeps no roots: one serves
/// the process. Clients created at the same moment wait for one read rather than each making
/// its own.
fn platform_verifier(provider: &Arc<CryptoProvider>) -> std::result::Result<Arc<dyn ServerCertVerifier>, String> {
    static SHARED: Mutex<Option<(StoreIdentity, Arc<dyn ServerCertVerifier>)>> = Mutex::new(None);
    #[cfg(test)]
    tests::VERIFIER_REQUESTS.with(|n| n.set(n.get() + 1));
    let identity = store_identity();
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((seen, verifier)) = shared.as_ref() {
        if *seen == identity {
            return Ok(verifier.clone());
        }
    }
    let verifier = new_platform_verifier(&identity, provider)?;
    *shared = Some((identity, verifier.clone()));
    Ok(verifier)
}

#[cfg(all(unix, not(target_os = "android"), not(target_vendor = "apple")))]
type StoreIdentity = super::trust_store::Identity;
/// Nothing to compare where the verifier keeps no roots of its own.
#[cfg(not(all(unix, not(target_os = "android"), not(target_vendor = "apple"))))]
#[derive(PartialEq)]
struct StoreIdentity;

#[cfg(all(unix, not(target_os = "android"), not(target_vendor = "apple")))]
fn store_identity() -> StoreIdentity {
    super::trust_store::identity()
}
#[cfg(not(all(unix, not(target_os = "android"), not(target_vendor = "apple"))))]
fn store_identity() -> StoreIdentity {
    StoreIdentity
}

#[cfg(all(unix, not(target_os = "android"), not(target_vendor = "apple")))]
fn new_platform_verifier(
    identity: &StoreIdentity,
    provider: &Arc<CryptoProvider>,
) -> std::result::Result<Arc<dyn ServerCertVerifier>, String> {
    super::trust_store::verifier(identity.paths(), provider)
}
#[cfg(not(all(unix, not(target_os = "android"), not(target_vendor = "apple"))))]
fn new_platform_verifier(
    _: &StoreIdentity,
    provider: &Arc<CryptoProvider>,
) -> std::result::Result<Arc<dyn ServerCertVerifier>, String> {
    Ok(Arc::new(
        rustls_platform_verifier::Verifier::new(provider.clone()).map_err(|e| e.to_string())?,
    ))
}

/// A plain-http client's verifier: the platform one, fetched by the first handshake (none,
/// usually); without a trust store, every handshake is refused saying why.
#[derive(Debug)]
struct OnFirstHandshake {
    provider: Arc<CryptoProvider>,
    verifier: OnceLock<std::result::Result<Arc<dyn ServerCertVerifier>, String>>,
}

impl OnFirstHandshake {
    fn get(&self) -> std::result::Result<&Arc<dyn ServerCertVerifier>, rustls::Error> {
        self.verifier
            .get_or_init(|| platform_verifier(&self.provider))
            .as_ref()
            .map_err(|e| rustls::Error::General(format!("no TLS trust store is available: {e}")))
    }
}

impl ServerCertVerifier for OnFirstHandshake {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        self.get()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    /// The provider's schemes, which are the platform verifier's, without loading it.
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// `platform_verifier` calls made on this thread.
        pub(super) static VERIFIER_REQUESTS: Cell<usize> = const { Cell::new(0) };
    }

    fn requests() -> usize {
        VERIFIER_REQUESTS.with(Cell::get)
    }

    #[test]
    fn a_plain_http_client_leaves_the_trust_store_unread() {
        let before = requests();
        let client = client_builder(false, Duration::from_secs(1)).unwrap().build();
        assert!(client.is_ok());
        assert_eq!(
            requests(),
            before,
            "a plain-http client asked for the platform verifier"
        );
    }

    #[test]
    fn clients_alive_at_once_share_one_platform_verifier() {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let held = platform_verifier(&provider).expect("this machine has a trust store");
        let again = platform_verifier(&provider).unwrap();
        assert!(Arc::ptr_eq(&held, &again));
        let before = requests();
        let client = client_builder(true, Duration::from_secs(1)).unwrap().build();
        assert!(client.is_ok());
        assert_eq!(requests(), before + 1, "an https client takes its verifier at once");
    }
}
