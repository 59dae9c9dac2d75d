//! Shared harness of the Rust bench runners (`mcp-bench-rust`, `mcp-bench-rmcp`): arguments,
//! timed loops, latency statistics and the one JSON result line each run prints on stdout.
//!
//! Arguments: `TEST [--duration S] [--warmup N] [--max-calls N] [--inflight N]
//! [--iterations N] [--calls N] [--runtime multi|current] [--variant NAME] [--gap-us N]
//! (--url URL | -- SERVER [ARGS...])`. `--gap-us`: `seq` sleeps that long (untimed, on the
//! runtime) before each call: calls after an idle gap.

use serde_json::{json, Map, Value};
use std::future::Future;
use std::time::{Duration, Instant};

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Target {
    Stdio { command: String, args: Vec<String> },
    Http { url: String },
}

#[derive(Clone, Debug)]
pub struct Args {
    pub test: String,
    pub duration: Duration,
    pub warmup: usize,
    pub max_calls: usize,
    pub inflight: usize,
    pub iterations: usize,
    pub calls: usize,
    pub runtime: String,
    pub variant: String,
    /// Idle time before each `seq` call.
    pub gap: Duration,
    pub target: Target,
}

pub fn parse_args() -> Args {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: TEST [--duration S] [--warmup N] [--max-calls N] [--inflight N] [--iterations N] \
                 [--calls N] [--runtime multi|current] [--variant NAME] [--gap-us N] (--url URL | -- SERVER ARGS...)";
    let mut it = argv.into_iter();
    let test = it.next().unwrap_or_else(|| fail(usage));
    let mut a = Args {
        test,
        duration: Duration::from_secs(2),
        warmup: 500,
        max_calls: 200_000,
        inflight: 1,
        iterations: 50,
        calls: 100_000,
        runtime: "multi".into(),
        variant: "default".into(),
        gap: Duration::ZERO,
        target: Target::Http { url: String::new() },
    };
    let mut url = None;
    while let Some(flag) = it.next() {
        if flag == "--" {
            let command = it.next().unwrap_or_else(|| fail("no server command"));
            a.target = Target::Stdio {
                command,
                args: it.by_ref().collect(),
            };
            return a;
        }
        let value = it.next().unwrap_or_else(|| fail(usage));
        let num = |v: &str| v.parse::<usize>().unwrap_or_else(|_| fail(usage));
        match flag.as_str() {
            "--duration" => a.duration = Duration::from_secs_f64(value.parse().unwrap_or_else(|_| fail(usage))),
            "--warmup" => a.warmup = num(&value),
            "--max-calls" => a.max_calls = num(&value),
            "--inflight" => a.inflight = num(&value).max(1),
            "--iterations" => a.iterations = num(&value),
            "--calls" => a.calls = num(&value),
            "--runtime" => a.runtime = value,
            "--variant" => a.variant = value,
            "--gap-us" => a.gap = Duration::from_micros(num(&value) as u64),
            "--url" => url = Some(value),
            _ => fail(usage),
        }
    }
    match url {
        Some(url) => a.target = Target::Http { url },
        None => fail("no server: --url URL or -- SERVER ARGS..."),
    }
    a
}

pub fn fail(msg: &str) -> ! {
    eprintln!("bench: {msg}");
    std::process::exit(2)
}

/// Builds the runtime the runner asked for and runs `fut` on it (from the main thread, as a C
/// host or `#[tokio::main]` would).
pub fn run<F: Future<Output = Value>>(args: &Args, fut: F) {
    let rt = match args.runtime.as_str() {
        "current" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build(),
    }
    .unwrap_or_else(|e| fail(&format!("runtime: {e}")));
    let mut out = rt.block_on(fut);
    if let Some(obj) = out.as_object_mut() {
        obj.insert("runtime".into(), json!(args.runtime));
        obj.insert("variant".into(), json!(args.variant));
    }
    println!("{out}");
    // Do not wait for stray tasks (a peer's background workers) on the way out.
    rt.shutdown_timeout(Duration::from_millis(500));
}

/// Latencies of one series.
#[derive(Default)]
pub struct Series {
    pub lat_ns: Vec<u64>,
    pub calls: usize,
    pub seconds: f64,
}

impl Series {
    pub fn to_json(&mut self, prefix: &str) -> Map<String, Value> {
        self.lat_ns.sort_unstable();
        let pct = |p: f64| -> f64 {
            if self.lat_ns.is_empty() {
                return 0.0;
            }
            let i = ((p / 100.0) * (self.lat_ns.len() - 1) as f64).round() as usize;
            self.lat_ns[i.min(self.lat_ns.len() - 1)] as f64 / 1000.0
        };
        let mean = if self.lat_ns.is_empty() {
            0.0
        } else {
            self.lat_ns.iter().sum::<u64>() as f64 / self.lat_ns.len() as f64 / 1000.0
        };
        let mut m = Map::new();
        m.insert(format!("{prefix}calls"), json!(self.calls));
        m.insert(format!("{prefix}seconds"), json!(self.seconds));
        let per_sec = if self.seconds > 0.0 {
            self.calls as f64 / self.seconds
        } else {
            0.0
        };
        m.insert(format!("{prefix}per_sec"), json!(per_sec));
        m.insert(format!("{prefix}p50_us"), json!(pct(50.0)));
        m.insert(format!("{prefix}p99_us"), json!(pct(99.0)));
        m.insert(format!("{prefix}mean_us"), json!(mean));
        m
    }
}

/// Runs `call` sequentially for `duration` (at most `max_calls` times), timing each; with a
/// `gap`, sleeps that long before each call (not timed).
pub async fn timed<F, Fut>(duration: Duration, max_calls: usize, gap: Duration, mut call: F) -> Series
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut s = Series {
        lat_ns: Vec::with_capacity(max_calls.min(1 << 20)),
        ..Series::default()
    };
    let start = Instant::now();
    let deadline = start + duration;
    let mut t = start;
    while s.calls < max_calls && t < deadline {
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
            t = Instant::now();
        }
        call().await;
        let t2 = Instant::now();
        s.lat_ns.push((t2 - t).as_nanos() as u64);
        t = t2;
        s.calls += 1;
    }
    s.seconds = (t - start).as_secs_f64();
    s
}

/// Runs `tasks` concurrent loops of `call` (spawned on the current runtime) for `duration`.
pub async fn concurrent<F, Fut>(tasks: usize, duration: Duration, call: F) -> Series
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let start = Instant::now();
    let deadline = start + duration;
    let mut handles = Vec::with_capacity(tasks);
    for _ in 0..tasks {
        let call = call.clone();
        handles.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut t = Instant::now();
            while t < deadline {
                call().await;
                let t2 = Instant::now();
                lat.push((t2 - t).as_nanos() as u64);
                t = t2;
            }
            lat
        }));
    }
    let mut s = Series::default();
    for h in handles {
        let lat = h.await.unwrap_or_default();
        s.calls += lat.len();
        s.lat_ns.extend(lat);
    }
    s.seconds = start.elapsed().as_secs_f64();
    s
}

/// CPU time (user + system, all threads) of this process so far, in microseconds.
pub fn cpu_us() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Resident set size of this process in KiB (VmRSS).
pub fn rss_kb() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(-1)
}

/// Percentile of a list of durations, in microseconds.
pub fn pct_us(v: &mut [u64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[i.min(v.len() - 1)] as f64 / 1000.0
}

/// `{"runner":..,"test":..}` plus the given fields.
pub fn result(runner: &str, test: &str, fields: Map<String, Value>) -> Value {
    let mut m = Map::new();
    m.insert("runner".into(), json!(runner));
    m.insert("test".into(), json!(test));
    m.extend(fields);
    Value::Object(m)
}
