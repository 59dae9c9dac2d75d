//! The shared harness of the integration tests: builds `mcp-fixture-server` once per test
//! binary, configures clients against it, records what went over the wire, and collects what
//! the client hands to its listeners.
//!
//! Every test starts its own fixture process (they are cheap), always with `--record` so the
//! client's raw lines can be checked. `Fixture::tapped` additionally copies the server's
//! stdout to a file (through `/bin/sh … | tee`) for the tests that need to know exactly what
//! the server sent (the `requestState` strings, the ids of server→client requests).

// Each test binary uses a different subset of the helpers.
#![allow(dead_code)]

use mcp_client::{
    Client, ClientConfig, ConnectMode, Error, ErrorKind, HandlerError, InputRequest, LogLine, RequestOptions,
    StdioConfig, TransportConfig,
};
use mcp_client::{LogFn, NotificationFn};
use serde_json::{json, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long `auto` waits for the `server/discover` probe in these tests.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(500);
/// The default per-request timeout in these tests: long enough for a loaded machine, short
/// enough that a lost answer fails the test instead of hanging it.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Each shutdown step's grace period in these tests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

pub const MODERN_VERSION: &str = "2026-07-28";
pub const LATEST_LEGACY: &str = "2025-11-25";

pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

// ---------------------------------------------------------------------------------------------
// Building the fixture
// ---------------------------------------------------------------------------------------------

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                manifest_dir().join(dir)
            }
        }
        None => manifest_dir().join("target"),
    }
}

/// The fixture server binary, built (once per test binary) with the cargo running the tests.
/// A failed build fails every test that needs the fixture, each with the build's output.
pub fn fixture_bin() -> PathBuf {
    static BUILD: Once = Once::new();
    static OUTCOME: OnceLock<Result<(), String>> = OnceLock::new();
    BUILD.call_once(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let outcome = match Command::new(&cargo)
            .args(["build", "-p", "mcp-fixture-server", "--quiet"])
            .current_dir(manifest_dir())
            .output()
        {
            Err(e) => Err(format!("cannot run {cargo:?} to build the fixture: {e}")),
            Ok(out) if !out.status.success() => Err(format!(
                "building mcp-fixture-server failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )),
            Ok(_) => Ok(()),
        };
        let _ = OUTCOME.set(outcome);
    });
    if let Some(Err(why)) = OUTCOME.get() {
        panic!("{why}");
    }
    let bin = target_dir().join("debug").join("mcp-fixture-server");
    assert!(bin.exists(), "fixture binary missing at {}", bin.display());
    bin
}

/// The fixture's path as a string, for shell wrappers.
pub fn fixture_str() -> String {
    fixture_bin().to_string_lossy().into_owned()
}

// ---------------------------------------------------------------------------------------------
// Temporary files
// ---------------------------------------------------------------------------------------------

/// A unique path in the temp dir, removed (file or directory) on drop.
pub struct TempPath(PathBuf);

impl TempPath {
    pub fn new(what: &str) -> TempPath {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let name = format!("mcp-client-test-{}-{n}-{nanos}-{what}", std::process::id());
        TempPath(std::env::temp_dir().join(name))
    }

    /// A fresh empty directory.
    pub fn dir(what: &str) -> TempPath {
        let p = TempPath::new(what);
        std::fs::create_dir_all(&p.0).expect("create temp dir");
        p
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn as_string(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }

    /// The file's lines (empty when the file does not exist yet).
    pub fn lines(&self) -> Vec<String> {
        match std::fs::read_to_string(&self.0) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(_) => Vec::new(),
        }
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if self.0.is_dir() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// A file of JSON lines: the fixture's `--record` file (every raw line the client sent) or a
/// tap of the server's stdout.
pub struct Wire {
    file: TempPath,
}

impl Wire {
    fn new(what: &str) -> Wire {
        Wire {
            file: TempPath::new(what),
        }
    }

    pub fn path(&self) -> String {
        self.file.as_string()
    }

    /// Every line as written.
    pub fn raw(&self) -> Vec<String> {
        self.file.lines()
    }

    /// Every line, parsed; a line that is not JSON fails the test.
    pub fn messages(&self) -> Vec<Value> {
        self.raw()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON on the wire ({e}): {l}")))
            .collect()
    }

    /// Requests (messages with a method and an id) of `method`, in order.
    pub fn requests(&self, method: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .collect()
    }

    /// `tools/call` requests for tool `name`, in order.
    pub fn tool_calls(&self, name: &str) -> Vec<Value> {
        self.requests("tools/call")
            .into_iter()
            .filter(|m| m["params"]["name"] == name)
            .collect()
    }

    /// Notifications (a method and no id) of `method`, in order.
    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m["method"] == method && m.get("id").is_none())
            .collect()
    }

    /// Responses (no method) in order.
    pub fn responses(&self) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m.get("method").is_none())
            .collect()
    }

    /// The methods of every message, in order (responses show as `"<response>"`).
    pub fn methods(&self) -> Vec<String> {
        self.messages()
            .iter()
            .map(|m| m["method"].as_str().unwrap_or("<response>").to_string())
            .collect()
    }

    /// The response (result or error) with this id.
    pub fn response_to(&self, id: &Value) -> Option<Value> {
        self.responses().into_iter().find(|m| &m["id"] == id)
    }

    /// Waits for the response with this id (a tap is written slightly after the client reads).
    pub async fn wait_response(&self, id: &Value) -> Value {
        self.wait_for(&format!("the response to {id}"), |lines| {
            lines.iter().any(|m| m.get("method").is_none() && &m["id"] == id)
        })
        .await;
        self.response_to(id).expect("just seen")
    }

    /// Polls until `pred` holds for the parsed lines (the fixture writes asynchronously).
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Value]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let lines: Vec<Value> = self.raw().iter().filter_map(|l| serde_json::from_str(l).ok()).collect();
            if pred(&lines) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; wire so far: {lines:#?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Configuring clients against the fixture
// ---------------------------------------------------------------------------------------------

/// One fixture setup: its flags, the mode the client connects with, the record of what the
/// client sent and (optionally) a tap of what the server sent.
pub struct Fixture {
    args: Vec<String>,
    mode: ConnectMode,
    /// Every raw line the client sent (`--record`).
    pub wire: Wire,
    /// Every line the server wrote on stdout, when tapped.
    pub tap: Option<Wire>,
}

impl Fixture {
    /// The fixture with `args`; the client connects in `auto` mode.
    pub fn new(args: &[&str]) -> Fixture {
        Fixture {
            args: args.iter().map(|s| s.to_string()).collect(),
            mode: ConnectMode::Auto,
            wire: Wire::new("record.jsonl"),
            tap: None,
        }
    }

    /// The dual-era fixture with `args`, the client in `modern` mode.
    pub fn modern(args: &[&str]) -> Fixture {
        Fixture::new(args).mode(ConnectMode::Modern)
    }

    /// The legacy-only fixture (`--era legacy` plus `args`), the client in `legacy` mode.
    pub fn legacy(args: &[&str]) -> Fixture {
        let mut all = vec!["--era", "legacy"];
        all.extend_from_slice(args);
        Fixture::new(&all).mode(ConnectMode::Legacy)
    }

    pub fn mode(mut self, mode: ConnectMode) -> Fixture {
        self.mode = mode;
        self
    }

    /// Also copy the server's stdout to `self.tap` (the server then runs under `/bin/sh`, so
    /// its exit status is not the client's child's).
    pub fn tapped(mut self) -> Fixture {
        self.tap = Some(Wire::new("tap.jsonl"));
        self
    }

    pub fn tap(&self) -> &Wire {
        self.tap.as_ref().expect("this fixture is not tapped")
    }

    /// The fixture's full argument list (flags plus `--record`).
    pub fn args(&self) -> Vec<String> {
        let mut args = self.args.clone();
        args.push("--record".into());
        args.push(self.wire.path());
        args
    }

    /// The stdio settings: the fixture (or its tap wrapper) with this setup's flags.
    pub fn stdio(&self) -> StdioConfig {
        let mut cfg = match &self.tap {
            None => StdioConfig::new(fixture_str()).args(self.args()),
            Some(tap) => {
                let script = format!("\"$0\" \"$@\" | tee -a '{}'", tap.path());
                let mut args = vec!["-c".to_string(), script, fixture_str()];
                args.extend(self.args());
                StdioConfig::new("/bin/sh").args(args)
            }
        };
        cfg.shutdown_grace = SHUTDOWN_GRACE;
        cfg
    }

    /// The client configuration: this fixture, this mode, the test timeouts.
    pub fn config(&self) -> ClientConfig {
        config_for(self.stdio(), self.mode.clone())
    }

    pub fn client(&self) -> Client {
        Client::new(self.config())
    }

    /// A client whose configuration `tweak` adjusts first.
    pub fn client_with(&self, tweak: impl FnOnce(&mut ClientConfig)) -> Client {
        let mut cfg = self.config();
        tweak(&mut cfg);
        Client::new(cfg)
    }
}

/// A client configuration for any stdio command, with the test timeouts.
pub fn config_for(stdio: StdioConfig, mode: ConnectMode) -> ClientConfig {
    let mut cfg = ClientConfig::new(TransportConfig::Stdio(stdio));
    cfg.mode = mode;
    cfg.probe_timeout = PROBE_TIMEOUT;
    cfg.request_timeout = REQUEST_TIMEOUT;
    cfg
}

/// A `/bin/sh` script that reports its pid (which `exec` hands to the fixture) on stderr as
/// `wrapper pid <PID>`, then becomes the fixture.
pub const PID_SCRIPT: &str = r#"echo "wrapper pid $$" >&2; exec "$0" "$@""#;

/// Runs the fixture through `/bin/sh -c SCRIPT`, where the script refers to the fixture as
/// `"$0"` and to `args` as `"$@"` (e.g. `exec "$0" "$@"`).
pub fn shell_stdio(script: &str, args: &[String]) -> StdioConfig {
    let mut all = vec!["-c".to_string(), script.to_string(), fixture_str()];
    all.extend(args.iter().cloned());
    let mut cfg = StdioConfig::new("/bin/sh").args(all);
    cfg.shutdown_grace = SHUTDOWN_GRACE;
    cfg
}

// ---------------------------------------------------------------------------------------------
// Listeners
// ---------------------------------------------------------------------------------------------

/// A thread-safe list of things a listener received.
pub struct Events<T>(Arc<Mutex<Vec<T>>>);

impl<T> Clone for Events<T> {
    fn clone(&self) -> Self {
        Events(self.0.clone())
    }
}

impl<T> Default for Events<T> {
    fn default() -> Self {
        Events(Arc::default())
    }
}

impl<T: Clone> Events<T> {
    pub fn push(&self, item: T) {
        self.0.lock().unwrap().push(item);
    }

    pub fn snapshot(&self) -> Vec<T> {
        self.0.lock().unwrap().clone()
    }

    pub fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits (up to 5 s) for an item matching `pred` and returns it.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&T) -> bool) -> T
    where
        T: std::fmt::Debug,
    {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(found) = self.snapshot().into_iter().find(|t| pred(t)) {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; got {:#?}",
                self.snapshot()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Collects every log line (server stderr and library warnings) the client reports.
pub fn collect_logs(client: &Client) -> Events<LogLine> {
    let events = Events::default();
    let sink = events.clone();
    let f: LogFn = Arc::new(move |line: &LogLine| sink.push(line.clone()));
    client.on_log(Some(f));
    events
}

/// Collects every notification (method, params) the client reports.
pub fn collect_notifications(client: &Client) -> Events<(String, Value)> {
    let events = Events::default();
    let sink = events.clone();
    let f: NotificationFn =
        Arc::new(move |method: &str, params: &Value| sink.push((method.to_string(), params.clone())));
    client.on_notification(Some(f));
    events
}

/// Waits for the server's stderr line starting with `prefix` and returns the rest.
pub async fn stderr_line(logs: &Events<LogLine>, prefix: &str) -> String {
    let line = logs
        .wait_for(&format!("a stderr line starting with {prefix:?}"), |l| {
            l.source == "stderr" && l.message.starts_with(prefix)
        })
        .await;
    line.message[prefix.len()..].to_string()
}

// ---------------------------------------------------------------------------------------------
// Input handlers
// ---------------------------------------------------------------------------------------------

/// The result a test's handler returns.
pub type HandlerResult = Result<Value, HandlerError>;

/// Every call an input handler received.
pub type Calls = Events<InputRequest>;

/// Registers an elicitation handler that accepts with `content` and records its calls.
pub fn accept_elicitation(client: &Client, content: Value) -> Calls {
    let calls = Calls::default();
    let seen = calls.clone();
    client.on_elicitation(move |req: InputRequest| {
        seen.push(req);
        let content = content.clone();
        async move { Ok(json!({"action": "accept", "content": content})) }
    });
    calls
}

/// Registers a sampling handler answering `text` and records its calls.
pub fn answer_sampling(client: &Client, text: &str) -> Calls {
    let calls = Calls::default();
    let seen = calls.clone();
    let result = sampling_result(text);
    client.on_sampling(move |req: InputRequest| {
        seen.push(req);
        let result = result.clone();
        async move { Ok(result) }
    });
    calls
}

/// Registers a roots handler listing `uris` and records its calls.
pub fn answer_roots(client: &Client, uris: &[&str]) -> Calls {
    let calls = Calls::default();
    let seen = calls.clone();
    let result = roots_result(uris);
    client.on_roots(move |req: InputRequest| {
        seen.push(req);
        let result = result.clone();
        async move { Ok(result) }
    });
    calls
}

/// A `CreateMessageResult` with one text block.
pub fn sampling_result(text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "test-model",
        "stopReason": "endTurn",
    })
}

/// A `ListRootsResult`.
pub fn roots_result(uris: &[&str]) -> Value {
    let roots: Vec<Value> = uris
        .iter()
        .enumerate()
        .map(|(i, u)| json!({"uri": u, "name": format!("root {i}")}))
        .collect();
    json!({ "roots": roots })
}

// ---------------------------------------------------------------------------------------------
// MRTR legs
// ---------------------------------------------------------------------------------------------

/// A request's params without the MRTR retry fields.
pub fn base_params(request: &Value) -> Value {
    let mut params = request["params"].clone();
    if let Some(p) = params.as_object_mut() {
        p.remove("inputResponses");
        p.remove("requestState");
    }
    params
}

/// Asserts that `retry` re-sends `first`: same method, a new id, the same params (full `_meta`
/// included) apart from the retry fields.
pub fn assert_retry_of(first: &Value, retry: &Value) {
    assert_eq!(retry["method"], first["method"]);
    assert_ne!(retry["id"], first["id"], "a retry must use a new JSON-RPC id");
    assert_eq!(
        base_params(retry),
        base_params(first),
        "the retry changed the original params"
    );
}

// ---------------------------------------------------------------------------------------------
// Results and errors
// ---------------------------------------------------------------------------------------------

/// Default request options (the client's timeout, nothing else).
pub fn none() -> RequestOptions {
    RequestOptions::default()
}

/// The text of a tool result's first content block.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
}

/// Unwraps an error, failing the test with the value when the call succeeded.
pub fn expect_err<T: std::fmt::Debug>(outcome: Result<T, Error>, what: &str) -> Error {
    match outcome {
        Ok(v) => panic!("{what}: expected an error, got {v:?}"),
        Err(e) => e,
    }
}

/// Asserts the error's kind, showing the message when it differs.
pub fn assert_kind(err: &Error, kind: ErrorKind) {
    assert_eq!(err.kind(), kind, "unexpected error: {}", err.message());
}

/// Runs `fut`, failing the test if it takes longer than `limit`; returns its output and time.
pub async fn timed<T>(limit: Duration, fut: impl Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    match tokio::time::timeout(limit, fut).await {
        Ok(out) => (out, start.elapsed()),
        Err(_) => panic!("did not finish within {limit:?}"),
    }
}

/// Runs `fut`, failing the test if it takes longer than `limit`.
pub async fn within<T>(limit: Duration, fut: impl Future<Output = T>) -> T {
    timed(limit, fut).await.0
}

/// Whether `/proc/<pid>` shows a live (non-zombie) process.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
    }
}

/// Whether `/proc/<pid>` exists at all (a zombie counts).
pub fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Polls `cond` for up to `limit`.
pub async fn eventually(limit: Duration, cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The fixture serving HTTP; killed (and reaped) on drop.
/// `.1` is its URL.
pub struct HttpFixture(pub std::process::Child, pub String);

impl HttpFixture {
    pub fn start(args: &[&str]) -> HttpFixture {
        let mut child = std::process::Command::new(fixture_bin())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the fixture");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("fixture: listening on ")
            .expect("the listening line")
            .to_string();
        HttpFixture(child, url)
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
