//! One command against its target.

use crate::args::{Cli, Command, ExportFormat, Global, LOG_LEVELS};
use crate::exit::{self, Failure};
use crate::input::Answers;
use crate::target::{self, Target};
use crate::{auth, show, ui, values};
use mcp_client::export::{export_tools, ExportOptions, Format, Origin};
use mcp_client::hub::{Hub, HubEvent};
use mcp_client::{Client, ListKind, LogLine, RequestOptions};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub async fn run(cli: Cli) -> Result<(), Failure> {
    let g = &cli.global;
    let answers = Answers::new(g);
    let skills = matches!(cli.command, Command::Skills | Command::Skill { .. });
    let login = matches!(cli.command, Command::Login | Command::Logout);
    let (target, store) = target::open(g, &answers, skills, login)?;
    let outcome = match (&target, &store) {
        (Target::One(client), Some(store)) if login => match cli.command {
            Command::Login => login_command(client, store, g).await,
            _ => logout_command(client, store, g).await,
        },
        _ if login => Err(Failure::usage("login and logout take an http(s):// URL after `--`")),
        (Target::One(client), _) => run_one(client, &cli.command, g, &answers).await,
        (Target::Hub(hub), _) => run_hub(hub, &cli.command, g, &answers).await,
    };
    ui::finish_progress();
    target.close().await;
    outcome
}

async fn run_one(client: &Client, command: &Command, g: &Global, answers: &Arc<Answers>) -> Result<(), Failure> {
    listeners(client, g);
    let info = client.connect().await.map_err(Failure::connect)?;
    if g.no_input && info.era == mcp_client::Era::Legacy {
        client.set_elicitation_handler(Some(answers.recorder()), mcp_client::ElicitationModes::BOTH)?;
        client.set_handler(mcp_client::InputKind::Sampling, Some(answers.recorder()));
    }
    let done = one(client, command, g, answers).await;
    match answers.asked() {
        Some(asked) => Err(asked_failure(asked)),
        None => done,
    }
}

async fn run_hub(hub: &Hub, command: &Command, g: &Global, answers: &Answers) -> Result<(), Failure> {
    if g.verbose {
        // Each member's stderr lines and state changes, named by member.
        hub.on_event(Some(Arc::new(|event: &HubEvent| match event {
            HubEvent::Log { server, line } => ui::note(&format!("[{server} {}] {}", line.source, line.message)),
            HubEvent::State { .. } => ui::note(&format!("[hub] {}", event.to_json())),
            _ => {}
        })));
    }
    hub.start().await;
    let done = hub_command(hub, command, g, answers).await;
    match answers.asked() {
        Some(asked) => Err(asked_failure(asked)),
        None => done,
    }
}

/// Server log messages at `--log-level` and above, and (with `--verbose`) the server's stderr.
fn listeners(client: &Client, g: &Global) {
    if let Some(level) = g.log_level.clone() {
        let floor = LOG_LEVELS.iter().position(|l| *l == level).unwrap_or(0);
        client.on_notification(Some(Arc::new(move |method: &str, params: &Value| {
            if method != "notifications/message" {
                return;
            }
            let level = params["level"].as_str().unwrap_or("info");
            if LOG_LEVELS.iter().position(|l| *l == level).unwrap_or(0) < floor {
                return;
            }
            let data = params["data"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| params["data"].to_string());
            let logger = params["logger"].as_str().map(|l| format!(" {l}")).unwrap_or_default();
            ui::note(&format!("[server {level}{logger}] {data}"));
        })));
    }
    if g.verbose {
        client.on_log(Some(Arc::new(|line: &LogLine| {
            ui::note(&format!("[{}] {}", line.source, line.message))
        })));
    }
}

fn options() -> RequestOptions {
    RequestOptions {
        on_progress: Some(Arc::new(ui::progress)),
        reset_timeout_on_progress: true,
        ..RequestOptions::default()
    }
}

/// Prints `value` as JSON, or for people with `human`.
fn out(g: &Global, value: &Value, human: fn(&Value)) {
    ui::finish_progress();
    if g.json {
        println!("{}", serde_json::to_string(value).unwrap_or_default());
    } else {
        human(value);
    }
}

fn tool_result(g: &Global, result: &Value) -> Result<(), Failure> {
    out(g, result, show::call_result);
    if result["isError"] == true {
        return Err(Failure {
            code: exit::TOOL_ERROR,
            message: "the tool reported an error (isError)".into(),
            json: None,
        });
    }
    Ok(())
}

fn schema_of<'a>(tools: &'a Value, name: &str) -> Option<&'a Value> {
    tools["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)
        .map(|t| &t["inputSchema"])
}

fn asked_failure(asked: Value) -> Failure {
    Failure {
        code: exit::INPUT_REQUIRED,
        message: "the server asked for input (--no-input)".into(),
        json: Some(asked),
    }
}

pub async fn one(client: &Client, command: &Command, g: &Global, answers: &Answers) -> Result<(), Failure> {
    let opts = options();
    if let Some(level) = &g.log_level {
        // Servers without logging refuse; their messages are then simply not asked for.
        let _ = client.set_log_level(level, &opts).await;
    }
    match command {
        Command::Info => {
            let info = client.server_info().map(|i| i.to_json()).unwrap_or(Value::Null);
            out(g, &info, show::info);
        }
        Command::Tools => out(g, &client.list_all(ListKind::Tools, &opts).await?, show::tools),
        Command::Prompts => out(g, &client.list_all(ListKind::Prompts, &opts).await?, show::prompts),
        Command::Resources => out(g, &client.list_all(ListKind::Resources, &opts).await?, |v| {
            show::resources(v, "resources")
        }),
        Command::Templates => out(g, &client.list_all(ListKind::ResourceTemplates, &opts).await?, |v| {
            show::resources(v, "resourceTemplates")
        }),
        Command::Call(c) => {
            let tools = match c.pairs.is_empty() {
                true => Value::Null,
                false => client.list_all(ListKind::Tools, &opts).await?,
            };
            let schema = schema_of(&tools, &c.name).or(Some(&Value::Null));
            let args = values::arguments(&c.pairs, c.args.as_deref(), schema)?;
            let result = client.call_tool(&c.name, args, &opts).await;
            if let Some(asked) = answers.asked() {
                return Err(asked_failure(asked));
            }
            return tool_result(g, &result?);
        }
        Command::Prompt(c) => {
            let args = values::arguments(&c.pairs, c.args.as_deref(), None)?;
            out(g, &client.get_prompt(&c.name, args, &opts).await?, show::prompt_result);
        }
        Command::Read { uri } => out(g, &client.read_resource(uri, &opts).await?, show::read_result),
        Command::Complete {
            reference,
            argument,
            value,
        } => {
            let r = match reference.split_once(':') {
                Some(("prompt", name)) => json!({"type": "ref/prompt", "name": name}),
                Some(("resource", uri)) => json!({"type": "ref/resource", "uri": uri}),
                _ => return Err(Failure::usage("the reference is prompt:NAME or resource:URI_TEMPLATE")),
            };
            let params = json!({"ref": r, "argument": {"name": argument, "value": value}});
            out(g, &client.complete(params, &opts).await?, show::completion);
        }
        Command::Skills => out(g, &client.list_skills(&opts).await?, show::skills),
        Command::Skill { name } => {
            let entry = if name.contains("://") {
                client.get_skill(name, &opts).await?
            } else {
                let list = client.list_skills(&opts).await?;
                let found = list["skills"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|s| s["frontmatter"]["name"] == name.as_str());
                found
                    .cloned()
                    .ok_or_else(|| Failure::usage(format!("no skill named `{name}`")))?
            };
            let file = client.read_skill_file(&entry, None, &opts).await?;
            out(g, &json!({"skill": entry, "file": file}), |v| {
                show::skills(&json!({"skills": [v["skill"]]}));
                println!();
                println!("{}", v["file"]["text"].as_str().unwrap_or(""));
            });
        }
        Command::Ping => {
            let start = Instant::now();
            if modern(client) {
                // 2026-07-28 has no ping: a server/discover round trip stands for it.
                client.request("server/discover", None, &opts).await?;
            } else {
                client.ping(&opts).await?;
            }
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            if g.json {
                println!("{{}}");
            } else {
                println!("pong in {ms:.1} ms");
            }
        }
        Command::Listen { count, seconds } => listen(client, g, *count, *seconds).await?,
        Command::Export { format, strict } => {
            let tools = client.list_all(ListKind::Tools, &opts).await?;
            export(g, &tools, None, *format, *strict)?;
        }
        Command::Servers => return Err(Failure::usage("`servers` lists the servers of --config FILE")),
        Command::Login | Command::Logout => unreachable!("login and logout run before"),
        Command::Shell => crate::shell::shell(client, g, answers).await?,
        Command::Completions { .. } => unreachable!("completions need no server"),
    }
    Ok(())
}

async fn hub_command(hub: &Hub, command: &Command, g: &Global, answers: &Answers) -> Result<(), Failure> {
    let opts = options();
    match command {
        Command::Servers => out(g, &hub.members_json(), show::servers),
        Command::Tools => out(g, &*hub.list_tools().await?, show::tools),
        Command::Prompts => out(g, &*hub.list_prompts().await?, show::prompts),
        Command::Resources => out(g, &*hub.list_resources().await?, |v| show::resources(v, "resources")),
        Command::Templates => out(g, &*hub.list_resource_templates().await?, |v| {
            show::resources(v, "resourceTemplates")
        }),
        Command::Call(c) => {
            let tools = hub.list_tools().await?;
            let tools = &*tools;
            let args = values::arguments(
                &c.pairs,
                c.args.as_deref(),
                schema_of(tools, &c.name).or(Some(&Value::Null)),
            )?;
            let result = hub.call_tool(&c.name, args, &opts).await;
            if let Some(asked) = answers.asked() {
                return Err(asked_failure(asked));
            }
            return tool_result(g, &result?);
        }
        Command::Prompt(c) => {
            let args = values::arguments(&c.pairs, c.args.as_deref(), None)?;
            out(g, &hub.get_prompt(&c.name, args, &opts).await?, show::prompt_result);
        }
        Command::Read { uri } => {
            let list = hub.list_resources().await?;
            let item = list["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| r["uri"] == uri.as_str());
            let server = item
                .and_then(|r| r["_meta"]["mcp-client/server"].as_str())
                .ok_or_else(|| Failure::usage(format!("no server lists {uri}: name one with --server")))?;
            out(g, &hub.read_resource(server, uri, &opts).await?, show::read_result);
        }
        Command::Export { format, strict } => {
            let tools = hub.list_tools().await?;
            let mut origins = HashMap::new();
            for t in tools["tools"].as_array().into_iter().flatten() {
                let (Some(name), Some(tool)) = (t["name"].as_str(), t["_meta"]["mcp-client/name"].as_str()) else {
                    continue;
                };
                let server = t["_meta"]["mcp-client/server"].as_str().map(str::to_string);
                origins.insert(
                    name.to_string(),
                    Origin {
                        server,
                        tool: tool.to_string(),
                    },
                );
            }
            export(g, &tools, Some(&origins), *format, *strict)?;
        }
        _ => {
            return Err(Failure::usage(
                "with --config and no --server, this command needs --server NAME",
            ))
        }
    }
    Ok(())
}

fn export(
    g: &Global,
    tools: &Value,
    origins: Option<&HashMap<String, Origin>>,
    format: ExportFormat,
    strict: bool,
) -> Result<(), Failure> {
    let format = match format {
        ExportFormat::Openai => Format::ChatCompletions,
        ExportFormat::OpenaiResponses => Format::Responses,
        ExportFormat::Anthropic => Format::Anthropic,
        ExportFormat::Gemini => Format::Gemini,
    };
    let opts = ExportOptions {
        strict,
        ..ExportOptions::new(format)
    };
    let exported = export_tools(tools, origins, &opts).map_err(|e| Failure {
        code: exit::ERROR,
        message: e,
        json: None,
    })?;
    let value = exported.to_value();
    out(g, &value, |v| {
        show::json(&v["tools"]);
        for r in v["report"].as_array().into_iter().flatten() {
            if let Some(why) = r["refused"].as_str() {
                ui::note(&format!("left out {}: {why}", r["tool"]));
            }
        }
    });
    Ok(())
}

/// Notifications as they come: one line each (JSON lines with --json).
async fn listen(client: &Client, g: &Global, count: Option<u64>, seconds: Option<f64>) -> Result<(), Failure> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Value)>();
    client.on_notification(Some(Arc::new(move |method: &str, params: &Value| {
        let _ = tx.send((method.to_string(), params.clone()));
    })));
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    // Polled once, so Ctrl-C is caught from here on (before "listening" is shown).
    tokio::select! {
        biased;
        _ = &mut ctrl_c => return Ok(()),
        _ = std::future::ready(()) => {}
    }
    if !g.json {
        ui::note("listening (Ctrl-C ends)");
    }
    let _subscription = if modern(client) {
        let filter = json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
        Some(client.listen(filter, &RequestOptions::default()).await?)
    } else {
        None
    };
    let deadline = seconds.map(|s| tokio::time::Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    let mut seen = 0u64;
    while count.is_none_or(|c| seen < c) {
        let next = async {
            match deadline {
                Some(d) => tokio::time::timeout_at(d, rx.recv()).await.ok().flatten(),
                None => rx.recv().await,
            }
        };
        let event = tokio::select! {
            e = next => e,
            _ = &mut ctrl_c => None,
        };
        let Some((method, params)) = event else { break };
        if method == "notifications/subscriptions/acknowledged" {
            continue;
        }
        seen += 1;
        if g.json {
            println!("{}", json!({"method": method, "params": params}));
        } else {
            println!("{} {}", ui::bold(&method), params);
        }
    }
    Ok(())
}

fn modern(client: &Client) -> bool {
    client.server_info().is_some_and(|i| i.era == mcp_client::Era::Modern)
}

async fn login_command(client: &Client, store: &auth::Store, g: &Global) -> Result<(), Failure> {
    client.connect().await.map_err(Failure::connect)?;
    let stored = *store.saved.lock().unwrap();
    let issuers: Vec<String> = store.issuers.lock().unwrap().iter().cloned().collect();
    if g.json {
        println!("{}", json!({"issuers": issuers, "stored": stored}));
    } else if stored {
        println!("logged in to {}", issuers.join(", "));
    } else if issuers.is_empty() {
        println!("the server did not ask for authorization: nothing stored");
    } else {
        println!("already logged in to {}", issuers.join(", "));
    }
    Ok(())
}

async fn logout_command(client: &Client, store: &auth::Store, g: &Global) -> Result<(), Failure> {
    // Connecting makes the client look up the server's authorization server in the store
    // (a refused or expired record too): that is what is forgotten.
    let _ = client.connect().await;
    let forgotten = store.forget().await;
    if g.json {
        println!("{}", json!({"forgotten": forgotten}));
    } else if forgotten.is_empty() {
        println!("nothing stored for this server");
    } else {
        println!("logged out of {}", forgotten.join(", "));
    }
    Ok(())
}
