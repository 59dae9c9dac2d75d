//! A client's authorization state as the HTTP transport's [`Authorizer`]: bound to a
//! transport, it gets the flows' network access (`Io`: the transport's client for the MCP
//! server's origin, a guarded client for every other URL) and serves the transport's calls.

use super::{AuthContext, Io, OAuthConfig};
use crate::base::BoxFuture;
use crate::error::{Error, ErrorKind, Result};
use crate::net::policy::Guard;
use crate::net::redact::chain;
use crate::net::request::Request;
use crate::net::resolve::{pinned, Resolver};
use crate::net::tls;
use crate::transport::http::{Authorization, Authorizer, Challenge, HttpConfig, Link};
use std::sync::Arc;
use url::Url;

impl Authorizer for AuthContext {
    fn bind(self: Arc<Self>, link: Link<'_>) -> Result<Option<Box<dyn Authorization>>> {
        let Some(oauth) = self.oauth.as_ref().filter(|_| self.enabled()) else {
            return Ok(None);
        };
        let (guarded, guard) = guarded_client(link.cfg, link.url, oauth)?;
        let io = Io::new(link.client.clone(), link.url, guarded, guard, link.log);
        Ok(Some(Box::new(Bound { context: self, io })))
    }
}

/// The authorization flows' client for URLs the MCP server chose (docs/network-safety.md, "What is
/// fetched"): every DNS answer passes the guard before it is dialled, and no proxy is used (a proxy
/// would resolve the names itself, out of the guard's sight). Redirects are never followed (as
/// everywhere).
fn guarded_client(cfg: &HttpConfig, url: &Url, oauth: &OAuthConfig) -> Result<(reqwest::Client, Arc<Guard>)> {
    let guard = Guard::new(
        url,
        oauth.allow_http || cfg.allow_insecure_http,
        oauth.allow_private_networks,
        &oauth.allow_hosts,
        &oauth.deny_hosts,
    )
    .map(Arc::new)
    .map_err(|e| Error::invalid(format!("oauth.{e}")))?;
    let client = tls::client_builder(cfg.url.starts_with("https:"), cfg.connect_timeout)?
        .no_proxy()
        .dns_resolver(Resolver::new(pinned(&cfg.resolve), Some(guard.clone())))
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot create the HTTP client: {}", chain(&e))))?;
    Ok((client, guard))
}

/// The client's authorization bound to one transport.
struct Bound {
    context: Arc<AuthContext>,
    io: Io,
}

impl Authorization for Bound {
    fn attach<'a>(&'a self, request: &'a mut Request<'_>) -> BoxFuture<'a, Option<u64>> {
        Box::pin(async move {
            let (url, method) = (request.url(), request.method().clone());
            self.context
                .authorize_request(&self.io, &method, url, request.fields_mut())
                .await
        })
    }

    fn unauthorized<'a>(&'a self, challenge: &'a Challenge, used: Option<u64>) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.context.unauthorized(&self.io, challenge, used))
    }

    fn insufficient_scope<'a>(&'a self, challenge: &'a Challenge, used: Option<u64>) -> BoxFuture<'a, Result<bool>> {
        Box::pin(self.context.insufficient_scope(&self.io, challenge, used))
    }

    fn max_step_up(&self) -> u32 {
        self.context.max_step_up()
    }

    fn resend_now(&self, url: &Url, status: u16, headers: &reqwest::header::HeaderMap, challenge: &Challenge) -> bool {
        self.context.dpop_nonce_retry(url, status, headers, challenge)
    }
}
