//! mcp-fixture-server: a precise MCP server over stdio (newline-delimited
//! JSON-RPC 2.0) or HTTP (`--http`: Streamable HTTP, or HTTP+SSE with
//! `--legacy-sse`) speaking the modern (2026-07-28) and legacy eras, used by
//! the mcp_client tests. See README.md for flags and tools.

mod apps;
mod caps;
mod catalog;
mod config;
mod flows;
mod http;
mod http_parse;
mod legacy;
mod legacy_sse;
mod listen;
mod mcp_headers;
mod modern;
mod mrtr;
mod oauth;
mod oauth_codec;
mod oauth_hostile_auth;
mod redefine;
mod server;
mod sessions;
mod signal;
mod sink;
mod skills;
mod state;
mod streams;
mod tasks;
mod tools;
mod url_elicit;
mod wire;

use std::io::{self, BufRead};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

/// SIGTERM is ignored with `--ignore-stdin-eof`, using the C library's
/// `signal` that std already links (no extra crate).
#[cfg(unix)]
fn ignore_sigterm() {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGTERM: i32 = 15;
    const SIG_IGN: usize = 1;
    // SAFETY: installing SIG_IGN for SIGTERM has no memory-safety effects.
    unsafe {
        signal(SIGTERM, SIG_IGN);
    }
}

#[cfg(not(unix))]
fn ignore_sigterm() {}

fn spawn_grandchild() {
    // Null stdio so the grandchild never holds the client's pipes open. Windows has no
    // `sleep`: the grandchild is this server again, staying alive after its stdin's end.
    #[cfg(not(windows))]
    let mut grandchild = Command::new("sleep");
    #[cfg(not(windows))]
    grandchild.arg("300");
    #[cfg(windows)]
    let mut grandchild = Command::new(std::env::current_exe().unwrap_or_else(|_| "mcp-fixture-server".into()));
    #[cfg(windows)]
    grandchild.arg("--ignore-stdin-eof");
    match grandchild
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => eprintln!("fixture: grandchild pid {}", child.id()),
        Err(e) => eprintln!("fixture: cannot spawn grandchild: {e}"),
    }
}

fn stay_alive() -> ! {
    eprintln!("fixture: stdin closed; staying alive (--ignore-stdin-eof)");
    loop {
        thread::sleep(Duration::from_secs(3600));
    }
}

fn main() {
    let cfg = match config::parse(std::env::args().skip(1)) {
        Ok(cfg) => cfg,
        Err(msg) => {
            eprintln!("fixture: {msg}\n{}", config::USAGE);
            std::process::exit(2);
        }
    };
    if let Some(banner) = &cfg.stderr_banner {
        eprintln!("{banner}");
    }
    if cfg.ignore_stdin_eof {
        ignore_sigterm();
    }
    if cfg.spawn_grandchild {
        spawn_grandchild();
    }
    let recorder = match wire::Recorder::new(cfg.record.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fixture: cannot open record file: {e}");
            std::process::exit(2);
        }
    };
    // Opened before serving: a FIFO's reader (the test) is waiting for it.
    let signal = match signal::Signal::open(cfg.signal.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fixture: cannot open signal file: {e}");
            std::process::exit(2);
        }
    };
    let ignore_eof = cfg.ignore_stdin_eof;
    let http_addr = cfg.http.clone();
    let srv = server::Server::new(cfg, recorder, signal);

    if let Some(addr) = http_addr {
        if let Err(e) = http::start(srv, &addr) {
            eprintln!("fixture: cannot serve HTTP on {addr}: {e}");
            std::process::exit(2);
        }
        // stdin carries nothing in HTTP mode; its EOF means the parent died.
        let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
        if ignore_eof {
            stay_alive();
        }
        eprintln!("fixture: stdin closed; exiting");
        std::process::exit(0);
    }

    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                srv.handle_line(&line);
            }
            Err(e) => {
                eprintln!("fixture: stdin error: {e}");
                break;
            }
        }
    }
    if ignore_eof {
        stay_alive();
    }
    srv.drain(Duration::from_millis(200));
    eprintln!("fixture: stdin closed; exiting");
    std::process::exit(0);
}
