//! JWTs the host supplies for the assertion grants: the workload's JWT (workload identity
//! federation, `jwt_bearer`) and the user's identity assertion (enterprise-managed
//! authorization). Each comes from the configuration (the JWT itself, or a file re-read before
//! every token request, as Kubernetes rotates projected tokens), else from the host's
//! [`AssertionProvider`], asked each time. The JWTs are opaque here, never logged and never in an
//! error.

use crate::base::HandlerError;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::BoxFuture;
use crate::untrusted::shown;
use std::future::Future;
use std::path::PathBuf;

/// Bound on a JWT read from a file or a host.
const ASSERTION_MAX: usize = 64 * 1024;

/// Which JWT a grant needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssertionKind {
    /// The workload's own JWT (a Kubernetes service-account token, a SPIFFE JWT-SVID, a cloud
    /// metadata token), sent as the `assertion` of the JWT-bearer grant.
    WorkloadJwt,
    /// The signed-in user's ID token from the enterprise identity provider, exchanged there for
    /// an identity assertion authorization grant.
    IdToken,
}

impl AssertionKind {
    /// The name the C ABI and the bindings use ("workload_jwt", "id_token").
    pub fn as_str(self) -> &'static str {
        match self {
            AssertionKind::WorkloadJwt => "workload_jwt",
            AssertionKind::IdToken => "id_token",
        }
    }
}

/// What the host is asked for.
#[derive(Debug, Clone)]
pub struct AssertionRequest {
    /// Which JWT is wanted.
    pub kind: AssertionKind,
    /// The authorization server (or identity provider) it is for.
    pub audience: String,
}

/// The host's source of assertions, asked before each token request that needs one. An error
/// ends the flow.
pub trait AssertionProvider: Send + Sync + 'static {
    /// The JWT for `request` (read fresh: platform tokens rotate).
    fn assertion(&self, request: AssertionRequest) -> BoxFuture<'static, Result<String, HandlerError>>;
}

impl<F, Fut> AssertionProvider for F
where
    F: Fn(AssertionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, HandlerError>> + Send + 'static,
{
    fn assertion(&self, request: AssertionRequest) -> BoxFuture<'static, Result<String, HandlerError>> {
        Box::pin(self(request))
    }
}

/// Where the configuration says a JWT is. No `Debug` of the JWT itself.
#[derive(Clone)]
pub enum AssertionSource {
    /// The JWT itself (short-lived processes, tests).
    Value(String),
    /// A file holding it, read again before every token request.
    File(PathBuf),
}

impl std::fmt::Debug for AssertionSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssertionSource::Value(_) => f.write_str("Value(<redacted>)"),
            AssertionSource::File(p) => write!(f, "File({p:?})"),
        }
    }
}

/// A JWT's characters: three base64url parts (never checked further: it is opaque here).
fn well_formed(jwt: &str) -> bool {
    jwt.split('.').count() == 3
        && jwt
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.' || b == b'=')
}

/// Reads the JWT of `kind`: from `configured`, else from `host`.
pub(crate) async fn read(
    kind: AssertionKind,
    configured: Option<&AssertionSource>,
    host: Option<std::sync::Arc<dyn AssertionProvider>>,
    audience: &str,
) -> Result<String> {
    let what = kind.as_str();
    let jwt = match (configured, host) {
        (Some(AssertionSource::Value(v)), _) => v.clone(),
        (Some(AssertionSource::File(path)), _) => {
            // A small file, read off the runtime's threads; at most one byte past the bound.
            let p = path.clone();
            let bytes = tokio::task::spawn_blocking(move || {
                use std::io::Read;
                let mut bytes = Vec::new();
                std::fs::File::open(&p)?
                    .take(ASSERTION_MAX as u64 + 1)
                    .read_to_end(&mut bytes)?;
                Ok::<_, std::io::Error>(bytes)
            })
            .await
            .map_err(|_| Error::new(ErrorKind::Internal, format!("reading the {what} file failed")))?
            .map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("reading the {what} file {} failed: {e}", shown(&path.to_string_lossy())),
                )
            })?;
            if bytes.len() > ASSERTION_MAX {
                return Err(Error::auth(format!(
                    "the {what} file is larger than {ASSERTION_MAX} bytes"
                )));
            }
            String::from_utf8(bytes)
                .map_err(|_| Error::auth(format!("the {what} file is not UTF-8")))?
                .trim()
                .to_string()
        }
        (None, Some(host)) => host
            .assertion(AssertionRequest {
                kind,
                audience: audience.to_string(),
            })
            .await
            .map_err(|e| Error::auth(format!("the host gave no {what}: {}", shown(&e.message))))?,
        (None, None) => {
            return Err(Error::auth(format!(
                "no {what}: configure oauth.{what} or oauth.{what}_file, or register an assertion provider"
            )))
        }
    };
    if jwt.len() > ASSERTION_MAX || !well_formed(&jwt) {
        return Err(Error::auth(format!("the {what} is not a JWT")));
    }
    Ok(jwt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn files_are_read_each_time_and_garbage_is_refused() {
        let dir = std::env::temp_dir().join(format!("mcp-assertion-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        let source = AssertionSource::File(path.clone());
        std::fs::write(&path, "a.b.c\n").unwrap();
        assert_eq!(
            read(AssertionKind::WorkloadJwt, Some(&source), None, "x")
                .await
                .unwrap(),
            "a.b.c"
        );
        std::fs::write(&path, "d.e.f").unwrap(); // rotated
        assert_eq!(
            read(AssertionKind::WorkloadJwt, Some(&source), None, "x")
                .await
                .unwrap(),
            "d.e.f"
        );
        std::fs::write(&path, "not a jwt").unwrap();
        let e = read(AssertionKind::WorkloadJwt, Some(&source), None, "x")
            .await
            .unwrap_err();
        assert!(!e.message().contains("not a jwt"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(read(AssertionKind::IdToken, None, None, "x").await.is_err());
        assert!(format!("{:?}", AssertionSource::Value("s.e.cret".into())).contains("redacted"));
    }
}
