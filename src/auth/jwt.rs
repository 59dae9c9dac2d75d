//! `private_key_jwt` client authentication (RFC 7523 §2.2): a short-lived JWS signed with the
//! host's private key (PEM: PKCS#8 `PRIVATE KEY`, or PKCS#1 `RSA PRIVATE KEY`), with ring.

use super::pkce::{b64url, random_token};
use crate::error::{Error, Result};
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, RsaKeyPair};
use serde_json::json;
use std::time::{SystemTime, UNIX_EPOCH};

/// How long an assertion is valid.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// The JWS algorithms a key can sign with.
pub const ALGORITHMS: &[&str] = &[
    "ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA",
];

enum Key {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair, &'static dyn signature::RsaEncoding),
    Ed25519(Ed25519KeyPair),
}

/// A parsed private key and its algorithm. Never printed.
pub struct Signer {
    alg: &'static str,
    key: Key,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer({}, <private key>)", self.alg)
    }
}

pub(super) fn der_from_pem(pem: &str) -> Result<(String, Vec<u8>)> {
    let begin = pem
        .find("-----BEGIN ")
        .ok_or_else(|| Error::invalid("private_key_pem is not PEM (no -----BEGIN line)"))?;
    let rest = &pem[begin + 11..];
    let label_end = rest
        .find("-----")
        .ok_or_else(|| Error::invalid("private_key_pem has a malformed BEGIN line"))?;
    let label = rest[..label_end].to_string();
    let body_start = label_end + 5;
    let end = rest
        .find("-----END ")
        .ok_or_else(|| Error::invalid("private_key_pem has no -----END line"))?;
    if end < body_start {
        return Err(Error::invalid("private_key_pem is malformed"));
    }
    let body: String = rest[body_start..end].chars().filter(|c| !c.is_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| Error::invalid("private_key_pem does not hold valid base64"))?;
    Ok((label, der))
}

impl Signer {
    /// Parses `pem`; `alg` (one of [`ALGORITHMS`]) or, when `None`, whatever the key supports
    /// (P-256 → ES256, P-384 → ES384, Ed25519 → EdDSA, RSA → RS256).
    pub fn from_pem(pem: &str, alg: Option<&str>) -> Result<Signer> {
        let (label, der) = der_from_pem(pem)?;
        let rng = SystemRandom::new();
        let bad = |what: &str| Error::invalid(format!("private_key_pem is not {what} key"));
        match label.as_str() {
            "PRIVATE KEY" => {}
            "RSA PRIVATE KEY" => {
                let key = RsaKeyPair::from_der(&der).map_err(|_| bad("a usable RSA"))?;
                let alg = alg.unwrap_or("RS256");
                return Ok(Signer {
                    alg: rsa_alg(alg)?.0,
                    key: Key::Rsa(key, rsa_alg(alg)?.1),
                });
            }
            "EC PRIVATE KEY" => {
                return Err(Error::invalid(
                    "private_key_pem is a SEC1 EC key; convert it to PKCS#8 (openssl pkcs8 -topk8 -nocrypt)",
                ))
            }
            "ENCRYPTED PRIVATE KEY" => return Err(Error::invalid("private_key_pem is encrypted; give it unencrypted")),
            other => {
                return Err(Error::invalid(format!(
                    "private_key_pem holds a {other:?}, not a private key"
                )))
            }
        }
        let ec = |a: &'static signature::EcdsaSigningAlgorithm| EcdsaKeyPair::from_pkcs8(a, &der, &rng);
        match alg {
            Some("ES256") => Ok(Signer {
                alg: "ES256",
                key: Key::Ecdsa(ec(&signature::ECDSA_P256_SHA256_FIXED_SIGNING).map_err(|_| bad("a P-256"))?),
            }),
            Some("ES384") => Ok(Signer {
                alg: "ES384",
                key: Key::Ecdsa(ec(&signature::ECDSA_P384_SHA384_FIXED_SIGNING).map_err(|_| bad("a P-384"))?),
            }),
            Some("EdDSA") => Ok(Signer {
                alg: "EdDSA",
                key: Key::Ed25519(Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der).map_err(|_| bad("an Ed25519"))?),
            }),
            Some(a) => {
                let (alg, encoding) = rsa_alg(a)?;
                Ok(Signer {
                    alg,
                    key: Key::Rsa(RsaKeyPair::from_pkcs8(&der).map_err(|_| bad("an RSA"))?, encoding),
                })
            }
            None => {
                if let Ok(k) = ec(&signature::ECDSA_P256_SHA256_FIXED_SIGNING) {
                    Ok(Signer {
                        alg: "ES256",
                        key: Key::Ecdsa(k),
                    })
                } else if let Ok(k) = ec(&signature::ECDSA_P384_SHA384_FIXED_SIGNING) {
                    Ok(Signer {
                        alg: "ES384",
                        key: Key::Ecdsa(k),
                    })
                } else if let Ok(k) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der) {
                    Ok(Signer {
                        alg: "EdDSA",
                        key: Key::Ed25519(k),
                    })
                } else if let Ok(k) = RsaKeyPair::from_pkcs8(&der) {
                    Ok(Signer {
                        alg: "RS256",
                        key: Key::Rsa(k, &signature::RSA_PKCS1_SHA256),
                    })
                } else {
                    Err(Error::invalid(
                        "private_key_pem is not a P-256, P-384, Ed25519 or RSA PKCS#8 key",
                    ))
                }
            }
        }
    }

    pub fn algorithm(&self) -> &'static str {
        self.alg
    }

    /// A client assertion: `iss` = `sub` = the client id, `aud` = the authorization server's
    /// issuer, a random `jti`, five minutes of validity.
    pub fn assertion(&self, client_id: &str, audience: &str) -> Result<String> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let header = json!({"alg": self.alg, "typ": "JWT"});
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": random_token(16)?,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        });
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let signature = self.sign(input.as_bytes())?;
        Ok(format!("{input}.{}", b64url(&signature)))
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        let failed = || Error::new(crate::error::ErrorKind::Internal, "signing the client assertion failed");
        let rng = SystemRandom::new();
        match &self.key {
            Key::Ecdsa(k) => Ok(k.sign(&rng, message).map_err(|_| failed())?.as_ref().to_vec()),
            Key::Ed25519(k) => Ok(k.sign(message).as_ref().to_vec()),
            Key::Rsa(k, encoding) => {
                let mut out = vec![0u8; k.public().modulus_len()];
                k.sign(*encoding, &rng, message, &mut out).map_err(|_| failed())?;
                Ok(out)
            }
        }
    }

    /// The public key, for tests that verify assertions.
    #[cfg(test)]
    fn public_key(&self) -> Vec<u8> {
        use ring::signature::KeyPair;
        match &self.key {
            Key::Ecdsa(k) => k.public_key().as_ref().to_vec(),
            Key::Ed25519(k) => k.public_key().as_ref().to_vec(),
            Key::Rsa(k, _) => k.public_key().as_ref().to_vec(),
        }
    }
}

fn rsa_alg(alg: &str) -> Result<(&'static str, &'static dyn signature::RsaEncoding)> {
    Ok(match alg {
        "RS256" => ("RS256", &signature::RSA_PKCS1_SHA256),
        "RS384" => ("RS384", &signature::RSA_PKCS1_SHA384),
        "RS512" => ("RS512", &signature::RSA_PKCS1_SHA512),
        "PS256" => ("PS256", &signature::RSA_PSS_SHA256),
        "PS384" => ("PS384", &signature::RSA_PSS_SHA384),
        "PS512" => ("PS512", &signature::RSA_PSS_SHA512),
        other => {
            return Err(Error::invalid(format!(
                "signing_algorithm {other:?} is not one of {}",
                ALGORITHMS.join(", ")
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p256_pem() -> String {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let body = base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref());
        format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n")
    }

    #[test]
    fn es256_assertions_verify() {
        let pem = p256_pem();
        let signer = Signer::from_pem(&pem, None).unwrap();
        assert_eq!(signer.algorithm(), "ES256");
        let jwt = signer.assertion("client-1", "https://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[2])
            .unwrap();
        let key = signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, signer.public_key());
        key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        let claims: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(parts[1])
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        assert!(format!("{signer:?}").contains("<private key>"));
    }

    #[test]
    fn wrong_keys_and_algorithms_are_refused() {
        let pem = p256_pem();
        assert!(Signer::from_pem(&pem, Some("RS256")).is_err());
        assert!(Signer::from_pem(&pem, Some("HS256")).is_err());
        assert!(Signer::from_pem("not a key", None).is_err());
        assert!(Signer::from_pem(&pem.replace("PRIVATE KEY", "EC PRIVATE KEY"), None).is_err());
    }
}
