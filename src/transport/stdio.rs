//! stdio transport: the server is a child process speaking newline-delimited JSON-RPC.
//!
//! The child gets its own process group so shutdown reaches wrappers' children too (`npx`,
//! `uvx`); shutdown follows the spec: close stdin, wait, SIGTERM the group, wait, SIGKILL, reap.

use super::child::{describe_exit, Group, PipeReader};
use super::framing::{json_depth, probe_answer, read_line, scan_top_level_id, Line, MAX_JSON_DEPTH};
use super::lean_reader::{LeanReader, KEEP_IDLE};
use super::line_writer::{LineWriter, WriteError, MAX_QUEUED_BYTES};
use super::pump::Pump;
use super::{BoxFuture, Inbound, InboundSender, RequestLine, Transport};
use crate::base::defaults;
use crate::base::driving::ReadBeside;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{jsonrpc, methods, RequestId};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;

/// Longest stderr line kept; the rest of a longer line is dropped.
const STDERR_LINE_MAX: usize = 8192;
/// How long to wait for the exit status or the last stderr lines when the server goes away.
const EXIT_SETTLE: Duration = Duration::from_millis(500);

/// How the child's environment is built. A server the host starts should not receive every
/// secret in the host's environment (API keys, cloud credentials, `SSH_AUTH_SOCK`), so by
/// default it gets only [`ENV_ALLOWLIST`] and the locale, as the TypeScript and Python SDKs do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvMode {
    /// [`ENV_ALLOWLIST`] and the locale (`LANG`, `LC_*`) from the host's environment, plus
    /// `StdioConfig::env`. Values starting with `()` (shell functions) are not passed on.
    #[default]
    Allowlist,
    /// The host's whole environment plus `StdioConfig::env`.
    Inherit,
    /// Only `StdioConfig::env`.
    Replace,
}

/// The host variables a server gets by default (POSIX).
#[cfg(not(windows))]
pub const ENV_ALLOWLIST: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The host variables a server gets by default (Windows; names match in any case, as Windows'
/// own do). Without `SYSTEMROOT` many programs cannot start; `PATHEXT` lets a server's own
/// shims start.
#[cfg(windows)]
pub const ENV_ALLOWLIST: &[&str] = &[
    "APPDATA",
    "COMSPEC",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "WINDIR",
];

/// Whether the allowlist mode passes the host variable `name` with `value` on.
fn allowlisted(name: &std::ffi::OsStr, value: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let listed = if cfg!(windows) {
        ENV_ALLOWLIST.iter().any(|n| n.eq_ignore_ascii_case(name))
    } else {
        ENV_ALLOWLIST.contains(&name)
    } || name == "LANG"
        || name.starts_with("LC_");
    listed && !value.as_encoded_bytes().starts_with(b"()")
}

/// How to start a stdio server.
#[derive(Debug, Clone)]
pub struct StdioConfig {
    /// The program (looked up on `PATH` when it has no slash).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables to set (on top of what `env_mode` passes on from the host).
    pub env: Vec<(String, String)>,
    /// Which of the host's environment variables the server inherits.
    pub env_mode: EnvMode,
    /// Its working directory (default: the host's).
    pub cwd: Option<PathBuf>,
    /// Bound on one incoming message (one line), in bytes.
    pub max_message_bytes: usize,
    /// How many of the child's last stderr lines error messages quote.
    pub stderr_tail_lines: usize,
    /// Each shutdown step (stdin closed → SIGTERM → SIGKILL) waits this long.
    pub shutdown_grace: Duration,
}

impl StdioConfig {
    /// The defaults (allowlisted environment, 8 MiB messages) for `command`.
    pub fn new(command: impl Into<String>) -> Self {
        StdioConfig {
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_mode: EnvMode::Allowlist,
            cwd: None,
            max_message_bytes: defaults::MAX_MESSAGE_BYTES as usize,
            stderr_tail_lines: defaults::STDERR_TAIL_LINES as usize,
            shutdown_grace: Duration::from_millis(defaults::SHUTDOWN_GRACE_MS),
        }
    }

    /// Sets the arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }
}

pub struct StdioTransport {
    stdin: LineWriter,
    group: Group,
    exit: watch::Receiver<Option<ExitStatus>>,
    shared: Arc<Shared>,
    grace: Duration,
    closing: AtomicBool,
    /// The close sequence ran to the end (the group is gone).
    shut_down: AtomicBool,
    close_done: Notify,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// The stdout reader, polled by its task or by a request waiting alone.
    pump: Arc<Pump>,
}

/// State the background tasks share with the transport.
struct Shared {
    inbound: InboundSender,
    /// Why the transport ended, set once.
    ended: OnceLock<Error>,
    ended_notify: Notify,
    stderr_tail: Mutex<VecDeque<String>>,
    tail_len: usize,
    /// Length of a last stdout line the server did not finish (0: none).
    cut_line: AtomicUsize,
    /// Stdout lines read so far (tells an inline reader whether it read anything).
    lines: AtomicUsize,
}

impl Shared {
    fn end(&self, error: Error) {
        if self.ended.set(error.clone()).is_ok() {
            let _ = self.inbound.send(Inbound::Closed(error));
            self.ended_notify.notify_waiters();
        }
    }

    fn stderr_tail(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap();
        if tail.is_empty() {
            String::new()
        } else {
            format!(
                "; last stderr lines: {}",
                tail.iter().cloned().collect::<Vec<_>>().join(" | ")
            )
        }
    }
}

impl StdioTransport {
    pub fn spawn(cfg: &StdioConfig, inbound: InboundSender) -> Result<Self> {
        if cfg.command.is_empty() {
            return Err(Error::invalid("stdio transport needs a command"));
        }
        if cfg!(any(
            target_os = "ios",
            target_os = "tvos",
            target_os = "watchos",
            target_os = "visionos"
        )) {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "this platform does not let an app start processes, so there are no stdio servers: connect to the server over HTTP (`url`)",
            ));
        }
        let mut cmd = super::child::command(&cfg.command).map_err(|e| start_error(cfg, e))?;
        cmd.args(&cfg.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match cfg.env_mode {
            EnvMode::Inherit => {}
            EnvMode::Replace => {
                cmd.env_clear();
            }
            EnvMode::Allowlist => {
                cmd.env_clear();
                cmd.envs(std::env::vars_os().filter(|(k, v)| allowlisted(k, v)));
            }
        }
        cmd.envs(cfg.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &cfg.cwd {
            cmd.current_dir(dir);
        }
        // Reaped by a thread of its own, never through a SIGCHLD handler (see `child`).
        let child = super::child::spawn(&mut cmd).map_err(|e| start_error(cfg, e))?;
        let group = child.group;
        let stdin = LineWriter::new(child.stdin);
        let stdin = match stdin {
            Ok(w) => w,
            Err(e) => {
                group.kill();
                return Err(Error::new(ErrorKind::Io, format!("cannot use the child's stdin: {e}")));
            }
        };
        let (stdout, stderr, exit_rx) = (child.stdout, child.stderr, child.exit);

        let shared = Arc::new(Shared {
            inbound,
            ended: OnceLock::new(),
            ended_notify: Notify::new(),
            stderr_tail: Mutex::new(VecDeque::new()),
            tail_len: cfg.stderr_tail_lines,
            cut_line: AtomicUsize::new(0),
            lines: AtomicUsize::new(0),
        });
        let (stdout_eof_tx, stdout_eof_rx) = watch::channel(false);
        let (stderr_eof_tx, stderr_eof_rx) = watch::channel(false);

        let pump = Pump::new(read_stdout(
            stdout,
            cfg.max_message_bytes,
            shared.clone(),
            stdout_eof_tx,
        ));
        let tasks = vec![
            tokio::spawn(pump.clone().task()),
            crate::base::spawn(read_stderr(stderr, shared.clone(), stderr_eof_tx)),
            crate::base::spawn(monitor(exit_rx.clone(), stdout_eof_rx, stderr_eof_rx, shared.clone())),
        ];
        Ok(StdioTransport {
            stdin,
            group,
            exit: exit_rx,
            shared,
            grace: cfg.shutdown_grace,
            closing: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            close_done: Notify::new(),
            tasks: Mutex::new(tasks),
            pump,
        })
    }

    /// Writes one message without waiting for the server to read it: what the pipe does not
    /// take now is finished in the background (`LineWriter::post`), so a server that stops
    /// reading its stdin cannot hold a call past its timeout, total cap, cancellation or close.
    async fn write_line(&self, message: &Value) -> Result<()> {
        let mut line = Vec::with_capacity(512);
        serde_json::to_writer(&mut line, message).map_err(Error::unserialisable)?;
        line.push(b'\n');
        self.post_line(line).await
    }

    /// Writes one serialised line (ending with its newline).
    async fn post_line(&self, line: Vec<u8>) -> Result<()> {
        match self.stdin.post(line) {
            Ok(()) => Ok(()),
            Err(WriteError::Closed) => Err(self.shared.ended.get().cloned().unwrap_or_else(Error::closed)),
            Err(WriteError::Full) => Err(Error::new(
                ErrorKind::Io,
                format!(
                    "the server is not reading its stdin: {} MiB already wait to be written, so this message was not sent",
                    MAX_QUEUED_BYTES >> 20
                ),
            )),
            Err(WriteError::Io(e)) => {
                // The reason the server went away (exit status, stderr) beats a bare EPIPE. Lines
                // other senders queued behind this write are lost too: ending the transport
                // fails their requests rather than leaving them to their timeouts.
                let _ = tokio::time::timeout(EXIT_SETTLE * 2, self.ended()).await;
                self.shared.end(Error::new(
                    ErrorKind::ServerExited,
                    format!("writing to the server failed: {e}"),
                ));
                Err(self.shared.ended.get().cloned().unwrap_or_else(Error::closed))
            }
        }
    }

    async fn ended(&self) {
        loop {
            let notified = self.shared.ended_notify.notified();
            if self.shared.ended.get().is_some() {
                return;
            }
            notified.await;
        }
    }

    async fn wait_exit(&self, limit: Duration) -> bool {
        let mut exit = self.exit.clone();
        let exited = tokio::time::timeout(limit, exit.wait_for(Option::is_some))
            .await
            .is_ok();
        exited
    }

    async fn wait_group_gone(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while self.group.alive() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }

    async fn shutdown(&self) {
        self.stdin.close();
        super::child::expect_exit();
        if !self.wait_exit(self.grace).await {
            self.group.terminate();
            if !self.wait_exit(self.grace).await {
                self.group.kill();
                self.wait_exit(self.grace).await;
            }
        }
        // The leader is gone; whatever it left in its group (a wrapper's real server) goes too.
        if self.group.alive() {
            self.group.terminate();
            if !self.wait_group_gone(self.grace).await {
                self.group.kill();
                self.wait_group_gone(self.grace).await;
            }
        }
        self.shut_down.store(true, Ordering::SeqCst);
        self.shared
            .end(Error::new(ErrorKind::Closed, "the client closed the connection"));
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
        self.pump.stop();
    }
}

/// `notifications/cancelled` for request `id`, as a line.
fn cancelled_line(id: &RequestId, reason: String) -> Vec<u8> {
    let params = json!({"requestId": id.to_value(), "reason": reason});
    let mut line = Vec::with_capacity(128);
    // A map of strings and an id serialises.
    let _ = serde_json::to_writer(
        &mut line,
        &jsonrpc::notification(methods::NOTIFY_CANCELLED, Some(params)),
    );
    line.push(b'\n');
    line
}

impl Transport for StdioTransport {
    fn send(&self, message: Value) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move { self.write_line(&message).await })
    }

    fn send_line(&self, request: RequestLine<'_>) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.post_line(request.line))
    }

    fn takes_lines(&self) -> bool {
        true
    }

    fn reads_inline(&self) -> bool {
        true
    }

    fn poll_read_inline(
        &self,
        cx: &mut std::task::Context<'_>,
        _id: &RequestId,
        joined: &mut bool,
    ) -> std::task::Poll<()> {
        let before = self.shared.lines.load(Ordering::SeqCst);
        self.pump.poll_guest(cx, joined);
        match self.shared.lines.load(Ordering::SeqCst) != before {
            true => std::task::Poll::Ready(()),
            false => std::task::Poll::Pending,
        }
    }

    fn end_read_inline(&self, _id: &RequestId, joined: bool) {
        self.pump.leave(joined);
    }

    fn cancel(&self, id: RequestId, reason: String) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let _ = self.post_line(cancelled_line(&id, reason)).await;
        })
    }

    fn abandon(&self, id: RequestId, reason: String) {
        // Queued behind what is already written; a closed or full stdin has no one to tell.
        let _ = self.stdin.post(cancelled_line(&id, reason));
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if !self.closing.swap(true, Ordering::SeqCst) {
                self.shutdown().await;
                self.close_done.notify_waiters();
                return;
            }
            // Another close is running (or ran): wait for it to finish.
            loop {
                let done = self.close_done.notified();
                if self.shut_down.load(Ordering::SeqCst) {
                    return;
                }
                done.await;
            }
        })
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        if !self.shut_down.load(Ordering::SeqCst) {
            // Dropped before the close sequence finished: leave nothing of the group behind.
            self.group.kill();
        }
    }
}

async fn read_stdout(stdout: PipeReader, max: usize, shared: Arc<Shared>, eof: watch::Sender<bool>) {
    // Keeps the buffer its answers need between them (no allocation per call), at most 16 KiB
    // when idle, so many idle clients stay small.
    let mut reader = LeanReader::new(ReadBeside(stdout), KEEP_IDLE);
    loop {
        let line = reader.next_line(max).await;
        shared.lines.fetch_add(1, Ordering::SeqCst);
        let (bytes, cut) = match line {
            Ok(Line::Data(bytes)) => (bytes, false),
            Ok(Line::Cut(bytes)) => (bytes, true),
            Ok(Line::TooLong { prefix, len }) => {
                let error = Error::new(
                    ErrorKind::MessageTooLarge,
                    format!("the server sent a {len}-byte message; the bound is {max} bytes"),
                );
                let inbound = match scan_top_level_id(&prefix).as_ref().and_then(RequestId::from_value) {
                    Some(id) => Inbound::RequestFailed { id, error },
                    None => Inbound::Log {
                        source: "transport",
                        line: error.message().to_string(),
                    },
                };
                let _ = shared.inbound.deliver(inbound, prefix.len()).await;
                continue;
            }
            Ok(Line::Eof) | Err(_) => {
                let _ = eof.send(true);
                return;
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let weight = bytes.len();
        if let Some((id, result)) = probe_answer(&bytes).map(|answer| (answer.id, answer.result)) {
            let _ = shared.inbound.deliver_answer(id, bytes, result).await;
            continue;
        }
        let event = match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) => Inbound::Message(value),
            Err(_) if cut => {
                // The server died (or stopped) mid-line: the monitor reports how it ended, with
                // its stderr, which says more than the fragment's parse error.
                shared.cut_line.store(bytes.len(), Ordering::SeqCst);
                let _ = eof.send(true);
                return;
            }
            Err(_) if json_depth(&bytes) > MAX_JSON_DEPTH => {
                // Well-formed as far as anyone can tell, but too deep to decode: only this
                // message is lost (its request fails, if it answers one).
                let error = too_deep(json_depth(&bytes));
                match scan_top_level_id(&bytes).as_ref().and_then(RequestId::from_value) {
                    Some(id) => Inbound::RequestFailed { id, error },
                    None => Inbound::Log {
                        source: "transport",
                        line: format!("skipped a message from the server: {}", error.message()),
                    },
                }
            }
            Err(e) => {
                let excerpt = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
                shared.end(Error::protocol(format!(
                    "the server wrote something that is not JSON-RPC on stdout ({e}): {excerpt:?}"
                )));
                return;
            }
        };
        let _ = shared.inbound.deliver(event, weight).await;
    }
}

/// Why the server did not start, with the command as given.
fn start_error(cfg: &StdioConfig, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("failed to start `{}`: {e}", cfg.command))
}

fn too_deep(depth: usize) -> Error {
    Error::protocol(format!(
        "the server's message is nested {depth} levels deep; the limit is {MAX_JSON_DEPTH}"
    ))
}

async fn read_stderr(stderr: PipeReader, shared: Arc<Shared>, eof: watch::Sender<bool>) {
    // Most servers are quiet on stderr: hold no buffer while waiting for it.
    let mut reader = LeanReader::new(stderr, 0);
    loop {
        let line = match read_line(&mut reader, STDERR_LINE_MAX).await {
            Ok(Line::Data(bytes) | Line::Cut(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(Line::TooLong { prefix, .. }) => String::from_utf8_lossy(&prefix).into_owned() + "…",
            Ok(Line::Eof) | Err(_) => {
                let _ = eof.send(true);
                return;
            }
        };
        if shared.tail_len > 0 {
            let mut tail = shared.stderr_tail.lock().unwrap();
            if tail.len() == shared.tail_len {
                tail.pop_front();
            }
            tail.push_back(line.clone());
        }
        let _ = shared.inbound.deliver_log("stderr", line).await;
    }
}

/// Turns "stdout ended" or "the child exited" into one `Closed` event that says why.
async fn monitor(
    mut exit: watch::Receiver<Option<ExitStatus>>,
    mut stdout_eof: watch::Receiver<bool>,
    mut stderr_eof: watch::Receiver<bool>,
    shared: Arc<Shared>,
) {
    tokio::select! {
        _ = exit.wait_for(Option::is_some) => {}
        _ = stdout_eof.wait_for(|eof| *eof) => super::child::expect_exit(),
    }
    // Whichever came first, give the others a moment: the exit status, the rest of stdout (a
    // line cut by the death is only known once the reader reaches the end) and stderr's tail.
    let _ = tokio::time::timeout(EXIT_SETTLE, exit.wait_for(Option::is_some)).await;
    let _ = tokio::time::timeout(EXIT_SETTLE, stdout_eof.wait_for(|eof| *eof)).await;
    let _ = tokio::time::timeout(EXIT_SETTLE, stderr_eof.wait_for(|eof| *eof)).await;
    let status = *exit.borrow();
    let how = match status {
        Some(s) => describe_exit(s),
        None => "closed its stdout".to_string(),
    };
    let cut = match shared.cut_line.load(Ordering::SeqCst) {
        0 => String::new(),
        n => format!(" in the middle of a message (its last {n} bytes on stdout had no end)"),
    };
    shared.end(Error::new(
        ErrorKind::ServerExited,
        format!("the server process {how}{cut}{}", shared.stderr_tail()),
    ));
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::allowlisted;
    use std::ffi::OsStr;

    #[test]
    fn the_environment_allowlist() {
        let ok = |k: &str, v: &str| allowlisted(OsStr::new(k), OsStr::new(v));
        for name in [
            "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE",
        ] {
            assert!(ok(name, "x"), "{name}");
        }
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "SSH_AUTH_SOCK",
            "LD_PRELOAD",
            "NODE_OPTIONS",
            "path",
            "HOMEX",
        ] {
            assert!(!ok(name, "x"), "{name}");
        }
        assert!(
            !ok("TERM", "() { :; }; echo pwned"),
            "shell functions are not passed on"
        );
    }
}
