//! The client's side of tool pinning (`crate::pin`): every `tools/list` page the client returns,
//! fresh or from the response cache, passes through [`Client::pinned`]; a `tools/call` of a
//! withheld tool fails before anything is sent; and the host's API over the pins.

use super::{Client, Reply, RequestOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::pin::{PinHook, Pins};
use crate::protocol::methods;
use serde_json::Value;
use std::sync::Arc;

impl Client {
    /// `Ok` when tool pinning is on for this client, else the `Unsupported` error saying so.
    pub(crate) fn tool_pinning_on(&self) -> Result<()> {
        self.pins().map(drop)
    }

    fn pins(&self) -> Result<&Arc<Pins>> {
        self.inner.pins.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                "tool pinning is off for this client (configuration key tool_pinning)",
            )
        })
    }

    /// `reply` to `method` after the pin check: a `tools/list` page without the tools the
    /// policy withholds. Other methods, and clients without pinning, pass untouched.
    pub(super) async fn pinned(
        &self,
        method: &str,
        first_page: bool,
        reply: Reply,
        opts: &RequestOptions,
    ) -> Result<Reply> {
        match &self.inner.pins {
            // Boxed: a rare leg that would otherwise size every request's future.
            Some(pins) if method == methods::TOOLS_LIST => {
                Box::pin(self.check_pins(pins, first_page, reply, opts)).await
            }
            _ => Ok(reply),
        }
    }

    async fn check_pins(&self, pins: &Pins, first_page: bool, reply: Reply, opts: &RequestOptions) -> Result<Reply> {
        let Value::Object(mut page) = reply.into_value()? else {
            return Err(Error::protocol("the tools/list result is not an object"));
        };
        let timeout = opts.timeout.unwrap_or(self.inner.config.request_timeout);
        for event in pins.check_page(&mut page, first_page, timeout).await {
            let what = match event.change {
                crate::pin::PinChange::Removed => "was removed".to_string(),
                crate::pin::PinChange::New => "is new".to_string(),
                crate::pin::PinChange::Changed => format!("changed:\n{}", event.diff),
            };
            let message = format!(
                "tool {} {what} (policy {})",
                crate::untrusted::shown(&event.tool),
                event.policy.as_str()
            );
            self.inner.hooks.log("tool_pinning", "warning", &message);
        }
        Ok(Reply::from(Value::Object(page)))
    }

    /// The error a call to `name` fails with when pinning withholds it.
    pub(super) fn pin_refusal(&self, name: &str) -> Option<Error> {
        self.inner.pins.as_ref().and_then(|p| p.refuse(name))
    }

    /// The hook told of every tool pin change (and, under policy `ask`, deciding it); `None`
    /// removes it. Without pinning configured it is kept nowhere.
    pub fn on_tool_pin(&self, hook: Option<PinHook>) {
        if let Some(pins) = &self.inner.pins {
            pins.set_hook(hook);
        }
    }

    /// Where pins are kept (records keyed by server identity; see [`crate::TokenStore`]),
    /// instead of memory or `tool_pinning.store_dir`. Fails when pinning is off.
    pub async fn set_tool_pin_store(&self, store: Arc<dyn crate::auth::TokenStore>) -> Result<()> {
        self.pins()?.set_store(store).await;
        Ok(())
    }

    /// The pins of this client's server with each tool's state (see `crate::pin`'s `Pins::list`).
    pub async fn tool_pins(&self) -> Result<Value> {
        Ok(self.pins()?.list().await)
    }

    /// Approves the last listed definition of tool `name` (changed or new): it is pinned, listed
    /// and callable again.
    pub async fn approve_tool_pin(&self, name: &str) -> Result<()> {
        self.pins()?.approve(name).await
    }

    /// Forgets the pin of tool `name` (pinned afresh when next listed), or with `None` every pin
    /// of this server (the next listing is pinned as a first use).
    pub async fn forget_tool_pin(&self, name: Option<&str>) -> Result<()> {
        self.pins()?.forget(name).await;
        Ok(())
    }
}
