//! Routing: a call by exported name (or by member and URI) goes to the member that owns it,
//! with that member's handlers, MRTR, tasks, auth and timeouts, under its call cap.

use super::members::Member;
use super::naming::near_matches;
use super::Hub;
use crate::client::{Client, ListKind, RequestOptions};
use crate::error::{Error, Result};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

impl Hub {
    /// Calls the tool the merged catalogue names `name` (e.g. `files__read_file`) on its member,
    /// with `arguments` and `opts` as [`Client::call_tool`] takes them. A name the catalogue does
    /// not have is an `InvalidArgument` error listing the nearest names it has. Waits for a
    /// place when the member's `max_concurrency` calls are in flight.
    pub async fn call_tool(&self, name: &str, arguments: Option<Value>, opts: &RequestOptions) -> Result<Value> {
        let opts = &*self.traced(opts);
        let (member, own) = self.route(ListKind::Tools, name, opts).await?;
        routed(&member, |c| async move { c.call_tool(&own, arguments, opts).await }).await
    }

    /// Calls member `server`'s tool `tool` (its own name, not the exported one), as
    /// [`Hub::call_tool`] does: the member's state, lazy start and call cap apply. A member the
    /// hub does not have, or a tool its tool filter withholds, is an `InvalidArgument` error and
    /// nothing is sent.
    pub async fn call_member_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Value>,
        opts: &RequestOptions,
    ) -> Result<Value> {
        self.check_open()?;
        let opts = &*self.traced(opts);
        let member = self.member(server).ok_or_else(|| self.unknown_member(server))?;
        if !member.spec.tools.allows(tool) {
            return Err(Error::invalid(format!(
                "member `{server}` does not offer a tool named `{tool}` (its tool filter withholds it)"
            )));
        }
        routed(&member, |c| async move { c.call_tool(tool, arguments, opts).await }).await
    }

    /// Gets the prompt the merged catalogue names `name` from its member.
    pub async fn get_prompt(&self, name: &str, arguments: Option<Value>, opts: &RequestOptions) -> Result<Value> {
        let opts = &*self.traced(opts);
        let (member, own) = self.route(ListKind::Prompts, name, opts).await?;
        routed(&member, |c| async move { c.get_prompt(&own, arguments, opts).await }).await
    }

    /// Reads resource `uri` from member `server` (resources keep their URIs; the merged list
    /// names each one's member in `_meta`).
    pub async fn read_resource(&self, server: &str, uri: &str, opts: &RequestOptions) -> Result<Value> {
        self.check_open()?;
        let opts = &*self.traced(opts);
        let member = self.member(server).ok_or_else(|| self.unknown_member(server))?;
        routed(&member, |c| async move { c.read_resource(uri, opts).await }).await
    }

    /// Asks member `server` to report changes of resource `uri`: each arrives as a
    /// [`super::HubEvent::ResourceUpdated`] event. Legacy members get `resources/subscribe`;
    /// modern ones a `subscriptions/listen` for the URI, held until the member closes.
    pub async fn subscribe_resource(&self, server: &str, uri: &str, opts: &RequestOptions) -> Result<()> {
        self.check_open()?;
        let opts = &*self.traced(opts);
        let member = self.member(server).ok_or_else(|| self.unknown_member(server))?;
        member
            .subscribe(uri, opts)
            .await
            .map_err(|e| e.context(&format!("member `{}`", member.name())))
    }

    fn unknown_member(&self, server: &str) -> Error {
        let members = self.members_now();
        let names: Vec<&str> = members.iter().map(|m| m.name()).collect();
        Error::invalid(format!(
            "no member is named `{server}`; the members are: {}",
            names.join(", ")
        ))
    }

    /// The member and own name behind exported `name`. A name not in the catalogue as last
    /// built is looked up once more in a fresh build (a member may have just connected).
    async fn route(&self, kind: ListKind, name: &str, opts: &RequestOptions) -> Result<(Arc<Member>, String)> {
        let merged = self.merged(kind, opts).await?;
        if let Some((m, own)) = merged.routes.get(name) {
            return Ok((m.clone(), own.clone()));
        }
        let what = &kind.key()[..kind.key().len() - 1];
        let near = near_matches(name, merged.routes.keys().map(String::as_str));
        let hint = if near.is_empty() {
            format!("the hub has {} {}", merged.routes.len(), kind.key())
        } else {
            format!(
                "did you mean {}?",
                near.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            )
        };
        Err(Error::invalid(format!(
            "no {what} is named `{name}` in the hub; {hint}"
        )))
    }
}

/// Runs `call` on `member`'s connected client within its call cap; a failure names the member,
/// and a lost connection moves it out of the catalogue.
async fn routed<'a, F, Fut>(member: &'a Arc<Member>, call: F) -> Result<Value>
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = Result<Value>> + 'a,
{
    let client = member.ensure().await?;
    let _place = member.permit().await;
    call(client).await.map_err(|e| {
        member.after_error(&e);
        e.context(&format!("member `{}`", member.name()))
    })
}
