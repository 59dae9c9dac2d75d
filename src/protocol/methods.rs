//! Method names the client sends or answers.

pub const DISCOVER: &str = "server/discover";
pub const INITIALIZE: &str = "initialize";
pub const INITIALIZED: &str = "notifications/initialized";
pub const PING: &str = "ping";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_CALL: &str = "tools/call";
pub const PROMPTS_LIST: &str = "prompts/list";
pub const PROMPTS_GET: &str = "prompts/get";
pub const RESOURCES_LIST: &str = "resources/list";
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
pub const RESOURCES_READ: &str = "resources/read";
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
pub const COMPLETION_COMPLETE: &str = "completion/complete";
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

pub const ELICITATION_CREATE: &str = "elicitation/create";
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
pub const ROOTS_LIST: &str = "roots/list";

pub const NOTIFY_CANCELLED: &str = "notifications/cancelled";
pub const NOTIFY_PROGRESS: &str = "notifications/progress";
#[allow(dead_code)] // named with its siblings; it reaches the host as any notification does
pub const NOTIFY_MESSAGE: &str = "notifications/message";
pub const NOTIFY_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
pub const NOTIFY_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
pub const NOTIFY_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
pub const NOTIFY_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
pub const NOTIFY_RESOURCES_UPDATED: &str = "notifications/resources/updated";

/// The methods whose results may be `input_required` (SEP-2322).
pub fn allows_input_required(method: &str) -> bool {
    matches!(method, TOOLS_CALL | PROMPTS_GET | RESOURCES_READ)
}
