//! Export and dispatch: the corpus (tests/vectors/export plus the fixture's live tool list) in
//! every format, sample arguments keeping their verdict under the rewritten schemas (checked
//! with the `jsonschema` crate, independent of the library's validator), a property test over
//! generated arguments, and dispatch round trips against the fixture in each API's shape.

mod common;

use common::*;
use mcp_client::export::{export_tools, Dispatcher, ExportOptions, Exported, Format, ResultOptions, Route, ToolCall};
use mcp_client::hub::{Hub, HubOptions, HubSpec, MemberSpec, ToolFilter};
use mcp_client::{ErrorKind, ListKind};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};

fn corpus_file(name: &str) -> Value {
    let path = format!("{}/tests/vectors/export/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

const FILES: &[&str] = &[
    "reference-servers.json",
    "everything.json",
    "sdk-servers.json",
    "adversarial.json",
];

fn every_option() -> Vec<ExportOptions> {
    let mut all = Vec::new();
    for format in [
        Format::ChatCompletions,
        Format::Responses,
        Format::Anthropic,
        Format::Gemini,
    ] {
        all.push(ExportOptions::new(format));
    }
    for format in [Format::ChatCompletions, Format::Responses] {
        all.push(ExportOptions {
            strict: true,
            ..ExportOptions::new(format)
        });
    }
    all.push(ExportOptions {
        gemini_legacy_parameters: true,
        describe_title: true,
        describe_annotations: true,
        ..ExportOptions::new(Format::Gemini)
    });
    all
}

/// The schema the model was given for exported tool `i`.
fn sent_schema(out: &Exported, i: usize) -> Value {
    let t = &out.tools[i];
    let s = t
        .pointer("/function/parameters")
        .or_else(|| t.get("parameters"))
        .or_else(|| t.get("input_schema"))
        .or_else(|| t.get("parametersJsonSchema"))
        .unwrap();
    s.clone()
}

/// The legacy Gemini subset back in JSON Schema terms (lower-case types, `nullable`).
fn legacy_back(node: &mut Value) {
    if let Value::Object(m) = node {
        if let Some(Value::String(t)) = m.get_mut("type") {
            *t = t.to_ascii_lowercase();
        }
        if m.remove("nullable") == Some(Value::Bool(true)) {
            match m.get("type").cloned() {
                Some(t) => {
                    m.insert("type".into(), json!([t, "null"]));
                    if let Some(Value::Array(e)) = m.get_mut("enum") {
                        e.push(Value::Null);
                    }
                }
                None => {
                    let inner = std::mem::take(m);
                    m.insert("anyOf".into(), json!([Value::Object(inner), {"type": "null"}]));
                }
            }
        }
        m.values_mut().for_each(legacy_back);
    } else if let Value::Array(a) = node {
        a.iter_mut().for_each(legacy_back);
    }
}

/// Strict mode: absent optional properties are sent as `null` (what the model must do).
fn fill_nulls(args: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > 20 {
        return;
    }
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some("#") => root,
        Some(r) => root.pointer(r.trim_start_matches('#')).unwrap_or(schema),
        None => schema,
    };
    if let (Some(Value::Array(branches)), false) = (schema.get("anyOf"), args.is_null()) {
        // A property strict mode made nullable: the branch that is not null.
        if let Some(b) = branches.iter().find(|b| b.get("type") != Some(&json!("null"))) {
            return fill_nulls(args, b, root, depth + 1);
        }
    }
    match args {
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, sub) in props.into_iter().flatten() {
                match m.get_mut(k) {
                    Some(v) => fill_nulls(v, sub, root, depth + 1),
                    None => {
                        m.insert(k.clone(), Value::Null);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                items.iter_mut().for_each(|i| fill_nulls(i, sub, root, depth + 1));
            }
        }
        _ => {}
    }
}

/// One exported tool: its original and sent schemas as validators, and whether the format
/// expressed every constraint.
struct Pair {
    tool: String,
    original: jsonschema::Validator,
    sent: jsonschema::Validator,
    sent_schema: Value,
    exact: bool,
    strict: bool,
}

/// A validator for `schema` that takes `format` as the annotation it is in 2020-12 (MCP's
/// default dialect, and a hint to model APIs): a draft-07 `$schema` (server-everything's) would
/// make it an assertion on the original only, as the export drops `$schema` for Gemini.
fn validator(schema: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options().should_validate_formats(false).build(schema)
}

fn pairs(list: &Value, opts: &ExportOptions) -> Vec<Pair> {
    let out = export_tools(list, None, opts).unwrap();
    let tools = list["tools"].as_array().unwrap();
    let mut found = Vec::new();
    let mut i = 0;
    for report in &out.report {
        let Some(name) = &report.exported_name else { continue };
        let original = tools.iter().find(|t| t["name"] == report.tool.as_str()).unwrap();
        let original = original.get("inputSchema").cloned().unwrap_or(json!({}));
        let mut sent = sent_schema(&out, i);
        i += 1;
        assert_eq!(out.routes[name].tool, report.tool);
        if opts.gemini_legacy_parameters {
            legacy_back(&mut sent);
        }
        found.push(Pair {
            tool: report.tool.clone(),
            original: validator(&original).unwrap(),
            sent: validator(&sent).unwrap_or_else(|e| panic!("{}: {e}: {sent}", report.tool)),
            sent_schema: sent,
            exact: report.not_expressed.is_empty(),
            strict: report.strict == Some(true),
        });
    }
    found
}

/// The verdict rule: whatever the original accepts the sent schema accepts (nothing valid is
/// refused), and where every constraint was expressed the verdicts are equal. Strict mode also closes every object (`additionalProperties: false`, reported): arguments
/// with undeclared members are outside what it promises to keep.
fn keeps_verdict(p: &Pair, args: &Value) -> Result<(), String> {
    if p.strict && args.to_string().contains("x-extra") {
        return Ok(());
    }
    let was = p.original.is_valid(args);
    let mut sent_args = args.clone();
    if p.strict {
        fill_nulls(&mut sent_args, &p.sent_schema, &p.sent_schema, 0);
    }
    let now = p.sent.is_valid(&sent_args);
    if was && !now {
        return Err(format!("{}: valid {args} refused by the sent schema", p.tool));
    }
    // Strict mode reads an explicit null for an optional property as absent (dispatch drops it):
    // such arguments mean something else there, so only the first rule applies to them.
    let nulls = p.strict && args.to_string().contains("null");
    if p.exact && !nulls && was != now {
        return Err(format!("{}: {args} valid={was} originally, {now} as sent", p.tool));
    }
    Ok(())
}

fn names_ok(out: &Exported) {
    for name in out.routes.keys() {
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{name}"
        );
        if out.format == Format::Gemini {
            assert!(
                name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'),
                "{name}"
            );
        }
    }
}

async fn fixture_tools() -> Value {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let tools = client.list_all(ListKind::Tools, &none()).await.unwrap();
    client.close().await;
    tools
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_exports_to_every_format_and_samples_keep_their_verdict() {
    let mut lists: Vec<(String, Value)> = FILES.iter().map(|f| (f.to_string(), corpus_file(f))).collect();
    lists.push(("fixture".into(), fixture_tools().await));
    let mut checked = 0;
    for (file, list) in &lists {
        for opts in every_option() {
            let out = export_tools(list, None, &opts).unwrap_or_else(|e| panic!("{file} {opts:?}: {e}"));
            names_ok(&out);
            for r in &out.report {
                if let Some(why) = &r.refused {
                    let recursive = opts.gemini_legacy_parameters && why.contains("recursive");
                    assert!(recursive, "{file} {:?}: {} refused: {why}", opts.format, r.tool);
                }
            }
            assert_eq!(out.tools.len(), out.routes.len());
            let samples = list
                .get("samples")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for p in pairs(list, &opts) {
                let Some(s) = samples.get(&p.tool) else { continue };
                for (kind, want) in [("valid", true), ("invalid", false)] {
                    for args in s[kind].as_array().unwrap() {
                        assert_eq!(
                            p.original.is_valid(args),
                            want,
                            "{file} {}: sample {args} is not {kind}",
                            p.tool
                        );
                        keeps_verdict(&p, args).unwrap_or_else(|e| panic!("{file} {opts:?}: {e}"));
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 300, "{checked} sample checks");
}

/// Every corpus tool that takes arguments has hand-written samples, valid and invalid: a tool
/// without them is exported but its verdicts are never checked.
#[test]
fn every_corpus_tool_with_arguments_has_valid_and_invalid_samples() {
    let mut missing = Vec::new();
    for file in FILES {
        let list = corpus_file(file);
        for tool in list["tools"].as_array().unwrap() {
            let takes_arguments = tool
                .pointer("/inputSchema/properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            let name = tool["name"].as_str().unwrap();
            let has = |kind: &str| {
                list.pointer(&format!(
                    "/samples/{}/{kind}",
                    name.replace('~', "~0").replace('/', "~1")
                ))
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
            };
            if takes_arguments && !(has("valid") && has("invalid")) {
                missing.push(format!("{file} {name}"));
            }
        }
    }
    assert!(missing.is_empty(), "without valid and invalid samples: {missing:?}");
}

#[test]
fn huge_enums_and_deep_nesting_still_export() {
    let values: Vec<String> = (0..5000).map(|i| format!("v{i}")).collect();
    let mut deep = json!({"type": "string"});
    for _ in 0..12 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let list = json!([{"name": "e", "inputSchema": {"type": "object", "properties": {"c": {"enum": values}}}},
                      {"name": "d", "inputSchema": deep}]);
    for opts in every_option() {
        let out = export_tools(&list, None, &opts).unwrap();
        assert_eq!(out.tools.len(), 2, "{opts:?}");
        if opts.strict {
            assert!(out.report.iter().all(|r| r.strict == Some(false)), "{:?}", out.report);
        }
    }
    // Past the walk's depth bound a tool is refused with the reason, not a stack overflow.
    let mut abyss = json!({"type": "string"});
    for _ in 0..200 {
        abyss = json!({"type": "array", "items": abyss});
    }
    let out = export_tools(
        &json!([{"name": "a", "inputSchema": {"type": "object", "properties": {"a": abyss}}}]),
        None,
        &ExportOptions::new(Format::Anthropic),
    )
    .unwrap();
    assert!(out.report[0].refused.as_deref().unwrap().contains("deeper than 64"));
}

/// A JSON value for generated arguments, leaning on the names and values schemas use.
fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-20i64..20).prop_map(|n| json!(n)),
        (-4.0f64..4.0).prop_map(|x| json!((x * 4.0).round() / 4.0)),
        prop::sample::select(vec![
            "",
            "a",
            "UTC",
            "x-a",
            "https://x",
            "fixed",
            "count",
            "error",
            "value_0001",
            "2026-01-01T00:00:00Z",
            "a@b.c"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(vec!["x-extra", "x-extra-2"]), inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

/// A value near what `schema` asks for (its type, enum or const, its properties), or any
/// value: most generated arguments are then close calls, valid or just not.
fn arb_for(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let anything = arb_value().boxed();
    if depth > 3 {
        return anything;
    }
    let mut near: Vec<BoxedStrategy<Value>> = Vec::new();
    if let Some(Value::Array(values)) = schema.get("enum") {
        near.push(prop::sample::select(values.clone()).boxed());
    }
    if let Some(c) = schema.get("const") {
        near.push(Just(c.clone()).boxed());
    }
    let types: Vec<String> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => vec![],
    };
    for t in types {
        near.push(match t.as_str() {
            "string" => prop::sample::select(vec!["", "a", "https://x", "x-a", "2026-01-01T00:00:00Z"])
                .prop_map(|s| json!(s))
                .boxed(),
            "integer" => (-3i64..12).prop_map(|n| json!(n)).boxed(),
            "number" => (-8i32..8).prop_map(|n| json!(f64::from(n) / 4.0)).boxed(),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            "null" => Just(Value::Null).boxed(),
            "array" => {
                let item = schema
                    .get("items")
                    .filter(|i| i.is_object())
                    .cloned()
                    .unwrap_or(json!({}));
                prop::collection::vec(arb_for(&item, depth + 1), 0..3)
                    .prop_map(Value::Array)
                    .boxed()
            }
            _ => arb_object(schema, depth + 1),
        });
    }
    if near.is_empty() && schema.get("properties").is_some() {
        near.push(arb_object(schema, depth + 1));
    }
    if near.is_empty() {
        return anything;
    }
    let near = proptest::strategy::Union::new(near).boxed();
    prop_oneof![4 => near, 1 => anything].boxed()
}

/// An object with some of `schema`'s properties (each near its schema) and now and then an
/// undeclared member.
fn arb_object(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let props: Vec<(String, Value)> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let members: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .into_iter()
        .chain([("x-extra".to_string(), json!({}))])
        .map(|(k, sub)| {
            let weight = if k == "x-extra" { 1 } else { 4 };
            prop_oneof![weight => arb_for(&sub, depth).prop_map(move |v| Some((k.clone(), v))), 2 => Just(None)].boxed()
        })
        .collect();
    members
        .prop_map(|list| Value::Object(list.into_iter().flatten().collect::<Map<String, Value>>()))
        .boxed()
}

#[test]
fn generated_arguments_keep_their_verdict() {
    let config = Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    };
    for file in FILES {
        let list = corpus_file(file);
        for opts in every_option() {
            for p in pairs(&list, &opts) {
                let original = list["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["name"] == p.tool.as_str())
                    .unwrap();
                let schema = original.get("inputSchema").cloned().unwrap_or(json!({}));
                TestRunner::new(config.clone())
                    .run(&arb_object(&schema, 0), |args| {
                        keeps_verdict(&p, &args).map_err(TestCaseError::fail)
                    })
                    .unwrap_or_else(|e| panic!("{file} {opts:?}: {e}"));
            }
        }
    }
}

/// A model's reply holding one call to `name` with `args`, in `format`'s shape.
fn model_reply(format: Format, name: &str, args: &Value) -> Value {
    match format {
        Format::ChatCompletions => json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}}]}),
        Format::Responses => json!({"output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
            "name": name, "arguments": args.to_string()}]}),
        Format::Anthropic => json!({"role": "assistant", "content": [{"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "toolu_1", "name": name, "input": args}]}),
        Format::Gemini => json!({"candidates": [{"content": {"role": "model",
            "parts": [{"functionCall": {"id": "g1", "name": name, "args": args}}]}}]}),
    }
}

/// The text a result message carries, whatever the format.
fn text_of(format: Format, m: &Value) -> String {
    match format {
        Format::ChatCompletions => m["content"].as_str().unwrap().to_string(),
        Format::Responses => match &m["output"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        Format::Anthropic => m["content"].to_string(),
        Format::Gemini => m["functionResponse"]["response"].to_string(),
    }
}

fn is_error(format: Format, m: &Value) -> bool {
    match format {
        Format::Anthropic => m["is_error"] == true,
        Format::Gemini => m["functionResponse"]["response"].get("error").is_some(),
        _ => text_of(format, m).contains("Error:"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dispatch_round_trips_against_the_fixture_in_every_format() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let tools = client.list_all(ListKind::Tools, &none()).await.unwrap();
    for opts in every_option() {
        let format = opts.format;
        let d = Dispatcher::new(export_tools(&tools, None, &opts).unwrap());
        let o = ResultOptions::default();
        let run = |name: &str, args: Value| {
            let calls = d.calls(&model_reply(format, name, &args)).unwrap();
            assert_eq!(calls.len(), 1);
            calls.into_iter().next().unwrap()
        };
        // A plain call.
        let m = d
            .dispatch(&client, &run("echo", json!({"text": "hello"})), &o, &none())
            .await
            .unwrap();
        assert!(
            text_of(format, &m).contains("hello") && !is_error(format, &m),
            "{format:?} {m}"
        );
        match format {
            Format::ChatCompletions => assert_eq!(
                (m["role"].as_str(), m["tool_call_id"].as_str()),
                (Some("tool"), Some("call_1"))
            ),
            Format::Responses => assert_eq!(
                (m["type"].as_str(), m["call_id"].as_str()),
                (Some("function_call_output"), Some("call_1"))
            ),
            Format::Anthropic => assert_eq!(
                (m["type"].as_str(), m["tool_use_id"].as_str()),
                (Some("tool_result"), Some("toolu_1"))
            ),
            Format::Gemini => assert_eq!(
                (
                    m["functionResponse"]["name"].as_str(),
                    m["functionResponse"]["id"].as_str()
                ),
                (Some("echo"), Some("g1"))
            ),
        }
        // Structured content: Gemini's response object is the structured result.
        let m = d
            .dispatch(&client, &run("add", json!({"a": 2, "b": 3})), &o, &none())
            .await
            .unwrap();
        if format == Format::Gemini {
            assert_eq!(m["functionResponse"]["response"], json!({"result": 5}));
        } else {
            assert!(text_of(format, &m).contains('5'));
        }
        // Images, resource links and embedded resources.
        let m = d
            .dispatch(&client, &run("media", json!({})), &o, &none())
            .await
            .unwrap();
        let text = text_of(format, &m);
        assert!(
            text.contains("fixture://static") && text.contains("embedded note"),
            "{format:?} {text}"
        );
        match format {
            Format::Anthropic => assert_eq!(m["content"][1]["type"], "image"),
            Format::Responses => assert_eq!(m["output"][1]["type"], "input_image"),
            _ => assert!(text.contains("[image image/png,"), "{text}"),
        }
        // A tool error, a protocol error, a timeout: results the model reads.
        let m = d.dispatch(&client, &run("fail", json!({})), &o, &none()).await.unwrap();
        assert!(
            is_error(format, &m) && text_of(format, &m).contains("tool failed on purpose"),
            "{m}"
        );
        let m = d
            .dispatch(&client, &run("rpc_error", json!({})), &o, &none())
            .await
            .unwrap();
        assert!(
            is_error(format, &m) && text_of(format, &m).contains("fixture error"),
            "{m}"
        );
        let quick = ResultOptions {
            timeout_ms: Some(200),
            ..o.clone()
        };
        let m = d
            .dispatch(&client, &run("hang", json!({})), &quick, &none())
            .await
            .unwrap();
        assert!(
            is_error(format, &m) && text_of(format, &m).to_lowercase().contains("time"),
            "{m}"
        );
        // ...or errors to the host when it asks.
        let raise = ResultOptions {
            errors_as_results: false,
            ..o.clone()
        };
        let e = d
            .dispatch(&client, &run("rpc_error", json!({})), &raise, &none())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Rpc);
        // Arguments that do not fit are answered without a call.
        let before = fx.wire.tool_calls("add").len();
        let m = d
            .dispatch(&client, &run("add", json!({"a": "two"})), &o, &none())
            .await
            .unwrap();
        let text = text_of(format, &m);
        assert!(
            is_error(format, &m) && text.contains("\\\"b\\\" is missing") || text.contains("\"b\" is missing"),
            "{text}"
        );
        let m = d.dispatch(&client, &run("nope", json!({})), &o, &none()).await.unwrap();
        assert!(text_of(format, &m).contains("no tool named"));
        assert_eq!(fx.wire.tool_calls("add").len(), before);
        // Truncation is marked.
        let short = ResultOptions {
            max_chars: Some(10),
            ..o.clone()
        };
        let m = d
            .dispatch(&client, &run("big", json!({"bytes": 1000})), &short, &none())
            .await
            .unwrap();
        assert!(
            text_of(format, &m).contains("[truncated: 10 of 1000 characters shown]"),
            "{m}"
        );
    }
    // Strict mode: the model's nulls for optional properties are not sent.
    let strict = ExportOptions {
        strict: true,
        ..ExportOptions::new(Format::ChatCompletions)
    };
    let d = Dispatcher::new(export_tools(&tools, None, &strict).unwrap());
    let call = ToolCall::parse(
        Format::ChatCompletions,
        &json!({"id": "s", "function": {"name": "progress", "arguments": "{\"steps\": 1, \"delay_ms\": null}"}}),
    )
    .unwrap();
    let m = d
        .dispatch(&client, &call, &ResultOptions::default(), &none())
        .await
        .unwrap();
    assert_eq!(m["content"], "progress done");
    let sent = fx.wire.tool_calls("progress");
    assert_eq!(sent.last().unwrap()["params"]["arguments"], json!({"steps": 1}));
    client.close().await;
}

/// A hub as the tool source and the caller: two fixture members (one of each era, one with a
/// tool filter) exported in every format, each call reaching the member its route names; a
/// name the export lacks, a tool the filter withholds and a member the hub no longer has are
/// results the model reads, with nothing sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dispatch_through_a_hub_reaches_the_right_member() {
    let modern = Fixture::modern(&[]);
    let legacy = Fixture::legacy(&[]);
    let member = |name: &str, f: &Fixture, mode: &str, deny: Vec<String>| MemberSpec {
        name: name.into(),
        enabled: true,
        client: json!({"command": fixture_str(), "args": f.args(), "mode": mode,
            "probe_timeout_ms": 500, "shutdown_grace_ms": 500}),
        tools: ToolFilter { allow: None, deny },
        lazy: false,
        max_concurrency: None,
    };
    let spec = HubSpec {
        members: vec![
            member("new", &modern, "modern", vec![]),
            member("old", &legacy, "legacy", vec!["add".into()]),
        ],
        warnings: vec![],
        failed: vec![],
    };
    let hub = Hub::new(spec, HubOptions::default()).unwrap();
    hub.start().await;
    let o = ResultOptions::default();
    for opts in every_option() {
        let format = opts.format;
        let exported = hub.export_tools(&opts).await.unwrap();
        assert_eq!(
            exported.routes["old__echo"].server.as_deref(),
            Some("old"),
            "{format:?}"
        );
        assert_eq!(exported.routes["old__echo"].tool, "echo");
        assert!(!exported.routes.contains_key("old__add"), "the filter withholds it");
        let d = Dispatcher::new(exported);
        let run = |name: &str, args: Value| d.calls(&model_reply(format, name, &args)).unwrap().remove(0);
        for (server, wire) in [("new", &modern.wire), ("old", &legacy.wire)] {
            let before = wire.tool_calls("echo").len();
            let m = d
                .dispatch(
                    &hub,
                    &run(&format!("{server}__echo"), json!({"text": server})),
                    &o,
                    &none(),
                )
                .await
                .unwrap();
            assert!(text_of(format, &m).contains(server) && !is_error(format, &m), "{m}");
            assert_eq!(wire.tool_calls("echo").len(), before + 1, "{server} got the call");
        }
        let m = d
            .dispatch(&hub, &run("new__add", json!({"a": 2, "b": 3})), &o, &none())
            .await
            .unwrap();
        assert!(text_of(format, &m).contains('5'), "{m}");
        let m = d
            .dispatch(&hub, &run("old__add", json!({"a": 2, "b": 3})), &o, &none())
            .await
            .unwrap();
        assert!(
            is_error(format, &m) && text_of(format, &m).contains("no tool named"),
            "{m}"
        );
        let m = d
            .dispatch(&hub, &run("old__fail", json!({})), &o, &none())
            .await
            .unwrap();
        assert!(
            is_error(format, &m) && text_of(format, &m).contains("tool failed on purpose"),
            "{m}"
        );
    }
    assert!(legacy.wire.tool_calls("add").is_empty());

    // Routes made before the filter changed (or the member went away) are refused by the hub.
    let open = hub.export_tools(&ExportOptions::new(Format::Anthropic)).await.unwrap();
    let mut stale = open.clone();
    stale.routes.insert(
        "old__add".into(),
        Route {
            server: Some("old".into()),
            tool: "add".into(),
            strict: false,
            input_schema: None,
        },
    );
    stale.routes.insert(
        "gone__echo".into(),
        Route {
            server: Some("gone".into()),
            tool: "echo".into(),
            strict: false,
            input_schema: None,
        },
    );
    let d = Dispatcher::new(stale);
    let run = |name: &str| {
        d.calls(&model_reply(Format::Anthropic, name, &json!({"a": 1, "b": 2})))
            .unwrap()
            .remove(0)
    };
    let m = d.dispatch(&hub, &run("old__add"), &o, &none()).await.unwrap();
    assert!(
        m["is_error"] == true && m["content"].to_string().contains("tool filter withholds"),
        "{m}"
    );
    let m = d.dispatch(&hub, &run("gone__echo"), &o, &none()).await.unwrap();
    assert!(
        m["is_error"] == true && m["content"].to_string().contains("no member is named"),
        "{m}"
    );
    assert!(legacy.wire.tool_calls("add").is_empty(), "nothing was sent");
    // A route without a server is a name of the merged catalogue.
    let plain = Dispatcher::new(
        export_tools(
            &json!([{"name": "new__echo"}]),
            None,
            &ExportOptions::new(Format::Anthropic),
        )
        .unwrap(),
    );
    let call = plain
        .calls(&model_reply(Format::Anthropic, "new__echo", &json!({"text": "plain"})))
        .unwrap()
        .remove(0);
    let m = plain.dispatch(&hub, &call, &o, &none()).await.unwrap();
    assert_eq!(m["content"][0]["text"], "plain");
    hub.close().await;
}
