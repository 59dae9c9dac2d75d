//! `mcp-client`: a command-line client for MCP servers, built on the `mcp_client` library's
//! public Rust API (docs/cli.md).

mod args;
mod auth;
mod exit;
mod input;
mod prompt;
mod run;
mod shell;
mod show;
mod target;
mod ui;
mod values;

use clap::{CommandFactory, Parser};
use std::process::ExitCode;

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = args::Cli::parse();
    if let args::Command::Completions { shell } = cli.command {
        clap_complete::generate(shell, &mut args::Cli::command(), "mcp-client", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    let json = cli.global.json;
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            ui::error(&format!("cannot start the runtime: {e}"));
            return ExitCode::from(exit::ERROR);
        }
    };
    match runtime.block_on(run::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            report(&failure, json);
            ExitCode::from(failure.code)
        }
    }
}

/// `mcp-client tools | head` ends quietly at a closed pipe, as other command-line tools do
/// (Rust ignores SIGPIPE, which would make every print fail with a panic instead).
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first in main, before any other thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Tells a failure: what the server asked (manual mode) on stdout, the message on stderr.
fn report(failure: &exit::Failure, json: bool) {
    if let Some(asked) = &failure.json {
        if json {
            println!("{}", serde_json::to_string(asked).unwrap_or_default());
        } else {
            show::asked(asked);
        }
    }
    ui::error(&failure.message);
}
