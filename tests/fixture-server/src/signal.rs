//! `--signal PATH`: one line per message the server received, so a test can
//! wait until a request has reached the server (for example "another thread
//! is now blocked in a `hang` call") instead of sleeping and hoping.
//!
//! PATH is usually a FIFO the test made and opened for reading before it
//! started the server; reading it blocks until the next line. A plain file
//! works too (appended to). Lines, each written whole and flushed:
//!
//! - `request <method> <name>` when a request is read, before its handler
//!   starts (`<name>` is `params.name`, else `params.uri`, else `-`);
//! - `notification <method>` after a notification took effect (so a
//!   `cancelled_ids` or `roots_changed_count` call made afterwards sees it).

use serde_json::{Map, Value};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

pub struct Signal {
    file: Option<Mutex<File>>,
}

impl Signal {
    /// Opens PATH for appending. A FIFO must already have its reader (the
    /// test). Non-blocking, so a reader that stops reading costs lines (noted
    /// on stderr) rather than stalling the server.
    pub fn open(path: Option<&Path>) -> io::Result<Signal> {
        let file = match path {
            Some(path) => {
                let mut options = OpenOptions::new();
                options.append(true);
                #[cfg(target_os = "linux")]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    const O_NONBLOCK: i32 = 0o4000;
                    options.custom_flags(O_NONBLOCK);
                }
                Some(Mutex::new(options.open(path)?))
            }
            None => None,
        };
        Ok(Signal { file })
    }

    fn line(&self, text: String) {
        if let Some(file) = &self.file {
            let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
            // A reader that went away or stopped reading must not take the
            // server down.
            if let Err(e) = file
                .write_all(format!("{text}\n").as_bytes())
                .and_then(|_| file.flush())
            {
                eprintln!("fixture: signal line dropped ({e}): {text}");
            }
        }
    }

    pub fn request(&self, method: &str, params: &Map<String, Value>) {
        if self.file.is_some() {
            let name = ["name", "uri"]
                .iter()
                .find_map(|k| params.get(*k).and_then(Value::as_str))
                .unwrap_or("-");
            self.line(format!("request {method} {name}"));
        }
    }

    pub fn notification(&self, method: &str) {
        self.line(format!("notification {method}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_name_the_request_and_the_notification() {
        let path = std::env::temp_dir().join(format!("fixture-signal-{}", std::process::id()));
        std::fs::write(&path, "").unwrap();
        let signal = Signal::open(Some(&path)).unwrap();
        let params = |v: serde_json::Value| v.as_object().unwrap().clone();
        signal.request("tools/call", &params(json!({"name": "hang", "arguments": {}})));
        signal.request("resources/read", &params(json!({"uri": "fixture://static"})));
        signal.request("ping", &Map::new());
        signal.notification("notifications/cancelled");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            text,
            "request tools/call hang\nrequest resources/read fixture://static\nrequest ping -\n\
             notification notifications/cancelled\n"
        );
        // Without --signal nothing is written and nothing fails.
        Signal::open(None).unwrap().notification("notifications/cancelled");
    }
}
