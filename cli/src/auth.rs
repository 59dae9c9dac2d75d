//! OAuth for HTTP servers: tokens in the library's file token store (`--token-dir`), the
//! browser step of `login`, and `logout` forgetting what the store holds for a server.

use crate::input::open_browser;
use mcp_client::{AuthorizationRequest, FileTokenStore, HandlerError, StoreGuard, TokenStore};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// `$XDG_CONFIG_HOME/mcp-client/tokens`, else `~/.config/mcp-client/tokens`.
pub fn default_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("mcp-client").join("tokens")
}

/// The file store, noting each issuer it is asked about (so `logout` knows what to forget) and
/// whether a record was saved (so `login` knows a flow ran).
pub struct Store {
    files: FileTokenStore,
    pub issuers: Mutex<BTreeSet<String>>,
    pub saved: Mutex<bool>,
}

impl Store {
    pub fn new(dir: PathBuf) -> Arc<Store> {
        Arc::new(Store {
            files: FileTokenStore::new(dir),
            issuers: Default::default(),
            saved: Default::default(),
        })
    }

    /// Deletes every record this run touched; returns their issuers.
    pub async fn forget(&self) -> Vec<String> {
        let issuers: Vec<String> = self.issuers.lock().unwrap().iter().cloned().collect();
        for issuer in &issuers {
            self.files.save(issuer, None).await;
        }
        issuers
    }
}

impl TokenStore for Store {
    fn load(&self, issuer: &str) -> mcp_client::BoxFuture<'static, Option<Value>> {
        self.issuers.lock().unwrap().insert(issuer.to_string());
        self.files.load(issuer)
    }

    fn save(&self, issuer: &str, record: Option<Value>) -> mcp_client::BoxFuture<'static, ()> {
        self.issuers.lock().unwrap().insert(issuer.to_string());
        if record.is_some() {
            *self.saved.lock().unwrap() = true;
        }
        self.files.save(issuer, record)
    }

    fn lock(&self, issuer: &str) -> mcp_client::BoxFuture<'static, Option<StoreGuard>> {
        self.files.lock(issuer)
    }
}

/// The browser step: `login` opens the authorization URL (the library's loopback listener takes
/// the redirect); every other command refuses, so it never waits on a browser nobody opened.
pub async fn authorize(
    login: bool,
    server: String,
    request: AuthorizationRequest,
) -> Result<Option<String>, HandlerError> {
    if !login {
        return Err(HandlerError::new(format!(
            "{} asks for authorization: run `mcp-client login -- {server}` first",
            request.issuer
        )));
    }
    crate::ui::heading(&format!("Authorize at {}:", request.issuer));
    eprintln!("  {}", request.url);
    open_browser(&request.url);
    if request.loopback {
        eprintln!("  waiting for the browser to come back to {}", request.redirect_uri);
        return Ok(None);
    }
    let line =
        tokio::task::spawn_blocking(|| crate::prompt::Prompter::new().line("The address the browser ended on", None))
            .await
            .map_err(|e| HandlerError::new(e.to_string()))??;
    Ok(Some(line))
}
