//! Tool pinning: trust on first use for tool definitions. Each tool's definition (its pinned
//! members in canonical JSON, `canon`) is remembered with its SHA-256 digest the first time a
//! server is listed, keyed by the server's identity (`identity`); every later `tools/list` page
//! the client sees (a first connect, a cache refresh, after `list_changed`, after a reconnect)
//! is checked against the pins (`book`). What a changed or new tool does then is the policy's:
//! `warn` reports it, `block` withholds it from the list and refuses its calls until the host
//! approves it, `ask` lets the host's hook decide. Pins live in a [`crate::TokenStore`] (the
//! file store of `auth` by default when `store_dir` is set: its locking and atomic writes), one
//! record per server identity.
//!
//! The client calls in through [`Pins::check_page`] (on every `tools/list` answer) and
//! [`Pins::refuse`] (before a `tools/call`); it imports nothing of the client.

mod book;
mod canon;
mod identity;

pub use book::Pins;
pub use identity::identity_of;

use crate::base::BoxFuture;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;

/// What a client does when a pinned tool changes, or a new one appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PinPolicy {
    /// No pins are kept or checked.
    #[default]
    Off,
    /// Changed and new tools are reported (a [`PinEvent`] to the hook, a log warning) and stay
    /// listed and callable.
    Warn,
    /// Changed and new tools are reported, withheld from lists (and so from exports), and their
    /// calls fail with [`crate::ErrorKind::ToolPinChanged`] until approved.
    Block,
    /// The host's hook decides each change: `true` approves (the new definition is pinned),
    /// `false` blocks as [`PinPolicy::Block`] does. Without a hook, as `Block`.
    Ask,
}

impl PinPolicy {
    /// The name used in the configuration and in events.
    pub fn as_str(self) -> &'static str {
        match self {
            PinPolicy::Off => "off",
            PinPolicy::Warn => "warn",
            PinPolicy::Block => "block",
            PinPolicy::Ask => "ask",
        }
    }
}

/// The `tool_pinning` settings of a client (JSON key `tool_pinning`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PinSettings {
    /// What a change does.
    pub policy: PinPolicy,
    /// The server identity pins are filed under; `None`: derived from the transport
    /// (stdio: command, arguments, working directory; HTTP: origin and path).
    pub identity: Option<String>,
    /// A directory for the file store (pins survive restarts); `None`: in memory, unless the
    /// host sets a store ([`crate::Client::set_tool_pin_store`]).
    pub store_dir: Option<PathBuf>,
    /// The `_meta` keys left out of a definition; `None`: the default list (trace context and
    /// freshness stamps: `traceparent`, `tracestate`, `baggage`, `etag`, `lastModified`,
    /// `timestamp`, each also as the last segment of a prefixed key).
    pub ignore_meta: Option<Vec<String>>,
}

/// What happened to a tool's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinChange {
    /// A tool not pinned for this server (on a server whose tools were pinned before).
    New,
    /// A pinned tool whose definition's digest differs from its pin.
    Changed,
    /// A pinned tool missing from a complete listing.
    Removed,
}

impl PinChange {
    fn as_str(self) -> &'static str {
        match self {
            PinChange::New => "new",
            PinChange::Changed => "changed",
            PinChange::Removed => "removed",
        }
    }
}

/// A change seen in a listing, as the hook and the log get it.
#[derive(Debug, Clone, PartialEq)]
pub struct PinEvent {
    /// The server identity the pins are filed under.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// What changed.
    pub change: PinChange,
    /// The pinned definition (`Changed`, `Removed`).
    pub old: Option<Value>,
    /// The listed definition (`New`, `Changed`).
    pub new: Option<Value>,
    /// One line per changed place (`Changed`), empty otherwise.
    pub diff: String,
    /// The policy in force.
    pub policy: PinPolicy,
}

impl PinEvent {
    /// `{"type": "tool_pin", "server", "tool", "change", "policy", "old", "new", "diff"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "type": "tool_pin",
            "server": self.server,
            "tool": self.tool,
            "change": self.change.as_str(),
            "policy": self.policy.as_str(),
            "old": self.old,
            "new": self.new,
            "diff": self.diff,
        })
    }
}

/// The host's hook: told of every [`PinEvent`]; under [`PinPolicy::Ask`] its answer approves
/// (`true`) or blocks (`false`) a new or changed tool, under the other policies it is ignored.
/// A hook that has not answered within the listing's request timeout counts as `false`. The
/// listing waits for it with the client's pins locked: the hook must not call the pin API
/// (`tool_pins`, `approve_tool_pin`, `forget_tool_pin`) itself, only arrange for it later.
pub type PinHook = Arc<dyn Fn(PinEvent) -> BoxFuture<'static, bool> + Send + Sync>;
