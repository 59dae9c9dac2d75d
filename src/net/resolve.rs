//! The resolver of the library's HTTP clients (reqwest's `dns_resolver`): the host's fixed answers
//! (`resolve`), else the system's, and for the authorization client the address guard on every
//! answer before anything is dialled. hyper dials only the addresses returned here, so the check
//! and the connection share one answer (no DNS rebinding gap; docs/network-safety.md, "What is
//! fetched").

use super::policy::{normalize, Guard};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Host names pinned to addresses by the host (lowercase, no trailing dot).
pub type Overrides = HashMap<String, Vec<IpAddr>>;

/// The host's pinned names (`resolve` in the configuration), as the resolver reads them.
pub(crate) fn pinned(resolve: &[(String, Vec<IpAddr>)]) -> Arc<Overrides> {
    Arc::new(
        resolve
            .iter()
            .map(|(name, addrs)| (normalize(name), addrs.clone()))
            .collect(),
    )
}

#[derive(Clone)]
pub(crate) struct Resolver {
    overrides: Arc<Overrides>,
    guard: Option<Arc<Guard>>,
}

impl Resolver {
    pub fn new(overrides: Arc<Overrides>, guard: Option<Arc<Guard>>) -> Resolver {
        Resolver { overrides, guard }
    }
}

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = normalize(name.as_str());
        Box::pin(async move {
            let addrs: Vec<IpAddr> = match this.overrides.get(&host) {
                Some(fixed) => fixed.clone(),
                None => tokio::net::lookup_host((host.as_str(), 0))
                    .await?
                    .map(|a| a.ip())
                    .collect(),
            };
            if addrs.is_empty() {
                return Err(Box::new(std::io::Error::other(format!("{host} has no addresses"))) as _);
            }
            if let Some(guard) = &this.guard {
                // `?` boxes the `Refused` itself, so `redact::refusal` finds it in the chain.
                guard.check_answer(&host, &addrs)?;
            }
            Ok(Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0))) as Addrs)
        })
    }
}
