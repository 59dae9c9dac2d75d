//! The rmcp client (crate `rmcp`, pinned in bench/Cargo.toml) under the bench tests: seq, conc,
//! mrtr, connect, mem. Modern era (`ClientLifecycleMode::Discover`), like our client against
//! the fixture. HTTP variants: `default` (rmcp's own reqwest client, which disables connection
//! pooling) and `pooled` (a plain `reqwest::Client`, keep-alive reuse).
use mcp_bench::{concurrent, cpu_us, fail, parse_args, pct_us, result, rss_kb, run, timed, Args, Target};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone)]
struct Handler {
    elicitation: bool,
}

impl ClientHandler for Handler {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "bench"})))
    }

    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = if self.elicitation {
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap_or_default()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("rmcp-bench", "0.1.0"))
    }
}

type Conn = RunningService<RoleClient, Handler>;

fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

async fn connected(args: &Args, elicitation: bool) -> Conn {
    let handler = Handler { elicitation };
    let outcome = match &args.target {
        Target::Stdio { command, args: argv } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(argv);
            let transport = TokioChildProcess::new(cmd).unwrap_or_else(|e| fail(&format!("spawn: {e}")));
            handler.serve_with_lifecycle(transport, lifecycle()).await
        }
        Target::Http { url } => {
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            let transport = if args.variant == "pooled" {
                StreamableHttpClientTransport::with_client(reqwest::Client::new(), config)
            } else {
                StreamableHttpClientTransport::from_config(config)
            };
            handler.serve_with_lifecycle(transport, lifecycle()).await
        }
    };
    outcome.unwrap_or_else(|e| fail(&format!("connect: {e}")))
}

fn echo_params(tool: &'static str) -> CallToolRequestParams {
    let mut args = Map::new();
    args.insert("text".into(), json!("hi"));
    CallToolRequestParams::new(tool).with_arguments(args)
}

async fn call(client: &Conn, tool: &'static str) {
    if let Err(e) = client.call_tool(echo_params(tool)).await {
        fail(&format!("call {tool}: {e}"));
    }
}

async fn bench(args: Args) -> Value {
    let mut out = Map::new();
    match args.test.as_str() {
        "seq" => {
            let client = connected(&args, false).await;
            for _ in 0..args.warmup {
                call(&client, "echo").await;
            }
            let cpu0 = cpu_us();
            let mut s = timed(args.duration, args.max_calls, args.gap, || call(&client, "echo")).await;
            let cpu = cpu_us() - cpu0;
            out.extend(s.to_json(""));
            out.insert("cpu_us_per_call".into(), json!(cpu / s.calls.max(1) as f64));
            out.insert("rss_kb".into(), json!(rss_kb()));
            let _ = client.cancel().await;
        }
        "conc" => {
            let client = Arc::new(connected(&args, false).await);
            for _ in 0..args.warmup {
                call(&client, "echo").await;
            }
            let c = client.clone();
            let mut s = concurrent(args.inflight, args.duration, move || {
                let c = c.clone();
                async move { call(&c, "echo").await }
            })
            .await;
            out.insert("inflight".into(), json!(args.inflight));
            out.extend(s.to_json(""));
            if let Ok(client) = Arc::try_unwrap(client) {
                let _ = client.cancel().await;
            }
        }
        "mrtr" => {
            let client = connected(&args, true).await;
            for _ in 0..args.warmup {
                call(&client, "echo").await;
                call(&client, "elicit_once").await;
            }
            let half = args.duration / 2;
            let mut plain = timed(half, args.max_calls, Duration::ZERO, || call(&client, "echo")).await;
            let mut mrtr = timed(half, args.max_calls, Duration::ZERO, || call(&client, "elicit_once")).await;
            out.extend(plain.to_json("plain_"));
            out.extend(mrtr.to_json("mrtr_"));
            let _ = client.cancel().await;
        }
        "connect" => {
            let (mut conn, mut first, mut close) = (Vec::new(), Vec::new(), Vec::new());
            let deadline = Instant::now() + args.duration;
            while conn.len() < args.iterations && Instant::now() < deadline {
                let t0 = Instant::now();
                let client = connected(&args, false).await;
                let t1 = Instant::now();
                call(&client, "echo").await; // spawn to first result
                let tf = Instant::now();
                // Cancelling closes the transport: stdin closed, then waiting for the child.
                let _ = client.cancel().await;
                let t2 = Instant::now();
                conn.push((t1 - t0).as_nanos() as u64);
                first.push((tf - t0).as_nanos() as u64);
                close.push((t2 - tf).as_nanos() as u64);
            }
            out.insert("first_p50_us".into(), json!(pct_us(&mut first, 50.0)));
            out.insert("first_p99_us".into(), json!(pct_us(&mut first, 99.0)));
            out.insert("iterations".into(), json!(conn.len()));
            out.insert("connect_p50_us".into(), json!(pct_us(&mut conn, 50.0)));
            out.insert("connect_p99_us".into(), json!(pct_us(&mut conn, 99.0)));
            out.insert("close_p50_us".into(), json!(pct_us(&mut close, 50.0)));
            out.insert("close_p99_us".into(), json!(pct_us(&mut close, 99.0)));
        }
        "mem" => {
            let before = rss_kb();
            let client = connected(&args, false).await;
            let idle = rss_kb();
            for _ in 0..args.warmup {
                call(&client, "echo").await;
            }
            let warm = rss_kb();
            let start = Instant::now();
            let deadline = start + args.duration;
            let mut n = 0;
            while n < args.calls && Instant::now() < deadline {
                call(&client, "echo").await;
                n += 1;
            }
            let secs = start.elapsed().as_secs_f64();
            let after = rss_kb();
            let _ = client.cancel().await;
            out.insert("rss_before_kb".into(), json!(before));
            out.insert("rss_idle_kb".into(), json!(idle));
            out.insert("client_idle_kb".into(), json!(idle - before));
            out.insert("rss_warm_kb".into(), json!(warm));
            out.insert("rss_after_kb".into(), json!(after));
            out.insert("calls".into(), json!(n));
            out.insert("seconds".into(), json!(secs));
            out.insert("growth_kb".into(), json!(after - warm));
        }
        other => fail(&format!("unknown test {other}")),
    }
    result("rmcp", &args.test, out)
}

fn main() {
    // The bench crate also links mcp_client, whose reqwest features ask for an explicit rustls
    // provider; plain http:// never uses it.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = parse_args();
    run(&args.clone(), bench(args));
}
