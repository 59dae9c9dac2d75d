//! Our Rust API (`mcp_client::Client`) under the bench tests: seq, conc, mrtr, connect, mem.
use mcp_bench::{concurrent, cpu_us, fail, parse_args, pct_us, result, rss_kb, run, timed, Args, Target};
use mcp_client::HttpConfig;
use mcp_client::{Client, ClientConfig, InputRequest, RequestOptions, StdioConfig, TransportConfig};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn config(args: &Args) -> ClientConfig {
    let transport = match &args.target {
        Target::Stdio { command, args } => TransportConfig::Stdio(StdioConfig::new(command).args(args.clone())),
        Target::Http { url } => TransportConfig::Http(HttpConfig::new(url)),
    };
    ClientConfig::new(transport)
}

async fn connected(args: &Args, elicitation: bool) -> Client {
    let client = Client::new(config(args));
    if elicitation {
        client.on_elicitation(|_req: InputRequest| async move {
            Ok(json!({"action": "accept", "content": {"name": "bench"}}))
        });
    }
    client
        .connect()
        .await
        .unwrap_or_else(|e| fail(&format!("connect: {e}")));
    client
}

async fn call(client: &Client, tool: &str, opts: &RequestOptions) {
    let args = json!({"text": "hi"});
    if let Err(e) = client.call_tool(tool, Some(args), opts).await {
        fail(&format!("call {tool}: {e}"));
    }
}

async fn bench(args: Args) -> Value {
    let opts = RequestOptions::default();
    let mut out = Map::new();
    match args.test.as_str() {
        "seq" => {
            let client = connected(&args, false).await;
            for _ in 0..args.warmup {
                call(&client, "echo", &opts).await;
            }
            let cpu0 = cpu_us();
            let mut s = timed(args.duration, args.max_calls, args.gap, || call(&client, "echo", &opts)).await;
            let cpu = cpu_us() - cpu0;
            out.extend(s.to_json(""));
            out.insert("cpu_us_per_call".into(), json!(cpu / s.calls.max(1) as f64));
            out.insert("rss_kb".into(), json!(rss_kb()));
            client.close().await;
        }
        "conc" => {
            let client = connected(&args, false).await;
            for _ in 0..args.warmup {
                call(&client, "echo", &opts).await;
            }
            let c = Arc::new(client.clone());
            let mut s = concurrent(args.inflight, args.duration, move || {
                let c = c.clone();
                async move { call(&c, "echo", &RequestOptions::default()).await }
            })
            .await;
            out.insert("inflight".into(), json!(args.inflight));
            out.extend(s.to_json(""));
            client.close().await;
        }
        "mrtr" => {
            let client = connected(&args, true).await;
            for _ in 0..args.warmup {
                call(&client, "echo", &opts).await;
                call(&client, "elicit_once", &opts).await;
            }
            let half = args.duration / 2;
            let mut plain = timed(half, args.max_calls, Duration::ZERO, || call(&client, "echo", &opts)).await;
            let mut mrtr = timed(half, args.max_calls, Duration::ZERO, || call(&client, "elicit_once", &opts)).await;
            out.extend(plain.to_json("plain_"));
            out.extend(mrtr.to_json("mrtr_"));
            client.close().await;
        }
        "connect" => {
            let (mut conn, mut first, mut close) = (Vec::new(), Vec::new(), Vec::new());
            let deadline = Instant::now() + args.duration;
            while conn.len() < args.iterations && Instant::now() < deadline {
                let t0 = Instant::now();
                let client = connected(&args, false).await;
                let t1 = Instant::now();
                call(&client, "echo", &opts).await; // spawn to first result
                let tf = Instant::now();
                client.close().await; // returns once the child is reaped
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
                call(&client, "echo", &opts).await;
            }
            let warm = rss_kb();
            let start = Instant::now();
            let deadline = start + args.duration;
            let mut n = 0;
            while n < args.calls && Instant::now() < deadline {
                call(&client, "echo", &opts).await;
                n += 1;
            }
            let secs = start.elapsed().as_secs_f64();
            let after = rss_kb();
            client.close().await;
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
    result("rust", &args.test, out)
}

fn main() {
    let args = parse_args();
    run(&args.clone(), bench(args));
}
