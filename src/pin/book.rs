//! The pins of one client's server and the check of each `tools/list` page against them.
//!
//! The stored record (opaque to a host's store), one per server identity, under the store key
//! `tool-pins <identity>`: `{"server": "<identity>", "tools": {"<name>": {"digest": "<hex>",
//! "definition": {…}}}}`. Writes happen under the store's lock, merged into the record as it is
//! then, so clients in other processes sharing a file store keep each other's pins.

use super::canon::{self, DEFAULT_IGNORED_META};
use super::{PinChange, PinEvent, PinHook, PinPolicy, PinSettings};
use crate::auth::{FileTokenStore, MemoryTokenStore, TokenStore};
use crate::error::{Error, ErrorKind, Result};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// A pinned definition.
#[derive(Clone)]
struct Pin {
    digest: String,
    definition: Value,
}

/// A listed definition that differs from its pin (or has none), waiting for approval.
#[derive(Clone)]
struct Pending {
    digest: String,
    definition: Value,
    withheld: bool,
}

#[derive(Default)]
struct State {
    /// The stored record was read.
    loaded: bool,
    /// A record exists for this server (read, or written by this client).
    recorded: bool,
    /// The current listing is the server's first: everything in it is pinned as it is.
    trusting: bool,
    pinned: BTreeMap<String, Pin>,
    pending: HashMap<String, Pending>,
    /// The tools seen since the listing's first page.
    seen: HashSet<String>,
    /// Tools removed and already reported.
    reported_removed: HashSet<String>,
    /// Forgotten tools: pinned again when next seen.
    repin: HashSet<String>,
    /// Decisions already taken, per tool and digest (an event is reported once).
    decided: HashMap<(String, String), bool>,
}

/// One client's pins (see the module).
pub struct Pins {
    settings: PinSettings,
    identity: String,
    ignored: Vec<String>,
    store: RwLock<Arc<dyn TokenStore>>,
    hook: RwLock<Option<PinHook>>,
    /// Held across the store's I/O: one check at a time per client.
    state: tokio::sync::Mutex<State>,
    /// The withheld tools' names, read by calls without waiting on a check.
    withheld: Mutex<HashSet<String>>,
}

/// The key of a server's record in the store.
fn store_key(identity: &str) -> String {
    format!("tool-pins {identity}")
}

impl Pins {
    /// Pins for the server `identity` under `settings` (`None` when the policy is `off`).
    pub fn new(settings: &PinSettings, identity: String) -> Option<Arc<Pins>> {
        if settings.policy == PinPolicy::Off {
            return None;
        }
        let store: Arc<dyn TokenStore> = match &settings.store_dir {
            Some(dir) => Arc::new(FileTokenStore::new(dir)),
            None => Arc::new(MemoryTokenStore::default()),
        };
        let ignored = settings
            .ignore_meta
            .clone()
            .unwrap_or_else(|| DEFAULT_IGNORED_META.iter().map(|s| s.to_string()).collect());
        Some(Arc::new(Pins {
            identity: settings.identity.clone().unwrap_or(identity),
            settings: settings.clone(),
            ignored,
            store: RwLock::new(store),
            hook: RwLock::new(None),
            state: tokio::sync::Mutex::new(State::default()),
            withheld: Mutex::new(HashSet::new()),
        }))
    }

    /// Replaces the store (pins are read from it afresh).
    pub async fn set_store(&self, store: Arc<dyn TokenStore>) {
        let mut state = self.state.lock().await;
        *self.store.write().unwrap() = store;
        state.loaded = false;
    }

    /// Sets (or clears) the hook told of every change.
    pub fn set_hook(&self, hook: Option<PinHook>) {
        *self.hook.write().unwrap() = hook;
    }

    fn store(&self) -> Arc<dyn TokenStore> {
        self.store.read().unwrap().clone()
    }

    /// The error of a call to a withheld tool, if `name` is one.
    pub fn refuse(&self, name: &str) -> Option<Error> {
        if !self.withheld.lock().unwrap().contains(name) {
            return None;
        }
        Some(Error::new(
            ErrorKind::ToolPinChanged,
            format!(
                "tool {} is withheld: its definition is not the pinned one (approve it to call it)",
                crate::untrusted::shown(name)
            ),
        ))
    }

    async fn load(&self, state: &mut State) {
        if state.loaded {
            return;
        }
        let record = self.store().load(&store_key(&self.identity)).await;
        state.pinned = parse_record(record.as_ref());
        state.recorded = record.is_some();
        state.loaded = true;
    }

    /// Writes `changes` (a pin, or `None`: forget it; `all`: the whole record) into the stored
    /// record under the store's lock.
    async fn save(&self, changes: Vec<(String, Option<Pin>)>, all: bool) {
        let store = self.store();
        let key = store_key(&self.identity);
        let _guard = store.lock(&key).await;
        let mut pinned = if all {
            BTreeMap::new()
        } else {
            parse_record(store.load(&key).await.as_ref())
        };
        for (name, pin) in changes {
            match pin {
                Some(p) => pinned.insert(name, p),
                None => pinned.remove(&name),
            };
        }
        let record = (!all).then(|| record_of(&self.identity, &pinned));
        store.save(&key, record).await;
    }

    /// Checks one `tools/list` result page (`page`, the result object) and removes the tools
    /// the policy withholds from its `tools`. `first_page`: no cursor was sent; `timeout`
    /// bounds the hook. Returns the events seen (already given to the hook).
    pub async fn check_page(
        &self,
        page: &mut Map<String, Value>,
        first_page: bool,
        timeout: Duration,
    ) -> Vec<PinEvent> {
        let complete = page.get("nextCursor").is_none_or(Value::is_null);
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        if first_page {
            state.seen.clear();
            state.trusting = !state.recorded;
        }
        let first_use = state.trusting;
        let mut events = Vec::new();
        let mut to_pin: Vec<(String, Option<Pin>)> = Vec::new();
        let Some(Value::Array(tools)) = page.get_mut("tools") else {
            return events;
        };
        let mut kept = Vec::with_capacity(tools.len());
        for tool in std::mem::take(tools) {
            let Some((name, definition)) = tool.as_object().and_then(|t| {
                Some((
                    t.get("name")?.as_str()?.to_string(),
                    canon::definition(t, &self.ignored),
                ))
            }) else {
                kept.push(tool); // not a tool this check can name: the client's other checks see it
                continue;
            };
            let digest = canon::digest(&definition);
            state.seen.insert(name.clone());
            state.reported_removed.remove(&name);
            let pin = state.pinned.get(&name).cloned();
            if pin.as_ref().is_some_and(|p| p.digest == digest) {
                state.pending.remove(&name);
                self.withheld.lock().unwrap().remove(&name);
                kept.push(tool);
                continue;
            }
            if first_use || (pin.is_none() && state.repin.remove(&name)) {
                let p = Pin { digest, definition };
                state.pinned.insert(name.clone(), p.clone());
                state.pending.remove(&name);
                self.withheld.lock().unwrap().remove(&name);
                to_pin.push((name, Some(p)));
                kept.push(tool);
                continue;
            }
            let event = PinEvent {
                server: self.identity.clone(),
                tool: name.clone(),
                change: if pin.is_some() {
                    PinChange::Changed
                } else {
                    PinChange::New
                },
                diff: pin
                    .as_ref()
                    .map(|p| canon::diff(&p.definition, &definition))
                    .unwrap_or_default(),
                old: pin.map(|p| p.definition),
                new: Some(definition.clone()),
                policy: self.settings.policy,
            };
            let key = (name.clone(), digest.clone());
            let approved = match state.decided.get(&key) {
                Some(approved) => *approved,
                None => {
                    let approved = self.decide(&event, timeout).await;
                    events.push(event);
                    state.decided.insert(key, approved);
                    approved
                }
            };
            let withheld = !approved && self.settings.policy != PinPolicy::Warn;
            if approved && self.settings.policy == PinPolicy::Ask {
                let p = Pin { digest, definition };
                state.pinned.insert(name.clone(), p.clone());
                state.pending.remove(&name);
                to_pin.push((name, Some(p)));
                kept.push(tool);
                continue;
            }
            state.pending.insert(
                name.clone(),
                Pending {
                    digest,
                    definition,
                    withheld,
                },
            );
            if withheld {
                self.withheld.lock().unwrap().insert(name);
            } else {
                kept.push(tool);
            }
        }
        *tools = kept;
        if complete {
            let seen = std::mem::take(&mut state.seen);
            let gone: Vec<String> = state
                .pinned
                .keys()
                .filter(|n| !seen.contains(*n) && !state.reported_removed.contains(*n))
                .cloned()
                .collect();
            for name in gone {
                let event = PinEvent {
                    server: self.identity.clone(),
                    tool: name.clone(),
                    change: PinChange::Removed,
                    old: state.pinned.get(&name).map(|p| p.definition.clone()),
                    new: None,
                    diff: String::new(),
                    policy: self.settings.policy,
                };
                self.decide(&event, timeout).await;
                events.push(event);
                state.reported_removed.insert(name);
            }
        }
        if complete && state.trusting {
            // The first listing is pinned whole, an empty one included.
            state.trusting = false;
            state.recorded = true;
            self.save(to_pin, false).await;
        } else if !to_pin.is_empty() {
            self.save(to_pin, false).await;
        }
        events
    }

    /// Gives `event` to the hook; whether the change is approved (only `ask` approves).
    async fn decide(&self, event: &PinEvent, timeout: Duration) -> bool {
        let hook = self.hook.read().unwrap().clone();
        let Some(hook) = hook else { return false };
        let answer = hook(event.clone());
        let approved = if timeout.is_zero() {
            answer.await
        } else {
            tokio::time::timeout(timeout, answer).await.unwrap_or(false)
        };
        approved && self.settings.policy == PinPolicy::Ask && event.change != PinChange::Removed
    }

    /// Pins the definition last listed for `name` (a changed or new tool), so it is listed and
    /// callable again. Fails when no such definition waits.
    pub async fn approve(&self, name: &str) -> Result<()> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        let Some(pending) = state.pending.remove(name) else {
            return Err(Error::invalid(format!(
                "no changed or new definition of tool {} waits for approval",
                crate::untrusted::shown(name)
            )));
        };
        let pin = Pin {
            digest: pending.digest,
            definition: pending.definition,
        };
        state.pinned.insert(name.to_string(), pin.clone());
        self.withheld.lock().unwrap().remove(name);
        self.save(vec![(name.to_string(), Some(pin))], false).await;
        Ok(())
    }

    /// Forgets the pin of `name` (pinned afresh when next listed), or with `None` every pin of
    /// this server (the next listing is a first use).
    pub async fn forget(&self, name: Option<&str>) {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        match name {
            Some(name) => {
                state.pinned.remove(name);
                state.pending.remove(name);
                state.decided.retain(|(n, _), _| n != name);
                state.repin.insert(name.to_string());
                self.withheld.lock().unwrap().remove(name);
                self.save(vec![(name.to_string(), None)], false).await;
            }
            None => {
                *state = State {
                    loaded: true,
                    ..State::default()
                };
                self.withheld.lock().unwrap().clear();
                self.save(Vec::new(), true).await;
            }
        }
    }

    /// `{"server", "policy", "tools": [{"name", "digest", "definition", "state", "pending"?}]}`,
    /// `state` one of `pinned`, `changed` (listed with another definition, still callable),
    /// `withheld`, `removed`; and the new tools waiting (`state` `new` or `withheld`, no pin).
    pub async fn list(&self) -> Value {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        let mut tools = Vec::new();
        for (name, pin) in &state.pinned {
            let pending = state.pending.get(name);
            let status = match pending {
                Some(p) if p.withheld => "withheld",
                Some(_) => "changed",
                None if state.reported_removed.contains(name) => "removed",
                None => "pinned",
            };
            let mut entry = json!({"name": name, "digest": pin.digest, "definition": pin.definition, "state": status});
            if let Some(p) = pending {
                entry["pending"] = json!({"digest": p.digest, "definition": p.definition});
            }
            tools.push(entry);
        }
        let mut new: Vec<_> = state
            .pending
            .iter()
            .filter(|(n, _)| !state.pinned.contains_key(*n))
            .collect();
        new.sort_by(|a, b| a.0.cmp(b.0));
        for (name, p) in new {
            let status = if p.withheld { "withheld" } else { "new" };
            tools.push(json!({"name": name, "state": status,
                              "pending": {"digest": p.digest, "definition": p.definition}}));
        }
        json!({"server": self.identity, "policy": self.settings.policy.as_str(), "tools": tools})
    }
}

fn parse_record(record: Option<&Value>) -> BTreeMap<String, Pin> {
    let Some(Value::Object(tools)) = record.and_then(|r| r.get("tools")) else {
        return BTreeMap::new();
    };
    tools
        .iter()
        .filter_map(|(name, pin)| {
            let digest = pin.get("digest")?.as_str()?.to_string();
            let definition = pin.get("definition")?.clone();
            Some((name.clone(), Pin { digest, definition }))
        })
        .collect()
}

fn record_of(identity: &str, pinned: &BTreeMap<String, Pin>) -> Value {
    let tools: Map<String, Value> = pinned
        .iter()
        .map(|(n, p)| (n.clone(), json!({"digest": p.digest, "definition": p.definition})))
        .collect();
    json!({"server": identity, "tools": tools})
}
