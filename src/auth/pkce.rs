//! Randomness and PKCE (RFC 7636, S256 only): the verifier, its challenge, and `state`.

use crate::error::{Error, ErrorKind, Result};
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};

pub(crate) fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// `n` random bytes from the system generator, base64url without padding.
pub(crate) fn random_token(n: usize) -> Result<String> {
    let mut bytes = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| Error::new(ErrorKind::Internal, "the system random generator failed"))?;
    Ok(b64url(&bytes))
}

/// `BASE64URL(SHA256(verifier))`.
pub(crate) fn s256(verifier: &str) -> String {
    b64url(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref())
}

/// A PKCE pair. The verifier never leaves the client except in the token request.
pub(crate) struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    pub fn new() -> Result<Pkce> {
        // 32 bytes → 43 characters of the unreserved set, the RFC's recommendation.
        let verifier = random_token(32)?;
        let challenge = s256(&verifier);
        Ok(Pkce { verifier, challenge })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_long_and_distinct() {
        let (a, b) = (Pkce::new().unwrap(), Pkce::new().unwrap());
        assert_eq!(a.verifier.len(), 43);
        assert_ne!(a.verifier, b.verifier);
        assert!(a
            .verifier
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    }
}
