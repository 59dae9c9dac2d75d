//! What a hub tells its host: one listener for every member's state changes, list changes,
//! resource updates, log lines and other notifications.

use crate::client::{ListKind, LogLine};
use crate::protocol::methods;
use serde_json::{json, Value};
use std::sync::{Arc, RwLock};

/// Where a member is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemberState {
    /// Lazy and not used yet: it connects on first use.
    Idle,
    /// Its server is starting or being connected to.
    Connecting,
    /// Connected: its tools, prompts and resources are in the merged catalogue.
    Connected,
    /// Its connection was lost and the client's reconnect policy is bringing it back.
    Reconnecting,
    /// It could not start, connect or authorize, or its connection was lost for good (seen at
    /// the member's next use or state read); the member's error says why. It stays out of the
    /// catalogue until a reload starts it again.
    Failed,
    /// Disabled in the configuration: it never starts.
    Disabled,
    /// The hub was closed, or a reload removed or replaced the member.
    Closed,
}

impl MemberState {
    /// The state's name: `idle`, `connecting`, `connected`, `reconnecting`, `failed`,
    /// `disabled`, `closed`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemberState::Idle => "idle",
            MemberState::Connecting => "connecting",
            MemberState::Connected => "connected",
            MemberState::Reconnecting => "reconnecting",
            MemberState::Failed => "failed",
            MemberState::Disabled => "disabled",
            MemberState::Closed => "closed",
        }
    }
}

/// One thing that happened in a hub; every event names the member (`server`) it came from.
#[derive(Debug, Clone, PartialEq)]
pub enum HubEvent {
    /// A member's state changed; `error` says why for `Failed` (and for `Reconnecting`, what
    /// was lost).
    State {
        /// The member.
        server: String,
        /// Its new state.
        state: MemberState,
        /// The error behind the state, when there is one.
        error: Option<String>,
    },
    /// A member's list of this kind changed (`notifications/*/list_changed`): the hub's merged
    /// list already reflects it (the next list call fetches the member's list again).
    ListChanged {
        /// The member.
        server: String,
        /// Which list (a resources change is reported for `Resources` and `ResourceTemplates`).
        kind: ListKind,
    },
    /// A resource the host subscribed to changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The member.
        server: String,
        /// The resource.
        uri: String,
    },
    /// A diagnostic line: the member server's stderr, or the library's warning about it.
    Log {
        /// The member.
        server: String,
        /// The line.
        line: LogLine,
    },
    /// Any other notification of the member's server (`notifications/message` log messages,
    /// `notifications/elicitation/complete`, …), as the client's notification listener gets it.
    Notification {
        /// The member.
        server: String,
        /// The notification's method.
        method: String,
        /// Its params.
        params: Value,
    },
}

impl HubEvent {
    /// The event as JSON, `type` first: `{"type": "state", "server", "state", "error"?}`,
    /// `{"type": "list_changed", "server", "list": "tools" | "prompts" | "resources" |
    /// "resourceTemplates"}`, `{"type": "resource_updated", "server", "uri"}`, `{"type": "log",
    /// "server", "source", "level", "message"}`, `{"type": "notification", "server", "method",
    /// "params"}`.
    pub fn to_json(&self) -> Value {
        match self {
            HubEvent::State { server, state, error } => {
                let mut v = json!({"type": "state", "server": server, "state": state.as_str()});
                if let Some(e) = error {
                    v["error"] = json!(e);
                }
                v
            }
            HubEvent::ListChanged { server, kind } => {
                json!({"type": "list_changed", "server": server, "list": kind.key()})
            }
            HubEvent::ResourceUpdated { server, uri } => {
                json!({"type": "resource_updated", "server": server, "uri": uri})
            }
            HubEvent::Log { server, line } => json!({"type": "log", "server": server, "source": line.source,
                "level": line.level, "message": line.message}),
            HubEvent::Notification { server, method, params } => {
                json!({"type": "notification", "server": server, "method": method, "params": params})
            }
        }
    }
}

/// The hub's listener. It runs on the thread that received the event (a runtime thread while a
/// member's connection delivers it): it should return quickly and must not block on the hub.
pub type HubEventFn = Arc<dyn Fn(&HubEvent) + Send + Sync>;

/// The listener slot every member reports through.
#[derive(Default)]
pub(crate) struct Emitter {
    listener: RwLock<Option<HubEventFn>>,
}

impl Emitter {
    pub fn set(&self, listener: Option<HubEventFn>) {
        let old = std::mem::replace(&mut *self.listener.write().unwrap(), listener);
        drop(old); // outside the lock: dropping may run host code
    }

    /// Hands `event` to the listener (cloned out first: no lock is held while it runs).
    pub fn emit(&self, event: HubEvent) {
        let listener = self.listener.read().unwrap().clone();
        if let Some(f) = listener {
            f(&event);
        }
    }
}

/// The list a `list_changed` notification is about (resources: both resource lists).
pub(crate) fn changed_lists(method: &str) -> &'static [ListKind] {
    match method {
        methods::NOTIFY_TOOLS_LIST_CHANGED => &[ListKind::Tools],
        methods::NOTIFY_PROMPTS_LIST_CHANGED => &[ListKind::Prompts],
        methods::NOTIFY_RESOURCES_LIST_CHANGED => &[ListKind::Resources, ListKind::ResourceTemplates],
        _ => &[],
    }
}
