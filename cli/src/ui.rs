//! The terminal: colour (only on a terminal, never with NO_COLOR: console decides), the
//! progress bar, and stderr notes. Prompts hide the progress bar while they ask.

use console::style;
use indicatif::{ProgressBar, ProgressStyle};
use mcp_client::Progress;
use std::sync::{LazyLock, Mutex};

/// One question at a time, across concurrent input requests.
pub static PROMPTS: LazyLock<tokio::sync::Mutex<()>> = LazyLock::new(|| tokio::sync::Mutex::new(()));

static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Runs `f` with the progress bar (if any) hidden.
pub fn suspended<R>(f: impl FnOnce() -> R) -> R {
    let bar = BAR.lock().unwrap().clone();
    match bar {
        Some(bar) => bar.suspend(f),
        None => f(),
    }
}

/// Shows a progress notification on the bar (drawn on stderr, only on a terminal).
pub fn progress(p: &Progress) {
    let mut slot = BAR.lock().unwrap();
    let bar = slot.get_or_insert_with(|| {
        let bar = ProgressBar::new(0);
        let bar_style = ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(bar_style);
        bar
    });
    match p.total {
        Some(total) if total > 0.0 => {
            bar.set_length(total.round() as u64);
            bar.set_position(p.progress.round() as u64);
        }
        _ => {
            bar.set_length(0);
            bar.set_position(p.progress.round() as u64);
        }
    }
    if let Some(m) = &p.message {
        bar.set_message(m.clone());
    }
}

/// Removes the progress bar, leaving the screen as it was before it.
pub fn finish_progress() {
    if let Some(bar) = BAR.lock().unwrap().take() {
        bar.finish_and_clear();
    }
}

pub fn heading(text: &str) {
    suspended(|| eprintln!("{}", style(text).bold()));
}

pub fn note(text: &str) {
    suspended(|| eprintln!("{}", style(text).dim()));
}

pub fn error(text: &str) {
    suspended(|| eprintln!("{} {text}", style("error:").red().bold()));
}

pub fn bold(text: &str) -> String {
    style(text).bold().to_string()
}

pub fn dim(text: &str) -> String {
    style(text).dim().to_string()
}

/// The terminal's width (80 when stdout is not one).
pub fn width() -> usize {
    let term = console::Term::stdout();
    if term.is_term() {
        term.size().1 as usize
    } else {
        std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(80)
    }
}
