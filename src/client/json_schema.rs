//! A small JSON Schema (2020-12) validator for tool output schemas and for the arguments the
//! model sends through `export`'s dispatch.
//!
//! Why not a crate: `jsonschema` (default features off) took the shipped `.so` from 4.8 MB to
//! 10.2 MB (it brings two regex engines with Unicode tables, big-number arithmetic and format
//! validators), past the 5 MB limit; see docs/performance.md. Output schemas are plain data
//! shapes, so this covers the assertion vocabulary they use:
//! `type`, `enum`, `const`; `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf`; `minLength`, `maxLength`; `prefixItems`, `items`, `contains` (with
//! `minContains`/`maxContains`), `minItems`, `maxItems`, `uniqueItems`; `properties`,
//! `required`, `additionalProperties`, `propertyNames`, `minProperties`, `maxProperties`,
//! `dependentRequired`; `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`; boolean schemas;
//! and `$ref` to a JSON pointer inside the same schema (`#`, `#/$defs/..`, `#/definitions/..`).
//!
//! `pattern` and `patternProperties` run on `regex-lite` (≈70 KB in the shipped library, where
//! the `regex` crate's Unicode tables would not fit). The patterns are ECMA-262 regular
//! expressions; what `regex-lite` cannot compile (lookaround, backreferences, `\p{..}`
//! classes, Annex B leniencies such as a bare `{`) is not checked and passes, and next to a
//! `patternProperties` pattern that could not be compiled `additionalProperties` is skipped
//! too, so nothing valid fails for want of an engine. Known differences that can fail a value
//! ECMA-262 accepts: `\s` is ASCII whitespace only, and `&&`, `--` and `~~` inside a class are
//! set operations.
//!
//! Not checked (they pass): `format` (an annotation by default in 2020-12), `unevaluated*`,
//! `$dynamicRef`. A `$ref` to anything but this schema is refused when the schema is compiled:
//! nothing is ever fetched.

use std::collections::HashMap;

use regex_lite::{Regex, RegexBuilder};
use serde_json::{Map, Value};

/// Nesting bound for `$ref` chains and subschemas: a cyclic or hostile schema fails, never
/// overflows the stack.
const MAX_DEPTH: usize = 64;

/// Bounds on a server's patterns: compiled size of each (regex-lite's own default is 10 MiB)
/// and how many one schema may bring; beyond them a pattern is not checked.
const PATTERN_SIZE_LIMIT: usize = 256 * 1024;
const MAX_PATTERNS: usize = 256;

/// A schema whose `$ref`s were all found inside it, with its patterns compiled.
pub(crate) struct Schema {
    root: Value,
    /// Every `pattern` and `patternProperties` key of the schema; `None`: not checked.
    patterns: HashMap<String, Option<Regex>>,
}

impl Schema {
    /// Checks that every `$ref` points inside the schema.
    pub fn compile(root: &Value) -> Result<Schema, String> {
        check_refs(root, root, 0)?;
        let mut patterns = HashMap::new();
        collect_patterns(root, &mut patterns, 0);
        Ok(Schema {
            root: root.clone(),
            patterns,
        })
    }

    /// The compiled `pattern`, or `None` when it is not checked.
    fn regex(&self, pattern: &str) -> Option<&Regex> {
        self.patterns.get(pattern).and_then(Option::as_ref)
    }

    /// Up to `max` messages, each `at <pointer>: <what>`; empty when `instance` conforms.
    pub fn errors(&self, instance: &Value, max: usize) -> Vec<String> {
        let mut out = Errors { list: Vec::new(), max };
        self.check(&self.root, instance, &mut String::new(), &mut out, 0);
        out.list
    }

    /// Whether `instance` conforms to `sub`, a subschema of this schema (its `$ref`s resolve
    /// against this schema's root).
    pub fn valid_under(&self, sub: &Value, instance: &Value) -> bool {
        self.is_valid(sub, instance, 0)
    }

    fn is_valid(&self, schema: &Value, instance: &Value, depth: usize) -> bool {
        let mut out = Errors {
            list: Vec::new(),
            max: 1,
        };
        self.check(schema, instance, &mut String::new(), &mut out, depth);
        out.list.is_empty()
    }

    fn check(&self, schema: &Value, inst: &Value, path: &mut String, out: &mut Errors, depth: usize) {
        if out.full() {
            return;
        }
        if depth > MAX_DEPTH {
            out.push(path, "the schema nests (or refers) deeper than 64 levels".into());
            return;
        }
        let s = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return out.push(path, "no value is allowed here (false schema)".into()),
            Value::Object(s) => s,
            _ => return,
        };
        if let Some(Value::String(r)) = s.get("$ref") {
            match resolve(&self.root, r) {
                Some(target) => self.check(target, inst, path, out, depth + 1),
                None => out.push(path, format!("$ref {r:?} does not resolve")),
            }
        }
        if let Some(t) = s.get("type") {
            let ok = match t {
                Value::String(t) => has_type(inst, t),
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| has_type(inst, t)),
                _ => true,
            };
            if !ok {
                out.push(path, format!("{} is not of type {t}", brief(inst)));
            }
        }
        if let Some(Value::Array(options)) = s.get("enum") {
            if !options.contains(inst) {
                out.push(path, format!("{} is not one of the enum values", brief(inst)));
            }
        }
        if let Some(c) = s.get("const") {
            if c != inst {
                out.push(path, format!("{} is not the const {}", brief(inst), brief(c)));
            }
        }
        match inst {
            Value::Number(n) => number_rules(s, n.as_f64().unwrap_or(f64::NAN), path, out),
            Value::String(text) => self.string_rules(s, text, path, out),
            Value::Array(items) => self.array_rules(s, items, path, out, depth),
            Value::Object(members) => self.object_rules(s, members, path, out, depth),
            _ => {}
        }
        self.combinators(s, inst, path, out, depth);
    }

    fn combinators(&self, s: &Map<String, Value>, inst: &Value, path: &mut String, out: &mut Errors, depth: usize) {
        if let Some(Value::Array(all)) = s.get("allOf") {
            for sub in all {
                self.check(sub, inst, path, out, depth + 1);
            }
        }
        if let Some(Value::Array(any)) = s.get("anyOf") {
            if !any.iter().any(|sub| self.is_valid(sub, inst, depth + 1)) {
                out.push(path, format!("{} matches none of anyOf", brief(inst)));
            }
        }
        if let Some(Value::Array(one)) = s.get("oneOf") {
            let n = one.iter().filter(|sub| self.is_valid(sub, inst, depth + 1)).count();
            if n != 1 {
                out.push(path, format!("{} matches {n} of oneOf, not exactly one", brief(inst)));
            }
        }
        if let Some(not) = s.get("not") {
            if self.is_valid(not, inst, depth + 1) {
                out.push(path, format!("{} matches the not schema", brief(inst)));
            }
        }
        if let Some(cond) = s.get("if") {
            let branch = if self.is_valid(cond, inst, depth + 1) {
                s.get("then")
            } else {
                s.get("else")
            };
            if let Some(branch) = branch {
                self.check(branch, inst, path, out, depth + 1);
            }
        }
    }

    fn array_rules(&self, s: &Map<String, Value>, items: &[Value], path: &mut String, out: &mut Errors, depth: usize) {
        let prefix = match s.get("prefixItems") {
            Some(Value::Array(p)) => p.as_slice(),
            _ => &[],
        };
        for (i, item) in items.iter().enumerate() {
            let sub = match prefix.get(i) {
                Some(sub) => Some(sub),
                None => s.get("items"),
            };
            if let Some(sub) = sub {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                self.check(sub, item, path, out, depth + 1);
                path.truncate(len);
            }
        }
        let count = |key: &str| s.get(key).and_then(Value::as_u64);
        if let Some(min) = count("minItems").filter(|m| (items.len() as u64) < *m) {
            out.push(path, format!("{} items, fewer than minItems {min}", items.len()));
        }
        if let Some(max) = count("maxItems").filter(|m| (items.len() as u64) > *m) {
            out.push(path, format!("{} items, more than maxItems {max}", items.len()));
        }
        if s.get("uniqueItems") == Some(&Value::Bool(true)) {
            let dup = items.iter().enumerate().any(|(i, a)| items[..i].contains(a));
            if dup {
                out.push(path, "items are not unique".into());
            }
        }
        if let Some(contains) = s.get("contains") {
            let n = items.iter().filter(|i| self.is_valid(contains, i, depth + 1)).count() as u64;
            let min = count("minContains").unwrap_or(1);
            if n < min || count("maxContains").is_some_and(|max| n > max) {
                out.push(path, format!("{n} items match contains"));
            }
        }
    }

    fn string_rules(&self, s: &Map<String, Value>, text: &str, path: &str, out: &mut Errors) {
        let chars = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64).filter(|m| chars < *m) {
            out.push(path, format!("{chars} characters, fewer than minLength {min}"));
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64).filter(|m| chars > *m) {
            out.push(path, format!("{chars} characters, more than maxLength {max}"));
        }
        if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
            if self.regex(pattern).is_some_and(|re| !re.is_match(text)) {
                out.push(
                    path,
                    format!(
                        "{} does not match the pattern {pattern:?}",
                        brief(&Value::String(text.into()))
                    ),
                );
            }
        }
    }

    fn object_rules(
        &self,
        s: &Map<String, Value>,
        members: &Map<String, Value>,
        path: &mut String,
        out: &mut Errors,
        depth: usize,
    ) {
        let props = s.get("properties").and_then(Value::as_object);
        let patterns = s.get("patternProperties").and_then(Value::as_object);
        // A pattern that is not checked leaves unknown which members are additional.
        let additional_known = patterns.is_none_or(|p| p.keys().all(|k| self.regex(k).is_some()));
        for (key, value) in members {
            let mut matched = false;
            if let Some(sub) = props.and_then(|p| p.get(key)) {
                matched = true;
                self.member(sub, key, value, path, out, depth);
            }
            for (pattern, sub) in patterns.into_iter().flatten() {
                if self.regex(pattern).is_some_and(|re| re.is_match(key)) {
                    matched = true;
                    self.member(sub, key, value, path, out, depth);
                }
            }
            if let Some(sub) = s.get("additionalProperties").filter(|_| !matched && additional_known) {
                if sub == &Value::Bool(false) {
                    let len = path.len();
                    push_key(path, key);
                    out.push(path, "additional property not allowed".into());
                    path.truncate(len);
                } else {
                    self.member(sub, key, value, path, out, depth);
                }
            }
            if let Some(names) = s.get("propertyNames") {
                if !self.is_valid(names, &Value::String(key.clone()), depth + 1) {
                    out.push(path, format!("property name {key:?} does not match propertyNames"));
                }
            }
        }
        for name in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            if let Some(name) = name.as_str().filter(|n| !members.contains_key(*n)) {
                out.push(path, format!("required property {name:?} is missing"));
            }
        }
        if let Some(Value::Object(deps)) = s.get("dependentRequired") {
            for (key, needed) in deps.iter().filter(|(k, _)| members.contains_key(*k)) {
                for name in needed.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if !members.contains_key(name) {
                        out.push(path, format!("property {name:?} is required when {key:?} is present"));
                    }
                }
            }
        }
        let n = members.len() as u64;
        if let Some(min) = s.get("minProperties").and_then(Value::as_u64).filter(|m| n < *m) {
            out.push(path, format!("{n} properties, fewer than minProperties {min}"));
        }
        if let Some(max) = s.get("maxProperties").and_then(Value::as_u64).filter(|m| n > *m) {
            out.push(path, format!("{n} properties, more than maxProperties {max}"));
        }
    }

    /// Checks one member's value against `sub`, with the member's key on the path.
    fn member(&self, sub: &Value, key: &str, value: &Value, path: &mut String, out: &mut Errors, depth: usize) {
        let len = path.len();
        push_key(path, key);
        self.check(sub, value, path, out, depth + 1);
        path.truncate(len);
    }
}

/// Appends `key` to a JSON pointer.
fn push_key(path: &mut String, key: &str) {
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

struct Errors {
    list: Vec<String>,
    max: usize,
}

impl Errors {
    fn full(&self) -> bool {
        self.list.len() >= self.max
    }
    fn push(&mut self, path: &str, what: String) {
        if !self.full() {
            let at = if path.is_empty() { "/" } else { path };
            self.list.push(format!("at {at}: {what}"));
        }
    }
}

fn number_rules(s: &Map<String, Value>, x: f64, path: &str, out: &mut Errors) {
    let bound = |key: &str| s.get(key).and_then(Value::as_f64);
    type Holds = fn(f64, f64) -> bool;
    let checks: [(&str, Holds); 4] = [
        ("minimum", |x, b| x >= b),
        ("maximum", |x, b| x <= b),
        ("exclusiveMinimum", |x, b| x > b),
        ("exclusiveMaximum", |x, b| x < b),
    ];
    for (key, holds) in checks {
        if let Some(b) = bound(key).filter(|b| !holds(x, *b)) {
            out.push(path, format!("{x} breaks {key} {b}"));
        }
    }
    if let Some(m) = bound("multipleOf").filter(|m| *m > 0.0) {
        let q = x / m;
        if (q - q.round()).abs() > 1e-9 * q.abs().max(1.0) {
            out.push(path, format!("{x} is not a multiple of {m}"));
        }
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

/// A short rendering of a value for messages (the caller makes it safe to show).
fn brief(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The subschema a local `$ref` (`#` plus a JSON pointer) names.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    let pointer = percent_decode(pointer)?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(&pointer)
}

/// `$ref` fragments may percent-encode; only valid UTF-8 results are accepted.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
}

/// Every `$ref` in the schema must resolve inside it.
fn check_refs(root: &Value, node: &Value, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("the schema nests deeper than 64 levels".into());
    }
    match node {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref") {
                let r = r.as_str().ok_or("$ref is not a string")?;
                if !r.starts_with('#') {
                    return Err(format!("$ref {r:?} points outside the schema and is not fetched"));
                }
                if resolve(root, r).is_none() {
                    return Err(format!("$ref {r:?} does not resolve inside the schema"));
                }
            }
            // `const`, `enum` and `default` hold data, not schemas.
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "const" | "enum" | "default" | "examples"))
                .try_for_each(|(_, v)| check_refs(root, v, depth + 1))
        }
        Value::Array(a) => a.iter().try_for_each(|v| check_refs(root, v, depth + 1)),
        _ => Ok(()),
    }
}

/// Compiles every `pattern` string and `patternProperties` key under `node` (data keywords
/// skipped, as in `check_refs`), at most `MAX_PATTERNS`.
fn collect_patterns(node: &Value, out: &mut HashMap<String, Option<Regex>>, depth: usize) {
    let mut add = |pattern: &str| {
        if out.len() < MAX_PATTERNS && !out.contains_key(pattern) {
            let re = RegexBuilder::new(pattern).size_limit(PATTERN_SIZE_LIMIT).build().ok();
            out.insert(pattern.to_owned(), re);
        }
    };
    match node {
        Value::Object(m) if depth <= MAX_DEPTH => {
            if let Some(Value::String(p)) = m.get("pattern") {
                add(p);
            }
            if let Some(Value::Object(p)) = m.get("patternProperties") {
                p.keys().for_each(|k| add(k));
            }
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "const" | "enum" | "default" | "examples"))
                .for_each(|(_, v)| collect_patterns(v, out, depth + 1));
        }
        Value::Array(a) if depth <= MAX_DEPTH => a.iter().for_each(|v| collect_patterns(v, out, depth + 1)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errs(schema: Value, inst: Value) -> Vec<String> {
        Schema::compile(&schema).unwrap().errors(&inst, 10)
    }

    #[test]
    fn types_and_values() {
        assert!(errs(json!({"type": "integer"}), json!(3)).is_empty());
        assert!(errs(json!({"type": "integer"}), json!(3.0)).is_empty());
        assert_eq!(errs(json!({"type": "integer"}), json!(3.5)).len(), 1);
        assert!(errs(json!({"type": ["string", "null"]}), json!(null)).is_empty());
        assert_eq!(errs(json!({"enum": [1, "a"]}), json!("b")).len(), 1);
        assert_eq!(errs(json!({"const": {"a": 1}}), json!({"a": 2})).len(), 1);
        assert_eq!(errs(json!(false), json!(1)).len(), 1);
        assert!(errs(json!(true), json!(1)).is_empty());
    }

    #[test]
    fn numbers_strings_arrays() {
        let s = json!({"minimum": 1, "exclusiveMaximum": 10, "multipleOf": 0.5});
        assert!(errs(s.clone(), json!(9.5)).is_empty());
        assert_eq!(errs(s.clone(), json!(10)).len(), 1);
        assert_eq!(errs(s, json!(1.25)).len(), 1);
        assert_eq!(errs(json!({"minLength": 2, "maxLength": 3}), json!("é")).len(), 1);
        assert!(
            errs(json!({"maxLength": 2}), json!("éé")).is_empty(),
            "characters, not bytes"
        );
        let a = json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer"},
                       "minItems": 2, "uniqueItems": true, "contains": {"const": 2}});
        assert!(errs(a.clone(), json!(["x", 1, 2])).is_empty());
        let e = errs(a, json!(["x", "y", 1, 1]));
        assert!(e.iter().any(|m| m.starts_with("at /1:")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("not unique")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("contains")), "{e:?}");
    }

    #[test]
    fn objects() {
        let s = json!({"type": "object", "properties": {"a/b": {"type": "string"}},
                       "required": ["a/b", "c"], "additionalProperties": false,
                       "dependentRequired": {"a/b": ["d"]}});
        let e = errs(s, json!({"a/b": 1, "x": true}));
        assert!(e.iter().any(|m| m.starts_with("at /a~1b:")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("\"c\" is missing")), "{e:?}");
        assert!(e.iter().any(|m| m.starts_with("at /x: additional")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("\"d\" is required")), "{e:?}");
    }

    #[test]
    fn patterns_are_ecma_searches_not_anchored() {
        let s = json!({"type": "string", "pattern": "[0-9]{3}"});
        assert!(errs(s.clone(), json!("ab123")).is_empty(), "a search, not a full match");
        let e = errs(s, json!("ab12"));
        assert_eq!(
            e,
            vec![r#"at /: "ab12" does not match the pattern "[0-9]{3}""#],
            "{e:?}"
        );
        let anchored = json!({"pattern": "^[a-z]+(-[a-z]+)*$"});
        assert!(errs(anchored.clone(), json!("kebab-case")).is_empty());
        assert_eq!(errs(anchored.clone(), json!("Kebab")).len(), 1);
        // Only strings are checked; other types pass `pattern`.
        assert!(errs(anchored, json!(12)).is_empty());
        // Non-ASCII text is matched by character.
        assert!(errs(json!({"pattern": "^.{2}$"}), json!("éé")).is_empty());
    }

    #[test]
    fn patterns_the_engine_cannot_compile_pass() {
        // Lookahead, a backreference and a Unicode property class: ECMA-262 has them,
        // regex-lite does not; the value passes rather than failing for want of an engine.
        for pattern in ["^(?=a)a$", "^(a)\\1$", "^\\p{L}+$"] {
            assert!(errs(json!({"pattern": pattern}), json!("zzz")).is_empty(), "{pattern}");
        }
    }

    #[test]
    fn pattern_properties_and_additional_properties() {
        let s = json!({
            "properties": {"id": {"type": "integer"}},
            "patternProperties": {"^x-": {"type": "string"}, "^id$": {"minimum": 10}},
            "additionalProperties": false
        });
        assert!(errs(s.clone(), json!({"id": 12, "x-a": "s"})).is_empty());
        let e = errs(s.clone(), json!({"x-a": 1}));
        assert!(e.len() == 1 && e[0].starts_with("at /x-a: 1 is not of type"), "{e:?}");
        // A member named in `properties` is checked by the patterns it matches as well.
        let e = errs(s.clone(), json!({"id": 3}));
        assert!(e.len() == 1 && e[0].contains("minimum"), "{e:?}");
        let e = errs(s, json!({"y": 1}));
        assert_eq!(e, vec!["at /y: additional property not allowed"], "{e:?}");
        // Next to a pattern that cannot be compiled, which members are additional is not known:
        // additionalProperties is not applied, so nothing valid fails.
        let p = json!({"patternProperties": {"^(?=x)": {}}, "additionalProperties": false});
        assert!(errs(p, json!({"xy": 1})).is_empty());
    }

    #[test]
    fn hostile_patterns_are_bounded() {
        // Too big to compile within the size limit: not checked, no time or memory spent.
        let huge = format!("^(?:{})$", "[a-z]{1000}".repeat(8));
        assert!(errs(json!({"pattern": huge}), json!("x")).is_empty());
        // A pattern that backtracks exponentially in ECMA engines is linear here.
        let s = json!({"pattern": "^(a+)+$"});
        assert_eq!(errs(s, json!(format!("{}b", "a".repeat(10_000)))).len(), 1);
        // Data keywords hold no patterns: nothing is compiled from them.
        let data = json!({"const": {"pattern": "("}, "enum": [{"pattern": "("}]});
        assert!(Schema::compile(&data).unwrap().patterns.is_empty());
        let many: Map<String, Value> = (0..MAX_PATTERNS + 10).map(|i| (format!("^p{i}$"), json!({}))).collect();
        let schema = Schema::compile(&json!({"patternProperties": many})).unwrap();
        assert_eq!(schema.patterns.len(), MAX_PATTERNS);
    }

    #[test]
    fn combinators_and_refs() {
        let s = json!({"$defs": {"n": {"type": "number"}, "s": {"type": "string"}},
                       "oneOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/s"}],
                       "not": {"const": 0}});
        assert!(errs(s.clone(), json!(1)).is_empty());
        assert_eq!(errs(s.clone(), json!(0)).len(), 1);
        assert_eq!(errs(s, json!(true)).len(), 1);
        let cond = json!({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"minimum": 5}});
        assert_eq!(errs(cond.clone(), json!("a")).len(), 1);
        assert_eq!(errs(cond, json!(3)).len(), 1);
        // A recursive schema works; a self-referencing loop fails instead of overflowing.
        let tree = json!({"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}});
        assert!(errs(tree.clone(), json!({"kids": [{"kids": []}]})).is_empty());
        assert_eq!(errs(tree, json!({"kids": [{"kids": 1}]})).len(), 1);
        assert_eq!(errs(json!({"$ref": "#"}), json!(1)).len(), 1);
    }

    #[test]
    fn external_and_dangling_refs_are_refused() {
        assert!(Schema::compile(&json!({"$ref": "https://example.com/s.json"})).is_err());
        assert!(Schema::compile(&json!({"$ref": "other.json#/x"})).is_err());
        assert!(Schema::compile(&json!({"$ref": "#/$defs/missing"})).is_err());
        // A "$ref" inside const data is data, not a reference.
        assert!(Schema::compile(&json!({"const": {"$ref": "https://x"}})).is_ok());
    }
}
