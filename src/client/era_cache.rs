//! The eras `auto` detected per HTTP origin (the specification: cache the era per origin), so a
//! second connect to a legacy origin skips the `server/discover` probe.

use crate::protocol::Era;
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Eras detected per HTTP origin, shared by the clients that hold a clone of it. Every
/// configuration starts with [`EraCache::shared`], the process's cache (so clients for one
/// origin learn from each other, as before this type existed); a host that wants clients
/// to probe independently gives them [`EraCache::new`], and [`EraCache::clear`] forgets
/// what was learnt. An entry is a shortcut, not a verdict: a connect whose cached era the
/// server refuses (upgraded in place) detects the era again.
#[derive(Clone, Default, Debug)]
pub struct EraCache(Arc<Mutex<HashMap<String, Era>>>);

static SHARED: Lazy<EraCache> = Lazy::new(EraCache::default);

impl EraCache {
    /// An empty cache of its own.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process's cache, the default of every [`crate::ClientConfig`].
    pub fn shared() -> Self {
        SHARED.clone()
    }

    /// The era detected for `origin` (`scheme://host:port`), if any.
    pub fn get(&self, origin: &str) -> Option<Era> {
        self.0.lock().unwrap().get(origin).copied()
    }

    /// Records what `auto` found for `origin`; `None` (a failed connect) forgets it, so the
    /// next connect probes.
    pub(crate) fn remember(&self, origin: String, era: Option<Era>) {
        let mut eras = self.0.lock().unwrap();
        match era {
            Some(era) => eras.insert(origin, era),
            None => eras.remove(&origin),
        };
    }

    /// Forgets every origin's era.
    pub fn clear(&self) {
        self.0.lock().unwrap().clear();
    }
}
