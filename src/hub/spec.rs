//! What a hub is made of, as plain data: the seam between reading a host's configuration file
//! (`hub::file`) and running its members (`hub::members` and the rest of `hub`).
//!
//! A [`HubSpec`] is what a configuration file says once it has been read: variables expanded,
//! `${input:…}` answered, other hosts' keys set aside. Running a hub takes one; a reload compares
//! the new one with the old member by member (`MemberSpec` equality: an equal member keeps its
//! connection and caches).

use serde_json::Value;

/// One server of the configuration file, ready to run.
///
/// Its `Debug` form shows the `client` object's `command`, its `url` without query or
/// credentials, and the names of its other keys: values (environment, headers, arguments,
/// tokens, answers to `${input:…}`) stay out of logs.
#[derive(Clone, PartialEq)]
pub struct MemberSpec {
    /// The entry's key in the file (`mcpServers.<name>` or `servers.<name>`): the member's name,
    /// the prefix of its namespaced tool names and the name events carry.
    pub name: String,
    /// False for an entry with `"disabled": true`: the member exists, in state `disabled`, and
    /// never starts.
    pub enabled: bool,
    /// The member's single-client configuration: the flat JSON object that
    /// `ClientConfig::from_json` (and `mcp_config_new`) takes, built from the entry's `command`,
    /// `args`, `env`, `cwd`, `url`, `headers`, `type` and the library's own namespaced settings.
    pub client: Value,
    /// Which of the member's tools the hub shows and routes to.
    pub tools: ToolFilter,
    /// Connect on first use instead of when the hub starts.
    pub lazy: bool,
    /// At most this many calls in flight to this member at once (`None`: no cap of the hub's).
    pub max_concurrency: Option<u32>,
}

/// Per-member allow and deny lists of tool names: exact names or `*` globs, matched against the
/// server's own tool name (not the namespaced one). A tool is shown when `allow` is `None` or
/// one of its patterns matches, and no pattern of `deny` matches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolFilter {
    /// Patterns a tool must match one of; `None` allows every tool.
    pub allow: Option<Vec<String>>,
    /// Patterns that hide a tool even when `allow` matches it.
    pub deny: Vec<String>,
}

impl std::fmt::Debug for MemberSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let client = self.client.as_object();
        let text = |key: &str| client.and_then(|c| c.get(key)).and_then(Value::as_str);
        let url = text("url").map(|u| match url::Url::parse(u) {
            Ok(mut u) => {
                let _ = u.set_username("");
                let _ = u.set_password(None);
                u.set_query(None);
                u.set_fragment(None);
                u.to_string()
            }
            Err(_) => "(not a URL)".to_string(),
        });
        let keys: Vec<&str> = client
            .into_iter()
            .flat_map(|c| c.keys())
            .map(String::as_str)
            .filter(|k| !matches!(*k, "command" | "url"))
            .collect();
        f.debug_struct("MemberSpec")
            .field("name", &self.name)
            .field("enabled", &self.enabled)
            .field("command", &text("command"))
            .field("url", &url)
            .field("client_keys", &keys)
            .field("tools", &self.tools)
            .field("lazy", &self.lazy)
            .field("max_concurrency", &self.max_concurrency)
            .finish()
    }
}

/// A whole configuration file, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HubSpec {
    /// The members in the file's order.
    pub members: Vec<MemberSpec>,
    /// Keys that other hosts define and this library ignores (`autoApprove`, `alwaysAllow`, …),
    /// each listed once with the server it was found on, for the host to show or log.
    pub warnings: Vec<String>,
    /// Entries that could not be made into a member, as (name, message), in the file's order:
    /// an unset variable, an input the host declined, a setting the single-client
    /// configuration refuses. The message names the server and the key and never holds an
    /// input's answer. A hub shows each as a member in state `failed` with that message; the
    /// rest of the file runs.
    pub failed: Vec<(String, String)>,
}
