//! The merged catalogue: every member's tools, prompts, resources and resource templates as one
//! list each, and the routes from exported names back to members.
//!
//! Each item carries its member in `_meta`: `"mcp-client/server"` is the member's name and,
//! for tools and prompts, `"mcp-client/name"` the item's own name on its server (its `name`
//! field is the exported one). Members' lists are kept until a `list_changed` notification of
//! theirs (or a reconnect) drops them; the merged list is rebuilt only when one of them, or a
//! member's state, changed since it was built.

use super::members::Member;
use super::naming::{exported, full_name};
use super::Hub;
use crate::base::BoxFuture;
use crate::client::{ListKind, RequestOptions};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

/// `_meta` key naming the member an item comes from.
pub const META_SERVER: &str = "mcp-client/server";
/// `_meta` key holding a tool's or prompt's name on its own server.
pub const META_NAME: &str = "mcp-client/name";

/// One merged list and, for tools and prompts, where each exported name goes.
pub(crate) struct Merged {
    pub value: Arc<Value>,
    pub routes: HashMap<String, (Arc<Member>, String)>,
    /// `value` as JSON text, written the first time it is asked for (the C ABI's lists).
    text: OnceLock<Vec<u8>>,
}

impl Merged {
    /// The merged list as JSON text, serialised once per build.
    pub fn text(&self) -> &[u8] {
        self.text
            .get_or_init(|| serde_json::to_vec(&*self.value).unwrap_or_else(|_| b"null".to_vec()))
    }
}

/// One member's list as a fetch ended, by the member's index.
type Fetched = (usize, Result<Arc<Vec<Value>>>);

/// A merged list and the catalogue generation it was built at.
pub(crate) type Built = (u64, Arc<Merged>);

fn index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Prompts => 1,
        ListKind::Resources => 2,
        ListKind::ResourceTemplates => 3,
    }
}

/// Whether the kind's items are renamed (and routed by name).
fn named(kind: ListKind) -> bool {
    matches!(kind, ListKind::Tools | ListKind::Prompts)
}

/// `item` with its member's name (and its own name) in `_meta`.
fn tagged(item: &Value, member: &str, own_name: Option<&str>, name: Option<&str>) -> Value {
    let mut item = item.clone();
    let Some(obj) = item.as_object_mut() else {
        return item;
    };
    if let Some(name) = name {
        obj.insert("name".into(), json!(name));
    }
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(META_SERVER.into(), json!(member));
        if let Some(own) = own_name {
            meta.insert(META_NAME.into(), json!(own));
        }
    }
    item
}

impl Hub {
    /// Every connected member's tools as one `{"tools": [...]}`, names exported
    /// (`<server><separator><tool>`, rewritten to `^[a-zA-Z0-9_-]{1,64}$` when needed), each
    /// tool's member in `_meta` (see [`Hub::list`]).
    pub async fn list_tools(&self) -> Result<Arc<Value>> {
        self.list(ListKind::Tools).await
    }

    /// Every connected member's prompts, named as tools are.
    pub async fn list_prompts(&self) -> Result<Arc<Value>> {
        self.list(ListKind::Prompts).await
    }

    /// Every connected member's resources (URIs unchanged: read them with the member's name).
    pub async fn list_resources(&self) -> Result<Arc<Value>> {
        self.list(ListKind::Resources).await
    }

    /// Every connected member's resource templates.
    pub async fn list_resource_templates(&self) -> Result<Arc<Value>> {
        self.list(ListKind::ResourceTemplates).await
    }

    /// The merged list of `kind`: `{<kind's key>: [...]}` over the members that are connected
    /// (lazy ones connect here), in the configuration's order. Each item's `_meta` has
    /// `"mcp-client/server"` (its member) and, for tools and prompts, `"mcp-client/name"` (its
    /// name on that member). A member whose list cannot be fetched is left out (a `Log` event
    /// says why); two members exporting one name is an `InvalidArgument` error naming both.
    /// The list is shared: a list that has not changed since the last call is the same
    /// allocation, handed out without a copy.
    pub async fn list(&self, kind: ListKind) -> Result<Arc<Value>> {
        Ok(self.merged(kind, &RequestOptions::default()).await?.value.clone())
    }

    /// [`Hub::list`] as JSON text (kept with the merged list: a list that has not changed is
    /// not written again), the members' lists fetched with `opts`' trace context and span sink.
    pub(crate) async fn list_text(&self, kind: ListKind, opts: &RequestOptions) -> Result<Vec<u8>> {
        Ok(self.merged(kind, opts).await?.text().to_vec())
    }

    /// The merged list of `kind`, rebuilt only when something it shows changed. The members'
    /// lists it fetches go with `opts`' trace context (else the hub's source) and span sink.
    pub(crate) async fn merged(&self, kind: ListKind, opts: &RequestOptions) -> Result<Arc<Merged>> {
        self.check_open()?;
        for m in self.members_now() {
            m.check_lost();
        }
        // Read before anything the build reads: a change arriving meanwhile (a fetch's own
        // included) makes the next call build again rather than keep a stale list.
        let generation = self.inner.generation.load(Ordering::SeqCst);
        if let Some((built, merged)) = &self.inner.merged.lock().unwrap()[index(kind)] {
            if *built == generation {
                return Ok(merged.clone());
            }
        }
        let members: Vec<Arc<Member>> = self.members_now().into_iter().filter(|m| m.in_catalogue()).collect();
        let fetch_opts = RequestOptions {
            trace: opts.trace.clone(),
            trace_source: opts.trace_source.clone(),
            spans: opts.spans.clone(),
            ..RequestOptions::default()
        };
        let lists = self.fetch(kind, members, &self.traced(&fetch_opts)).await;
        let merged = Arc::new(self.build(kind, &lists)?);
        self.inner.merged.lock().unwrap()[index(kind)] = Some((generation, merged.clone()));
        Ok(merged)
    }

    /// Each member's list of `kind`: those held at once, the others fetched concurrently, within
    /// this future (so a trace context source in `opts` is asked on the thread polling it).
    async fn fetch(
        &self,
        kind: ListKind,
        members: Vec<Arc<Member>>,
        opts: &RequestOptions,
    ) -> Vec<(Arc<Member>, Arc<Vec<Value>>)> {
        let mut lists: Vec<Option<Arc<Vec<Value>>>> = members.iter().map(|m| m.cached(kind)).collect();
        let fetches: Vec<BoxFuture<'_, Fetched>> = (0..members.len())
            .filter(|&i| lists[i].is_none())
            .map(|i| {
                let m = members[i].clone();
                Box::pin(async move { (i, m.list(kind, opts).await) }) as BoxFuture<'_, _>
            })
            .collect();
        for joined in join_all(fetches).await {
            match joined {
                Some((i, Ok(items))) => lists[i] = Some(items),
                Some((i, Err(e))) => {
                    members[i].warn(&format!("{} failed: {}", kind.method(), e.message()));
                }
                None => {} // a panicking fetch leaves its member out
            }
        }
        members
            .into_iter()
            .zip(lists)
            .filter_map(|(m, l)| l.map(|l| (m, l)))
            .collect()
    }

    fn build(&self, kind: ListKind, lists: &[(Arc<Member>, Arc<Vec<Value>>)]) -> Result<Merged> {
        let options = &self.inner.options;
        let mut items = Vec::new();
        let mut routes: HashMap<String, (Arc<Member>, String)> = HashMap::new();
        for (member, list) in lists {
            for item in list.iter() {
                if !named(kind) {
                    items.push(tagged(item, member.name(), None, None));
                    continue;
                }
                let Some(own) = item["name"].as_str() else { continue };
                let name = exported(&full_name(member.name(), &options.separator, options.prefix, own));
                if let Some((other, other_own)) = routes.get(&name) {
                    return Err(Error::invalid(format!(
                        "the {} name `{name}` stands for both `{other_own}` of member `{}` and `{own}` of \
                         member `{}`: prefix names with their member (HubOptions::prefix) or hide one \
                         with the member's tool filter",
                        &kind.key()[..kind.key().len() - 1],
                        other.name(),
                        member.name()
                    )));
                }
                items.push(tagged(item, member.name(), Some(own), Some(&name)));
                routes.insert(name, (member.clone(), own.to_string()));
            }
        }
        Ok(Merged {
            value: Arc::new(json!({ kind.key(): items })),
            routes,
            text: OnceLock::new(),
        })
    }
}

/// Runs `futures` concurrently within the calling future and gives their outputs in order
/// (`None` for one that panicked, which is dropped there).
async fn join_all<T>(futures: Vec<BoxFuture<'_, T>>) -> Vec<Option<T>> {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::task::Poll;
    let mut slots: Vec<Option<BoxFuture<'_, T>>> = futures.into_iter().map(Some).collect();
    let mut out: Vec<Option<T>> = slots.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, done) in slots.iter_mut().zip(out.iter_mut()) {
            let Some(fut) = slot else { continue };
            match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
                Ok(Poll::Pending) => pending = true,
                Ok(Poll::Ready(value)) => {
                    *done = Some(value);
                    *slot = None;
                }
                Err(_) => *slot = None,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    out
}
