//! One refresh at a time: rotating refresh tokens are single-use, so concurrent requests whose
//! token expired (known to the client, or only to the server: 401s) share one refresh, and two
//! clients sharing a locking token store never spend the same refresh token.

mod auth_support;

use auth_support::http_support::within;
use auth_support::*;
use mcp_client::BoxFuture;
use mcp_client::{Client, RequestOptions};
use mcp_client::{StoreGuard, TokenStore};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);
const CALLS: usize = 64;

fn refreshes(w: &World) -> Vec<HashMap<String, String>> {
    w.token_requests()
        .into_iter()
        .filter(|t| t["grant_type"] == "refresh_token")
        .collect()
}

/// `CALLS` concurrent `tools/call`s; every one must succeed.
async fn storm(client: &Client) {
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..CALLS {
        let c = client.clone();
        calls.spawn(async move { c.call_tool("test-tool", None, &RequestOptions::default()).await });
    }
    while let Some(done) = within(LIMIT, calls.join_next()).await {
        done.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_with_an_expired_token_share_one_refresh() {
    // The first token expires at once (the client knows), and the server forgets it too.
    let w = World::start(Knobs {
        refresh: true,
        expires_in: 0,
        ..Knobs::default()
    })
    .await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback"}));
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    w.knobs(|k| k.expires_in = 3600);
    w.revoke_access_tokens();
    let before = refreshes(&w).len();
    storm(&client).await;
    let after = refreshes(&w);
    assert_eq!(after.len() - before, 1, "one refresh for {CALLS} calls");
    assert_eq!(w.authorizations().len(), 1);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_401s_share_one_refresh() {
    // The client believes its token valid; the server refuses it: 64 401s, one refresh.
    let w = World::start(Knobs {
        refresh: true,
        ..Knobs::default()
    })
    .await;
    let client = w.client(json!({"redirect_uri": "http://localhost:3000/callback"}));
    fetching_handler(&client);
    within(LIMIT, client.connect()).await.unwrap();
    w.revoke_access_tokens();
    let before = refreshes(&w).len();
    storm(&client).await;
    assert_eq!(refreshes(&w).len() - before, 1, "one refresh for {CALLS} 401s");
    assert_eq!(w.authorizations().len(), 1);
    client.close().await;
}

/// A shared store with a lock per issuer, as a store shared by processes would take a file
/// lock. Counts how often the lock is taken.
#[derive(Default)]
struct LockingStore {
    records: Mutex<HashMap<String, Value>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    taken: Mutex<usize>,
}

impl TokenStore for LockingStore {
    fn load(&self, issuer: &str) -> BoxFuture<'static, Option<Value>> {
        let r = self.records.lock().unwrap().get(issuer).cloned();
        Box::pin(async move { r })
    }
    fn save(&self, issuer: &str, record: Option<Value>) -> BoxFuture<'static, ()> {
        let mut records = self.records.lock().unwrap();
        match record {
            Some(r) => records.insert(issuer.to_string(), r),
            None => records.remove(issuer),
        };
        Box::pin(async {})
    }
    fn lock(&self, issuer: &str) -> BoxFuture<'static, Option<StoreGuard>> {
        let lock = self
            .locks
            .lock()
            .unwrap()
            .entry(issuer.to_string())
            .or_default()
            .clone();
        *self.taken.lock().unwrap() += 1;
        Box::pin(async move { Some(Box::new(lock.lock_owned().await) as StoreGuard) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_sharing_a_locking_store_spend_a_refresh_token_once() {
    let w = World::start(Knobs {
        refresh: true,
        ..Knobs::default()
    })
    .await;
    let store = Arc::new(LockingStore::default());
    let cfg = json!({"redirect_uri": "http://localhost:3000/callback"});
    let (a, b) = (w.client(cfg.clone()), w.client(cfg));
    for c in [&a, &b] {
        c.set_token_store(Some(store.clone()));
        fetching_handler(c);
    }
    within(LIMIT, a.connect()).await.unwrap();
    within(LIMIT, b.connect()).await.unwrap(); // the stored token: no second login
    assert_eq!(w.authorizations().len(), 1);
    w.revoke_access_tokens();
    let before = refreshes(&w).len();
    tokio::join!(storm(&a), storm(&b));
    // One client spent the refresh token; the other found its successor in the store.
    assert_eq!(refreshes(&w).len() - before, 1);
    assert_eq!(
        w.authorizations().len(),
        1,
        "no client fell back to a new authorization"
    );
    assert!(*store.taken.lock().unwrap() >= 2);
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_sharing_a_token_store_dir_spend_a_refresh_token_once() {
    // `oauth.token_store_dir`: files with an advisory lock, as two processes would share them.
    let w = World::start(Knobs {
        refresh: true,
        ..Knobs::default()
    })
    .await;
    let dir = std::env::temp_dir().join(format!("mcp-refresh-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = json!({"redirect_uri": "http://localhost:3000/callback", "token_store_dir": dir});
    let (a, b) = (w.client(cfg.clone()), w.client(cfg));
    for c in [&a, &b] {
        fetching_handler(c);
    }
    within(LIMIT, a.connect()).await.unwrap();
    within(LIMIT, b.connect()).await.unwrap(); // the stored token: no second login
    assert_eq!(w.authorizations().len(), 1);
    w.revoke_access_tokens();
    let before = refreshes(&w).len();
    tokio::join!(storm(&a), storm(&b));
    assert_eq!(refreshes(&w).len() - before, 1);
    assert_eq!(w.authorizations().len(), 1);
    a.close().await;
    b.close().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
