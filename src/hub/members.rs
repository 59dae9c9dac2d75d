//! One member of a hub: its spec, its client, its state, its lists and its call cap.
//!
//! A member's client reports to the member (connection state, notifications, log lines) through
//! weak references, so dropping the hub drops its members and their clients.

use super::events::{changed_lists, Emitter, HubEvent, MemberState};
use super::spec::MemberSpec;
use super::HubOptions;
use crate::client::observe::Observer;
use crate::client::{
    Client, ClientConfig, ConnectionState, ElicitationModes, InputHandler, InputKind, ListKind, LogLine,
    RequestOptions, ServerInfo,
};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{methods, Era};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// A member's state as the host reads it ([`super::Hub::members`]).
#[derive(Debug, Clone)]
pub struct MemberStatus {
    /// The member's name (its entry's key in the configuration).
    pub name: String,
    /// Where it is in its life.
    pub state: MemberState,
    /// Why it failed (or what it lost while reconnecting).
    pub error: Option<Error>,
    /// What its server said about itself, once connected.
    pub server: Option<ServerInfo>,
}

impl MemberStatus {
    /// `{"name", "state", "error"?, "era"?, "protocolVersion"?, "serverInfo"?}`: the error's
    /// message, and the server's era, version and `Implementation` once connected.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), json!(self.name));
        out.insert("state".into(), json!(self.state.as_str()));
        if let Some(e) = &self.error {
            out.insert("error".into(), json!(e.message()));
        }
        if let Some(info) = &self.server {
            out.insert("era".into(), json!(info.era.as_str()));
            out.insert("protocolVersion".into(), json!(info.protocol_version));
            if let Some(server) = &info.server_info {
                out.insert("serverInfo".into(), server.clone());
            }
        }
        Value::Object(out)
    }
}

/// The handlers the host registers once for every member (`Hub::set_handler` and friends).
#[derive(Default, Clone)]
pub(crate) struct SharedHandlers {
    pub elicitation: Option<(Arc<dyn InputHandler>, ElicitationModes)>,
    pub sampling: Option<Arc<dyn InputHandler>>,
    pub roots: Option<Arc<dyn InputHandler>>,
    pub authorization: Option<Arc<dyn crate::auth::AuthorizationHandler>>,
    pub token_store: Option<Arc<dyn crate::auth::TokenStore>>,
    /// The hub's span observer: each member's client gets it under the member's name.
    pub observer: Option<Arc<dyn Observer>>,
}

/// One kind of handler the hub registers on every member.
#[derive(Clone, Copy)]
pub(crate) enum HandlerPart {
    Input(InputKind),
    Authorization,
    TokenStore,
    Observer,
}

impl SharedHandlers {
    /// Registers every handler on `client` (new member `name`'s).
    pub fn apply(&self, name: &str, client: &Client) {
        for part in [
            HandlerPart::Input(InputKind::Elicitation),
            HandlerPart::Input(InputKind::Sampling),
            HandlerPart::Input(InputKind::Roots),
            HandlerPart::Authorization,
            HandlerPart::TokenStore,
            HandlerPart::Observer,
        ] {
            self.apply_part(name, client, part);
        }
    }

    /// Registers one kind of handler on `client`, leaving the others as they are (a member's
    /// own registrations through its client included).
    pub fn apply_part(&self, name: &str, client: &Client, part: HandlerPart) {
        match part {
            HandlerPart::Input(InputKind::Elicitation) => match &self.elicitation {
                Some((h, modes)) => {
                    if client.set_elicitation_handler(Some(h.clone()), *modes).is_err() {
                        // The member's `capabilities` override leaves a mode out: its server is
                        // never told the client answers, so it keeps no handler of the hub's.
                        client.set_handler(InputKind::Elicitation, None);
                    }
                }
                None => client.set_handler(InputKind::Elicitation, None),
            },
            HandlerPart::Input(InputKind::Sampling) => client.set_handler(InputKind::Sampling, self.sampling.clone()),
            HandlerPart::Input(InputKind::Roots) => client.set_handler(InputKind::Roots, self.roots.clone()),
            HandlerPart::Authorization => client.set_authorization_handler(self.authorization.clone()),
            HandlerPart::TokenStore => client.set_token_store(self.token_store.clone()),
            HandlerPart::Observer => client.set_observer(super::observe::for_member(name, self.observer.as_ref())),
        }
    }
}

/// One list of the member's, as last fetched, and how many times it was invalidated (a fetch
/// that started before an invalidation must not store what it got).
#[derive(Default)]
struct Slot {
    items: Option<Arc<Vec<Value>>>,
    epoch: u64,
}

fn slot_index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Prompts => 1,
        ListKind::Resources => 2,
        ListKind::ResourceTemplates => 3,
    }
}

/// The capability a server declares when it has lists of `kind`.
fn capability(kind: ListKind) -> &'static str {
    match kind {
        ListKind::Tools => "tools",
        ListKind::Prompts => "prompts",
        ListKind::Resources | ListKind::ResourceTemplates => "resources",
    }
}

struct Status {
    state: MemberState,
    error: Option<Error>,
    server: Option<ServerInfo>,
}

pub(crate) struct Member {
    pub spec: MemberSpec,
    /// The member's client, or why its configuration was refused.
    client: std::result::Result<Client, Error>,
    /// Why a configuration file could not build this member (its `HubSpec::failed` message).
    pub refused: Option<String>,
    status: Mutex<Status>,
    permits: Option<Arc<Semaphore>>,
    lists: Mutex<[Slot; 4]>,
    /// The task draining a modern member's `subscriptions/listen` (its notifications reach the
    /// member through the client's notification listener).
    listen: Mutex<Option<JoinHandle<()>>>,
    /// The tasks draining a modern member's resource subscriptions (`Hub::subscribe_resource`).
    resource_listens: Mutex<Vec<JoinHandle<()>>>,
    /// Serialises connecting (a lazy member's first uses arrive together).
    start_lock: tokio::sync::Mutex<()>,
    emitter: Arc<Emitter>,
    /// The hub's catalogue generation: bumped by anything that changes what the merged lists
    /// show (a list fetched or invalidated, a state change).
    generation: Arc<AtomicU64>,
}

/// The member's client configuration: the hub's defaults under the member's own keys.
/// A member to build: its spec, and why the configuration file could not build it (`HubSpec::failed`).
pub type Entry = (MemberSpec, Option<String>);

/// `spec`'s members, then its entries the file could not build (as failed members of their
/// name: nothing else of them is known).
pub fn entries(members: Vec<MemberSpec>, failed: Vec<(String, String)>) -> Vec<Entry> {
    let refused = failed.into_iter().map(|(name, message)| {
        let spec = MemberSpec {
            name,
            enabled: true,
            client: Value::Null,
            tools: Default::default(),
            lazy: false,
            max_concurrency: None,
        };
        (spec, Some(message))
    });
    members.into_iter().map(|m| (m, None)).chain(refused).collect()
}

fn client_config(spec: &MemberSpec, defaults: &Map<String, Value>) -> Result<ClientConfig> {
    let Value::Object(own) = &spec.client else {
        return Err(Error::invalid("its client configuration is not a JSON object"));
    };
    let mut merged = defaults.clone();
    merged.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
    ClientConfig::from_json(&Value::Object(merged))
}

impl Member {
    /// The member of `entry` (a spec, and the reason the configuration file could not build it:
    /// such a member is `Failed` with that message from the start).
    pub fn new(
        entry: Entry,
        options: &HubOptions,
        handlers: &SharedHandlers,
        emitter: Arc<Emitter>,
        generation: Arc<AtomicU64>,
    ) -> Arc<Member> {
        let (spec, refused) = entry;
        let client = match &refused {
            Some(message) => Err(Error::invalid(message.clone())),
            None => client_config(&spec, &options.defaults).map(Client::new),
        }
        .map_err(|e| e.context(&format!("member `{}`", spec.name)));
        let (state, error) = match (&client, spec.enabled) {
            (_, false) => (MemberState::Disabled, None),
            (Err(e), true) => (MemberState::Failed, Some(e.clone())),
            (Ok(_), true) => (MemberState::Idle, None),
        };
        let permits = spec
            .max_concurrency
            .map(|n| Arc::new(Semaphore::new(n.max(1) as usize)));
        Arc::new_cyclic(|me: &Weak<Member>| {
            if let Ok(client) = &client {
                handlers.apply(&spec.name, client);
                wire(client, me.clone());
            }
            Member {
                spec,
                client,
                refused,
                status: Mutex::new(Status {
                    state,
                    error,
                    server: None,
                }),
                permits,
                lists: Mutex::default(),
                listen: Mutex::new(None),
                resource_listens: Mutex::default(),
                start_lock: tokio::sync::Mutex::new(()),
                emitter,
                generation,
            }
        })
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The member's client, whatever its state (`None` when its configuration was refused).
    pub fn client(&self) -> Option<&Client> {
        self.client.as_ref().ok()
    }

    pub fn state(&self) -> MemberState {
        self.status.lock().unwrap().state
    }

    /// The state and the rest, after noticing a lost connection.
    pub fn status(&self) -> MemberStatus {
        self.check_lost();
        let status = self.status.lock().unwrap();
        MemberStatus {
            name: self.spec.name.clone(),
            state: status.state,
            error: status.error.clone(),
            server: status.server.clone(),
        }
    }

    /// Whether a start of the hub connects this member now.
    pub fn starts_eagerly(&self) -> bool {
        self.state() == MemberState::Idle && !self.spec.lazy
    }

    /// Whether the merged catalogue includes this member (connecting it first if it is idle).
    pub fn in_catalogue(&self) -> bool {
        self.check_lost();
        matches!(
            self.state(),
            MemberState::Idle | MemberState::Connecting | MemberState::Connected | MemberState::Reconnecting
        )
    }

    /// Moves to `state` (never out of `Closed`), telling the host when it changed.
    fn set(&self, state: MemberState, error: Option<Error>, server: Option<ServerInfo>) {
        {
            let mut status = self.status.lock().unwrap();
            if status.state == MemberState::Closed || (status.state == state && server.is_none()) {
                return;
            }
            status.state = state;
            status.error = error.clone();
            if server.is_some() {
                status.server = server;
            }
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.emitter.emit(HubEvent::State {
            server: self.spec.name.clone(),
            state,
            error: error.map(|e| e.message().to_string()),
        });
    }

    /// A connected member whose connection is gone moves to `Failed` (or to `Reconnecting`
    /// when its client has a reconnect policy: the next use reconnects).
    pub fn check_lost(&self) {
        let Some(client) = self.client() else { return };
        if self.state() != MemberState::Connected {
            return;
        }
        if let Some(error) = client.connection_lost() {
            let error = error.context(&format!("member `{}`", self.spec.name));
            if client.config().reconnect.is_some() {
                self.set(MemberState::Reconnecting, Some(error), None);
            } else {
                self.set(MemberState::Failed, Some(error), None);
            }
        }
    }

    /// The member's client, connected (a lazy or not yet started member connects here). A
    /// disabled, failed or closed member is an error saying so.
    pub async fn ensure(&self) -> Result<Client> {
        self.check_lost();
        if let Some(client) = self.ready()? {
            return Ok(client);
        }
        let _connecting = self.start_lock.lock().await;
        if let Some(client) = self.ready()? {
            return Ok(client);
        }
        let client = self.client.clone()?;
        self.set(MemberState::Connecting, None, None);
        match client.connect().await {
            Ok(info) => {
                self.watch_lists(&client, &info).await;
                self.set(MemberState::Connected, None, Some(info));
                Ok(client)
            }
            Err(e) => {
                let e = e.context(&format!("member `{}`", self.spec.name));
                self.set(MemberState::Failed, Some(e.clone()), None);
                Err(e)
            }
        }
    }

    /// The client when the member can be used as it is, `None` when it must connect first.
    fn ready(&self) -> Result<Option<Client>> {
        let status = self.status.lock().unwrap();
        let named = |e: Error| e.context(&format!("member `{}`", self.spec.name));
        match status.state {
            MemberState::Connected | MemberState::Reconnecting => Ok(self.client.clone().ok()),
            MemberState::Idle | MemberState::Connecting => Ok(None),
            MemberState::Disabled => Err(named(Error::new(
                ErrorKind::Unsupported,
                "disabled in the configuration",
            ))),
            MemberState::Closed => Err(named(Error::closed())),
            MemberState::Failed => Err(status
                .error
                .clone()
                .unwrap_or_else(|| named(Error::new(ErrorKind::Closed, "failed")))),
        }
    }

    /// Modern members tell list changes only to a `subscriptions/listen` stream: open one for
    /// the lists the server says change, and drain it (the notifications themselves reach the
    /// member through its client's notification listener). Legacy members send them unasked.
    async fn watch_lists(&self, client: &Client, info: &ServerInfo) {
        if info.era != Era::Modern {
            return;
        }
        let caps = &info.capabilities;
        let changes = |cap: &str| caps[cap]["listChanged"] == Value::Bool(true);
        let mut filter = Map::new();
        for (cap, key) in [
            ("tools", "toolsListChanged"),
            ("prompts", "promptsListChanged"),
            ("resources", "resourcesListChanged"),
        ] {
            if changes(cap) {
                filter.insert(key.into(), Value::Bool(true));
            }
        }
        if filter.is_empty() {
            return;
        }
        match client.listen(Value::Object(filter), &RequestOptions::default()).await {
            Ok(subscription) => {
                let drain = crate::base::spawn(async move { while subscription.next().await.is_some() {} });
                if let Some(old) = self.listen.lock().unwrap().replace(drain) {
                    old.abort();
                }
            }
            Err(e) => self.warn(&format!(
                "subscriptions/listen failed, list changes will not be seen: {}",
                e.message()
            )),
        }
    }

    pub fn warn(&self, message: &str) {
        self.emitter.emit(HubEvent::Log {
            server: self.spec.name.clone(),
            line: LogLine {
                source: "hub".into(),
                level: "warning",
                message: message.into(),
            },
        });
    }

    /// The client's connection-state events, as member states. The first connect is reported
    /// by `ensure` (with the server's info); these are the reconnect policy's.
    fn on_client_state(self: &Arc<Self>, state: &ConnectionState) {
        match state {
            ConnectionState::Connected if self.state() == MemberState::Reconnecting => {
                let server = self.client().and_then(Client::server_info);
                self.invalidate_all();
                self.set(MemberState::Connected, None, server.clone());
                // The new connection has no listen yet.
                if let (Some(client), Some(info), Ok(rt)) =
                    (self.client().cloned(), server, tokio::runtime::Handle::try_current())
                {
                    let me = self.clone();
                    rt.spawn(crate::base::boxed(async move { me.watch_lists(&client, &info).await }));
                }
            }
            ConnectionState::Connected => {}
            ConnectionState::Disconnected(why) => {
                self.set(MemberState::Reconnecting, Some(self.named(why)), None);
            }
            ConnectionState::Reconnecting(_) => {
                let error = self.status.lock().unwrap().error.clone();
                self.set(MemberState::Reconnecting, error, None);
            }
            ConnectionState::Failed(why) => self.set(MemberState::Failed, Some(self.named(why)), None),
        }
    }

    fn named(&self, why: &str) -> Error {
        Error::new(ErrorKind::Closed, format!("member `{}`: {why}", self.spec.name))
    }

    fn on_notification(&self, method: &str, params: &Value) {
        let server = self.spec.name.clone();
        let kinds = changed_lists(method);
        if !kinds.is_empty() {
            for &kind in kinds {
                self.invalidate(kind);
                self.emitter.emit(HubEvent::ListChanged {
                    server: server.clone(),
                    kind,
                });
            }
            return;
        }
        match method {
            methods::NOTIFY_RESOURCES_UPDATED => {
                let uri = params["uri"].as_str().unwrap_or_default().to_string();
                self.emitter.emit(HubEvent::ResourceUpdated { server, uri });
            }
            // The hub's own listen being acknowledged.
            "notifications/subscriptions/acknowledged" => {}
            _ => self.emitter.emit(HubEvent::Notification {
                server,
                method: method.to_string(),
                params: params.clone(),
            }),
        }
    }

    /// The member's list of `kind` as last fetched, if it still holds.
    pub fn cached(&self, kind: ListKind) -> Option<Arc<Vec<Value>>> {
        self.lists.lock().unwrap()[slot_index(kind)].items.clone()
    }

    /// The member's list of `kind` (tools through its filter), fetched when not held. A server
    /// that does not declare the capability has an empty list.
    pub async fn list(&self, kind: ListKind, opts: &RequestOptions) -> Result<Arc<Vec<Value>>> {
        if let Some(items) = self.cached(kind) {
            return Ok(items);
        }
        let client = self.ensure().await?;
        let epoch = self.lists.lock().unwrap()[slot_index(kind)].epoch;
        let declared = client
            .server_info()
            .is_some_and(|info| info.capabilities.get(capability(kind)).is_some());
        let items = if declared {
            let mut page = client
                .list_all(kind, opts)
                .await
                .map_err(|e| e.context(&format!("member `{}`", self.spec.name)))?;
            let mut items = match page.get_mut(kind.key()).map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            if kind == ListKind::Tools {
                items.retain(|t| t["name"].as_str().is_some_and(|n| self.spec.tools.allows(n)));
            }
            items
        } else {
            Vec::new()
        };
        let items = Arc::new(items);
        let mut lists = self.lists.lock().unwrap();
        let slot = &mut lists[slot_index(kind)];
        if slot.epoch == epoch {
            slot.items = Some(items.clone());
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        Ok(items)
    }

    /// Drops the held list of `kind` (fetched again when next needed).
    pub fn invalidate(&self, kind: ListKind) {
        let mut lists = self.lists.lock().unwrap();
        let slot = &mut lists[slot_index(kind)];
        slot.items = None;
        slot.epoch += 1;
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn invalidate_all(&self) {
        for kind in [
            ListKind::Tools,
            ListKind::Prompts,
            ListKind::Resources,
            ListKind::ResourceTemplates,
        ] {
            self.invalidate(kind);
        }
    }

    /// A place among the member's calls in flight (none to wait for without a cap).
    pub async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        match &self.permits {
            Some(p) => p.clone().acquire_owned().await.ok(),
            None => None,
        }
    }

    /// After a routed call failed: a lost connection changes the member's state.
    pub fn after_error(&self, error: &Error) {
        if matches!(
            error.kind(),
            ErrorKind::ServerExited | ErrorKind::Io | ErrorKind::Closed
        ) {
            self.check_lost();
        }
    }

    /// Asks the member's server for `notifications/resources/updated` about `uri`: a legacy
    /// server through `resources/subscribe`, a modern one through a `subscriptions/listen` of
    /// its own (kept until the member closes; a reconnect ends it).
    pub async fn subscribe(&self, uri: &str, opts: &RequestOptions) -> Result<()> {
        let client = self.ensure().await?;
        if client.server_info().is_some_and(|i| i.era == Era::Legacy) {
            return client.subscribe_resource(uri, opts).await;
        }
        let subscription = client.listen(json!({"resourceSubscriptions": [uri]}), opts).await?;
        let drain = crate::base::spawn(async move { while subscription.next().await.is_some() {} });
        self.resource_listens.lock().unwrap().push(drain);
        Ok(())
    }

    /// Closes the member's client (its server process and connection) for good.
    pub async fn close(&self) {
        self.set(MemberState::Closed, None, None);
        if let Some(listen) = self.listen.lock().unwrap().take() {
            listen.abort();
        }
        for listen in self.resource_listens.lock().unwrap().drain(..) {
            listen.abort();
        }
        if let Some(client) = self.client() {
            client.close().await;
        }
    }
}

impl Drop for Member {
    /// A hub dropped without `close`: the listens' tasks hold the member's session, so they end
    /// here and the client's own drop can stop its server.
    fn drop(&mut self) {
        if let Some(listen) = self.listen.get_mut().unwrap().take() {
            listen.abort();
        }
        for listen in self.resource_listens.get_mut().unwrap().drain(..) {
            listen.abort();
        }
    }
}

/// Points the client's listeners at the member.
fn wire(client: &Client, member: Weak<Member>) {
    let m = member.clone();
    client.on_connection_state(Some(Arc::new(move |state: &ConnectionState| {
        if let Some(m) = m.upgrade() {
            m.on_client_state(state);
        }
    })));
    let m = member.clone();
    client.on_notification(Some(Arc::new(move |method: &str, params: &Value| {
        if let Some(m) = m.upgrade() {
            m.on_notification(method, params);
        }
    })));
    client.on_log(Some(Arc::new(move |line: &LogLine| {
        if let Some(m) = member.upgrade() {
            m.emitter.emit(HubEvent::Log {
                server: m.spec.name.clone(),
                line: line.clone(),
            });
        }
    })));
}
