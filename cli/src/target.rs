//! What the command line points at: one server (a command, a URL, or one entry of a
//! configuration file) as a `Client`, or a whole configuration file as a `Hub`.

use crate::args::{Global, Mode};
use crate::auth::{self, Store};
use crate::exit::Failure;
use crate::input::Answers;
use mcp_client::hub::{Hub, HubOptions, HubSpec, ReadContext};
use mcp_client::{Client, ClientConfig, ElicitationModes, InputKind};
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub enum Target {
    One(Client),
    Hub(Hub),
}

/// Options every server gets from the command line (timeouts, era, manual input).
fn common(g: &Global, skills: bool) -> Map<String, Value> {
    let mut c = Map::new();
    let mode = match g.mode {
        Mode::Auto => "auto",
        Mode::Modern => "modern",
        Mode::Legacy => "legacy",
    };
    c.insert("mode".into(), json!(mode));
    c.insert("request_timeout_ms".into(), json!(millis(g.timeout)));
    c.insert("connect_timeout_ms".into(), json!(millis(g.connect_timeout)));
    c.insert(
        "client_info".into(),
        json!({"name": "mcp-client", "version": env!("CARGO_PKG_VERSION")}),
    );
    if g.no_input {
        c.insert("manual_input".into(), json!(["elicitation", "sampling"]));
    }
    if skills {
        c.insert("skills".into(), json!(true));
    }
    c
}

fn millis(secs: f64) -> u64 {
    (secs.max(0.0) * 1000.0).round() as u64
}

/// `--header 'Name: value'` and `--env KEY=VALUE` as JSON objects.
fn pairs(items: &[String], sep: char, what: &str) -> Result<Map<String, Value>, Failure> {
    let mut out = Map::new();
    for item in items {
        let (k, v) = item
            .split_once(sep)
            .ok_or_else(|| Failure::usage(format!("{what} `{item}`: expected NAME{sep}VALUE")))?;
        out.insert(k.trim().to_string(), json!(v.trim_start()));
    }
    Ok(out)
}

/// Adds `--header`/`--env` to a flat client configuration, by its transport.
fn add_extras(client: &mut Map<String, Value>, g: &Global) -> Result<(), Failure> {
    let (key, extra) = if client.contains_key("url") {
        ("headers", pairs(&g.headers, ':', "--header")?)
    } else {
        ("env", pairs(&g.env, '=', "--env")?)
    };
    if !extra.is_empty() {
        let slot = client.entry(key).or_insert_with(|| json!({}));
        if let Some(map) = slot.as_object_mut() {
            map.extend(extra);
        }
    }
    Ok(())
}

/// The target the options name, and for an HTTP server the token store its OAuth uses.
/// `skills` declares the skills extension; `login` lets the OAuth flow open the browser.
pub fn open(
    g: &Global,
    answers: &Arc<Answers>,
    skills: bool,
    login: bool,
) -> Result<(Target, Option<Arc<Store>>), Failure> {
    let common = common(g, skills);
    if let Some(file) = &g.config {
        if !g.server_command.is_empty() {
            return Err(Failure::usage("give either --config or a server after `--`, not both"));
        }
        let spec = HubSpec::from_file(file, &ReadContext::new()).map_err(Failure::from)?;
        if let Some(name) = &g.server {
            let member = spec.members.iter().find(|m| &m.name == name);
            let member = match member {
                Some(m) => m,
                None => {
                    if let Some((_, why)) = spec.failed.iter().find(|(n, _)| n == name) {
                        return Err(Failure::usage(why.clone()));
                    }
                    let names: Vec<&str> = spec.members.iter().map(|m| m.name.as_str()).collect();
                    return Err(Failure::usage(format!(
                        "{}: no server named `{name}` (it has: {})",
                        file.display(),
                        names.join(", ")
                    )));
                }
            };
            let mut client = member.client.as_object().cloned().unwrap_or_default();
            for (k, v) in common {
                client.insert(k, v);
            }
            add_extras(&mut client, g)?;
            return Ok((one(&Value::Object(client), answers)?, None));
        }
        let hub = Hub::new(
            spec,
            HubOptions {
                defaults: common,
                ..HubOptions::default()
            },
        )
        .map_err(Failure::from)?;
        register_hub(&hub, answers)?;
        return Ok((Target::Hub(hub), None));
    }
    if g.server.is_some() {
        return Err(Failure::usage("--server names a server of --config FILE"));
    }
    let mut client = common;
    let mut url = None;
    match g.server_command.as_slice() {
        [] => {
            return Err(Failure::usage(
                "no server: give its command after `--` (mcp-client tools -- npx -y @modelcontextprotocol/server-everything), \
                 an http(s):// URL after `--`, or --config FILE",
            ))
        }
        [u] if u.starts_with("http://") || u.starts_with("https://") => {
            client.insert("url".into(), json!(u));
            url = Some(u.clone());
        }
        [command, args @ ..] => {
            client.insert("command".into(), json!(command));
            client.insert("args".into(), json!(args));
        }
    }
    add_extras(&mut client, g)?;
    let bearer = client
        .get("headers")
        .and_then(Value::as_object)
        .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("authorization")));
    let Some(url) = url.filter(|_| !bearer) else {
        if login {
            return Err(Failure::usage(
                "login and logout take an http(s):// URL after `--` (without an Authorization header)",
            ));
        }
        return Ok((one(&Value::Object(client), answers)?, None));
    };
    // OAuth on a 401, with tokens kept between runs.
    client.insert("oauth".into(), json!({}));
    let target = one(&Value::Object(client), answers)?;
    let store = Store::new(g.token_dir.clone().unwrap_or_else(auth::default_dir));
    if let Target::One(c) = &target {
        c.set_token_store(Some(store.clone()));
        c.set_authorization_handler(Some(Arc::new(move |r| auth::authorize(login, url.clone(), r))));
    }
    Ok((target, Some(store)))
}

fn one(config: &Value, answers: &Arc<Answers>) -> Result<Target, Failure> {
    let config = ClientConfig::from_json(config).map_err(Failure::from)?;
    let client = Client::new(config);
    let (elicit, sampling, roots) = answers.handlers();
    if let Some(h) = elicit {
        client.set_elicitation_handler(Some(h), ElicitationModes::BOTH)?;
    }
    client.set_handler(InputKind::Sampling, sampling);
    client.set_handler(InputKind::Roots, roots);
    Ok(Target::One(client))
}

/// The hub's handlers. With `--no-input` every member records what it is asked (the members'
/// eras differ, and a retry through one member is not the hub's to make).
fn register_hub(hub: &Hub, answers: &Arc<Answers>) -> Result<(), Failure> {
    let (elicit, sampling, roots) = answers.handlers();
    let (elicit, sampling) = match answers.no_input() {
        true => (Some(answers.recorder()), Some(answers.recorder())),
        false => (elicit, sampling),
    };
    if let Some(h) = elicit {
        hub.set_elicitation_handler(Some(h), ElicitationModes::BOTH)?;
    }
    hub.set_handler(InputKind::Sampling, sampling);
    hub.set_handler(InputKind::Roots, roots);
    Ok(())
}

impl Target {
    pub async fn close(&self) {
        match self {
            Target::One(c) => c.close().await,
            Target::Hub(h) => h.close().await,
        }
    }
}
