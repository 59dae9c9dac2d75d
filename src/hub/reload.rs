//! Reload: applying a changed spec to a running hub. Members are matched by name; an equal
//! [`MemberSpec`](super::MemberSpec) keeps its member (connection, lists, caches), a changed one
//! is closed and replaced, a new one is started, a missing one is closed.

use super::members::{self, Member};
use super::{check_names, close_all, connect_all, Hub, HubSpec, MemberState};
use crate::error::Result;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a reload did, by member name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Members new in the spec (started unless disabled or lazy).
    pub added: Vec<String>,
    /// Members the spec no longer has (closed).
    pub removed: Vec<String>,
    /// Members whose spec changed, or that had failed (closed, then started again from the
    /// new spec).
    pub restarted: Vec<String>,
    /// Members left as they were, connections and caches included.
    pub unchanged: Vec<String>,
}

impl ReloadReport {
    /// `{"added": [...], "removed": [...], "restarted": [...], "unchanged": [...]}` (member names).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "added": self.added,
            "removed": self.removed,
            "restarted": self.restarted,
            "unchanged": self.unchanged,
        })
    }
}

impl Hub {
    /// Applies `spec`: starts added members, closes removed ones, restarts changed ones and
    /// leaves equal ones alone; returns when every started member has connected or failed.
    /// The members take `spec`'s order. Two members of one name refuse the whole spec.
    pub async fn reload(&self, spec: HubSpec) -> Result<ReloadReport> {
        self.check_open()?;
        check_names(&spec)?;
        let _one_at_a_time = self.inner.reload_lock.lock().await;
        let old = self.members_now();
        let handlers = self.inner.handlers.read().unwrap().clone();
        let mut report = ReloadReport::default();
        let (mut next, mut start, mut stop) = (Vec::new(), Vec::new(), Vec::new());
        for (member_spec, refused) in members::entries(spec.members, spec.failed) {
            let name = member_spec.name.clone();
            let previous = old.iter().find(|m| m.name() == name);
            // A failed member has no connection to keep: an equal spec starts it again.
            let keep =
                |m: &&Arc<Member>| refused.is_none() && m.spec == member_spec && m.state() != MemberState::Failed;
            if let Some(kept) = previous.filter(keep) {
                report.unchanged.push(name);
                next.push(kept.clone());
                continue;
            }
            match previous {
                Some(replaced) => {
                    report.restarted.push(name);
                    stop.push(replaced.clone());
                }
                None => report.added.push(name),
            }
            let member = Member::new(
                (member_spec, refused),
                &self.inner.options,
                &handlers,
                self.inner.emitter.clone(),
                self.inner.generation.clone(),
            );
            if member.starts_eagerly() {
                start.push(member.clone());
            }
            next.push(member);
        }
        for m in &old {
            if !next.iter().any(|n| n.name() == m.name()) {
                report.removed.push(m.name().to_string());
                stop.push(m.clone());
            }
        }
        *self.inner.members.write().unwrap() = next;
        *self.inner.warnings.write().unwrap() = spec.warnings;
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        // Old servers go before new ones start: a changed member may reuse a port or a file.
        close_all(stop).await;
        connect_all(start).await;
        Ok(report)
    }
}
