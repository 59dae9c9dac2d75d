//! DPoP (RFC 9449, the MCP extension `io.modelcontextprotocol/auth/dpop`): sender-constrained
//! tokens. Opt-in (`oauth.dpop`); the client then holds one P-256 key (generated for the
//! client, or the host's PEM/JWK) and signs a fresh ES256 proof for every token request and
//! every request that carries a DPoP-bound token. The private key never leaves this module: no
//! accessor, no `Debug`, no serialisation.
//!
//! A proof is `{typ: dpop+jwt, alg: ES256, jwk: <public key>}` over `{jti, htm, htu, iat,
//! nonce?, ath?}`: `htu` without query or fragment, `ath` (resource requests only) the
//! base64url SHA-256 of the access token. Nonces (`DPoP-Nonce`) are kept per origin (the
//! authorization server's, the MCP server's) and replaced by any newer one.

use super::pkce::{b64url, random_token};
use crate::error::{Error, ErrorKind, Result};
use base64::Engine;
use reqwest::header::HeaderMap;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use url::Url;

/// The request header carrying a proof.
pub(crate) const PROOF_HEADER: &str = "dpop";
/// The response header carrying a server's nonce.
pub(crate) const NONCE_HEADER: &str = "dpop-nonce";
/// The OAuth / `WWW-Authenticate` error asking for a proof with the server's nonce.
pub(crate) const USE_NONCE: &str = "use_dpop_nonce";
/// Bound on a nonce kept (a server's nonce is short; this one is not believed).
const NONCE_MAX: usize = 1024;
/// Nonces remembered (origins this client talks to: a handful).
const NONCES_MAX: usize = 64;

/// Where the key comes from (`oauth.dpop`, `oauth.dpop_private_key_pem`,
/// `oauth.dpop_private_key_jwk`). The host's key material is checked when the configuration is
/// read and parsed again for each client. No `Debug` output of the key.
#[derive(Clone)]
pub enum DpopKeySource {
    /// A new key for each client.
    Generate,
    /// A PKCS#8 P-256 private key (DER).
    Pkcs8(Arc<Vec<u8>>),
    /// A P-256 JWK (raw bytes).
    Jwk {
        /// The private scalar.
        d: Arc<Vec<u8>>,
        /// The public point's x coordinate.
        x: Vec<u8>,
        /// The public point's y coordinate.
        y: Vec<u8>,
    },
}

impl std::fmt::Debug for DpopKeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DpopKeySource::Generate => "Generate",
            DpopKeySource::Pkcs8(_) => "Pkcs8(<private key>)",
            DpopKeySource::Jwk { .. } => "Jwk(<private key>)",
        })
    }
}

impl DpopKeySource {
    /// From PEM (`-----BEGIN PRIVATE KEY-----`, P-256 only: ES256).
    pub fn from_pem(pem: &str) -> Result<DpopKeySource> {
        let (label, der) = super::jwt::der_from_pem(pem)?;
        if label != "PRIVATE KEY" {
            return Err(Error::invalid(
                "oauth.dpop_private_key_pem must be an unencrypted PKCS#8 P-256 key (BEGIN PRIVATE KEY)",
            ));
        }
        let source = DpopKeySource::Pkcs8(Arc::new(der));
        source.key()?;
        Ok(source)
    }

    /// From a JWK (`{"kty":"EC","crv":"P-256","x","y","d"}`; a JSON object or its text).
    pub fn from_jwk(jwk: &Value) -> Result<DpopKeySource> {
        let parsed;
        let jwk = match jwk {
            Value::String(s) => {
                parsed = serde_json::from_str::<Value>(s)
                    .map_err(|_| Error::invalid("oauth.dpop_private_key_jwk is not JSON"))?;
                &parsed
            }
            other => other,
        };
        let field = |name: &str| jwk.get(name).and_then(Value::as_str);
        if field("kty") != Some("EC") || field("crv") != Some("P-256") {
            return Err(Error::invalid(
                "oauth.dpop_private_key_jwk must be a P-256 EC key (kty EC, crv P-256)",
            ));
        }
        let bytes = |name: &str| {
            field(name)
                .and_then(|v| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(v).ok())
                .filter(|b| b.len() == 32)
                .ok_or_else(|| Error::invalid(format!("oauth.dpop_private_key_jwk has no valid {name:?}")))
        };
        let source = DpopKeySource::Jwk {
            d: Arc::new(bytes("d")?),
            x: bytes("x")?,
            y: bytes("y")?,
        };
        source.key()?;
        Ok(source)
    }

    fn key(&self) -> Result<EcdsaKeyPair> {
        let rng = SystemRandom::new();
        let bad = || Error::invalid("the DPoP key is not a usable P-256 private key");
        match self {
            DpopKeySource::Generate => {
                let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                    .map_err(|_| Error::new(ErrorKind::Internal, "generating the DPoP key failed"))?;
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).map_err(|_| bad())
            }
            DpopKeySource::Pkcs8(der) => {
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng).map_err(|_| bad())
            }
            DpopKeySource::Jwk { d, x, y } => {
                let mut public = Vec::with_capacity(65);
                public.push(4);
                public.extend_from_slice(x);
                public.extend_from_slice(y);
                EcdsaKeyPair::from_private_key_and_public_key(&ECDSA_P256_SHA256_FIXED_SIGNING, d, &public, &rng)
                    .map_err(|_| bad())
            }
        }
    }
}

/// A client's DPoP key and the nonces servers gave it. No `Debug`: it holds the private key.
pub(crate) struct Dpop {
    key: EcdsaKeyPair,
    /// The public JWK (`kty`, `crv`, `x`, `y`), in the proof header.
    jwk: Value,
    /// Origin (ASCII serialisation) → the latest nonce it sent.
    nonces: Mutex<HashMap<String, String>>,
}

impl Dpop {
    pub fn new(source: &DpopKeySource) -> Result<Dpop> {
        let key = source.key()?;
        let public = key.public_key().as_ref();
        let (x, y) = (b64url(&public[1..33]), b64url(&public[33..65]));
        Ok(Dpop {
            key,
            jwk: json!({"kty": "EC", "crv": "P-256", "x": x, "y": y}),
            nonces: Mutex::default(),
        })
    }

    /// The key's RFC 7638 thumbprint (what a bound token's `cnf.jkt` names): the required
    /// members in lexicographic order, no whitespace.
    #[cfg(test)]
    pub fn thumbprint(&self) -> String {
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            self.jwk["x"].as_str().unwrap_or_default(),
            self.jwk["y"].as_str().unwrap_or_default()
        );
        b64url(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()).as_ref())
    }

    /// A fresh proof for `method` `url`; `access_token` for a resource request (`ath`).
    pub fn proof(&self, method: &str, url: &Url, access_token: Option<&str>) -> Result<String> {
        let mut htu = url.clone();
        htu.set_query(None);
        htu.set_fragment(None);
        let now = super::store::now_secs();
        let mut claims = json!({
            "jti": random_token(16)?,
            "htm": method.to_ascii_uppercase(),
            "htu": htu.as_str(),
            "iat": now,
        });
        if let Some(nonce) = self.nonces.lock().unwrap().get(&url.origin().ascii_serialization()) {
            claims["nonce"] = json!(nonce);
        }
        if let Some(token) = access_token {
            claims["ath"] = json!(b64url(
                ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref()
            ));
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let signature = self
            .key
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| Error::new(ErrorKind::Internal, "signing the DPoP proof failed"))?;
        Ok(format!("{input}.{}", b64url(signature.as_ref())))
    }

    /// Keeps the `DPoP-Nonce` of an answer from `url`'s origin. Returns whether it carried one.
    pub fn note_nonce(&self, url: &Url, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|n| !n.is_empty() && n.len() <= NONCE_MAX && n.bytes().all(|b| (0x21..0x7f).contains(&b)))
        else {
            return false;
        };
        let mut nonces = self.nonces.lock().unwrap();
        let origin = url.origin().ascii_serialization();
        if nonces.len() >= NONCES_MAX && !nonces.contains_key(&origin) {
            nonces.clear();
        }
        nonces.insert(origin, nonce.to_string());
        true
    }
}

impl super::AuthContext {
    /// Whether to send a refused request again at once: a 401 from the MCP server whose `DPoP`
    /// challenge says `use_dpop_nonce` and that carried a nonce (RFC 9449 §9), now kept. Any
    /// other answer's nonce is kept too. The caller resends once; re-authorizing would not help.
    pub fn dpop_nonce_retry(&self, url: &Url, status: u16, headers: &HeaderMap, challenge: &super::Challenge) -> bool {
        let Some(dpop) = &self.dpop else {
            return false;
        };
        let got = dpop.note_nonce(url, headers);
        got && status == 401 && challenge.dpop_error.as_deref() == Some(USE_NONCE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};

    fn decode(part: &str) -> Value {
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn proofs_verify_with_their_jwk_and_carry_the_claims() {
        let dpop = Dpop::new(&DpopKeySource::Generate).unwrap();
        let url = Url::parse("https://mcp.example/mcp?x=1#f").unwrap();
        let a = dpop.proof("post", &url, Some("tok")).unwrap();
        let b = dpop.proof("POST", &url, Some("tok")).unwrap();
        let parts: Vec<&str> = a.split('.').collect();
        let (header, claims) = (decode(parts[0]), decode(parts[1]));
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(
            claims["ath"],
            b64url(ring::digest::digest(&ring::digest::SHA256, b"tok").as_ref())
        );
        assert!(claims.get("nonce").is_none());
        assert_ne!(claims["jti"], decode(b.split('.').nth(1).unwrap())["jti"]);
        let jwk = &header["jwk"];
        let mut public = vec![4u8];
        for c in ["x", "y"] {
            public.extend(
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(jwk[c].as_str().unwrap())
                    .unwrap(),
            );
        }
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[2])
            .unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        // Nonces are per origin.
        let mut h = HeaderMap::new();
        h.insert(NONCE_HEADER, "n-1".parse().unwrap());
        assert!(dpop.note_nonce(&url, &h));
        let with = dpop.proof("GET", &url, None).unwrap();
        assert_eq!(decode(with.split('.').nth(1).unwrap())["nonce"], "n-1");
        let other = dpop
            .proof("GET", &Url::parse("https://as.example/token").unwrap(), None)
            .unwrap();
        assert!(decode(other.split('.').nth(1).unwrap()).get("nonce").is_none());
    }

    #[test]
    fn host_keys_round_trip_and_bad_ones_are_refused() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
        );
        let from_pem = Dpop::new(&DpopKeySource::from_pem(&pem).unwrap()).unwrap();
        let again = Dpop::new(&DpopKeySource::from_pem(&pem).unwrap()).unwrap();
        assert_eq!(from_pem.thumbprint(), again.thumbprint());
        assert!(format!("{:?}", DpopKeySource::from_pem(&pem).unwrap()).contains("<private key>"));
        assert!(DpopKeySource::from_pem("nope").is_err());
        // A host JWK (a P-256 key generated for this test): accepted as an object or as text,
        // proofs carry its public half, and a JWK whose d does not match x and y is refused.
        let jwk = json!({"kty": "EC", "crv": "P-256",
            "d": "ubaqBGhFWu1Pa25GNZfiOQ3wkbIoPFPRYucZryHkPnA",
            "x": "Se9bf_ANcYoBMXLcx54mp9-Lon5M9Mei-5CUI7lBjb4",
            "y": "R09SFWtADb-qcZZLPr8RDX-CKfj6lP4LydzRMzFFWPA"});
        let from_jwk = Dpop::new(&DpopKeySource::from_jwk(&jwk).unwrap()).unwrap();
        assert_eq!(from_jwk.jwk["x"], jwk["x"]);
        assert_eq!(from_jwk.jwk["y"], jwk["y"]);
        assert!(DpopKeySource::from_jwk(&json!(jwk.to_string())).is_ok());
        let mut mismatched = jwk.clone();
        mismatched["d"] = json!("jpsQnnGQmL-YBIffH1136cLYbE7aMdV0D2XrvFI0AgA");
        assert!(DpopKeySource::from_jwk(&mismatched).is_err());
        assert!(DpopKeySource::from_jwk(&json!({"kty": "EC", "crv": "P-384"})).is_err());
        assert!(
            DpopKeySource::from_jwk(&json!({"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "d": "AA"})).is_err()
        );
        // RFC 7638 §3.1's example is RSA; check the EC form against a hand-computed canonical JSON.
        let x = from_pem.jwk["x"].as_str().unwrap();
        let y = from_pem.jwk["y"].as_str().unwrap();
        let canonical = format!("{{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"{x}\",\"y\":\"{y}\"}}");
        assert_eq!(
            from_pem.thumbprint(),
            b64url(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()).as_ref())
        );
    }
}
