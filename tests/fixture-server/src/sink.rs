//! Where outgoing messages go. Request handlers never write to stdout or a
//! socket directly: they hand messages to a [`Sink`]. Over stdio every sink
//! is the one [`StdoutSink`]; over HTTP each request, listen, session and
//! stream has its own (see `http.rs` and `sessions.rs`).

use crate::wire::{self, RpcError};
use serde_json::{json, Value};
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

pub trait Sink: Send + Sync {
    /// Sends one JSON-RPC message.
    fn send(&self, msg: &Value);

    /// Sends a raw line that is not JSON (the `garbage` tool).
    fn send_raw(&self, line: &str);

    fn send_result(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// HTTP sinks override this to keep the error's HTTP status hint.
    fn send_error(&self, id: &Value, err: &RpcError) {
        self.send(&wire::error_message(id, err));
    }

    fn notify(&self, method: &str, params: Option<Value>) {
        self.send(&wire::notification(method, params));
    }

    /// False once nobody reads this sink any more (an HTTP stream closed).
    fn alive(&self) -> bool {
        true
    }
}

/// A shared handle to a sink.
pub type SinkRef = Arc<dyn Sink>;

/// Identifies a sink (its allocation), to tell channels apart.
pub fn key(sink: &SinkRef) -> usize {
    Arc::as_ptr(sink) as *const () as usize
}

/// Newline-delimited JSON on stdout; one mutex serialises every line.
pub struct StdoutSink {
    out: Mutex<io::Stdout>,
}

impl StdoutSink {
    pub fn new() -> StdoutSink {
        StdoutSink {
            out: Mutex::new(io::stdout()),
        }
    }
}

impl Sink for StdoutSink {
    fn send(&self, msg: &Value) {
        // Serialising a Value cannot fail (all map keys are strings).
        self.send_raw(&serde_json::to_string(msg).unwrap_or_default());
    }

    /// Writes one line atomically with respect to other writers.
    fn send_raw(&self, line: &str) {
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = out.write_all(buf.as_bytes()).and_then(|_| out.flush()) {
            eprintln!("fixture: cannot write to stdout: {e}");
        }
    }
}

/// Drops everything (HTTP mode's connection-less default session).
pub struct NullSink;

impl Sink for NullSink {
    fn send(&self, _: &Value) {}
    fn send_raw(&self, _: &str) {}
}

#[cfg(test)]
pub mod testing {
    use super::*;

    /// Collects what is sent, for unit tests.
    #[derive(Default)]
    pub struct VecSink(pub Mutex<Vec<Value>>);

    impl Sink for VecSink {
        fn send(&self, msg: &Value) {
            self.0.lock().unwrap().push(msg.clone());
        }
        fn send_raw(&self, line: &str) {
            self.0.lock().unwrap().push(Value::String(line.to_string()));
        }
    }

    #[test]
    fn default_methods_build_messages() {
        let sink = VecSink::default();
        sink.send_result(&json!(1), json!({}));
        sink.send_error(&json!("a"), &RpcError::method_not_found());
        sink.notify("notifications/x", None);
        let got = sink.0.lock().unwrap().clone();
        assert_eq!(
            got,
            vec![
                json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
                json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "Method not found"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/x"}),
            ]
        );
    }
}
