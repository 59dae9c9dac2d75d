//! The JSON entry points of the internal configuration types. They live here, above the
//! modules that define those types, so that `client`, `auth` and `transport` never import
//! `config` (tests/layers.rs: no import loops).

use super::{convert, parse, InputKind};
use crate::auth::OAuthConfig;
use crate::client::{ClientConfig, ManualInput};
use crate::error::Result;
use serde_json::Value;

impl ClientConfig {
    /// Builds a configuration from one flat JSON object, the form the C ABI and the bindings
    /// use: exactly one of `command` (stdio) or `url` (HTTP). The keys, their types and
    /// defaults are [`crate::config::Config`] (and `mcp_client.config.schema.json`).
    pub fn from_json(value: &Value) -> Result<ClientConfig> {
        parse::parse(value)?.into_client_config()
    }
}

impl OAuthConfig {
    /// Reads the `"oauth"` object of the flat configuration: the keys, their types and
    /// defaults are [`crate::config::OAuth`].
    pub fn from_json(value: &Value) -> Result<OAuthConfig> {
        parse::parse_oauth(value)?.into_oauth_config()
    }
}

impl ManualInput {
    /// From the `manual_input` JSON array: `["elicitation" | "elicitation.form" |
    /// "elicitation.url" | "sampling" | "roots", ..]` ([`crate::config::InputKind`]).
    pub fn from_json(value: &Value) -> Result<ManualInput> {
        let kinds: Vec<InputKind> = parse::parse_key("manual_input", value)?;
        Ok(convert::manual_input(&kinds))
    }
}
