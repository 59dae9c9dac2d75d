//! Registering the host's handlers and listeners, and the capabilities they declare.

use super::{
    input_modes, Client, ElicitationModes, InputHandler, InputKind, LogFn, NotificationFn, SKILLS_EXTENSION,
    TASKS_EXTENSION,
};
use crate::error::Result;
use crate::protocol::era::Era;
use serde_json::{json, Map, Value};
use std::sync::Arc;

impl Client {
    /// Registers (or with `None` removes) the handler for one kind of input; registering
    /// declares the matching client capability.
    pub fn set_handler(&self, kind: InputKind, handler: Option<Arc<dyn InputHandler>>) {
        self.inner.hooks.set_handler(kind, handler);
    }

    /// Answers `elicitation/create` requests (and declares the capability).
    pub fn on_elicitation(&self, handler: impl InputHandler) {
        self.set_handler(InputKind::Elicitation, Some(Arc::new(handler)));
    }
    /// Registers the elicitation handler for the given modes and declares exactly those
    /// (`elicitation.url` for URL mode). Requests in another mode are left to the host
    /// (`InputRequired`; modern servers answer -32021 instead of asking), like a kind without a
    /// handler. `InvalidArgument`, registering nothing, for a handler that could never be asked:
    /// no mode, or a mode the configuration's `capabilities` override does not declare.
    pub fn on_elicitation_modes(&self, modes: ElicitationModes, handler: impl InputHandler) -> Result<()> {
        self.set_elicitation_handler(Some(Arc::new(handler)), modes)
    }
    /// As [`Client::on_elicitation_modes`], for a shared handler (`None` removes it, whatever
    /// `modes`).
    pub fn set_elicitation_handler(
        &self,
        handler: Option<Arc<dyn InputHandler>>,
        modes: ElicitationModes,
    ) -> Result<()> {
        if handler.is_some() {
            modes.check_registration(self.inner.config.capabilities.as_ref())?;
        }
        self.inner.hooks.set_elicitation(handler, modes);
        Ok(())
    }
    /// Answers `sampling/createMessage` requests (and declares the capability).
    pub fn on_sampling(&self, handler: impl InputHandler) {
        self.set_handler(InputKind::Sampling, Some(Arc::new(handler)));
    }
    /// Answers `roots/list` requests (and declares the capability).
    pub fn on_roots(&self, handler: impl InputHandler) {
        self.set_handler(InputKind::Roots, Some(Arc::new(handler)));
    }

    /// Every server notification (progress excluded): list_changed, resources/updated,
    /// log messages, listen traffic.
    pub fn on_notification(&self, listener: Option<NotificationFn>) {
        self.inner.hooks.set_notification(listener);
    }

    /// The server's stderr lines and the library's warnings.
    pub fn on_log(&self, listener: Option<LogFn>) {
        self.inner.hooks.set_log(listener);
    }

    /// The capabilities this client declares: the host's override, or one entry per handler.
    pub fn capabilities(&self, era: Era) -> Value {
        if let Some(caps) = &self.inner.config.capabilities {
            return caps.clone();
        }
        let hooks = &self.inner.hooks;
        let manual = &self.inner.config.manual_input;
        let mut caps = Map::new();
        if let Some(elicitation) = input_modes::elicitation_capability(hooks.elicitation_modes(), manual.elicitation) {
            caps.insert("elicitation".into(), elicitation);
        }
        if hooks.handler(InputKind::Sampling).is_some() || manual.sampling {
            let sampling = match self.inner.config.sampling_tools {
                true => json!({"tools": {}}),
                false => json!({}),
            };
            caps.insert("sampling".into(), sampling);
        }
        if hooks.handler(InputKind::Roots).is_some() || manual.roots {
            let roots = match era {
                Era::Legacy => json!({"listChanged": true}),
                Era::Modern => json!({}),
            };
            caps.insert("roots".into(), roots);
        }
        let mut extensions = Map::new();
        if self.inner.config.skills {
            extensions.insert(SKILLS_EXTENSION.into(), json!({}));
        }
        if self.inner.config.apps {
            use crate::protocol::meta::{APPS_EXTENSION, APP_MIME_TYPE};
            extensions.insert(APPS_EXTENSION.into(), json!({"mimeTypes": [APP_MIME_TYPE]}));
        }
        if self.inner.config.tasks && era == Era::Modern {
            extensions.insert(TASKS_EXTENSION.into(), json!({}));
        }
        // SEP-990: a client authorizing through the enterprise IdP says so.
        if self
            .inner
            .config
            .oauth
            .as_ref()
            .is_some_and(|o| o.grant == crate::auth::Grant::Enterprise)
        {
            extensions.insert(crate::auth::ENTERPRISE_AUTH_EXTENSION.into(), json!({}));
        }
        if !extensions.is_empty() {
            caps.insert("extensions".into(), Value::Object(extensions));
        }
        Value::Object(caps)
    }

    /// The browser step of OAuth authorization-code flows (see `crate::auth`): the handler
    /// opens the authorization URL and hands back the redirect. `None` removes it.
    pub fn set_authorization_handler(&self, handler: Option<Arc<dyn crate::auth::AuthorizationHandler>>) {
        self.inner.auth.set_handler(handler);
    }

    /// As [`Client::set_authorization_handler`] with a handler.
    pub fn on_authorization(&self, handler: impl crate::auth::AuthorizationHandler) {
        self.set_authorization_handler(Some(Arc::new(handler)));
    }

    /// Where OAuth credentials are kept, per authorization-server issuer; `None` restores the
    /// in-memory default.
    pub fn set_token_store(&self, store: Option<Arc<dyn crate::auth::TokenStore>>) {
        self.inner.auth.set_store(store);
    }

    /// Where the assertion grants (`oauth.grant` `jwt_bearer`, `enterprise`) get the JWTs the
    /// configuration does not hold (see `crate::auth::AssertionProvider`); `None` removes it.
    pub fn set_assertion_provider(&self, provider: Option<Arc<dyn crate::auth::AssertionProvider>>) {
        self.inner.auth.set_assertion_provider(provider);
    }

    /// Drops every handler and listener (their captured state is released once no call uses
    /// them any more).
    pub fn clear_handlers(&self) {
        self.inner.hooks.clear();
        self.inner.auth.set_handler(None);
        self.inner.auth.set_store(None);
        self.inner.auth.set_assertion_provider(None);
        self.on_connection_state(None);
    }
}
