//! The configuration's JSON Schema and the bindings' type hints, derived from the serde structs
//! in src/config (the one definition): this test regenerates
//! include/mcp_client.config.schema.json, the Python TypedDicts, the Go structs and the Swift
//! Codable structs, and fails when any committed file differed (as the header drift check does:
//! run it, review, commit). It also checks the schema against the parser on sample configs.

use serde_json::{json, Value};
use std::path::PathBuf;

const SCHEMA: &str = "include/mcp_client.config.schema.json";
const PYTHON: &str = "bindings/python/mcp_client/_config.py";
const GO: &str = "bindings/go/config_gen.go";
const SWIFT: &str = "bindings/swift/Sources/MCPClient/Configuration.swift";

/// A property's type, as the bindings need it.
enum Ty {
    Str,
    Bool,
    /// The schema's `format`: uint16, uint32 or uint64.
    Int(String),
    List(Box<Ty>),
    Map(Box<Ty>),
    /// A free-form JSON object (client_info, capabilities).
    AnyObject,
    /// A nested settings object: its `$defs` name.
    Struct(String),
    /// A string with these values.
    Enum(Vec<String>),
    /// One of several shapes (a string or an array of them).
    Union(Vec<Ty>),
}

struct Field {
    key: String,
    doc: String,
    ty: Ty,
}

struct Struct {
    /// `None` for the top-level object, else its `$defs` name.
    def: Option<String>,
    doc: String,
    fields: Vec<Field>,
}

fn doc(v: &Value) -> String {
    let text = v["description"].as_str().unwrap_or_default().replace('\n', " ");
    match v.get("default") {
        Some(d) => format!("{text} Default: {d}."),
        None => text,
    }
}

fn ty(root: &Value, prop: &Value) -> Ty {
    if let Some(r) = prop["$ref"].as_str() {
        let name = r.strip_prefix("#/$defs/").expect("a local $ref");
        let def = &root["$defs"][name];
        if def.get("properties").is_some() {
            return Ty::Struct(name.to_string());
        }
        return ty(root, def);
    }
    if let Some(values) = prop["enum"].as_array() {
        return Ty::Enum(values.iter().map(|v| v.as_str().unwrap().to_string()).collect());
    }
    if let Some(alts) = prop["oneOf"]
        .as_array()
        .filter(|a| a.iter().all(|a| a.get("const").is_some()))
    {
        return Ty::Enum(alts.iter().map(|a| a["const"].as_str().unwrap().to_string()).collect());
    }
    if let Some(alts) = prop["anyOf"].as_array() {
        return Ty::Union(alts.iter().map(|a| ty(root, a)).collect());
    }
    match prop["type"].as_str() {
        Some("string") => Ty::Str,
        Some("boolean") => Ty::Bool,
        Some("integer") => Ty::Int(prop["format"].as_str().unwrap_or("uint64").to_string()),
        Some("array") => Ty::List(Box::new(ty(root, &prop["items"]))),
        Some("object") => match &prop["additionalProperties"] {
            Value::Object(_) => Ty::Map(Box::new(ty(root, &prop["additionalProperties"]))),
            _ => Ty::AnyObject,
        },
        other => panic!("no binding type for {other:?} in {prop}"),
    }
}

/// The settings objects, nested ones first (the Python module defines them before use).
fn structs(root: &Value) -> Vec<Struct> {
    let read = |def: Option<&str>, s: &Value| Struct {
        def: def.map(str::to_string),
        doc: doc(s),
        fields: s["properties"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(key, p)| Field {
                key: key.clone(),
                doc: doc(p),
                ty: ty(root, p),
            })
            .collect(),
    };
    let mut out: Vec<Struct> = root["$defs"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, d)| d.get("properties").is_some())
        .map(|(name, d)| read(Some(name), d))
        .collect();
    out.push(read(None, root));
    out
}

fn camel(key: &str, upper_first: bool) -> String {
    let mut out = String::new();
    for (i, part) in key.split('_').enumerate() {
        let initialism = ["url", "uri", "id", "http", "pem", "jwt"].contains(&part);
        if i == 0 && !upper_first {
            out.push_str(part);
        } else if initialism {
            out.push_str(&part.to_uppercase());
        } else {
            let mut c = part.chars();
            out.extend(c.next().map(|c| c.to_ascii_uppercase()));
            out.push_str(c.as_str());
        }
    }
    out
}

const HEADER: &str = "Generated from include/mcp_client.config.schema.json by tests/config_schema.rs \
                      (cargo test --features schema --test config_schema): do not edit.";

fn python(structs: &[Struct]) -> String {
    fn name(def: &Option<String>) -> String {
        def.as_ref().map_or("Config".into(), |d| format!("{d}Config"))
    }
    fn py(t: &Ty) -> String {
        match t {
            Ty::Str => "str".into(),
            Ty::Bool => "bool".into(),
            Ty::Int(_) => "int".into(),
            Ty::List(t) => format!("List[{}]", py(t)),
            Ty::Map(t) => format!("Dict[str, {}]", py(t)),
            Ty::AnyObject => "Dict[str, Any]".into(),
            Ty::Struct(d) => format!("{d}Config"),
            Ty::Enum(v) => format!(
                "Literal[{}]",
                v.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ")
            ),
            Ty::Union(ts) => format!("Union[{}]", ts.iter().map(py).collect::<Vec<_>>().join(", ")),
        }
    }
    let mut out = format!(
        "# {HEADER}\n\"\"\"Type hints for the library's JSON configuration (``Client(config)``): every key\n\
         is optional; see include/mcp_client.config.schema.json.\"\"\"\n\n\
         from typing import Any, Dict, List, Literal, TypedDict, Union\n\n"
    );
    let names: Vec<String> = structs.iter().map(|s| name(&s.def)).collect();
    out.push_str(&format!(
        "__all__ = [{}]\n",
        names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
    ));
    for s in structs {
        out.push_str(&format!("\n\nclass {}(TypedDict, total=False):\n", name(&s.def)));
        out.push_str(&format!("    \"\"\"{}\"\"\"\n", s.doc));
        for f in &s.fields {
            out.push_str(&format!("\n    #: {}\n    {}: {}\n", f.doc, f.key, py(&f.ty)));
        }
    }
    out
}

fn go(structs: &[Struct]) -> String {
    fn name(def: &Option<String>) -> String {
        def.as_ref().map_or("Config".into(), |d| format!("{d}Config"))
    }
    fn go_ty(t: &Ty, top: bool) -> String {
        // Scalars are pointers at the top of a field so that an explicit 0, false or "" is sent.
        let p = if top { "*" } else { "" };
        match t {
            Ty::Str | Ty::Enum(_) => format!("{p}string"),
            Ty::Bool => format!("{p}bool"),
            Ty::Int(f) => format!("{p}{f}"),
            Ty::List(t) => format!("[]{}", go_ty(t, false)),
            Ty::Map(t) => format!("map[string]{}", go_ty(t, false)),
            Ty::AnyObject => "map[string]any".into(),
            Ty::Struct(d) => format!("*{d}Config"),
            Ty::Union(_) => "any".into(),
        }
    }
    let mut out = format!("// {HEADER}\n\npackage mcpclient\n");
    for s in structs {
        let n = name(&s.def);
        out.push_str(&format!(
            "\n// {n}: {}\n//\n// Every field is optional: nil leaves the key out.\ntype {n} struct {{\n",
            s.doc
        ));
        for f in &s.fields {
            let mut doc = f.doc.clone();
            if let Ty::Enum(v) = &f.ty {
                doc.push_str(&format!(" One of: {}.", v.join(", ")));
            }
            out.push_str(&format!(
                "\t// {} {doc}\n\t{} {} `json:\"{},omitempty\"`\n",
                camel(&f.key, true),
                camel(&f.key, true),
                go_ty(&f.ty, true),
                f.key
            ));
        }
        out.push_str("}\n");
    }
    out
}

fn swift(structs: &[Struct]) -> String {
    fn sw(t: &Ty) -> String {
        match t {
            Ty::Str | Ty::Enum(_) => "String".into(),
            Ty::Bool => "Bool".into(),
            Ty::Int(f) => camel(f, true).replace("Uint", "UInt"),
            Ty::List(t) => format!("[{}]", sw(t)),
            Ty::Map(t) => format!("[String: {}]", sw(t)),
            Ty::AnyObject => "[String: JSON]".into(),
            Ty::Struct(d) => d.clone(),
            Ty::Union(_) => "JSON".into(),
        }
    }
    fn body(s: &Struct, indent: &str) -> String {
        let mut out = String::new();
        for f in &s.fields {
            let mut doc = f.doc.clone();
            if let Ty::Enum(v) = &f.ty {
                doc.push_str(&format!(" One of: {}.", v.join(", ")));
            }
            out.push_str(&format!(
                "{indent}/// {doc}\n{indent}public var {}: {}?\n",
                camel(&f.key, false),
                sw(&f.ty)
            ));
        }
        out.push_str(&format!(
            "\n{indent}public init() {{}}\n\n{indent}enum CodingKeys: String, CodingKey {{\n"
        ));
        for f in &s.fields {
            let c = camel(&f.key, false);
            if c == f.key {
                out.push_str(&format!("{indent}    case {c}\n"));
            } else {
                out.push_str(&format!("{indent}    case {c} = \"{}\"\n", f.key));
            }
        }
        out.push_str(&format!("{indent}}}\n"));
        out
    }
    let (root, nested): (Vec<&Struct>, Vec<&Struct>) = structs.iter().partition(|s| s.def.is_none());
    let root = root[0];
    let mut out = format!(
        "// {HEADER}\n\n/// {}\n/// Every property is optional: nil leaves the key out.\npublic struct Configuration: Codable, Sendable {{\n",
        root.doc
    );
    out.push_str(&body(root, "    "));
    for s in nested {
        let d = s.def.as_ref().unwrap();
        out.push_str(&format!(
            "\n    /// {}\n    public struct {d}: Codable, Sendable {{\n",
            s.doc
        ));
        out.push_str(&body(s, "        "));
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    out
}

/// Writes `text` to `path` when it differs and says so.
fn refresh(path: &str, text: &str) -> Option<String> {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    if std::fs::read_to_string(&full).ok().as_deref() == Some(text) {
        return None;
    }
    std::fs::write(&full, text).unwrap_or_else(|e| panic!("write {path}: {e}"));
    Some(path.to_string())
}

#[test]
fn the_schema_and_the_bindings_types_are_current() {
    let schema = mcp_client::config::schema();
    let structs = structs(&schema);
    let stale: Vec<String> = [
        refresh(SCHEMA, &(serde_json::to_string_pretty(&schema).unwrap() + "\n")),
        refresh(PYTHON, &python(&structs)),
        refresh(GO, &go(&structs)),
        refresh(SWIFT, &swift(&structs)),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(
        stale.is_empty(),
        "regenerated from the configuration types: {stale:?}; review and commit them"
    );
}

#[test]
fn the_schema_accepts_what_the_parser_accepts_and_refuses_unknown_keys() {
    let validator = jsonschema::draft202012::new(&mcp_client::config::schema()).unwrap();
    let good = [
        json!({"command": "server", "args": ["--stdio"], "env": {"A": "b"}, "env_mode": "replace",
               "request_timeout_ms": 0, "reconnect": {"max_attempts": 3}, "skills": true}),
        json!({"url": "https://mcp.example.com/mcp", "headers": {"X-A": "b"}, "mode": "legacy",
               "resolve": {"mcp.example.com": ["127.0.0.1"]},
               "oauth": {"grant": "authorization_code", "scopes": "a b", "loopback_port": 8080}}),
    ];
    for config in good {
        assert!(validator.is_valid(&config), "{config}");
        mcp_client::ClientConfig::from_json(&config).unwrap();
    }
    let bad = [
        json!({"command": "server", "request_timeout": 5}),
        json!({"command": "server", "reconnect": {"tries": 2}}),
        json!({"url": "https://a/mcp", "oauth": {"grant": "password"}}),
        json!({"command": "server", "args": "--stdio"}),
        json!({"command": "server", "mode": "fast"}),
    ];
    for config in bad {
        assert!(!validator.is_valid(&config), "{config}");
        mcp_client::ClientConfig::from_json(&config).unwrap_err();
    }
}
