//! What an export did to each tool: the report.

use serde::Serialize;

/// One thing the export did or could not do, at a place in the tool's input schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    /// JSON pointer into the tool's original input schema ("" is the whole schema).
    pub at: String,
    /// What was done, or what the format cannot say.
    pub what: String,
}

/// One tool's entry in the export report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ToolReport {
    /// The tool's name in the input list.
    pub tool: String,
    /// The name the model sees (absent when the tool was refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exported_name: Option<String>,
    /// OpenAI formats: whether the tool went out in strict mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Every rewrite applied to the name, description or schema.
    pub rewrites: Vec<Note>,
    /// Constraints of the original schema the format cannot express (dispatch still checks
    /// the arguments against the original schema).
    pub not_expressed: Vec<Note>,
    /// Why the tool was left out of the export (its schema cannot be put in this format).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl ToolReport {
    pub(crate) fn rewrite(&mut self, at: &str, what: impl Into<String>) {
        self.rewrites.push(Note {
            at: at.to_string(),
            what: what.into(),
        });
    }

    pub(crate) fn lost(&mut self, at: &str, what: impl Into<String>) {
        self.not_expressed.push(Note {
            at: at.to_string(),
            what: what.into(),
        });
    }
}
