//! Results for people: listings as wrapped tables, content as text, images summarised,
//! structured content pretty-printed.

use crate::ui::{bold, dim, width};
use serde_json::Value;

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Rows of (name, description lines), the name column as wide as the longest (up to 32).
fn table(rows: &[(String, Vec<String>)]) {
    let name_w = rows
        .iter()
        .map(|(n, _)| console::measure_text_width(n))
        .max()
        .unwrap_or(0)
        .min(32);
    let text_w = width().saturating_sub(name_w + 3).max(20);
    for (name, lines) in rows {
        let pad = name_w.saturating_sub(console::measure_text_width(name));
        let mut first = true;
        let mut wrapped = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            for w in textwrap::wrap(line, text_w) {
                wrapped.push(if i == 0 { w.to_string() } else { dim(&w) });
            }
        }
        if wrapped.is_empty() {
            wrapped.push(String::new());
        }
        for w in wrapped {
            if first {
                println!("{}{}   {w}", bold(name), " ".repeat(pad));
                first = false;
            } else {
                println!("{}   {w}", " ".repeat(name_w));
            }
        }
    }
}

fn describe(item: &Value) -> String {
    let desc = item["description"].as_str().unwrap_or("").trim();
    match item["title"].as_str().or(item["annotations"]["title"].as_str()) {
        Some(t) if !desc.is_empty() => format!("{t}: {desc}"),
        Some(t) => t.to_string(),
        None => desc.to_string(),
    }
}

/// A tool's arguments in one line: `text: string (required), n: integer`.
fn arguments(schema: &Value) -> Option<String> {
    let props = schema["properties"].as_object()?;
    if props.is_empty() {
        return None;
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let parts: Vec<String> = props
        .iter()
        .map(|(k, s)| {
            let kind = s["type"].as_str().map(str::to_string).unwrap_or_else(|| {
                if s["enum"].is_array() {
                    "enum".into()
                } else {
                    "any".into()
                }
            });
            let req = if required.contains(&k.as_str()) {
                ", required"
            } else {
                ""
            };
            format!("{k} ({kind}{req})")
        })
        .collect();
    Some(format!("args: {}", parts.join(", ")))
}

pub fn tools(list: &Value) {
    let rows: Vec<(String, Vec<String>)> = items(list, "tools")
        .iter()
        .map(|t| {
            let mut lines = vec![describe(t)];
            lines.extend(arguments(&t["inputSchema"]));
            (name(t), lines)
        })
        .collect();
    listing(&rows, "tools");
}

pub fn prompts(list: &Value) {
    let rows: Vec<(String, Vec<String>)> = items(list, "prompts")
        .iter()
        .map(|p| {
            let mut lines = vec![describe(p)];
            let args: Vec<String> = p["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    let req = if a["required"] == true { " (required)" } else { "" };
                    format!("{}{req}", a["name"].as_str().unwrap_or("?"))
                })
                .collect();
            if !args.is_empty() {
                lines.push(format!("args: {}", args.join(", ")));
            }
            (name(p), lines)
        })
        .collect();
    listing(&rows, "prompts");
}

pub fn resources(list: &Value, key: &str) {
    let uri_key = if key == "resources" { "uri" } else { "uriTemplate" };
    let rows: Vec<(String, Vec<String>)> = items(list, key)
        .iter()
        .map(|r| {
            let mut lines = vec![describe(r)];
            let mut about = vec![r["name"].as_str().unwrap_or("").to_string()];
            about.extend(r["mimeType"].as_str().map(str::to_string));
            lines.push(
                about
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            (r[uri_key].as_str().unwrap_or("?").to_string(), lines)
        })
        .collect();
    listing(
        &rows,
        if key == "resources" {
            "resources"
        } else {
            "resource templates"
        },
    );
}

pub fn skills(list: &Value) {
    let rows: Vec<(String, Vec<String>)> = items(list, "skills")
        .iter()
        .map(|s| {
            let fm = &s["frontmatter"];
            let n = fm["name"].as_str().or(s["name"].as_str()).unwrap_or("?").to_string();
            let desc = fm["description"]
                .as_str()
                .or(s["description"].as_str())
                .unwrap_or("")
                .to_string();
            (n, vec![desc, s["uri"].as_str().unwrap_or("").to_string()])
        })
        .collect();
    listing(&rows, "skills");
    for r in items(list, "rejected") {
        eprintln!("rejected {}: {}", r["uri"], r["reason"].as_str().unwrap_or(""));
    }
}

pub fn servers(members: &Value) {
    let rows: Vec<(String, Vec<String>)> = members
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let mut line = m["state"].as_str().unwrap_or("?").to_string();
            if let Some(era) = m["era"].as_str() {
                let version = m["protocolVersion"].as_str().unwrap_or("");
                let server = m["serverInfo"]["name"].as_str().unwrap_or("");
                line = format!("{line}, {era} {version} {server}").trim_end().to_string();
            }
            let mut lines = vec![line];
            lines.extend(m["error"].as_str().map(str::to_string));
            (m["name"].as_str().unwrap_or("?").to_string(), lines)
        })
        .collect();
    listing(&rows, "servers");
}

fn listing(rows: &[(String, Vec<String>)], what: &str) {
    if rows.is_empty() {
        println!("{}", dim(&format!("(no {what})")));
    } else {
        table(rows);
    }
}

fn items<'a>(list: &'a Value, key: &str) -> &'a [Value] {
    list[key].as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn name(item: &Value) -> String {
    item["name"].as_str().unwrap_or("?").to_string()
}

pub fn info(info: &Value) {
    let server = &info["serverInfo"];
    let line = |k: &str, v: String| println!("{:<14}{v}", bold(&format!("{k}:")));
    let name = server["title"]
        .as_str()
        .or(server["name"].as_str())
        .unwrap_or("(unnamed)");
    line(
        "server",
        format!("{name} {}", server["version"].as_str().unwrap_or(""))
            .trim_end()
            .to_string(),
    );
    line("era", info["era"].as_str().unwrap_or("?").to_string());
    line("protocol", info["protocolVersion"].as_str().unwrap_or("?").to_string());
    let caps: Vec<String> = info["capabilities"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let flags: Vec<&str> = v
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, b)| **b == true)
                .map(|(f, _)| f.as_str())
                .collect();
            if flags.is_empty() {
                k.clone()
            } else {
                format!("{k} ({})", flags.join(", "))
            }
        })
        .collect();
    line("capabilities", caps.join(", "));
    if let Some(text) = info["instructions"].as_str() {
        println!("{}", bold("instructions:"));
        for w in textwrap::wrap(text, width().saturating_sub(2).max(20)) {
            println!("  {w}");
        }
    }
}

/// One content item: text as it is, media summarised.
/// The decoded size of Base64 text.
fn decoded_len(b64: &str) -> usize {
    let body = b64.trim_end_matches('=').len();
    body * 3 / 4
}

fn content_item(c: &Value) {
    let mime = c["mimeType"].as_str().unwrap_or("?");
    let size = |field: &str| c[field].as_str().map(decoded_len).unwrap_or(0);
    match c["type"].as_str() {
        Some("text") => println!("{}", c["text"].as_str().unwrap_or("")),
        Some("image") => println!("{}", dim(&format!("[image: {mime}, {} bytes]", size("data")))),
        Some("audio") => println!("{}", dim(&format!("[audio: {mime}, {} bytes]", size("data")))),
        Some("resource_link") => println!(
            "{}",
            dim(&format!(
                "[link: {} <{}>]",
                c["name"].as_str().unwrap_or(""),
                c["uri"].as_str().unwrap_or("")
            ))
        ),
        Some("resource") => resource_contents(&c["resource"]),
        _ => println!("{}", pretty(c)),
    }
}

fn resource_contents(r: &Value) {
    match (r["text"].as_str(), r["blob"].as_str()) {
        (Some(text), _) => {
            println!("{}", dim(&format!("[{}]", r["uri"].as_str().unwrap_or(""))));
            println!("{text}");
        }
        (None, Some(blob)) => println!(
            "{}",
            dim(&format!(
                "[{}: {}, {} bytes]",
                r["uri"].as_str().unwrap_or(""),
                r["mimeType"].as_str().unwrap_or("binary"),
                decoded_len(blob)
            ))
        ),
        _ => println!("{}", pretty(r)),
    }
}

pub fn call_result(result: &Value) {
    for c in items(result, "content") {
        content_item(c);
    }
    if let Some(s) = result.get("structuredContent") {
        println!("{}", dim("structured content:"));
        println!("{}", pretty(s));
    }
}

pub fn prompt_result(result: &Value) {
    if let Some(d) = result["description"].as_str() {
        println!("{}", dim(d));
    }
    for m in items(result, "messages") {
        print!("{} ", bold(&format!("{}:", m["role"].as_str().unwrap_or("?"))));
        content_item(&m["content"]);
    }
}

pub fn read_result(result: &Value) {
    for r in items(result, "contents") {
        resource_contents(r);
    }
}

pub fn completion(result: &Value) {
    let c = &result["completion"];
    for v in c["values"].as_array().into_iter().flatten() {
        println!("{}", v.as_str().unwrap_or(""));
    }
    if c["hasMore"] == true {
        println!("{}", dim(&format!("(more: {} in all)", c["total"])));
    }
}

pub fn json(v: &Value) {
    println!("{}", pretty(v));
}

/// What the server asked for in manual mode (`--no-input`): one row per input request.
pub fn asked(asked: &Value) {
    crate::ui::heading("The server asked for input (--no-input: nothing was answered):");
    let rows: Vec<(String, Vec<String>)> = asked["inputRequests"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, r)| {
            let p = &r["params"];
            let lines = match r["method"].as_str() {
                Some("elicitation/create") if p["mode"] == "url" => {
                    vec![
                        format!("elicitation (url): {}", p["message"].as_str().unwrap_or("")),
                        format!("open: {}", p["url"].as_str().unwrap_or("")),
                    ]
                }
                Some("elicitation/create") => {
                    let mut l = vec![format!("elicitation (form): {}", p["message"].as_str().unwrap_or(""))];
                    l.extend(arguments(&p["requestedSchema"]).map(|a| a.replacen("args:", "fields:", 1)));
                    l
                }
                Some("sampling/createMessage") => {
                    let text = p["messages"][0]["content"]["text"].as_str().unwrap_or("");
                    vec![format!("sampling: {text}")]
                }
                Some(other) => vec![other.to_string()],
                None => vec![r.to_string()],
            };
            (key.clone(), lines)
        })
        .collect();
    table(&rows);
    if let Some(state) = asked["requestState"].as_str() {
        println!("{} {state}", bold("requestState:"));
    }
    println!(
        "{}",
        dim("(--json prints this as JSON: answer it and retry, or run without --no-input to answer here)")
    );
}
