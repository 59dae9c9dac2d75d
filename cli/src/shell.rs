//! `mcp-client shell`: one connection, many commands. On a terminal, a line editor with history
//! (up and down) and Tab completion of commands, tool names and their argument keys; otherwise
//! one command per line of stdin.

use crate::args::{Command, Global};
use crate::exit::Failure;
use crate::input::Answers;
use crate::ui;
use clap::Parser;
use dialoguer::{BasicHistory, Completion, Input};
use mcp_client::{Client, ListKind, RequestOptions};
use std::io::{BufRead, IsTerminal};

/// One line of the shell: a command and `--json`.
#[derive(Parser, Debug)]
#[command(no_binary_name = true, name = "", disable_version_flag = true)]
struct Line {
    #[command(subcommand)]
    command: Command,
    /// Print exactly the result JSON
    #[arg(long, global = true)]
    json: bool,
}

const COMMANDS: &[&str] = &[
    "info",
    "tools",
    "call",
    "prompts",
    "prompt",
    "resources",
    "templates",
    "read",
    "complete",
    "skills",
    "skill",
    "ping",
    "listen",
    "export",
    "help",
    "exit",
];

/// Tab completion: the command, then (after `call`) a tool's name, then its argument keys.
struct Completer {
    tools: Vec<(String, Vec<String>)>,
}

impl Completer {
    fn complete<'a>(prefix: &str, words: impl Iterator<Item = &'a str>) -> Option<String> {
        let found: Vec<&str> = words.filter(|w| w.starts_with(prefix)).collect();
        match found.as_slice() {
            [one] => Some(one.to_string()),
            [first, rest @ ..] => {
                let common = rest.iter().fold(first.to_string(), |acc, w| {
                    acc.chars()
                        .zip(w.chars())
                        .take_while(|(a, b)| a == b)
                        .map(|(a, _)| a)
                        .collect()
                });
                (common.len() > prefix.len()).then_some(common)
            }
            [] => None,
        }
    }
}

impl Completion for Completer {
    fn get(&self, input: &str) -> Option<String> {
        let (head, last) = input.rsplit_once(' ').map_or(("", input), |(h, l)| (h, l));
        let words: Vec<&str> = head.split_whitespace().collect();
        let done = |w: String| Some(if head.is_empty() { w } else { format!("{head} {w}") });
        match words.as_slice() {
            [] => Completer::complete(last, COMMANDS.iter().copied()).and_then(done),
            ["call"] => Completer::complete(last, self.tools.iter().map(|(n, _)| n.as_str())).and_then(done),
            ["call", tool, ..] if !last.contains('=') => {
                let keys = self
                    .tools
                    .iter()
                    .find(|(n, _)| n == tool)?
                    .1
                    .iter()
                    .map(|k| format!("{k}="));
                let keys: Vec<String> = keys.collect();
                Completer::complete(last, keys.iter().map(String::as_str)).and_then(done)
            }
            _ => None,
        }
    }
}

struct Editor {
    history: BasicHistory,
    completer: Completer,
}

/// The next line: `None` at the end of input.
async fn read_line(editor: Option<Editor>) -> (Option<String>, Option<Editor>) {
    match editor {
        Some(mut ed) => {
            let joined = tokio::task::spawn_blocking(move || {
                let line = Input::<String>::new()
                    .with_prompt("mcp")
                    .allow_empty(true)
                    .history_with(&mut ed.history)
                    .completion_with(&ed.completer)
                    .interact_text();
                (line.ok(), ed)
            })
            .await;
            match joined {
                Ok((line, ed)) => (line, Some(ed)),
                Err(_) => (None, None),
            }
        }
        None => {
            let line = tokio::task::spawn_blocking(|| {
                let mut line = String::new();
                match std::io::stdin().lock().read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                }
            })
            .await
            .ok()
            .flatten();
            (line, None)
        }
    }
}

pub async fn shell(client: &Client, g: &Global, answers: &Answers) -> Result<(), Failure> {
    let tools = client.list_all(ListKind::Tools, &RequestOptions::default()).await?;
    let tools = tools["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let keys = t["inputSchema"]["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            (t["name"].as_str().unwrap_or("").to_string(), keys)
        })
        .collect();
    let tty = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut editor = tty.then(|| Editor {
        history: BasicHistory::new().no_duplicates(true),
        completer: Completer { tools },
    });
    if tty {
        ui::note("one command per line (help lists them; Tab completes; exit or Ctrl-D ends)");
    }
    loop {
        let (line, ed) = read_line(editor).await;
        editor = ed;
        let Some(line) = line else { break };
        let words = match shell_words::split(line.trim()) {
            Ok(w) if w.is_empty() => continue,
            Ok(w) => w,
            Err(e) => {
                ui::error(&format!("{e}"));
                continue;
            }
        };
        if matches!(words[0].as_str(), "exit" | "quit") {
            break;
        }
        let parsed = match Line::try_parse_from(&words) {
            Ok(p) => p,
            Err(e) => {
                let _ = e.print();
                continue;
            }
        };
        if matches!(
            parsed.command,
            Command::Shell | Command::Completions { .. } | Command::Login | Command::Logout | Command::Servers
        ) {
            ui::error("not in the shell: run it as mcp-client's own command");
            continue;
        }
        let mut line_g = g.clone();
        line_g.json |= parsed.json;
        if let Err(f) = Box::pin(crate::run::one(client, &parsed.command, &line_g, answers)).await {
            crate::report(&f, line_g.json);
        }
        ui::finish_progress();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completer() -> Completer {
        let tools = vec![
            ("echo".to_string(), vec!["text".to_string()]),
            ("echo_meta".to_string(), vec![]),
            ("add".to_string(), vec!["a".to_string(), "b".to_string()]),
        ];
        Completer { tools }
    }

    #[test]
    fn completes_commands_tools_and_keys() {
        let c = completer();
        assert_eq!(c.get("to").as_deref(), Some("tools"));
        assert_eq!(c.get("pro").as_deref(), Some("prompt")); // the common prefix of prompt, prompts
        assert_eq!(c.get("call a").as_deref(), Some("call add"));
        assert_eq!(c.get("call ec").as_deref(), Some("call echo"));
        assert_eq!(c.get("call add a=1 b").as_deref(), Some("call add a=1 b="));
        assert_eq!(c.get("call echo t").as_deref(), Some("call echo text="));
        assert_eq!(c.get("call nope x"), None);
        assert_eq!(c.get("zz"), None);
    }
}
