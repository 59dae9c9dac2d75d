//! What a hub is made of, as plain data: the seam between reading a host's configuration file
//! (`hub::file`) and running its members (`hub::members` and the rest of `hub`).
//!
//! A [`HubSpec`] is what a configuration file says once it has been read: variables expanded,
//! `${input:…}` answered, other hosts' keys set aside. Running a hub takes one; a reload compares
//! the new one with the old member by member (`MemberSpec` equality: an equal member keeps its
//! connection and caches).

use serde_json::Value;

/// One server of the configuration file, ready to run.
#[derive(Debug, Clone, PartialEq)]
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

/// A whole configuration file, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HubSpec {
    /// The members in the file's order.
    pub members: Vec<MemberSpec>,
    /// Keys that other hosts define and this library ignores (`autoApprove`, `alwaysAllow`, …),
    /// each listed once with the server it was found on, for the host to show or log.
    pub warnings: Vec<String>,
}
