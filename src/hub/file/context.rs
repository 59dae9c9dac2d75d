//! What a read of a configuration file needs from the host: the workspace folder, the user's
//! home, how to look up environment variables, and how to ask the user for an `${input:…}`.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Looks up one environment variable.
type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;
/// Asks the user for one input; `None` declines.
type InputPromptFn = Arc<dyn Fn(&InputPrompt) -> Option<String> + Send + Sync>;

/// One `${input:id}` the host is asked to fill in: a `promptString` or `pickString` of the
/// file's `inputs` array.
#[derive(Clone, PartialEq, Eq)]
pub struct InputPrompt {
    /// The input's `id`.
    pub id: String,
    /// Its `description`: the text of the prompt.
    pub description: String,
    /// `password: true`: the host should mask what the user types.
    pub password: bool,
    /// Its `default`, for the host to prefill (or preselect, for a choice).
    pub default: Option<String>,
    /// A `pickString`'s `options`: the host shows a choice, and an answer outside them makes
    /// the servers that use the input `failed`. Empty for a `promptString` (free text).
    pub options: Vec<String>,
}

// A password input's default stays out of logs.
impl fmt::Debug for InputPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let default = self
            .default
            .as_ref()
            .map(|d| if self.password { "<redacted>" } else { d.as_str() });
        f.debug_struct("InputPrompt")
            .field("id", &self.id)
            .field("description", &self.description)
            .field("password", &self.password)
            .field("default", &default)
            .field("options", &self.options)
            .finish()
    }
}

/// Answers to `${input:…}` prompts kept across reads of the same configuration (one hub's
/// reloads): an input answered before, declared the same way (id, type, description,
/// `password`, `default`, options), is not asked again; a new or changed one is, and so is one
/// that was declined. Clones share the answers. They stay in memory until [`Self::forget`] or
/// the last clone is dropped, and are never shown by `Debug`.
#[derive(Clone, Default)]
pub struct InputAnswers(Arc<Mutex<HashMap<String, (InputPrompt, String)>>>);

impl InputAnswers {
    /// No answers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Drops every kept answer: the next read asks for each input again.
    pub fn forget(&self) {
        self.lock().clear();
    }

    /// The answer kept for exactly this declaration.
    pub(super) fn get(&self, prompt: &InputPrompt) -> Option<String> {
        let kept = self.lock();
        kept.get(&prompt.id)
            .filter(|(declared, _)| declared == prompt)
            .map(|(_, answer)| answer.clone())
    }

    pub(super) fn keep(&self, prompt: &InputPrompt, answer: &str) {
        self.lock()
            .insert(prompt.id.clone(), (prompt.clone(), answer.to_string()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (InputPrompt, String)>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl fmt::Debug for InputAnswers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputAnswers")
            .field("kept", &self.lock().len())
            .finish()
    }
}

/// The host's side of reading a configuration file ([`crate::hub::HubSpec::from_file`]).
///
/// `ReadContext::default()` looks variables up in the process environment, takes the user's
/// home from `HOME`, has no workspace folder (`${workspaceFolder}` is then an error) and no
/// input prompt (an `${input:…}` is then an error for the server that uses it).
#[derive(Clone)]
pub struct ReadContext {
    pub(super) workspace_folder: Option<PathBuf>,
    pub(super) user_home: Option<PathBuf>,
    pub(super) env: EnvLookup,
    pub(super) prompt: Option<InputPromptFn>,
    pub(super) remembered: Option<InputAnswers>,
}

impl Default for ReadContext {
    fn default() -> Self {
        ReadContext {
            workspace_folder: None,
            user_home: None,
            env: Arc::new(|name| std::env::var(name).ok()),
            prompt: None,
            remembered: None,
        }
    }
}

impl ReadContext {
    /// The default context (see the type's documentation).
    pub fn new() -> Self {
        Self::default()
    }

    /// The folder `${workspaceFolder}` stands for; relative `envFile` paths start there too.
    pub fn workspace_folder(mut self, folder: impl Into<PathBuf>) -> Self {
        self.workspace_folder = Some(folder.into());
        self
    }

    /// The folder `${userHome}` stands for (default: the `HOME` variable of [`Self::env`]'s lookup).
    pub fn user_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.user_home = Some(home.into());
        self
    }

    /// How `${VAR}` and `${env:VAR}` are looked up (default: the process environment).
    pub fn env(mut self, lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(lookup);
        self
    }

    /// How an `${input:id}` is asked of the user: called at most once per id and read, with the
    /// input's declaration; the answer is used as typed (a `pickString`'s must be one of its
    /// options), `None` declines (an error for the servers that use it). Answers are never logged nor shown in errors.
    pub fn prompt(mut self, ask: impl Fn(&InputPrompt) -> Option<String> + Send + Sync + 'static) -> Self {
        self.prompt = Some(Arc::new(ask));
        self
    }

    /// Keeps the answers of this read in `answers`, and takes from there the inputs answered
    /// before with the same declaration instead of asking again (see [`InputAnswers`]).
    pub fn remember(mut self, answers: &InputAnswers) -> Self {
        self.remembered = Some(answers.clone());
        self
    }

    pub(super) fn home(&self) -> Option<String> {
        match &self.user_home {
            Some(home) => Some(home.to_string_lossy().into_owned()),
            None => (self.env)("HOME").filter(|h| !h.is_empty()),
        }
    }
}

impl fmt::Debug for ReadContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadContext")
            .field("workspace_folder", &self.workspace_folder)
            .field("user_home", &self.user_home)
            .field("prompt", &self.prompt.as_ref().map(|_| "set"))
            .finish_non_exhaustive()
    }
}
