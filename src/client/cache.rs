//! Response caching (SEP-2549): `server/discover`, the four list methods and `resources/read`
//! carry `ttlMs` and `cacheScope`; a fresh entry answers the same request without a round trip.
//!
//! - Key: the method plus its result-affecting param (`cursor` for lists, `uri` for reads), in
//!   a partition: `public` entries in the shared one, `private` (or unscoped) ones in the
//!   client's current authorization context ([`ResponseCache::set_partition`]).
//! - Freshness: `now < received + ttlMs`; an absent, negative or non-integer `ttlMs` is 0
//!   (nothing is stored), and TTLs are capped at 24 h.
//! - Invalidation: `notifications/{tools,prompts,resources}/list_changed` evict their list
//!   (resources also the templates), `notifications/resources/updated` that URI's read. An
//!   invalidation that lands while a fetch is in flight keeps that fetch's result out (epoch).
//! - Never stored: `input_required` results, MRTR retries and legs the caller gave
//!   `inputResponses`/`requestState` (decided by the caller, see `Client::request_reply`).
//! - Bounded: at most `max_entries` entries and [`MAX_BYTES`] of JSON; the oldest go first.
//!
//! Values are the result's JSON text, so a hit is handed out as a `Reply::Line` exactly like an
//! undecoded stdio answer (C hosts get the bytes, Rust callers decode them).

use super::Reply;
use crate::protocol::methods;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Peers cap TTLs at 24 h (TypeScript, Python and rmcp do the same).
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The default bound on entries (the TypeScript SDK's default store keeps 512 reads).
pub const DEFAULT_MAX_ENTRIES: usize = crate::base::defaults::RESPONSE_CACHE_MAX_ENTRIES as usize;
/// Bound on the JSON text held, whatever the entry count.
pub const MAX_BYTES: usize = 32 << 20;

/// How one call uses the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheMode {
    /// Answer from a fresh entry when there is one; store the result otherwise.
    #[default]
    Use,
    /// Always ask the server; store its answer (replacing the entry).
    Refresh,
    /// Always ask the server and store nothing.
    Bypass,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Key {
    /// `None`: the shared (public) partition.
    partition: Option<Arc<str>>,
    method: &'static str,
    param: String,
}

struct Entry {
    json: Arc<[u8]>,
    expires: Instant,
    /// Insertion order, for eviction.
    stamp: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    order: BTreeMap<u64, Key>,
    bytes: usize,
    next_stamp: u64,
    /// Bumped by every invalidation: a fetch that saw another epoch stores nothing.
    epoch: u64,
    partition: Arc<str>,
}

/// The client's response cache (one per client; cheap when disabled).
pub(crate) struct ResponseCache {
    enabled: bool,
    max_entries: usize,
    state: Mutex<State>,
}

/// A cacheable request: where its entry lives (without the partition) and the epoch it began in.
pub(crate) struct Lookup {
    method: &'static str,
    param: String,
    epoch: u64,
}

/// The two members of a result that decide caching (other members are skipped unread).
#[derive(Deserialize)]
struct Hints {
    #[serde(rename = "ttlMs")]
    ttl_ms: Option<Value>,
    #[serde(rename = "cacheScope")]
    cache_scope: Option<Value>,
}

impl ResponseCache {
    pub fn new(enabled: bool, max_entries: usize) -> ResponseCache {
        ResponseCache {
            enabled: enabled && max_entries > 0,
            max_entries,
            state: Mutex::default(),
        }
    }

    /// The entry a request would use: `None` when the method is not cacheable, the cache is
    /// off, or the params carry MRTR retry fields.
    pub fn lookup(&self, method: &str, params: &Map<String, Value>) -> Option<Lookup> {
        if !self.enabled || params.contains_key("inputResponses") || params.contains_key("requestState") {
            return None;
        }
        let (method, member) = match method {
            methods::DISCOVER => (methods::DISCOVER, None),
            methods::TOOLS_LIST => (methods::TOOLS_LIST, Some("cursor")),
            methods::PROMPTS_LIST => (methods::PROMPTS_LIST, Some("cursor")),
            methods::RESOURCES_LIST => (methods::RESOURCES_LIST, Some("cursor")),
            methods::RESOURCES_TEMPLATES_LIST => (methods::RESOURCES_TEMPLATES_LIST, Some("cursor")),
            methods::RESOURCES_READ => (methods::RESOURCES_READ, Some("uri")),
            _ => return None,
        };
        // Any other result-affecting param (a host's own extension fields) makes it uncacheable:
        // the key would not tell the results apart.
        if params.keys().any(|k| k != "_meta" && Some(k.as_str()) != member) {
            return None;
        }
        let param = match member.and_then(|m| params.get(m)) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return None,
        };
        if method == methods::RESOURCES_READ && param.is_empty() {
            return None;
        }
        let epoch = self.state.lock().unwrap().epoch;
        Some(Lookup { method, param, epoch })
    }

    /// A fresh entry for the request: the caller's own partition first, then the shared one.
    pub fn get(&self, at: &Lookup) -> Option<Reply> {
        self.get_at(at, Instant::now())
    }

    fn get_at(&self, at: &Lookup, now: Instant) -> Option<Reply> {
        let mut state = self.state.lock().unwrap();
        for key in state.keys(at) {
            match state.entries.get(&key) {
                Some(e) if now < e.expires => return Reply::from_result_text(e.json.to_vec()).ok(),
                Some(_) => state.remove(&key),
                None => {}
            }
        }
        None
    }

    /// Stores `json`, a complete result of the request, by its hints; nothing when its TTL is
    /// 0 or an invalidation happened since the request's lookup.
    pub fn put(&self, at: &Lookup, json: &[u8]) {
        let Ok(hints) = serde_json::from_slice::<Hints>(json) else {
            return; // not an object: nothing to go by
        };
        let ttl = ttl_of(hints.ttl_ms.as_ref());
        let public = hints.cache_scope.as_ref().and_then(Value::as_str) == Some("public");
        let mut state = self.state.lock().unwrap();
        if state.epoch != at.epoch || ttl.is_zero() || json.len() > MAX_BYTES {
            return;
        }
        let [own, shared] = state.keys(at);
        // One copy per key: a scope that flipped leaves nothing behind in the other partition.
        state.remove(&own);
        state.remove(&shared);
        let key = if public { shared } else { own };
        state.insert(key, json.into(), Instant::now() + ttl.min(MAX_TTL));
        while state.entries.len() > self.max_entries || state.bytes > MAX_BYTES {
            let Some(oldest) = state.order.first_key_value().map(|(_, k)| k.clone()) else {
                break;
            };
            state.remove(&oldest);
        }
    }

    /// Drops what a server notification says is stale; other notifications change nothing.
    pub fn on_notification(&self, method: &str, params: &Value) {
        if !self.enabled {
            return;
        }
        let lists: &[&str] = match method {
            methods::NOTIFY_TOOLS_LIST_CHANGED => &[methods::TOOLS_LIST],
            methods::NOTIFY_PROMPTS_LIST_CHANGED => &[methods::PROMPTS_LIST],
            methods::NOTIFY_RESOURCES_LIST_CHANGED => &[methods::RESOURCES_LIST, methods::RESOURCES_TEMPLATES_LIST],
            methods::NOTIFY_RESOURCES_UPDATED => {
                // Without a usable uri every read may be stale.
                let uri = params.get("uri").and_then(Value::as_str);
                self.evict(|k| k.method == methods::RESOURCES_READ && uri.is_none_or(|u| k.param == u));
                return;
            }
            _ => return,
        };
        self.evict(|k| lists.contains(&k.method));
    }

    /// The authorization context private entries belong to. Changing it drops the old
    /// context's private entries; public entries stay.
    pub fn set_partition(&self, partition: &str) {
        let mut state = self.state.lock().unwrap();
        if &*state.partition != partition {
            state.partition = partition.into();
            state.epoch += 1;
            state.retain(|k| k.partition.is_none());
        }
    }

    /// Drops everything (a new connection: the server may have restarted or changed era).
    /// Unlike an invalidation it leaves the epoch alone: the first request on a new connection
    /// is looked up before its connect clears the cache, and its answer is current.
    pub fn clear(&self) {
        self.state.lock().unwrap().retain(|_| false);
    }

    fn evict(&self, stale: impl Fn(&Key) -> bool) {
        let mut state = self.state.lock().unwrap();
        state.epoch += 1;
        state.retain(|k| !stale(k));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state.lock().unwrap().entries.len()
    }
}

impl State {
    /// Where `at`'s entry may live: this client's partition, then the shared one.
    fn keys(&self, at: &Lookup) -> [Key; 2] {
        let own = Key {
            partition: Some(self.partition.clone()),
            method: at.method,
            param: at.param.clone(),
        };
        let shared = Key {
            partition: None,
            ..own.clone()
        };
        [own, shared]
    }

    fn insert(&mut self, key: Key, json: Arc<[u8]>, expires: Instant) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.bytes += json.len();
        self.order.insert(stamp, key.clone());
        self.entries.insert(key, Entry { json, expires, stamp });
    }

    fn remove(&mut self, key: &Key) {
        if let Some(e) = self.entries.remove(key) {
            self.bytes -= e.json.len();
            self.order.remove(&e.stamp);
        }
    }

    fn retain(&mut self, keep: impl Fn(&Key) -> bool) {
        let gone: Vec<Key> = self.entries.keys().filter(|k| !keep(k)).cloned().collect();
        for key in &gone {
            self.remove(key);
        }
    }
}

/// `ttlMs` as a duration: absent, negative, fractional or otherwise unusable is 0; capped at 24 h.
fn ttl_of(value: Option<&Value>) -> Duration {
    match value.and_then(Value::as_u64) {
        Some(ms) => Duration::from_millis(ms).min(MAX_TTL),
        None => Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn text(reply: Reply) -> String {
        String::from_utf8(reply.into_json()).unwrap()
    }

    #[test]
    fn ttl_rules() {
        assert_eq!(ttl_of(None), Duration::ZERO);
        assert_eq!(ttl_of(Some(&json!(-5))), Duration::ZERO);
        assert_eq!(ttl_of(Some(&json!(1.5))), Duration::ZERO);
        assert_eq!(ttl_of(Some(&json!("100"))), Duration::ZERO);
        assert_eq!(ttl_of(Some(&json!(250))), Duration::from_millis(250));
        assert_eq!(ttl_of(Some(&json!(u64::MAX))), MAX_TTL);
    }

    #[test]
    fn what_is_cacheable() {
        let c = ResponseCache::new(true, 8);
        assert!(c.lookup("tools/list", &Map::new()).is_some());
        assert!(c
            .lookup("tools/list", &params(json!({"cursor": "2", "_meta": {}})))
            .is_some());
        assert!(c.lookup("resources/read", &params(json!({"uri": "a://b"}))).is_some());
        assert!(c.lookup("tools/call", &params(json!({"name": "x"}))).is_none());
        assert!(c.lookup("prompts/get", &Map::new()).is_none());
        assert!(c
            .lookup("resources/read", &params(json!({"uri": "a://b", "requestState": "s"})))
            .is_none());
        assert!(c
            .lookup("resources/read", &params(json!({"uri": "a://b", "inputResponses": {}})))
            .is_none());
        assert!(c.lookup("tools/list", &params(json!({"filter": "x"}))).is_none());
        assert!(ResponseCache::new(false, 8).lookup("tools/list", &Map::new()).is_none());
    }

    #[test]
    fn fresh_entries_answer_and_ttl_zero_stores_nothing() {
        let c = ResponseCache::new(true, 8);
        let at = c.lookup("tools/list", &Map::new()).unwrap();
        c.put(&at, br#"{"tools":[],"ttlMs":0,"cacheScope":"public"}"#);
        assert!(c.get(&at).is_none());
        c.put(&at, br#"{"tools":[],"cacheScope":"public"}"#);
        assert!(c.get(&at).is_none(), "absent ttlMs counts as 0");
        c.put(&at, br#"{"tools":[1],"ttlMs":60000,"cacheScope":"public"}"#);
        assert_eq!(
            text(c.get(&at).unwrap()),
            r#"{"tools":[1],"ttlMs":60000,"cacheScope":"public"}"#
        );
        // Another cursor is another entry.
        let page2 = c.lookup("tools/list", &params(json!({"cursor": "2"}))).unwrap();
        assert!(c.get(&page2).is_none());
    }

    #[test]
    fn entries_go_stale_after_their_ttl() {
        let c = ResponseCache::new(true, 8);
        let at = c.lookup("prompts/list", &Map::new()).unwrap();
        let before = Instant::now();
        c.put(&at, br#"{"prompts":[],"ttlMs":1000,"cacheScope":"private"}"#);
        let after = Instant::now();
        assert!(c.get_at(&at, before + Duration::from_millis(999)).is_some());
        assert!(
            c.get_at(&at, after + Duration::from_millis(1000)).is_none(),
            "fresh only while now < received + ttlMs"
        );
        assert_eq!(c.len(), 0, "a stale entry is dropped when met");
    }

    #[test]
    fn private_entries_stay_with_their_authorization_context() {
        let c = ResponseCache::new(true, 8);
        let tools = c.lookup("tools/list", &Map::new()).unwrap();
        let read = c.lookup("resources/read", &params(json!({"uri": "a://b"}))).unwrap();
        c.put(&tools, br#"{"tools":[],"ttlMs":60000,"cacheScope":"public"}"#);
        c.put(&read, br#"{"contents":[],"ttlMs":60000,"cacheScope":"private"}"#);
        assert!(c.get(&read).is_some());
        c.set_partition("alice");
        assert!(c.get(&tools).is_some(), "public entries are shared");
        assert!(c.get(&read).is_none(), "private entries are not");
    }

    #[test]
    fn a_flipped_scope_leaves_one_copy() {
        let c = ResponseCache::new(true, 8);
        let at = c.lookup("tools/list", &Map::new()).unwrap();
        c.put(&at, br#"{"tools":[1],"ttlMs":60000,"cacheScope":"public"}"#);
        c.put(&at, br#"{"tools":[2],"ttlMs":60000,"cacheScope":"private"}"#);
        assert_eq!(c.len(), 1);
        assert!(text(c.get(&at).unwrap()).contains("[2]"));
    }

    #[test]
    fn notifications_invalidate_and_block_inflight_writes() {
        let c = ResponseCache::new(true, 8);
        let tools = c.lookup("tools/list", &Map::new()).unwrap();
        let templates = c.lookup("resources/templates/list", &Map::new()).unwrap();
        let a = c.lookup("resources/read", &params(json!({"uri": "a://a"}))).unwrap();
        let b = c.lookup("resources/read", &params(json!({"uri": "a://b"}))).unwrap();
        for at in [&tools, &templates, &a, &b] {
            c.put(at, br#"{"ttlMs":60000}"#);
        }
        assert_eq!(c.len(), 4);
        c.on_notification("notifications/resources/updated", &json!({"uri": "a://a"}));
        assert!(c.get(&a).is_none() && c.get(&b).is_some());
        c.on_notification("notifications/resources/list_changed", &json!({}));
        assert!(c.get(&templates).is_none() && c.get(&tools).is_some());
        c.on_notification("notifications/tools/list_changed", &json!({}));
        assert!(c.get(&tools).is_none());
        // `tools` was looked up before those notifications: its late result is not stored.
        c.put(&tools, br#"{"ttlMs":60000}"#);
        assert!(c.get(&tools).is_none());
    }

    #[test]
    fn bounded_oldest_first() {
        let c = ResponseCache::new(true, 2);
        let at = |uri: &str| c.lookup("resources/read", &params(json!({"uri": uri}))).unwrap();
        for uri in ["a://1", "a://2", "a://3"] {
            c.put(&at(uri), br#"{"ttlMs":60000}"#);
        }
        assert_eq!(c.len(), 2);
        assert!(c.get(&at("a://1")).is_none());
        assert!(c.get(&at("a://3")).is_some());
    }
}
