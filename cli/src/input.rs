//! Answers to the server's requests for input, from the person at the terminal: elicitation
//! (a prompt per field of a form, or a URL to visit), sampling (typed by the person, or
//! refused), roots (`--root DIR`). With `--no-input` nothing is registered for elicitation and
//! sampling: the library declares them for manual answers and the call ends with what the
//! server asked (exit code 5).

use crate::args::{Global, Sampling};
use crate::prompt::Prompter;
use crate::ui;
use mcp_client::{HandlerError, InputHandler, InputRequest};
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Answers {
    /// With `--no-input`, what a legacy server asked (its requests cannot wait for a retry).
    asked: std::sync::Mutex<Vec<Value>>,
    no_input: bool,
    sampling: Sampling,
    roots: Vec<PathBuf>,
    open: bool,
}

type Handler = Option<Arc<dyn InputHandler>>;

impl Answers {
    pub fn new(g: &Global) -> Arc<Answers> {
        Arc::new(Answers {
            asked: Default::default(),
            no_input: g.no_input,
            sampling: g.sampling,
            roots: g.roots.clone(),
            open: g.open,
        })
    }

    /// Elicitation, sampling and roots handlers.
    pub fn handlers(self: &Arc<Self>) -> (Handler, Handler, Handler) {
        let elicit: Handler = (!self.no_input).then(|| {
            let me = self.clone();
            Arc::new(move |r: InputRequest| blocking(me.clone(), r, Answers::elicit)) as Arc<dyn InputHandler>
        });
        let sampling: Handler = match (self.no_input, self.sampling) {
            (true, _) => None,
            (false, Sampling::Ask) => {
                let me = self.clone();
                Some(Arc::new(move |r: InputRequest| {
                    blocking(me.clone(), r, Answers::sample)
                }))
            }
            (false, Sampling::Refuse) => Some(Arc::new(|_r: InputRequest| async {
                ui::note("refused a sampling request (--sampling ask answers it)");
                Err::<Value, _>(HandlerError::new("the user refused sampling"))
            })),
        };
        let roots: Handler = (!self.roots.is_empty()).then(|| {
            let list = self.roots_json();
            Arc::new(move |_r: InputRequest| {
                let list = list.clone();
                async move { Ok::<Value, HandlerError>(list) }
            }) as Arc<dyn InputHandler>
        });
        (elicit, sampling, roots)
    }

    pub fn no_input(&self) -> bool {
        self.no_input
    }

    /// `--no-input` on a legacy server (or a hub): its requests for input are recorded and refused, and
    /// the command then ends with them (exit code 5), as a modern server's `input_required` does.
    pub fn recorder(self: &Arc<Self>) -> Arc<dyn InputHandler> {
        let me = self.clone();
        Arc::new(move |r: InputRequest| {
            me.asked
                .lock()
                .unwrap()
                .push(json!({"method": r.method, "params": r.params}));
            async { Err::<Value, _>(HandlerError::new("not answered: --no-input")) }
        })
    }

    /// What a legacy server asked under `--no-input`, in the shape of `input_required`'s
    /// `inputRequests` (keys are the order of asking).
    pub fn asked(&self) -> Option<Value> {
        let asked = self.asked.lock().unwrap();
        let requests: Map<String, Value> = asked
            .iter()
            .enumerate()
            .map(|(i, r)| (i.to_string(), r.clone()))
            .collect();
        (!requests.is_empty()).then(|| json!({"inputRequests": requests, "requestState": null}))
    }

    fn roots_json(&self) -> Value {
        let roots: Vec<Value> = self
            .roots
            .iter()
            .map(|dir| {
                let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
                let name = abs
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                json!({"uri": file_uri(&abs.to_string_lossy()), "name": name})
            })
            .collect();
        json!({ "roots": roots })
    }

    fn elicit(&self, request: &InputRequest) -> Result<Value, HandlerError> {
        let params = request.params.clone().unwrap_or(Value::Null);
        let message = params["message"].as_str().unwrap_or("The server asks:");
        let p = Prompter::new();
        ui::heading(&format!("The server asks: {message}"));
        if params["mode"] == "url" {
            let url = params["url"].as_str().unwrap_or_default();
            eprintln!("  Open this address to continue: {url}");
            if self.open {
                open_browser(url);
            }
            return Ok(json!({"action": p.action("Done?", &["accept", "decline", "cancel"])?}));
        }
        let action = p.action("Answer?", &["accept", "decline", "cancel"])?;
        if action != "accept" {
            return Ok(json!({"action": action}));
        }
        let schema = &params["requestedSchema"];
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut content = Map::new();
        if let Some(props) = schema["properties"].as_object() {
            for (name, field) in props {
                if let Some(v) = p.field(name, field, required.contains(&name.as_str()))? {
                    content.insert(name.clone(), v);
                }
            }
        }
        Ok(json!({"action": "accept", "content": content}))
    }

    fn sample(&self, request: &InputRequest) -> Result<Value, HandlerError> {
        let params = request.params.clone().unwrap_or(Value::Null);
        ui::heading("The server asks for a model's answer to:");
        if let Some(system) = params["systemPrompt"].as_str() {
            eprintln!("  (system) {system}");
        }
        for m in params["messages"].as_array().into_iter().flatten() {
            let text = m["content"]["text"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| m["content"].to_string());
            eprintln!("  ({}) {text}", m["role"].as_str().unwrap_or("?"));
        }
        let p = Prompter::new();
        if p.action("Answer it?", &["accept", "decline"])? != "accept" {
            return Err(HandlerError::new("the user declined the sampling request"));
        }
        let text = p.line("Your answer", None)?;
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": text},
                  "model": "mcp-client (typed by the user)", "stopReason": "endTurn"}))
    }
}

/// Runs a prompt off the runtime's thread (the terminal blocks), with the progress bar hidden.
async fn blocking(
    me: Arc<Answers>,
    request: InputRequest,
    f: fn(&Answers, &InputRequest) -> Result<Value, HandlerError>,
) -> Result<Value, HandlerError> {
    let _lock = ui::PROMPTS.lock().await;
    let joined = tokio::task::spawn_blocking(move || ui::suspended(|| f(&me, &request))).await;
    joined.map_err(|e| HandlerError::new(format!("the prompt failed: {e}")))?
}

fn file_uri(path: &str) -> String {
    let mut out = String::from("file://");
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

pub fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(opener).arg(url).spawn() {
        Ok(_) => eprintln!("  (opened in the browser)"),
        Err(e) => eprintln!("  (could not start {opener}: {e})"),
    }
}
