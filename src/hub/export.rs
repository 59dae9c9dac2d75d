//! The hub for `crate::export`: its merged catalogue exported with each tool's member and own
//! name, and the hub as the [`ToolCaller`] that makes the model's calls, each on the member its
//! route names (the member's state, lazy start, call cap and tool filter apply).

use super::catalogue::{META_NAME, META_SERVER};
use super::Hub;
use crate::base::BoxFuture;
use crate::client::RequestOptions;
use crate::error::{Error, Result};
use crate::export::{export_tools, ExportOptions, Exported, Origin, ToolCaller};
use serde_json::Value;
use std::collections::HashMap;

/// The member and own name of each tool of a merged tool list (a `{"tools": [...]}` or its
/// array), read from the `_meta` the catalogue gives every item; tools without it are left out.
pub fn origins(tools: &Value) -> HashMap<String, Origin> {
    let list = tools.get("tools").unwrap_or(tools);
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?;
            let meta = tool.get("_meta")?;
            let origin = Origin {
                server: Some(meta.get(META_SERVER)?.as_str()?.to_string()),
                tool: meta.get(META_NAME)?.as_str()?.to_string(),
            };
            Some((name.to_string(), origin))
        })
        .collect()
}

impl Hub {
    /// The merged tool list (as [`Hub::list_tools`], lazy members connecting) exported in the
    /// format `opts` names, each route naming the tool's member and its own name there:
    /// dispatch it on this hub ([`crate::export::Dispatcher::dispatch`]).
    pub async fn export_tools(&self, opts: &ExportOptions) -> Result<Exported> {
        let tools = self.list_tools().await?;
        export_tools(&tools, Some(&origins(&tools)), opts).map_err(Error::invalid)
    }
}

/// A route with a server goes to that member's own tool ([`Hub::call_member_tool`]); one
/// without (an export of a list without origins) names a tool of the merged catalogue.
impl ToolCaller for Hub {
    fn call_tool<'a>(
        &'a self,
        server: Option<&'a str>,
        tool: &'a str,
        arguments: Value,
        opts: &'a RequestOptions,
    ) -> BoxFuture<'a, Result<Value>> {
        match server {
            Some(server) => Box::pin(self.call_member_tool(server, tool, Some(arguments), opts)),
            None => Box::pin(Hub::call_tool(self, tool, Some(arguments), opts)),
        }
    }
}
