//! `SKILL.md` frontmatter: the leading `---` block, parsed as YAML 1.2 (core schema) into JSON,
//! and its key-by-key comparison with an entry's `frontmatter`.
//!
//! The JSON is built from the parser's events, pulled one at a time, rather than through
//! `YamlLoader` or `Parser::load`: those recurse once per nesting level (a line of `- - - …`
//! overflows the stack) and the loader copies a node for each alias (a few lines can expand to
//! gigabytes). Here aliases are refused and nesting is bounded; a real frontmatter is a shallow
//! mapping.

use serde_json::{Map, Value};
use yaml_rust2::parser::{Parser, Tag};
use yaml_rust2::scanner::TScalarStyle;
use yaml_rust2::{Event, Yaml};

/// Deeper nesting is refused (the entry's JSON is bounded by serde_json's own limit).
const MAX_DEPTH: usize = 32;

/// The YAML between the leading `---` line and the next `---` line of a `SKILL.md`.
pub(super) fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" {
            return Some(body[..offset].trim_end_matches(['\n', '\r']));
        }
        offset += line.len();
    }
    None
}

/// The frontmatter of a `SKILL.md` as a JSON object; it must be a YAML mapping.
pub(super) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = block(text).ok_or("SKILL.md does not begin with a ----delimited frontmatter block")?;
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(yaml);
    loop {
        match parser.next_token() {
            Err(e) => return Err(format!("the frontmatter is not YAML: {e}")),
            // The first document only: the block holds no `---` line.
            Ok((Event::DocumentEnd | Event::StreamEnd, _)) => break,
            Ok((event, _)) => builder.event(event)?,
        }
    }
    match builder.root {
        Some(Value::Object(map)) => Ok(map),
        _ => Err("the frontmatter is not a YAML mapping".into()),
    }
}

enum Frame {
    Seq(Vec<Value>),
    /// The mapping so far and the key waiting for its value.
    Map(Map<String, Value>, Option<String>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Value>,
}

impl Builder {
    fn event(&mut self, ev: Event) -> Result<(), String> {
        match ev {
            Event::Alias(_) => Err("the frontmatter uses a YAML alias, which is not accepted".into()),
            Event::Scalar(value, style, _, tag) => self.add(scalar(value, style, tag.as_ref())?),
            Event::SequenceStart(..) => self.open(Frame::Seq(Vec::new())),
            Event::MappingStart(..) => self.open(Frame::Map(Map::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Seq(items)) => self.add(Value::Array(items)),
                Some(Frame::Map(map, _)) => self.add(Value::Object(map)),
                None => Err("the frontmatter's YAML is unbalanced".into()),
            },
            _ => Ok(()),
        }
    }

    fn open(&mut self, frame: Frame) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("the frontmatter nests deeper than {MAX_DEPTH} levels"));
        }
        self.stack.push(frame);
        Ok(())
    }

    fn add(&mut self, value: Value) -> Result<(), String> {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Seq(items)) => items.push(value),
            Some(Frame::Map(map, pending)) => match pending.take() {
                None => *pending = Some(key(value)?),
                Some(k) if map.contains_key(&k) => return Err(format!("the frontmatter repeats the key {k:?}")),
                Some(k) => {
                    map.insert(k, value);
                }
            },
        }
        Ok(())
    }
}

/// A mapping key as a JSON object key: scalars only.
fn key(value: Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s),
        Value::Array(_) | Value::Object(_) => Err("the frontmatter has a key that is not a scalar".into()),
        other => Ok(other.to_string()),
    }
}

/// A scalar under the core schema: quoted and block scalars are strings; plain ones resolve to
/// null, booleans, integers and floats; the `!!` tags force a type.
fn scalar(value: String, style: TScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    let forced = tag.filter(|t| t.handle == "tag:yaml.org,2002:" || t.handle == "!!");
    let resolved = match (forced.map(|t| t.suffix.as_str()), style) {
        (Some("str"), _) => Yaml::String(value),
        (Some(_), _) | (None, TScalarStyle::Plain) => match value.as_str() {
            "Null" | "NULL" => Yaml::Null,
            _ => Yaml::from_str(&value),
        },
        (None, _) => Yaml::String(value),
    };
    Ok(match resolved {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(s) => {
            let f = Yaml::Real(s.clone()).as_f64().ok_or(format!("{s:?} is not a number"))?;
            serde_json::Number::from_f64(f)
                .map(Value::Number)
                .ok_or(format!("{s} has no JSON form"))?
        }
        Yaml::String(s) => Value::String(s),
        _ => return Err("the frontmatter has an unsupported scalar".into()),
    })
}

/// Deep equality where numbers compare by value (`1` equals `1.0`: YAML and JSON writers differ
/// there) and, in objects, an absent key equals `null`.
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Object(x), Value::Object(y)) => first_difference(x, y).is_none(),
        _ => a == b,
    }
}

/// The first key (in `a`'s order, then `b`'s) whose values differ.
pub(super) fn first_difference<'a>(a: &'a Map<String, Value>, b: &'a Map<String, Value>) -> Option<&'a str> {
    a.keys().chain(b.keys()).map(String::as_str).find(|k| {
        let (x, y) = (a.get(*k).unwrap_or(&Value::Null), b.get(*k).unwrap_or(&Value::Null));
        !same(x, y)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_block() {
        assert_eq!(block("---\r\na: 1\r\n---\r\nx"), Some("a: 1"));
        assert_eq!(block("\u{feff}---\na: 1\n--- \n"), Some("a: 1"));
        assert_eq!(block("---\na: 1\n"), None);
        assert_eq!(block("# title\n---\na: 1\n---\n"), None);
    }

    #[test]
    fn core_schema_values() {
        let fm = parse(
            "---\nn: 010\nb: yes\nt: True\nx: 1.5\nq: '1'\nnil: ~\nN: NULL\ns: !!str 12\n\
             empty:\nlist: [a, 2]\nnested:\n  k: v\n---\n",
        )
        .unwrap();
        let want = json!({"n": 10, "b": "yes", "t": true, "x": 1.5, "q": "1", "nil": null, "N": null,
                          "s": "12", "empty": null, "list": ["a", 2], "nested": {"k": "v"}});
        assert_eq!(Value::Object(fm), want);
    }

    #[test]
    fn hostile_or_odd_yaml_is_refused() {
        assert!(parse("---\n- a\n---\n").unwrap_err().contains("not a YAML mapping"));
        assert!(parse("---\na: [\n---\n").unwrap_err().contains("not YAML"));
        assert!(parse("---\na: &x [1]\nb: *x\n---\n").unwrap_err().contains("alias"));
        assert!(parse("---\na: 1\na: 2\n---\n").unwrap_err().contains("repeats"));
        assert!(parse("---\n? [a]\n: 1\n---\n").unwrap_err().contains("not a scalar"));
        assert!(parse("---\na: .inf\n---\n").unwrap_err().contains("no JSON form"));
        // Block nesting on one line is as deep as the line is long.
        let deep = format!("---\na:\n{}x\n---\n", "- ".repeat(100_000));
        assert!(parse(&deep).unwrap_err().contains("deeper than"));
    }

    #[test]
    fn equality_rules() {
        assert!(same(&json!(1), &json!(1.0)));
        assert!(!same(&json!(1), &json!("1")));
        assert!(same(&json!({"a": null}), &json!({})));
        assert!(!same(&json!([1, 2]), &json!([2, 1])));
        let (a, b) = (json!({"x": 1, "y": 2}), json!({"x": 1, "y": 3, "z": 4}));
        assert_eq!(
            first_difference(a.as_object().unwrap(), b.as_object().unwrap()),
            Some("y")
        );
    }
}
