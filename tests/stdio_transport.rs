//! The stdio transport: arguments, environment (inherit and replace), working directory,
//! stderr lines to the log listener, the message size bound, answers of every size, and shutdown (no zombie, the
//! whole process group killed, a server that ignores stdin EOF and SIGTERM still killed).

mod common;

use common::*;
use mcp_client::{Client, ConnectMode, EnvMode, ErrorKind, RequestOptions, StdioConfig};
use serde_json::json;
use std::time::Duration;

/// A client for the fixture started through `sh -c SCRIPT` (see [`shell_stdio`]).
fn shell_client(script: &str, fx: &Fixture, tweak: impl FnOnce(&mut StdioConfig)) -> Client {
    let mut stdio = shell_stdio(script, &fx.args());
    tweak(&mut stdio);
    Client::new(config_for(stdio, ConnectMode::Modern))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_arrive_intact_and_stderr_lines_reach_the_log_listener() {
    let banner = "banner with spaces, 'single' \"double\" quotes, a \\ backslash and ünïcödé";
    let fx = Fixture::modern(&["--stderr-banner", banner]);
    let client = fx.client();
    let logs = collect_logs(&client);
    let info = client.connect().await.unwrap();
    // `--era`-less dual fixture in modern mode, so the flags parsed (the fixture exits 2 on a
    // bad argument).
    assert_eq!(info.protocol_version, MODERN_VERSION);
    let line = logs.wait_for("the banner", |l| l.message == banner).await;
    assert_eq!(line.source, "stderr");
    assert_eq!(line.level, "info");
    client.close().await;
}

/// A server that logs every request on stderr (as Python SDK servers do at INFO): every line
/// reaches the listener, in order, while each call gets its answer. Lines skip the session's
/// queue (`InboundSender::deliver_log`), so a current-thread runtime, where the lone caller reads
/// the answers itself, is tested as well as a multi-thread one.
async fn logged_requests_reach_the_listener_in_order() {
    let fx = Fixture::modern(&["--log-requests"]);
    let client = fx.client();
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    for i in 0..40 {
        let text = format!("call {i}");
        let result = client
            .call_tool("echo", Some(json!({ "text": text })), &RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(result["content"][0]["text"], text);
    }
    let calls = |lines: &[mcp_client::LogLine]| -> Vec<String> {
        let prefix = "fixture: processing request ";
        let of_calls = lines
            .iter()
            .filter(|l| l.source == "stderr" && l.message.ends_with("tools/call"));
        of_calls
            .map(|l| l.message.trim_start_matches(prefix).to_string())
            .collect()
    };
    let last = "fixture: processing request 41 of type tools/call";
    logs.wait_for("the last call's line", |l| l.message == last).await;
    let expected: Vec<String> = (2..42).map(|id| format!("{id} of type tools/call")).collect();
    assert_eq!(calls(&logs.snapshot()), expected);
    let heard = logs.snapshot().iter().filter(|l| l.source == "stderr").count();
    assert_eq!(heard, 42, "discover, 40 calls and the era line");
    client.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn logged_requests_reach_the_listener_in_order_current_thread() {
    logged_requests_reach_the_listener_in_order().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logged_requests_reach_the_listener_in_order_multi_thread() {
    logged_requests_reach_the_listener_in_order().await;
}

/// A variable of the test's own environment that a shell does not invent (dash sets a default
/// `PATH` when none is given, so `PATH` proves nothing), and its value.
fn inherited_variable() -> (String, String) {
    ["CARGO_MANIFEST_DIR", "HOME", "USER", "CARGO"]
        .into_iter()
        .find_map(|name| std::env::var(name).ok().map(|v| (name.to_string(), v)))
        .expect("the test environment has none of the probe variables")
}

/// A script that prints `MCP_TEST_ADDED` and `name`, then becomes the fixture.
fn env_script(name: &str) -> String {
    format!(r#"echo "env added=${{MCP_TEST_ADDED-unset}} inherited=${{{name}-unset}}" >&2; exec "$0" "$@""#)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inherited_environment_gets_the_added_variables() {
    let (name, value) = inherited_variable();
    let fx = Fixture::modern(&[]);
    let client = shell_client(&env_script(&name), &fx, |s| {
        s.env = vec![("MCP_TEST_ADDED".into(), "yes, with spaces".into())];
        s.env_mode = EnvMode::Inherit;
    });
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    let line = stderr_line(&logs, "env ").await;
    assert_eq!(line, format!("added=yes, with spaces inherited={value}"));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_environment_has_only_the_given_variables() {
    let (name, _) = inherited_variable();
    let fx = Fixture::modern(&[]);
    let client = shell_client(&env_script(&name), &fx, |s| {
        s.env = vec![("MCP_TEST_ADDED".into(), "only me".into())];
        s.env_mode = EnvMode::Replace;
    });
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    let line = stderr_line(&logs, "env ").await;
    assert_eq!(line, "added=only me inherited=unset");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_runs_in_the_configured_directory() {
    let dir = TempPath::dir("cwd");
    let fx = Fixture::modern(&[]);
    let client = shell_client(r#"echo "cwd $(pwd -P)" >&2; exec "$0" "$@""#, &fx, |s| {
        s.cwd = Some(dir.path().to_path_buf());
    });
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    let line = stderr_line(&logs, "cwd ").await;
    let want = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(line, want.to_string_lossy());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_fails_to_connect_with_io() {
    let stdio = StdioConfig::new("/nonexistent/mcp-server-that-does-not-exist");
    let client = Client::new(config_for(stdio, ConnectMode::Auto));
    let (outcome, _) = timed(Duration::from_secs(3), client.connect()).await;
    assert_kind(&expect_err(outcome, "connect"), ErrorKind::Io);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_fails_its_call_and_the_connection_survives() {
    let fx = Fixture::modern(&[]);
    let mut stdio = fx.stdio();
    stdio.max_message_bytes = 64 * 1024;
    let client = Client::new(config_for(stdio, ConnectMode::Modern));
    let small = client
        .call_tool("big", Some(json!({"bytes": 1000})), &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&small).len(), 1000);

    let (outcome, elapsed) = timed(
        Duration::from_secs(5),
        client.call_tool("big", Some(json!({"bytes": 300_000})), &RequestOptions::default()),
    )
    .await;
    let err = expect_err(outcome, "big above the bound");
    assert_kind(&err, ErrorKind::MessageTooLarge);
    assert!(elapsed < Duration::from_secs(2), "failed only after {elapsed:?}");

    let echo = client
        .call_tool("echo", Some(json!({"text": "after"})), &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&echo), "after");
    client.close().await;
}

/// The reader's buffer follows the traffic (`transport/lean_reader`): small answers, then answers
/// larger than any buffer it holds (grown by doubling across reads), then small ones again (after
/// it shrank back while waiting): each arrives whole, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_of_every_size_arrive_whole_as_the_read_buffer_grows_and_shrinks() {
    let fx = Fixture::modern(&[]);
    let client = Client::new(config_for(fx.stdio(), ConnectMode::Modern));
    for bytes in [10, 3000, 5000, 200_000, 70_000, 1_000_000, 64 * 1024, 10, 4096, 1] {
        let reply = client
            .call_tool("big", Some(json!({"bytes": bytes})), &RequestOptions::default())
            .await
            .unwrap();
        let got = text(&reply);
        assert!(
            got.len() == bytes && got.bytes().all(|b| b == b'x'),
            "{bytes} bytes: got {}",
            got.len()
        );
    }
    client.close().await;
}

/// Reads `<prefix><pid>` from the server's stderr.
async fn pid_from(logs: &Events<mcp_client::LogLine>, prefix: &str) -> u32 {
    let rest = stderr_line(logs, prefix).await;
    rest.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid after {prefix:?}: {rest:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_reaps_the_server_and_kills_its_process_group() {
    let fx = Fixture::modern(&["--spawn-grandchild"]);
    let client = shell_client(PID_SCRIPT, &fx, |_| {});
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    let server = pid_from(&logs, "wrapper pid ").await;
    let grandchild = pid_from(&logs, "fixture: grandchild pid ").await;
    assert!(process_alive(server), "the server {server} is not running");
    assert!(process_alive(grandchild), "the grandchild {grandchild} is not running");

    let ((), elapsed) = timed(Duration::from_secs(5), client.close()).await;
    // The server itself is reaped by the client: no zombie left behind.
    assert!(
        eventually(Duration::from_secs(1), || !process_exists(server)).await,
        "the server {server} is still there after close (zombie or alive)"
    );
    // The grandchild is killed with the group (reaping it is its new parent's business).
    assert!(
        eventually(Duration::from_secs(1), || !process_alive(grandchild)).await,
        "the grandchild {grandchild} survived close"
    );
    assert!(elapsed < Duration::from_secs(3), "close took {elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_ignoring_stdin_eof_and_sigterm_is_killed_within_the_grace_windows() {
    let fx = Fixture::modern(&["--ignore-stdin-eof"]);
    let client = shell_client(PID_SCRIPT, &fx, |s| {
        s.shutdown_grace = Duration::from_millis(200);
    });
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    let server = pid_from(&logs, "wrapper pid ").await;
    assert!(process_alive(server));

    let ((), elapsed) = timed(Duration::from_secs(5), client.close()).await;
    assert!(
        !process_exists(server) || eventually(Duration::from_millis(200), || !process_exists(server)).await,
        "the server {server} survived close"
    );
    // stdin closed → 200 ms → SIGTERM (ignored) → 200 ms → SIGKILL.
    assert!(
        elapsed >= Duration::from_millis(380),
        "close returned after {elapsed:?}: the grace windows were skipped"
    );
    assert!(elapsed < Duration::from_millis(1500), "close took {elapsed:?}");
    assert!(
        logs.snapshot().iter().any(|l| l.message.contains("staying alive")),
        "the fixture never saw stdin close: {:#?}",
        logs.snapshot()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_well_behaved_server_exits_on_stdin_close_without_signals() {
    let fx = Fixture::modern(&[]);
    let client = shell_client(PID_SCRIPT, &fx, |s| {
        s.shutdown_grace = Duration::from_secs(2);
    });
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    let server = pid_from(&logs, "wrapper pid ").await;
    let ((), elapsed) = timed(Duration::from_secs(5), client.close()).await;
    assert!(!process_exists(server), "the server {server} was not reaped");
    // Closing stdin was enough: no 2 s grace window was spent.
    assert!(elapsed < Duration::from_millis(1500), "close took {elapsed:?}");
}
