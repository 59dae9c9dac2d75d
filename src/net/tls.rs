//! The library's HTTP clients' TLS and connection setup, one place for the MCP server's client,
//! the authorization flows' guarded client and one-off requests.

use crate::error::{Error, ErrorKind, Result};
use std::sync::Arc;
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

/// `https`: the client is for an https:// server (a missing trust store is then an error;
/// otherwise every handshake is refused saying why).
/// rustls with the `ring` provider, certificates checked by the platform verifier (the OS trust
/// store, so enterprise roots work), HTTP/1.1 with keep-alive and `TCP_NODELAY`, no redirects.
/// No retries either: reqwest's default policy retries only HTTP/2 refusals (not compiled in),
/// yet it copies every request (headers, URI, extensions) in case it has to; off, it does not.
pub(crate) fn client_builder(https: bool, connect_timeout: Duration) -> Result<reqwest::ClientBuilder> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> =
        match rustls_platform_verifier::Verifier::new(provider.clone()) {
            Ok(v) => Arc::new(v),
            // A plain-http server needs no trust store; keep working where none is installed.
            Err(e) if !https => Arc::new(NoTrustStore(e.to_string(), provider.clone())),
            Err(e) => {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("cannot set up TLS certificate verification: {e}"),
                ))
            }
        };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorKind::Internal, format!("TLS setup failed: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .tcp_nodelay(true)
        .connect_timeout(connect_timeout)
        .pool_idle_timeout(Duration::from_secs(90))
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never().max_retries_per_request(0)))
}

/// Refuses every certificate, saying why: used for plain-http servers on machines without a
/// trust store, where no handshake is expected at all.
#[derive(Debug)]
struct NoTrustStore(String, Arc<rustls::crypto::CryptoProvider>);

impl NoTrustStore {
    fn refusal(&self) -> rustls::Error {
        rustls::Error::General(format!("no TLS trust store is available: {}", self.0))
    }
}

impl rustls::client::danger::ServerCertVerifier for NoTrustStore {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Err(self.refusal())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Err(self.refusal())
    }

    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Err(self.refusal())
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.1.signature_verification_algorithms.supported_schemes()
    }
}
