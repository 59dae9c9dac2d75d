//! Which kinds of input this client declares: elicitation modes of the registered handler
//! (form, URL), and the kinds a host answers by hand without a handler (manual input mode).
//! Modern servers only ask for what a request's `clientCapabilities` declare (else -32021),
//! so both must reach the derived capabilities.

use super::handlers::InputKind;
use serde_json::{json, Map, Value};

/// The elicitation modes a handler answers, declared exactly as given: `form` is the protocol's
/// default mode; `url` asks the user to open a URL out of band (SEP-1036), and its `accept`
/// carries no content. The default is no mode at all, so `ElicitationModes { url: true,
/// ..Default::default() }` is URL mode alone; registering a handler needs one mode at least.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElicitationModes {
    /// Form mode: the server asks for content matching a schema.
    pub form: bool,
    /// URL mode: the user opens a URL out of band.
    pub url: bool,
}

impl ElicitationModes {
    /// Form mode only (what `on_elicitation` registers).
    pub const FORM: ElicitationModes = ElicitationModes { form: true, url: false };
    /// URL mode only.
    pub const URL: ElicitationModes = ElicitationModes { form: false, url: true };
    /// Form and URL mode.
    pub const BOTH: ElicitationModes = ElicitationModes { form: true, url: true };
    /// Whether an `elicitation/create` with these params is one of these modes (no `mode`
    /// means form).
    pub fn accepts(self, params: Option<&Value>) -> bool {
        match params.and_then(|p| p.get("mode")).and_then(Value::as_str) {
            None | Some("form") => self.form,
            Some("url") => self.url,
            Some(_) => false,
        }
    }

    /// The `elicitation` capability object: `{"form": {}, "url": {}}` as declared.
    pub fn capability(self) -> Value {
        let mut caps = Map::new();
        if self.form {
            caps.insert("form".into(), json!({}));
        }
        if self.url {
            caps.insert("url".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// Whether a handler registered for these modes can be handed a request, given the
    /// configuration's `capabilities` override (which replaces what handlers declare): one mode
    /// at least, and each of them declared by the override when there is one. Modern servers
    /// ask only for what is declared, so a mode left out would never reach the handler.
    pub(crate) fn check_registration(self, capabilities: Option<&Value>) -> crate::error::Result<()> {
        use crate::error::Error;
        if !self.form && !self.url {
            return Err(Error::invalid(
                "an elicitation handler needs one mode at least (form, url): with none it would never be asked",
            ));
        }
        let Some(caps) = capabilities else {
            return Ok(());
        };
        let declared = caps.get("elicitation").and_then(Value::as_object);
        // `elicitation: {}` declares form mode alone.
        let form = declared.is_some_and(|e| e.is_empty() || e.contains_key("form"));
        let url = declared.is_some_and(|e| e.contains_key("url"));
        let missing = match (self.form && !form, self.url && !url) {
            (true, true) => "`elicitation` (form and url)",
            (true, false) => "`elicitation.form`",
            (false, true) => "`elicitation.url`",
            (false, false) => return Ok(()),
        };
        Err(Error::invalid(format!(
            "the configuration's `capabilities` replaces what handlers declare and lacks {missing}: \
             servers would never send this handler those requests; add it there, or drop the override"
        )))
    }

    fn union(self, other: ElicitationModes) -> ElicitationModes {
        ElicitationModes {
            form: self.form || other.form,
            url: self.url || other.url,
        }
    }
}

/// Input kinds declared without a handler: the host answers them itself from the
/// `InputRequired` error and retries with `input_responses`/`request_state`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ManualInput {
    /// Elicitation modes answered by hand (none: not declared).
    pub elicitation: Option<ElicitationModes>,
    /// `sampling/createMessage` answered by hand.
    pub sampling: bool,
    /// `roots/list` answered by hand.
    pub roots: bool,
}

impl ManualInput {
    /// Whether this kind is declared for manual answers.
    pub fn declares(&self, kind: InputKind) -> bool {
        match kind {
            InputKind::Elicitation => self.elicitation.is_some(),
            InputKind::Sampling => self.sampling,
            InputKind::Roots => self.roots,
        }
    }
}

/// The `elicitation` capability for a handler's modes plus the manually answered ones.
pub(crate) fn elicitation_capability(
    handler: Option<ElicitationModes>,
    manual: Option<ElicitationModes>,
) -> Option<Value> {
    match (handler, manual) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or_default().union(b.unwrap_or_default()).capability()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_manual_declarations() {
        assert!(ElicitationModes::FORM.accepts(None));
        assert!(ElicitationModes::FORM.accepts(Some(&json!({"mode": "form"}))));
        assert!(!ElicitationModes::FORM.accepts(Some(&json!({"mode": "url"}))));
        assert!(ElicitationModes::URL.accepts(Some(&json!({"mode": "url"}))));
        assert!(!ElicitationModes::URL.accepts(Some(&json!({}))));
        assert!(!ElicitationModes::BOTH.accepts(Some(&json!({"mode": "telepathy"}))));
        assert_eq!(ElicitationModes::BOTH.capability(), json!({"form": {}, "url": {}}));

        let m = ManualInput::from_json(&json!(["elicitation.url", "roots"])).unwrap();
        assert_eq!(m.elicitation, Some(ElicitationModes::URL));
        assert!(m.roots && !m.sampling);
        assert_eq!(
            elicitation_capability(Some(ElicitationModes::FORM), m.elicitation),
            Some(json!({"form": {}, "url": {}}))
        );
        assert_eq!(elicitation_capability(None, None), None);
        assert_eq!(
            ElicitationModes {
                url: true,
                ..Default::default()
            },
            ElicitationModes::URL,
            "the default is no mode: only the modes asked for are declared"
        );
        assert!(ManualInput::from_json(&json!(["telepathy"])).is_err());
        assert!(ManualInput::from_json(&json!("sampling")).is_err());
    }

    #[test]
    fn a_registration_must_be_able_to_receive_requests() {
        let none = ElicitationModes::default();
        assert!(none
            .check_registration(None)
            .unwrap_err()
            .message()
            .contains("one mode at least"));
        assert!(ElicitationModes::URL.check_registration(None).is_ok());
        let form_only = json!({"elicitation": {}});
        assert!(ElicitationModes::FORM.check_registration(Some(&form_only)).is_ok());
        let err = ElicitationModes::URL.check_registration(Some(&form_only)).unwrap_err();
        assert!(err.message().contains("lacks `elicitation.url`"), "{}", err.message());
        let err = ElicitationModes::BOTH.check_registration(Some(&json!({}))).unwrap_err();
        assert!(err.message().contains("(form and url)"), "{}", err.message());
        let both = json!({"elicitation": {"form": {}, "url": {}}});
        assert!(ElicitationModes::BOTH.check_registration(Some(&both)).is_ok());
    }
}
