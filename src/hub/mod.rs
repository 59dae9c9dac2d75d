//! The hub: every server of a host's configuration file as one client. Sits above `client`,
//! below `ffi`.
//!
//! A [`Hub`](crate::hub::Hub) runs one [`Client`](crate::Client) per member of a
//! [`HubSpec`](crate::hub::HubSpec): `members` (state, lazy start,
//! the call cap, the member's lists), `catalogue` (the merged lists and the routes of exported
//! names), `naming` (exported names, filters), `routing` (calls to the owning member),
//! `events` (the one listener), `reload` (applying a changed spec), `export` (the catalogue for
//! the model and the hub as `crate::export`'s `ToolCaller`).

mod catalogue;
mod events;
mod export;
mod file;
mod members;
mod naming;
mod observe;
mod reload;
mod routing;
pub mod spec;

pub use catalogue::{META_NAME, META_SERVER};
pub use events::{HubEvent, HubEventFn, MemberState};
pub use export::origins;
pub use file::{InputAnswers, InputPrompt, ReadContext};
pub use members::MemberStatus;
pub use reload::ReloadReport;
pub use spec::{HubSpec, MemberSpec, ToolFilter};

use crate::client::{Client, ElicitationModes, InputHandler, InputKind, ListKind};
use crate::error::{Error, Result};
use catalogue::Built;
use events::Emitter;
use members::{HandlerPart, Member, SharedHandlers};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// How a hub names and configures its members.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// Between a member's name and its tool's (or prompt's) name: `<server><separator><tool>`.
    /// Default `__`.
    pub separator: String,
    /// Prefix tool and prompt names with their member's name (the default). Without it a name
    /// two members offer makes listing fail with an error naming both.
    pub prefix: bool,
    /// Client configuration keys every member gets unless its own configuration sets them
    /// (e.g. `{"connect_timeout_ms": 10000}`).
    pub defaults: Map<String, Value>,
}

impl Default for HubOptions {
    fn default() -> Self {
        HubOptions {
            separator: "__".into(),
            prefix: true,
            defaults: Map::new(),
        }
    }
}

impl HubOptions {
    /// The options from `{"separator"?: string, "prefix"?: bool, "defaults"?: object}` (absent
    /// keys keep their defaults; another key is an error).
    pub fn from_json(value: &Value) -> Result<HubOptions> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Keys {
            separator: Option<String>,
            prefix: Option<bool>,
            defaults: Option<Map<String, Value>>,
        }
        let keys: Keys =
            serde_json::from_value(value.clone()).map_err(|e| Error::invalid(format!("hub options: {e}")))?;
        let mut options = HubOptions::default();
        if let Some(separator) = keys.separator {
            options.separator = separator;
        }
        options.prefix = keys.prefix.unwrap_or(options.prefix);
        options.defaults = keys.defaults.unwrap_or_default();
        Ok(options)
    }
}

/// Many MCP servers as one client: it starts every enabled member concurrently, merges their
/// tools, prompts and resources into one catalogue under namespaced names, routes each call to
/// the member that owns it, and keeps going when members fail. Cheap to clone; every clone is
/// the same hub. Runs on the caller's tokio runtime, as [`Client`] does.
///
/// ```
/// use mcp_client::hub::{Hub, HubEvent, HubOptions, HubSpec, MemberSpec, MemberState, ToolFilter};
/// use mcp_client::RequestOptions;
/// use serde_json::json;
/// use std::sync::Arc;
///
/// # #[tokio::main]
/// # async fn main() -> mcp_client::Result<()> {
/// # let command = "target/debug/mcp-fixture-server"; // the repository's test server
/// let member = |name: &str, client: serde_json::Value| MemberSpec {
///     name: name.into(),
///     enabled: true,
///     client, // the flat single-client configuration
///     tools: ToolFilter::default(),
///     lazy: false,
///     max_concurrency: None,
/// };
/// let spec = HubSpec {
///     members: vec![
///         member("fixture", json!({"command": command})),
///         member("broken", json!({"command": "/nonexistent/server"})),
///     ],
///     warnings: vec![],
///     failed: vec![], // entries a configuration file could not build
/// };
/// let hub = Hub::new(spec, HubOptions::default())?;
/// hub.on_event(Some(Arc::new(|event: &HubEvent| {
///     if let HubEvent::State { server, state, error } = event {
///         eprintln!("{server}: {} {}", state.as_str(), error.as_deref().unwrap_or(""));
///     }
/// })));
/// hub.start().await; // every member at once; a broken one fails alone
/// let states: Vec<MemberState> = hub.members().iter().map(|m| m.state).collect();
/// assert_eq!(states, [MemberState::Connected, MemberState::Failed]);
///
/// let tools = hub.list_tools().await?; // `fixture__echo`, `fixture__add`, …
/// assert!(tools["tools"].as_array().unwrap().iter().any(|t| t["name"] == "fixture__echo"));
/// let result = hub
///     .call_tool("fixture__echo", Some(json!({"text": "hi"})), &RequestOptions::default())
///     .await?;
/// assert_eq!(result["content"][0]["text"], "hi");
/// hub.close().await; // every server stopped
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    options: HubOptions,
    members: RwLock<Vec<Arc<Member>>>,
    emitter: Arc<Emitter>,
    handlers: RwLock<SharedHandlers>,
    /// Bumped by anything that changes what the merged lists show.
    generation: Arc<AtomicU64>,
    /// The merged lists last built, with the generation they were built at.
    merged: Mutex<[Option<Built>; 4]>,
    warnings: RwLock<Vec<String>>,
    closed: AtomicBool,
    /// One reload at a time.
    reload_lock: tokio::sync::Mutex<()>,
    /// The host's current trace context, for the hub's calls (`observe`).
    trace_source: RwLock<Option<crate::client::TraceSource>>,
}

/// Refuses two members of one name.
fn check_names(spec: &HubSpec) -> Result<()> {
    let mut seen = HashSet::new();
    let names = spec
        .members
        .iter()
        .map(|m| &m.name)
        .chain(spec.failed.iter().map(|(n, _)| n));
    for name in names {
        if !seen.insert(name.as_str()) {
            return Err(Error::invalid(format!("two members are named `{name}`")));
        }
    }
    Ok(())
}

impl Hub {
    /// A hub of `spec`'s members; nothing starts until [`Hub::start`] (or a lazy member's first
    /// use). A member whose client configuration is refused is a member in state `Failed` with
    /// that error; only two members of one name make this fail.
    pub fn new(spec: HubSpec, options: HubOptions) -> Result<Hub> {
        check_names(&spec)?;
        let emitter = Arc::new(Emitter::default());
        let generation = Arc::new(AtomicU64::new(0));
        let handlers = SharedHandlers::default();
        let members = members::entries(spec.members, spec.failed)
            .into_iter()
            .map(|m| Member::new(m, &options, &handlers, emitter.clone(), generation.clone()))
            .collect();
        Ok(Hub {
            inner: Arc::new(Inner {
                options,
                members: RwLock::new(members),
                emitter,
                handlers: RwLock::new(handlers),
                generation,
                merged: Mutex::default(),
                warnings: RwLock::new(spec.warnings),
                closed: AtomicBool::new(false),
                reload_lock: tokio::sync::Mutex::new(()),
                trace_source: RwLock::new(None),
            }),
        })
    }

    /// Connects every enabled member that is not lazy, all at once, and returns when each has
    /// connected or failed (each bounded by its own `connect_timeout_ms`). A member that fails
    /// is in state `Failed` with its error; the hub itself does not fail.
    pub async fn start(&self) {
        let eager: Vec<Arc<Member>> = self.members_now().into_iter().filter(|m| m.starts_eagerly()).collect();
        connect_all(eager).await;
    }

    /// Adds member `spec` after the others, not started: [`Hub::start`] connects it (or its
    /// first use, when lazy). A name the hub already has is an `InvalidArgument` error.
    pub fn add_member(&self, spec: MemberSpec) -> Result<()> {
        self.check_open()?;
        let handlers = self.inner.handlers.read().unwrap().clone();
        let mut members = self.inner.members.write().unwrap();
        if members.iter().any(|m| m.name() == spec.name) {
            return Err(Error::invalid(format!("two members are named `{}`", spec.name)));
        }
        let options = &self.inner.options;
        let (emitter, generation) = (self.inner.emitter.clone(), self.inner.generation.clone());
        members.push(Member::new((spec, None), options, &handlers, emitter, generation));
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// The members' specs, in order (what [`Hub::reload`] compares a new spec with); entries a
    /// configuration file could not build are in `failed`, with their messages.
    pub fn spec(&self) -> HubSpec {
        let mut spec = HubSpec {
            warnings: self.warnings(),
            ..HubSpec::default()
        };
        for m in self.members_now() {
            match &m.refused {
                Some(message) => spec.failed.push((m.spec.name.clone(), message.clone())),
                None => spec.members.push(m.spec.clone()),
            }
        }
        spec
    }

    /// Every member's state, in the configuration's order.
    pub fn members(&self) -> Vec<MemberStatus> {
        self.members_now().iter().map(|m| m.status()).collect()
    }

    /// `members()` as a JSON array of [`MemberStatus::to_json`] objects.
    pub fn members_json(&self) -> Value {
        Value::Array(self.members().iter().map(MemberStatus::to_json).collect())
    }

    /// The client of member `server` (for what the hub does not wrap: per-member handlers,
    /// tasks, skills, completion). `None` for an unknown member or one whose configuration was
    /// refused. A reload that changes the member replaces its client.
    pub fn member_client(&self, server: &str) -> Option<Client> {
        self.member(server).and_then(|m| m.client().cloned())
    }

    /// The keys of the configuration that other hosts define and this library ignores.
    pub fn warnings(&self) -> Vec<String> {
        self.inner.warnings.read().unwrap().clone()
    }

    /// Sets (or with `None` removes) the hub's one listener: member states, list changes,
    /// resource updates, log lines and notifications of every member.
    pub fn on_event(&self, listener: Option<HubEventFn>) {
        self.inner.emitter.set(listener);
    }

    /// Registers (or removes) the input handler of `kind` for every member, present and added
    /// later, replacing what a member's client had for that kind (other kinds are left as
    /// they are). Register before [`Hub::start`]: legacy servers learn the capabilities at
    /// connect.
    pub fn set_handler(&self, kind: InputKind, handler: Option<Arc<dyn InputHandler>>) {
        let part = HandlerPart::Input(kind);
        self.update_handlers(part, |h| match kind {
            InputKind::Elicitation => h.elicitation = handler.map(|f| (f, ElicitationModes::FORM)),
            InputKind::Sampling => h.sampling = handler,
            InputKind::Roots => h.roots = handler,
        });
    }

    /// As [`Client::set_elicitation_handler`], for every member: `InvalidArgument`, registering
    /// nothing, for a handler with no mode. A member whose configuration's `capabilities`
    /// override leaves out a mode asked for gets no elicitation handler (its server is never
    /// told the client can answer, so it never asks).
    pub fn set_elicitation_handler(
        &self,
        handler: Option<Arc<dyn InputHandler>>,
        modes: ElicitationModes,
    ) -> Result<()> {
        if handler.is_some() && !modes.form && !modes.url {
            return Err(Error::invalid(
                "an elicitation handler needs at least one mode (form or url)",
            ));
        }
        let part = HandlerPart::Input(InputKind::Elicitation);
        self.update_handlers(part, |h| h.elicitation = handler.map(|f| (f, modes)));
        Ok(())
    }

    /// As [`Client::set_authorization_handler`], for every member.
    pub fn set_authorization_handler(&self, handler: Option<Arc<dyn crate::auth::AuthorizationHandler>>) {
        self.update_handlers(HandlerPart::Authorization, |h| h.authorization = handler);
    }

    /// As [`Client::set_token_store`], for every member.
    pub fn set_token_store(&self, store: Option<Arc<dyn crate::auth::TokenStore>>) {
        self.update_handlers(HandlerPart::TokenStore, |h| h.token_store = store);
    }

    fn update_handlers(&self, part: HandlerPart, change: impl FnOnce(&mut SharedHandlers)) {
        let handlers = {
            let mut h = self.inner.handlers.write().unwrap();
            change(&mut h);
            h.clone()
        };
        for m in self.members_now() {
            if let Some(c) = m.client() {
                handlers.apply_part(m.name(), c, part);
            }
        }
    }

    /// Approves member `server`'s changed or new tool `tool` (tool pinning, the member's
    /// `tool_pinning` setting; see [`Client::approve_tool_pin`]) and drops the member's held
    /// tool list, so the next listing has it.
    pub async fn approve_tool_pin(&self, server: &str, tool: &str) -> Result<()> {
        let member = self
            .member(server)
            .ok_or_else(|| Error::invalid(format!("no member `{server}`")))?;
        let client = member
            .client()
            .cloned()
            .ok_or_else(|| Error::invalid(format!("member `{server}` has no client")))?;
        client.approve_tool_pin(tool).await?;
        member.invalidate(ListKind::Tools);
        Ok(())
    }

    /// Closes every member (their servers are shut down, no process is left) and the hub:
    /// later calls fail with `Closed`. Idempotent.
    pub async fn close(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        let members = self.members_now();
        close_all(members).await;
    }

    /// Whether [`Hub::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::new(crate::error::ErrorKind::Closed, "the hub is closed"));
        }
        Ok(())
    }

    fn members_now(&self) -> Vec<Arc<Member>> {
        self.inner.members.read().unwrap().clone()
    }

    fn member(&self, server: &str) -> Option<Arc<Member>> {
        self.inner
            .members
            .read()
            .unwrap()
            .iter()
            .find(|m| m.name() == server)
            .cloned()
    }
}

/// Connects `members` concurrently and waits for every one to settle.
async fn connect_all(members: Vec<Arc<Member>>) {
    let mut set = tokio::task::JoinSet::new();
    for m in members {
        // The outcome is the member's state (and its event); nothing more to do with it here.
        set.spawn(crate::base::boxed(async move { drop(m.ensure().await) }));
    }
    while set.join_next().await.is_some() {}
}

/// Closes `members` concurrently and waits for every one.
async fn close_all(members: Vec<Arc<Member>>) {
    let mut set = tokio::task::JoinSet::new();
    for m in members {
        set.spawn(crate::base::boxed(async move { m.close().await }));
    }
    while set.join_next().await.is_some() {}
}
