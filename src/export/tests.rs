//! One test per rewrite rule, per format.

use super::*;
use serde_json::json;

fn one(tool: Value, opts: &ExportOptions) -> (Value, ToolReport) {
    let out = export_tools(&json!([tool]), None, opts).unwrap();
    let report = out.report[0].clone();
    (out.tools.first().cloned().unwrap_or(Value::Null), report)
}

fn opts(format: Format) -> ExportOptions {
    ExportOptions::new(format)
}

fn legacy() -> ExportOptions {
    ExportOptions {
        gemini_legacy_parameters: true,
        ..opts(Format::Gemini)
    }
}

fn strict(format: Format) -> ExportOptions {
    ExportOptions {
        strict: true,
        ..opts(format)
    }
}

fn tool(schema: Value) -> Value {
    json!({"name": "t", "description": "d", "inputSchema": schema})
}

fn says(notes: &[Note], text: &str) -> bool {
    notes.iter().any(|n| n.what.contains(text))
}

#[test]
fn each_format_has_its_shape() {
    let t = tool(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    let (chat, _) = one(t.clone(), &opts(Format::ChatCompletions));
    assert_eq!(chat["type"], "function");
    assert_eq!(chat["function"]["name"], "t");
    assert_eq!(chat["function"]["parameters"]["properties"]["a"]["type"], "string");
    assert_eq!(chat["function"]["strict"], false);
    let (resp, _) = one(t.clone(), &opts(Format::Responses));
    assert_eq!(
        (resp["type"].as_str(), resp["name"].as_str()),
        (Some("function"), Some("t"))
    );
    assert!(resp["parameters"].is_object() && resp["strict"] == false);
    let (anth, _) = one(t.clone(), &opts(Format::Anthropic));
    assert_eq!(anth["input_schema"]["type"], "object");
    assert!(anth.get("strict").is_none() && anth.get("type").is_none());
    let (gem, _) = one(t.clone(), &opts(Format::Gemini));
    assert!(gem["parametersJsonSchema"].is_object() && gem.get("parameters").is_none());
    let (old, _) = one(t, &legacy());
    assert_eq!(old["parameters"]["type"], "OBJECT");
    assert_eq!(old["parameters"]["properties"]["a"]["type"], "STRING");
}

#[test]
fn gemini_drops_schema_keyword_and_keeps_refs() {
    let s = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}});
    let (gem, report) = one(tool(s), &opts(Format::Gemini));
    let p = &gem["parametersJsonSchema"];
    assert!(p.get("$schema").is_none());
    assert_eq!(p["properties"]["a"]["$ref"], "#/$defs/n");
    assert!(says(&report.rewrites, "$schema removed"));
}

#[test]
fn refs_are_inlined_for_the_legacy_subset() {
    let s = json!({"type": "object", "$defs": {"item": {"type": "object", "properties": {"id": {"type": "integer"}}}},
                   "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item", "description": "one"}}}});
    let (old, report) = one(tool(s), &legacy());
    let items = &old["parameters"]["properties"]["items"]["items"];
    assert_eq!(items["properties"]["id"]["type"], "INTEGER");
    assert_eq!(items["description"], "one", "a sibling of $ref is kept");
    assert!(old["parameters"].get("$defs").is_none());
    assert!(says(&report.rewrites, "$ref inlined"));
}

#[test]
fn recursive_refs_are_refused_where_they_must_be_inlined() {
    let s = json!({"type": "object", "$defs": {"node": {"type": "object",
                   "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
                   "properties": {"root": {"$ref": "#/$defs/node"}}});
    let out = export_tools(&json!([tool(s.clone())]), None, &legacy()).unwrap();
    assert!(out.tools.is_empty());
    let why = out.report[0].refused.as_deref().unwrap();
    assert!(why.contains("recursive") && why.contains("#/$defs/node"), "{why}");
    // Formats that keep references export it.
    for f in [Format::Gemini, Format::Anthropic, Format::ChatCompletions] {
        let out = export_tools(&json!([tool(s.clone())]), None, &opts(f)).unwrap();
        assert_eq!(out.tools.len(), 1, "{f:?}");
    }
    // A long chain of references stops at the bound.
    let mut defs = Map::new();
    for i in 0..12 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert("d12".into(), json!({"type": "string"}));
    let chain = json!({"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}});
    let out = export_tools(&json!([tool(chain.clone())]), None, &legacy()).unwrap();
    assert!(out.report[0].refused.as_deref().unwrap().contains("deeper than 8"));
    let deeper = ExportOptions {
        max_ref_depth: 20,
        ..legacy()
    };
    let out = export_tools(&json!([tool(chain)]), None, &deeper).unwrap();
    assert_eq!(out.tools[0]["parameters"]["properties"]["x"]["type"], "STRING");
}

#[test]
fn type_arrays_become_nullable_or_any_of() {
    let s = json!({"type": "object", "properties": {
        "a": {"type": ["string", "null"]},
        "b": {"type": ["string", "integer"]}}});
    let (old, report) = one(tool(s), &legacy());
    let p = &old["parameters"]["properties"];
    assert_eq!(p["a"], json!({"type": "STRING", "nullable": true}));
    assert_eq!(p["b"]["anyOf"], json!([{"type": "STRING"}, {"type": "INTEGER"}]));
    assert!(says(&report.rewrites, "type array"));
}

#[test]
fn const_becomes_a_one_value_enum() {
    let s = json!({"type": "object", "properties": {"k": {"type": "string", "const": "x"}, "n": {"const": 3}}});
    let (old, report) = one(tool(s), &legacy());
    assert_eq!(old["parameters"]["properties"]["k"]["enum"], json!(["x"]));
    assert!(says(&report.rewrites, "one-value enum"));
    // A number has no place in this format's string-only enum: reported, not sent.
    assert!(old["parameters"]["properties"]["n"].get("enum").is_none());
    assert!(says(&report.not_expressed, "non-string"));
}

#[test]
fn keywords_the_legacy_subset_lacks_are_removed_and_reported() {
    let s = json!({"type": "object", "additionalProperties": false,
        "patternProperties": {"^x-": {"type": "string"}},
        "properties": {
            "e": {"type": "string", "examples": ["a"], "default": "a", "format": "uri"},
            "i": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "f": {"type": "number", "exclusiveMinimum": 0.5, "multipleOf": 0.5},
            "c": {"if": {"type": "string"}, "then": {"minLength": 1}},
            "o": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "m": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                            {"properties": {"b": {"type": "string"}}, "required": ["b"]}]}}});
    let (old, r) = one(tool(s), &legacy());
    let p = &old["parameters"];
    assert!(p.get("additionalProperties").is_none() && p.get("patternProperties").is_none());
    let props = &p["properties"];
    assert_eq!(props["e"], json!({"type": "STRING"}));
    assert_eq!(
        (props["i"]["minimum"].as_i64(), props["i"]["maximum"].as_i64()),
        (Some(1), Some(9))
    );
    assert!(props["f"].get("exclusiveMinimum").is_none());
    assert!(props["c"].get("if").is_none());
    assert_eq!(props["o"]["anyOf"].as_array().map(Vec::len), Some(2));
    assert_eq!(props["m"]["required"], json!(["a", "b"]));
    assert_eq!(props["m"]["properties"]["b"]["type"], "STRING");
    for lost in [
        "additionalProperties",
        "patternProperties",
        "exclusiveMinimum 0.5",
        "multipleOf",
        "if",
        "then",
        "exactly-one",
    ] {
        assert!(says(&r.not_expressed, lost), "{lost}: {:?}", r.not_expressed);
    }
    for done in [
        "examples removed",
        "default removed",
        "format \"uri\" removed",
        "written as minimum",
        "allOf merged",
    ] {
        assert!(says(&r.rewrites, done), "{done}: {:?}", r.rewrites);
    }
}

#[test]
fn top_level_combinators_are_merged_for_anthropic() {
    let s = json!({"anyOf": [
        {"type": "object", "properties": {"path": {"type": "string"}, "mode": {"type": "string"}}, "required": ["path", "mode"]},
        {"type": "object", "properties": {"url": {"type": "string"}, "mode": {"type": "string"}}, "required": ["url", "mode"]}]});
    let (anth, r) = one(tool(s.clone()), &opts(Format::Anthropic));
    let input = &anth["input_schema"];
    assert_eq!(input["type"], "object");
    assert!(input.get("anyOf").is_none());
    let names: Vec<&String> = input["properties"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["path", "mode", "url"]);
    assert_eq!(input["required"], json!(["mode"]), "required in every branch");
    assert!(says(&r.rewrites, "top-level anyOf merged"));
    assert!(says(&r.not_expressed, "which branch"));
    // allOf merges exactly.
    let all = json!({"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                               {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]});
    let (anth, r) = one(tool(all), &opts(Format::Anthropic));
    assert_eq!(anth["input_schema"]["required"], json!(["a", "b"]));
    assert!(r.not_expressed.is_empty(), "{r:?}");
    // Other formats keep them, with the object type added.
    let (chat, r) = one(tool(s), &opts(Format::ChatCompletions));
    assert_eq!(chat["function"]["parameters"]["type"], "object");
    assert!(chat["function"]["parameters"]["anyOf"].is_array());
    assert!(says(&r.rewrites, "\"type\": \"object\" added"));
}

#[test]
fn strict_mode_closes_objects_and_makes_optional_nullable() {
    let s = json!({"type": "object", "properties": {
        "q": {"type": "string", "minLength": 1},
        "n": {"type": "integer", "default": 3},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
        "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["q"]});
    for f in [Format::ChatCompletions, Format::Responses] {
        let (t, r) = one(tool(s.clone()), &strict(f));
        let p = if f == Format::ChatCompletions {
            &t["function"]["parameters"]
        } else {
            &t["parameters"]
        };
        assert_eq!(t.get("strict").or(t["function"].get("strict")), Some(&json!(true)));
        assert_eq!(p["additionalProperties"], false);
        assert_eq!(p["required"], json!(["q", "n", "tags", "where", "any"]));
        assert_eq!(p["properties"]["q"]["type"], "string", "required stays as it was");
        assert_eq!(p["properties"]["n"]["type"], json!(["integer", "null"]));
        assert!(p["properties"]["n"].get("default").is_none());
        assert_eq!(p["properties"]["where"]["additionalProperties"], false);
        assert_eq!(p["properties"]["where"]["type"], json!(["object", "null"]));
        assert_eq!(p["properties"]["any"]["anyOf"][2], json!({"type": "null"}));
        assert!(says(&r.not_expressed, "minLength"));
        assert!(says(&r.rewrites, "required and nullable"));
        assert_eq!(r.strict, Some(true));
    }
}

#[test]
fn a_schema_that_cannot_be_strict_goes_out_non_strict_and_says_why() {
    let cases = [
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}}),
            "allows members",
        ),
        (json!({"type": "object", "properties": {"v": {}}}), "accepts any value"),
        (
            json!({"type": "object", "patternProperties": {"^x": {"type": "string"}}}),
            "patternProperties",
        ),
        (
            json!({"anyOf": [{"type": "object"}, {"type": "object"}]}),
            "top-level anyOf",
        ),
        (
            json!({"type": "object", "properties": {"e": {"type": "string", "enum": (0..1200).map(|i| i.to_string()).collect::<Vec<_>>()}}}),
            "enum values",
        ),
    ];
    for (schema, why) in cases {
        let (t, r) = one(tool(schema.clone()), &strict(Format::ChatCompletions));
        assert_eq!(t["function"]["strict"], false, "{schema}");
        assert_eq!(r.strict, Some(false));
        assert!(says(&r.rewrites, why), "{why}: {:?}", r.rewrites);
        assert_eq!(
            t["function"]["parameters"].get("additionalProperties"),
            schema.get("additionalProperties")
        );
    }
}

#[test]
fn names_follow_the_rule_and_route_back() {
    let long = "n".repeat(200);
    let list = json!([{"name": "fs.read", "inputSchema": {"type": "object"}},
                      {"name": long, "inputSchema": {"type": "object"}},
                      {"name": "ok_name", "inputSchema": {"type": "object"}}]);
    let out = export_tools(&list, None, &opts(Format::Anthropic)).unwrap();
    let names: Vec<&str> = out.report.iter().filter_map(|r| r.exported_name.as_deref()).collect();
    assert!(
        names[0].starts_with("fs_read_") && names[1].len() == 64 && names[2] == "ok_name",
        "{names:?}"
    );
    assert_eq!(out.routes[names[0]].tool, "fs.read");
    assert_eq!(out.routes[names[1]].tool, long);
    assert!(says(&out.report[0].rewrites, "exported as"));
    // Stable across runs.
    assert_eq!(export_tools(&list, None, &opts(Format::Anthropic)).unwrap(), out);
}

#[test]
fn origins_name_the_server() {
    let list = json!([{"name": "git__status", "inputSchema": {"type": "object"}}]);
    let origins = HashMap::from([(
        "git__status".to_string(),
        Origin {
            server: Some("git".into()),
            tool: "status".into(),
        },
    )]);
    let out = export_tools(&list, Some(&origins), &opts(Format::Gemini)).unwrap();
    let route = &out.routes["git__status"];
    assert_eq!((route.server.as_deref(), route.tool.as_str()), (Some("git"), "status"));
}

#[test]
fn descriptions_carry_title_and_annotations_on_request() {
    let t = json!({"name": "rm", "title": "Remove", "description": "Deletes a file",
                   "annotations": {"destructiveHint": true, "idempotentHint": true}, "inputSchema": {"type": "object"}});
    let (plain, _) = one(t.clone(), &opts(Format::Anthropic));
    assert_eq!(plain["description"], "Deletes a file");
    let o = ExportOptions {
        describe_title: true,
        describe_annotations: true,
        ..opts(Format::Anthropic)
    };
    let (rich, r) = one(t, &o);
    assert_eq!(rich["description"], "Remove: Deletes a file\n(destructive, idempotent)");
    assert!(says(&r.rewrites, "title") && says(&r.rewrites, "annotations"));
    let ro = json!({"name": "ls", "annotations": {"readOnlyHint": true, "destructiveHint": true}});
    let (d, _) = one(ro, &o);
    assert_eq!(d["description"], "(read-only)");
}

#[test]
fn app_only_tools_and_bad_lists() {
    let list = json!({"tools": [{"name": "ui", "_meta": {"ui": {"visibility": ["app"]}}},
                                {"name": "both", "_meta": {"ui": {"visibility": ["app", "model"]}}}]});
    let out = export_tools(&list, None, &opts(Format::Responses)).unwrap();
    assert_eq!(out.tools.len(), 1);
    assert!(out.report[0].refused.as_deref().unwrap().contains("app-only"));
    assert!(export_tools(&json!(3), None, &opts(Format::Responses)).is_err());
    assert!(export_tools(&json!([{"inputSchema": {}}]), None, &opts(Format::Responses)).is_err());
    let bad = export_tools(
        &json!([{"name": "x", "inputSchema": 5}]),
        None,
        &opts(Format::Responses),
    )
    .unwrap();
    assert!(bad.report[0].refused.is_some());
    // The exported document reads back.
    let back = Exported::from_value(&out.to_value()).unwrap();
    assert_eq!(
        (back.format, &back.tools, &back.routes),
        (out.format, &out.tools, &out.routes)
    );
    assert!(back.report.is_empty(), "the report is not read back");
    let o: ExportOptions = serde_json::from_value(json!({"format": "gemini", "strict": true})).unwrap();
    assert_eq!((o.format, o.strict, o.max_ref_depth), (Format::Gemini, true, 8));
    assert!(serde_json::from_value::<ExportOptions>(json!({"formats": "gemini"})).is_err());
}

#[test]
fn calls_are_read_in_each_shape() {
    let chat = json!({"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"hi\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "echo", "arguments": "{oops"}}]});
    let calls = ToolCall::all_in(Format::ChatCompletions, &chat).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_deref(), calls[0].arguments["text"].as_str()),
        (Some("c1"), Some("hi"))
    );
    assert!(calls[1].arguments_error.as_deref().unwrap().contains("not valid JSON"));
    let resp = json!({"output": [{"type": "message", "content": []},
        {"type": "function_call", "call_id": "r1", "name": "add", "arguments": "{\"a\":1,\"b\":2}"}]});
    let calls = ToolCall::all_in(Format::Responses, &resp).unwrap();
    assert_eq!(
        (calls.len(), calls[0].id.as_deref(), calls[0].arguments["b"].as_i64()),
        (1, Some("r1"), Some(2))
    );
    let anth = json!({"content": [{"type": "text", "text": "let me"},
        {"type": "tool_use", "id": "a1", "name": "echo", "input": {"text": "x"}}]});
    let calls = ToolCall::all_in(Format::Anthropic, &anth).unwrap();
    assert_eq!(
        (calls[0].id.as_deref(), calls[0].arguments["text"].as_str()),
        (Some("a1"), Some("x"))
    );
    let gem = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"},
        {"functionCall": {"name": "echo", "args": {"text": "g"}}}]}}]});
    let calls = ToolCall::all_in(Format::Gemini, &gem).unwrap();
    assert_eq!(
        (calls[0].id.as_deref(), calls[0].arguments["text"].as_str()),
        (None, Some("g"))
    );
    let bare = ToolCall::parse(Format::Gemini, &json!({"name": "x"})).unwrap();
    assert_eq!(bare.arguments, json!({}));
    assert!(ToolCall::parse(Format::Anthropic, &json!({"type": "text"})).is_err());
}

fn dispatcher(format: Format, strict: bool) -> Dispatcher {
    let list = json!([{"name": "echo", "inputSchema": {"type": "object", "properties": {
        "text": {"type": "string"}, "times": {"type": "integer", "minimum": 1}}, "required": ["text"]}}]);
    let o = ExportOptions { strict, ..opts(format) };
    Dispatcher::new(export_tools(&list, None, &o).unwrap())
}

#[test]
fn arguments_are_checked_against_the_original_schema() {
    let d = dispatcher(Format::Anthropic, false);
    let call = |args: Value| ToolCall {
        id: Some("1".into()),
        name: "echo".into(),
        arguments: args,
        arguments_error: None,
    };
    assert!(d.check(&call(json!({"text": "a"}))).is_ok());
    let e = d.check(&call(json!({"times": 0}))).unwrap_err();
    assert!(
        e.contains("\"text\" is missing") && e.contains("minimum") && e.contains("call the tool again"),
        "{e}"
    );
    let mut unknown = call(json!({}));
    unknown.name = "nope".into();
    assert!(d.check(&unknown).unwrap_err().contains("The tools are: echo"));
    // Strict mode: nulls for optional properties mean absent.
    let s = dispatcher(Format::ChatCompletions, true);
    let (_, args) = s.check(&call(json!({"text": "a", "times": null}))).unwrap();
    assert_eq!(args, json!({"text": "a"}));
    assert!(
        s.check(&call(json!({"text": null}))).is_err(),
        "a required property stays"
    );
}

#[test]
fn results_become_each_apis_message() {
    let png = "iVBORw0KGgo=";
    let result = json!({"content": [{"type": "text", "text": "hello"},
        {"type": "image", "data": png, "mimeType": "image/png"},
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain"},
        {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "B"}}],
        "structuredContent": {"n": 1}});
    let call = ToolCall {
        id: Some("i".into()),
        name: "echo".into(),
        arguments: json!({}),
        arguments_error: None,
    };
    let o = ResultOptions::default();
    let chat = dispatcher(Format::ChatCompletions, false).result_message(&call, &result, &o);
    assert_eq!(chat["role"], "tool");
    assert_eq!(chat["tool_call_id"], "i");
    let text = chat["content"].as_str().unwrap();
    assert!(
        text.starts_with(
            "hello\n[image image/png, 8 bytes, not shown]\n[resource link: a.txt <file:///a.txt>; text/plain]"
        ),
        "{text}"
    );
    assert!(text.ends_with("[resource <file:///b.txt>]\nB"));
    let resp = dispatcher(Format::Responses, false).result_message(&call, &result, &o);
    assert_eq!(
        resp["output"][1],
        json!({"type": "input_image", "image_url": format!("data:image/png;base64,{png}")})
    );
    let anth = dispatcher(Format::Anthropic, false).result_message(&call, &result, &o);
    assert_eq!(
        anth["content"][1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": png})
    );
    assert!(anth.get("is_error").is_none());
    let gem = dispatcher(Format::Gemini, false).result_message(&call, &result, &o);
    assert_eq!(
        gem["functionResponse"],
        json!({"id": "i", "name": "echo", "response": {"n": 1}})
    );
    // Errors, truncation, resources left out.
    let err = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
    let anth = dispatcher(Format::Anthropic, false).result_message(&call, &err, &o);
    assert_eq!(anth["is_error"], true);
    let gem = dispatcher(Format::Gemini, false).result_message(&call, &err, &o);
    assert_eq!(gem["functionResponse"]["response"], json!({"error": "boom"}));
    let chat = dispatcher(Format::ChatCompletions, false).result_message(&call, &err, &o);
    assert_eq!(chat["content"], "Error: boom");
    let short = ResultOptions {
        max_chars: Some(3),
        resources_as_text: false,
        ..o.clone()
    };
    let chat = dispatcher(Format::ChatCompletions, false).result_message(&call, &result, &short);
    assert_eq!(chat["content"], "hel\n[truncated: 3 of 42 characters shown]");
    let gem = dispatcher(Format::Gemini, false).result_message(
        &call,
        &json!({"content": [{"type": "text", "text": "plain"}]}),
        &o,
    );
    assert_eq!(gem["functionResponse"]["response"], json!({"output": "plain"}));
}
