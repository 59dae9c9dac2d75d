//! The skills extension's inputs from a server: entries (`skills/list`, `skills/get`) and the
//! YAML frontmatter of a `SKILL.md`.

use mcp_client::fuzzing::{check_skill_entry, parse_skill_frontmatter};
use proptest::prelude::*;
use serde_json::{json, Value};

/// YAML-shaped text: indentation, flow and block collections, anchors, aliases, tags, quotes.
fn yaml() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("- ".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just(": ".to_string()),
        Just("? ".to_string()),
        Just(", ".to_string()),
        Just("\n".to_string()),
        Just("  ".to_string()),
        Just("&a ".to_string()),
        Just("*a".to_string()),
        Just("!!str ".to_string()),
        Just("!!int ".to_string()),
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("|\n".to_string()),
        Just("name".to_string()),
        Just(".inf".to_string()),
        "[a-z0-9]{1,6}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Entry-shaped JSON: the fields present or not, well or badly typed, URIs inside and outside.
fn entry() -> impl Strategy<Value = Value> {
    let uri = prop_oneof![
        Just("skill://a/b/SKILL.md".to_string()),
        Just("skill://a/b/x.md".to_string()),
        Just("skill://a/b/../c/x".to_string()),
        Just("skill://a/c/SKILL.md".to_string()),
        Just("file:///b/SKILL.md".to_string()),
        any::<String>(),
    ];
    let digest = prop_oneof![
        Just(json!(format!("sha256:{}", "0".repeat(64)))),
        Just(json!("sha256:")),
        any::<String>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ];
    let size = prop_oneof![
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(json!("1"))
    ];
    let file = (uri.clone(), digest, size).prop_map(|(u, d, s)| json!({"uri": u, "digest": d, "size": s}));
    let resources = prop_oneof![
        prop::collection::vec(file, 0..4).prop_map(Value::from),
        Just(json!("dynamic")),
        any::<String>().prop_map(Value::from),
    ];
    let name = prop_oneof![
        Just(json!("b")),
        Just(json!("c")),
        any::<String>().prop_map(Value::from),
        Just(json!(1))
    ];
    (uri, name, resources, any::<bool>()).prop_map(|(u, n, r, desc)| {
        let mut fm = json!({"name": n});
        if desc {
            fm["description"] = json!("d");
        }
        json!({"uri": u, "frontmatter": fm, "resources": r})
    })
}

proptest! {
    /// Any frontmatter parses without panic into a mapping of bounded depth, or is refused.
    #[test]
    fn any_frontmatter_parses_without_panic_into_bounded_json(body in yaml()) {
        if let Ok(map) = parse_skill_frontmatter(&format!("---\n{body}\n---\nbody\n")) {
            prop_assert!(depth(&Value::Object(map)) <= 33);
        }
    }

    /// Any entry is checked without panic; one accepted names a `SKILL.md` whose last
    /// skill-path segment is its frontmatter name, and lists its own `SKILL.md` (or is dynamic).
    #[test]
    fn any_entry_is_checked_without_panic(e in entry()) {
        if check_skill_entry(&e).is_ok() {
            let uri = e["uri"].as_str().unwrap();
            let name = e["frontmatter"]["name"].as_str().unwrap();
            let tail = format!("/{name}/SKILL.md");
            prop_assert!(uri.ends_with(&tail), "{} accepted with name {}", uri, name);
            let listed = e["resources"] == "dynamic"
                || e["resources"].as_array().unwrap().iter().any(|f| f["uri"] == uri);
            prop_assert!(listed);
        }
    }
}
