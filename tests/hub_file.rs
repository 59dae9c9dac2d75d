//! Host configuration files read into a `HubSpec`: the `mcpServers` shape (Claude Desktop,
//! Claude Code's `.mcp.json`, Cursor, Cline), VS Code's `servers` with `inputs`, `envFile` and
//! JSONC; variables, disabled entries, other hosts' keys, the `mcp_client` key validated like
//! the single-client configuration, input answers kept out of logs and errors; and members
//! built from a file connecting over real stdio and HTTP.
//!
//! The sample files are in tests/vectors/hosts/, in the layouts the hosts use.

#[macro_use]
mod http_support;
mod common;

use common::{fixture_str, TempPath};
use http_support::{discover_result, initialize_result, result, Reply, Server, LATEST_LEGACY};
use mcp_client::hub::{HubSpec, InputAnswers, MemberSpec, ReadContext, ToolFilter};
use mcp_client::{Client, ClientConfig, ErrorKind, ListKind, RequestOptions};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

fn hosts(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/hosts")
        .join(path)
}

/// A context whose environment is `vars` only.
fn with_env(vars: &[(&str, &str)]) -> ReadContext {
    let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ReadContext::new().env(move |name| vars.get(name).cloned())
}

fn member<'a>(spec: &'a HubSpec, name: &str) -> &'a MemberSpec {
    spec.members
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no member {name} in {spec:?}"))
}

fn names(spec: &HubSpec) -> Vec<&str> {
    spec.members.iter().map(|m| m.name.as_str()).collect()
}

/// The message of the failed entry `name`.
fn failure<'a>(spec: &'a HubSpec, name: &str) -> &'a str {
    spec.failed
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, m)| m.as_str())
        .unwrap_or_else(|| panic!("{name} did not fail: {spec:?}"))
}

/// The text of one entry named `x` in an `mcpServers` file.
fn one(entry: Value) -> String {
    json!({"mcpServers": {"x": entry}}).to_string()
}

#[test]
fn claude_desktop_file_reads_unchanged() {
    let spec = HubSpec::from_file(hosts("claude_desktop_config.json"), &with_env(&[])).unwrap();
    assert_eq!(names(&spec), ["filesystem", "memory", "time", "git"]);
    assert!(spec.warnings.is_empty() && spec.failed.is_empty(), "{spec:?}");
    let memory = member(&spec, "memory");
    assert!(memory.enabled && !memory.lazy && memory.max_concurrency.is_none());
    assert_eq!(memory.tools, ToolFilter::default());
    assert_eq!(
        memory.client,
        json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
               "env": {"MEMORY_FILE_PATH": "/Users/ada/.local/share/claude/memory.jsonl"}})
    );
    assert_eq!(
        member(&spec, "time").client,
        json!({"command": "uvx", "args": ["mcp-server-time", "--local-timezone=Europe/London"]})
    );
    for m in &spec.members {
        ClientConfig::from_json(&m.client).unwrap();
    }
}

#[test]
fn claude_code_file_types_defaults_and_the_namespaced_key() {
    let env = [
        ("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_abc"),
        ("API_KEY", "k-1"),
        ("LOG_LEVEL", ""),
    ];
    let spec = HubSpec::from_file(hosts("claude-code/.mcp.json"), &with_env(&env)).unwrap();
    assert_eq!(names(&spec), ["github", "linear", "db", "api"]);
    assert!(spec.failed.is_empty() && spec.warnings.is_empty(), "{spec:?}");
    assert_eq!(
        member(&spec, "github").client,
        json!({"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ghp_abc"}})
    );
    // `sse`: a legacy connect, which falls back to HTTP+SSE when the server refuses the POST.
    assert_eq!(
        member(&spec, "linear").client,
        json!({"url": "https://mcp.linear.app/sse", "mode": "legacy"})
    );
    // `${VAR:-default}`: the default for an unset variable and for an empty one.
    assert_eq!(
        member(&spec, "db").client,
        json!({"command": "npx", "args": ["-y", "@bytebase/dbhub", "--dsn", "postgres://localhost:5432/dev"],
               "env": {"DBHUB_LOG_LEVEL": "info"}})
    );
    let api = member(&spec, "api");
    assert_eq!(
        api.client,
        json!({"url": "https://api.example.com/mcp", "headers": {"X-API-Key": "k-1"},
               "request_timeout_ms": 20000, "reconnect": {"max_attempts": 3}})
    );
    assert_eq!(
        api.tools,
        ToolFilter {
            allow: Some(vec!["search_*".into(), "get_issue".into()]),
            deny: vec!["search_admin".into()],
        }
    );
    assert!(api.lazy);
    assert_eq!(api.max_concurrency, Some(4));
}

#[test]
fn an_unset_variable_fails_its_member_only_naming_server_and_key() {
    let spec = HubSpec::from_file(hosts("claude-code/.mcp.json"), &with_env(&[("API_KEY", "k")])).unwrap();
    assert_eq!(names(&spec), ["linear", "db", "api"]);
    assert_eq!(
        spec.failed,
        [(
            "github".to_string(),
            "server \"github\": headers.Authorization: ${GITHUB_PERSONAL_ACCESS_TOKEN} is not set and has no default"
                .to_string()
        )]
    );
    let text = one(json!({"command": "srv", "args": ["--a", "${A}", "${B}"]}));
    let spec = HubSpec::from_text(&text, &with_env(&[("A", "1")])).unwrap();
    assert_eq!(
        failure(&spec, "x"),
        "server \"x\": args[2]: ${B} is not set and has no default"
    );
}

#[test]
fn cursor_file_home_workspace_env_and_disabled() {
    let ctx = with_env(&[("NOTES_TOKEN", "n-1"), ("CONTEXT7_API_KEY", "c-7")])
        .user_home("/home/ada")
        .workspace_folder("/work/site");
    let spec = HubSpec::from_file(hosts("cursor/.cursor/mcp.json"), &ctx).unwrap();
    assert_eq!(names(&spec), ["notes", "context7", "browser"]);
    assert!(spec.failed.is_empty() && spec.warnings.is_empty(), "{spec:?}");
    assert_eq!(
        member(&spec, "notes").client,
        json!({"command": "/home/ada/.local/bin/notes-mcp", "args": ["--root", "/work/site/docs"],
               "env": {"NOTES_TOKEN": "n-1"}})
    );
    // A `url` without `type` is HTTP (Streamable, era detected).
    assert_eq!(
        member(&spec, "context7").client,
        json!({"url": "https://mcp.context7.com/mcp", "headers": {"CONTEXT7_API_KEY": "c-7"}})
    );
    let browser = member(&spec, "browser");
    assert!(!browser.enabled);
    // Without a workspace folder, `${workspaceFolder}` is that member's error.
    let spec = HubSpec::from_file(hosts("cursor/.cursor/mcp.json"), &with_env(&[("NOTES_TOKEN", "n")])).unwrap();
    assert!(
        failure(&spec, "notes").starts_with("server \"notes\": command: ${userHome}"),
        "{spec:?}"
    );
}

#[test]
fn a_disabled_entry_is_a_member_never_expanded_nor_asked() {
    let asked = Arc::new(Mutex::new(0));
    let count = asked.clone();
    let ctx = with_env(&[]).prompt(move |_| {
        *count.lock().unwrap() += 1;
        Some("x".into())
    });
    let text = json!({
        "inputs": [{"type": "promptString", "id": "k", "description": "key"}],
        "servers": {"off": {"command": "srv", "args": ["${UNSET}", "${input:k}"], "disabled": true}}
    });
    let spec = HubSpec::from_text(&text.to_string(), &ctx).unwrap();
    let off = member(&spec, "off");
    assert!(!off.enabled);
    assert_eq!(off.client["args"], json!(["${UNSET}", "${input:k}"]));
    assert_eq!(*asked.lock().unwrap(), 0);
    let spec = HubSpec::from_text(&one(json!({"command": "srv", "disabled": "yes"})), &ctx).unwrap();
    assert_eq!(failure(&spec, "x"), "server \"x\": disabled: expected true or false");
}

#[test]
fn other_hosts_keys_are_warned_once_each() {
    let spec = HubSpec::from_file(hosts("cline_mcp_settings.json"), &with_env(&[])).unwrap();
    assert_eq!(names(&spec), ["weather", "sqlite", "search"]);
    assert!(member(&spec, "weather").enabled && !member(&spec, "sqlite").enabled && member(&spec, "search").enabled);
    assert!(spec.failed.is_empty(), "{spec:?}");
    assert_eq!(
        spec.warnings,
        [
            "key \"autoApprove\" is another host's and is ignored (on \"weather\", \"sqlite\")",
            "key \"timeout\" is another host's and is ignored (on \"weather\", \"search\")",
            "key \"alwaysAllow\" is another host's and is ignored (on \"sqlite\")",
            "key \"description\" is another host's and is ignored (on \"search\")",
        ]
    );
    assert_eq!(
        member(&spec, "weather").client,
        json!({"command": "node", "args": ["/home/ada/mcp/weather/build/index.js"],
               "env": {"OPENWEATHER_API_KEY": "demo-key"}})
    );
}

/// A prompt that answers from `answers` (declining the others) and records each id asked.
fn prompter(answers: &[(&str, &str)]) -> (ReadContext, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let answers: HashMap<String, String> = answers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let ctx = with_env(&[]).workspace_folder(hosts("vscode")).prompt(move |p| {
        log.lock()
            .unwrap()
            .push(format!("{}|{}|{}|{:?}", p.id, p.description, p.password, p.default));
        answers.get(&p.id).cloned()
    });
    (ctx, asked)
}

#[test]
fn vscode_file_inputs_env_file_and_jsonc() {
    let (ctx, asked) = prompter(&[("perplexity-key", "pplx-123"), ("region", "us-east-2")]);
    let spec = HubSpec::from_file(hosts("vscode/.vscode/mcp.json"), &ctx).unwrap();
    assert_eq!(names(&spec), ["perplexity", "remote", "legacy-events"]);
    assert!(spec.failed.is_empty(), "{spec:?}");
    // Asked once per id, in the order the servers use them, with the declaration.
    assert_eq!(
        *asked.lock().unwrap(),
        [
            "perplexity-key|Perplexity API Key|true|None",
            "region|Deployment region|false|Some(\"eu-west-1\")"
        ]
    );
    // The envFile's variables, then the entry's `env` over them.
    assert_eq!(
        member(&spec, "perplexity").client,
        json!({"command": "npx", "args": ["-y", "server-perplexity-ask"],
               "env": {"PERPLEXITY_MODEL": "sonar-pro", "PERPLEXITY_TIMEOUT_MS": "30000",
                       "PERPLEXITY_API_KEY": "pplx-123", "GREETING": "hello # not a comment"}})
    );
    assert_eq!(
        member(&spec, "remote").client,
        json!({"url": "https://mcp.example.com/us-east-2/mcp", "headers": {"Authorization": "Bearer pplx-123"}})
    );
    assert_eq!(
        member(&spec, "legacy-events").client,
        json!({"url": "http://localhost:3001/sse", "mode": "legacy"})
    );
    assert_eq!(
        spec.warnings,
        ["key \"dev\" is another host's and is ignored (on \"legacy-events\")"]
    );
}

#[test]
fn a_declined_input_fails_the_servers_that_use_it() {
    let (ctx, asked) = prompter(&[("region", "eu-west-1")]);
    let spec = HubSpec::from_file(hosts("vscode/.vscode/mcp.json"), &ctx).unwrap();
    assert_eq!(names(&spec), ["legacy-events"]);
    assert_eq!(
        failure(&spec, "perplexity"),
        "server \"perplexity\": env.PERPLEXITY_API_KEY: ${input:perplexity-key}: the host declined the input"
    );
    assert_eq!(
        failure(&spec, "remote"),
        "server \"remote\": headers.Authorization: ${input:perplexity-key}: the host declined the input"
    );
    // Declined once: not asked again for the second server.
    assert_eq!(asked.lock().unwrap().len(), 2);
    // Without a prompt at all.
    let spec = HubSpec::from_file(hosts("vscode/.vscode/mcp.json"), &with_env(&[])).unwrap();
    assert!(failure(&spec, "perplexity").ends_with("${input:perplexity-key}: the host set no input prompt"));
}

/// A `pickString` is asked with its options (strings or `{"value"}` objects) and default; an
/// answer outside them fails the servers that use it; a `command` input is a warning and fails
/// its servers, never the read.
#[test]
fn pick_string_inputs_offer_options_and_command_inputs_are_warned() {
    let text = json!({
        "inputs": [
            {"type": "pickString", "id": "region", "description": "Region",
             "options": ["eu-west-1", {"label": "US East", "value": "us-east-2"}], "default": "eu-west-1"},
            {"type": "pickString", "id": "tier", "description": "Tier", "options": ["free", "pro"]},
            {"type": "command", "id": "pick-folder", "command": "extension.pickFolder"}
        ],
        "servers": {
            "a": {"command": "srv", "args": ["${input:region}"]},
            "b": {"command": "srv", "args": ["${input:tier}"]},
            "c": {"command": "srv", "args": ["${input:pick-folder}"]}
        }
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let ctx = with_env(&[]).prompt(move |p| {
        log.lock()
            .unwrap()
            .push(format!("{}|{:?}|{:?}", p.id, p.options, p.default));
        Some(if p.id == "region" { "us-east-2" } else { "enterprise" }.to_string())
    });
    let spec = HubSpec::from_text(&text.to_string(), &ctx).unwrap();
    assert_eq!(
        *asked.lock().unwrap(),
        [
            "region|[\"eu-west-1\", \"us-east-2\"]|Some(\"eu-west-1\")",
            "tier|[\"free\", \"pro\"]|None"
        ]
    );
    assert_eq!(names(&spec), ["a"]);
    assert_eq!(member(&spec, "a").client["args"], json!(["us-east-2"]));
    assert_eq!(
        failure(&spec, "b"),
        "server \"b\": args[0]: ${input:tier}: the host's answer is not one of the input's options (\"free\", \"pro\")"
    );
    assert!(failure(&spec, "c").contains("an input of type \"command\""), "{spec:?}");
    assert_eq!(
        spec.warnings,
        ["input \"pick-folder\" is a \"command\" input: it runs an editor command, which a library cannot; servers that use it fail"]
    );
    // A pickString without options is a malformed file.
    let bad = json!({"inputs": [{"type": "pickString", "id": "x"}], "servers": {}});
    let e = HubSpec::from_text(&bad.to_string(), &ctx).unwrap_err();
    assert!(
        e.message()
            .starts_with("inputs[0] (\"x\"): a \"pickString\" input needs \"options\""),
        "{}",
        e.message()
    );
}

/// Reads that remember their answers ask again only for inputs that are new, declared
/// differently, or declined; `forget` asks for everything again.
#[test]
fn remembered_answers_are_not_asked_again() {
    let file = |description: &str, extra: bool| {
        let mut inputs = vec![
            json!({"type": "promptString", "id": "key", "description": description, "password": true}),
            json!({"type": "promptString", "id": "no", "description": "Declined"}),
        ];
        let mut servers = json!({"a": {"command": "srv", "args": ["${input:key}", "${input:no}"]}});
        if extra {
            inputs.push(json!({"type": "pickString", "id": "tier", "options": ["free", "pro"]}));
            servers["b"] = json!({"command": "srv", "args": ["${input:tier}"]});
        }
        json!({"inputs": inputs, "servers": servers}).to_string()
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let answers = InputAnswers::new();
    let ctx = with_env(&[]).remember(&answers).prompt(move |p| {
        log.lock().unwrap().push(p.id.clone());
        match p.id.as_str() {
            "key" => Some("k".into()),
            "tier" => Some("pro".into()),
            _ => None,
        }
    });
    let read = |text: String| {
        let spec = HubSpec::from_text(&text, &ctx).unwrap();
        assert!(failure(&spec, "a").ends_with("${input:no}: the host declined the input"));
        std::mem::take(&mut *asked.lock().unwrap())
    };
    assert_eq!(read(file("Key", false)), ["key", "no"]);
    // The same file again: only the declined input is asked.
    assert_eq!(read(file("Key", false)), ["no"]);
    // A new input is asked; a changed declaration is asked again.
    assert_eq!(read(file("Key", true)), ["no", "tier"]);
    assert_eq!(read(file("API key", true)), ["key", "no"]);
    assert_eq!(format!("{answers:?}"), "InputAnswers { kept: 2 }");
    answers.forget();
    assert_eq!(read(file("API key", true)), ["key", "no", "tier"]);
    // Without the memory, every read asks.
    let plain = with_env(&[]).prompt(|_| Some("pro".into()));
    let spec = HubSpec::from_text(&file("Key", true), &plain).unwrap();
    assert_eq!(member(&spec, "b").client["args"], json!(["pro"]));
}

#[test]
fn an_input_answer_never_appears_in_debug_output_or_errors() {
    const SECRET: &str = "hunter2-very-secret";
    let text = r#"{
      "inputs": [{"type": "promptString", "id": "pw", "description": "Password", "password": true}],
      "servers": {
        "ok": {"type": "http", "url": "https://mcp.example.com/mcp?key=${input:pw}",
               "headers": {"Authorization": "Bearer ${input:pw}"}, "env": {}},
        "bad": {"command": "srv", "args": ["--token=${input:pw}"], "mcp_client": {"mode": "${input:pw}"}},
        "stdio": {"command": "srv", "args": ["--token", "${input:pw}"], "env": {"TOKEN": "${input:pw}"}}
      }
    }"#;
    let ctx = with_env(&[]).prompt(|_| Some(SECRET.to_string()));
    let spec = HubSpec::from_text(text, &ctx).unwrap();
    assert_eq!(names(&spec), ["stdio"]);
    // `ok` has `env` on a URL (refused by the single-client parser); `bad` a `mode` that serde
    // would quote: neither message carries the answer.
    let ok = failure(&spec, "ok");
    assert!(ok.starts_with("server \"ok\": "), "{ok}");
    let bad = failure(&spec, "bad");
    assert!(
        bad.starts_with("server \"bad\": mcp_client.mode: unknown variant `<redacted>`"),
        "{bad}"
    );
    let shown = format!("{spec:?} {ctx:?}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!spec.failed.iter().any(|(_, m)| m.contains(SECRET)));
    // The member still has it, to connect with.
    assert_eq!(member(&spec, "stdio").client["env"]["TOKEN"], SECRET);
    let debug = format!("{:?}", member(&spec, "stdio"));
    assert!(
        debug.contains("command: Some(\"srv\")") && debug.contains("\"env\""),
        "{debug}"
    );
}

#[test]
fn the_namespaced_key_is_validated_like_the_single_client_configuration() {
    let ctx = with_env(&[]);
    let fails = |own: Value| {
        let spec = HubSpec::from_text(&one(json!({"command": "srv", "mcp_client": own})), &ctx).unwrap();
        assert!(spec.members.is_empty(), "{spec:?}");
        failure(&spec, "x").to_string()
    };
    // The same text as the single-client configuration's, with the key's place in the entry.
    let single = |config: Value| ClientConfig::from_json(&config).unwrap_err().message().to_string();
    assert_eq!(
        fails(json!({"request_timeout_ms": "5"})),
        format!(
            "server \"x\": mcp_client.{}",
            single(json!({"command": "srv", "request_timeout_ms": "5"}))
        )
    );
    assert_eq!(
        fails(json!({"reconect": {}})),
        format!(
            "server \"x\": mcp_client: {}",
            single(json!({"command": "srv", "reconect": {}}))
        )
    );
    assert_eq!(
        fails(json!({"reconnect": {"tries": 1}})),
        "server \"x\": mcp_client: unknown reconnect key \"tries\""
    );
    assert_eq!(
        fails(json!({"stderr_tail_lines": 5000})),
        format!(
            "server \"x\": {}",
            single(json!({"command": "srv", "stderr_tail_lines": 5000}))
        )
    );
    assert_eq!(
        fails(json!({"bearer_token": "t"})),
        "server \"x\": bearer_token applies to a \"url\", not a \"command\""
    );
    assert_eq!(
        fails(json!({"command": "other"})),
        "server \"x\": mcp_client.command: set \"command\" on the entry itself, not under \"mcp_client\""
    );
    assert!(fails(json!({"lazy": "yes"}))
        .starts_with("server \"x\": mcp_client.lazy: invalid type: string \"yes\", expected true or false"));
    assert!(fails(json!({"tools": {"allow": "a"}})).starts_with("server \"x\": mcp_client.tools: invalid type: string"));
    assert!(fails(json!({"tools": {"only": []}})).starts_with("server \"x\": mcp_client.tools: unknown field `only`"));
    assert_eq!(
        fails(json!({"max_concurrency": 0})),
        "server \"x\": mcp_client.max_concurrency: at least 1 (leave it out for no cap)"
    );
    assert_eq!(
        fails(Value::from(3)),
        "server \"x\": mcp_client: expected a JSON object"
    );
    // The entry's own keys go through the same parser.
    let spec = HubSpec::from_text(&one(json!({"command": "srv", "env": {"A=B": "1"}})), &ctx).unwrap();
    assert_eq!(
        failure(&spec, "x"),
        format!(
            "server \"x\": {}",
            single(json!({"command": "srv", "env": {"A=B": "1"}}))
        )
    );
    for (entry, want) in [
        (
            json!({"type": "stdio", "url": "https://a"}),
            "type \"stdio\" needs a \"command\"",
        ),
        (
            json!({"type": "http", "command": "srv"}),
            "type \"http\" needs a \"url\"",
        ),
        (
            json!({"type": "websocket", "url": "wss://a"}),
            "type: unknown transport \"websocket\"",
        ),
        (
            json!({"command": "srv", "url": "https://a"}),
            "the configuration has both",
        ),
        (json!({"args": []}), "the configuration needs a \"command\""),
        (json!(["srv"]), "the entry must be a JSON object"),
        (
            json!({"url": "https://a", "envFile": ".env"}),
            "envFile applies to a \"command\"",
        ),
    ] {
        let spec = HubSpec::from_text(&one(entry.clone()), &ctx).unwrap();
        let message = failure(&spec, "x");
        assert!(
            message.starts_with(&format!("server \"x\": {want}")),
            "{entry}: {message}"
        );
    }
}

#[test]
fn whole_file_errors() {
    let ctx = with_env(&[]);
    let err = |text: &str| HubSpec::from_text(text, &ctx).unwrap_err();
    let e = err("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"} oops\n  }\n}");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.message().contains("is not JSON") && e.message().contains("line 3"),
        "{}",
        e.message()
    );
    assert!(err("{\"mcpServer\": {}}")
        .message()
        .contains("no \"mcpServers\" or \"servers\""));
    assert!(err("[]").message().contains("must be a JSON object"));
    assert!(err("{\"servers\": []}")
        .message()
        .starts_with("servers must be a JSON object"));
    assert_eq!(
        err("{\"mcpServers\": {\"a\": {\"command\": \"x\"}}, \"servers\": {\"a\": {\"command\": \"y\"}}}").message(),
        "server \"a\" is named twice"
    );
    assert!(err("{\"servers\": {}, \"inputs\": [{\"id\": 1}]}")
        .message()
        .starts_with("inputs[0]: "));
    let e = HubSpec::from_file(hosts("no-such-file.json"), &ctx).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    for empty in ["{\"servers\": {}}", "\u{feff}{\"mcpServers\": {}, // none yet\n}"] {
        assert!(
            HubSpec::from_text(empty, &ctx).unwrap() == HubSpec::default(),
            "{empty}"
        );
    }
}

#[test]
fn entries_added_from_code() {
    let ctx = with_env(&[("TOKEN", "t-1")]);
    let mut spec = HubSpec::from_file(hosts("claude_desktop_config.json"), &ctx).unwrap();
    let entry = json!({"type": "http", "url": "https://a.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"},
                       "autoApprove": [], "mcp_client": {"lazy": true}});
    spec.add_entry("added", &entry, &ctx).unwrap();
    assert_eq!(names(&spec).last(), Some(&"added"));
    let added = member(&spec, "added");
    assert!(added.lazy);
    assert_eq!(added.client["headers"]["Authorization"], "Bearer t-1");
    assert_eq!(
        spec.warnings,
        ["key \"autoApprove\" is another host's and is ignored (on \"added\")"]
    );
    let e = spec.add_entry("added", &json!({"command": "x"}), &ctx).unwrap_err();
    assert_eq!(e.message(), "a server named \"added\" is already in the configuration");
    let e = spec.add_entry("", &json!({"command": "x"}), &ctx).unwrap_err();
    assert_eq!(e.message(), "a server's name must not be empty");
    let e = spec
        .add_entry("more", &json!({"command": "${NOPE}"}), &ctx)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        e.message(),
        "server \"more\": command: ${NOPE} is not set and has no default"
    );
    assert!(!names(&spec).contains(&"more"));
}

/// A stdio member built from a VS Code file reaches its server: command, args, `cwd` from
/// `${workspaceFolder}`, `env` and a relative `envFile` as the child sees them.
#[tokio::test]
async fn a_stdio_member_from_a_file_connects() {
    let workspace = TempPath::dir("hub-file-ws");
    let seen = workspace.path().join("seen.txt");
    std::fs::write(
        workspace.path().join("server.env"),
        "FROM_FILE=\"from the file\"\nTOKEN=overridden\n",
    )
    .unwrap();
    let script = r#"printf '%s|%s|%s\n' "$TOKEN" "$FROM_FILE" "$(pwd)" > "$0"; exec "$1""#;
    let text = json!({
        "inputs": [{"type": "promptString", "id": "token", "description": "Token", "password": true}],
        "servers": {"fixture": {
            "type": "stdio", "command": "/bin/sh",
            "args": ["-c", script, "${workspaceFolder}/seen.txt", "${FIXTURE}"],
            "cwd": "${workspaceFolder}", "env": {"TOKEN": "${input:token}"}, "envFile": "server.env",
            "mcp_client": {"request_timeout_ms": 10000, "shutdown_grace_ms": 500}
        }}
    });
    let ctx = with_env(&[("FIXTURE", &fixture_str())])
        .workspace_folder(workspace.path())
        .prompt(|_| Some("s3cret".into()));
    let spec = HubSpec::from_text(&text.to_string(), &ctx).unwrap();
    assert!(spec.failed.is_empty(), "{spec:?}");
    let client = Client::new(ClientConfig::from_json(&spec.members[0].client).unwrap());
    client.connect().await.unwrap();
    let tools = client
        .list_all(ListKind::Tools, &RequestOptions::default())
        .await
        .unwrap();
    assert!(!tools["tools"].as_array().unwrap().is_empty());
    client.close().await;
    let cwd = workspace.path().canonicalize().unwrap();
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap().trim(),
        format!("s3cret|from the file|{}", cwd.display())
    );
}

/// HTTP members built from a file: the headers (with an input's answer) reach the server, and
/// an `sse` entry starts with a legacy `initialize`, never the modern probe.
#[tokio::test]
async fn http_members_from_a_file_carry_their_headers_and_era() {
    let server = Server::start(|req| async move {
        let id = req.id();
        match req.rpc_method().as_deref() {
            Some("server/discover") => Reply::json(result(&id, discover_result())),
            Some("initialize") => Reply::json(result(&id, initialize_result(LATEST_LEGACY))),
            _ if req.is_notification() => Reply::status(202),
            _ => Reply::status(404),
        }
    })
    .await;
    let text = format!(
        r#"{{
          "inputs": [{{"type": "promptString", "id": "key", "description": "API key", "password": true}}],
          "servers": {{
            "modern": {{"type": "http", "url": "{url}", "headers": {{"Authorization": "Bearer ${{input:key}}", "X-Who": "${{USER_NAME:-nobody}}"}}}},
            "old": {{"type": "sse", "url": "{url}"}},
          }},
        }}"#,
        url = server.url("/mcp")
    );
    let ctx = with_env(&[]).prompt(|_| Some("k-42".into()));
    let spec = HubSpec::from_text(&text, &ctx).unwrap();
    assert!(spec.failed.is_empty(), "{spec:?}");
    let modern = Client::new(ClientConfig::from_json(&member(&spec, "modern").client).unwrap());
    modern.connect().await.unwrap();
    let first = &server.posts()[0];
    assert_eq!(first.rpc_method().as_deref(), Some("server/discover"));
    assert_eq!(first.header("authorization"), Some("Bearer k-42"));
    assert_eq!(first.header("x-who"), Some("nobody"));
    modern.close().await;
    let before = server.posts().len();
    let old = Client::new(ClientConfig::from_json(&member(&spec, "old").client).unwrap());
    old.connect().await.unwrap();
    let methods: Vec<String> = server.posts()[before..].iter().filter_map(|r| r.rpc_method()).collect();
    assert_eq!(methods.first().map(String::as_str), Some("initialize"), "{methods:?}");
    assert!(!methods.iter().any(|m| m == "server/discover"), "{methods:?}");
    old.close().await;
}
