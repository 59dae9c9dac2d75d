//! Questions at the terminal: dialoguer's prompts on a terminal, plain numbered lines read
//! from stdin otherwise (so a script can answer, one line per question).

use dialoguer::{theme::ColorfulTheme, Confirm, Input, MultiSelect, Select};
use mcp_client::HandlerError;
use serde_json::{json, Value};
use std::io::{BufRead, IsTerminal};

pub struct Prompter {
    tty: bool,
}

fn io(e: impl std::fmt::Display) -> HandlerError {
    HandlerError::new(format!("no answer at the terminal: {e}"))
}

impl Prompter {
    pub fn new() -> Prompter {
        Prompter {
            tty: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
        }
    }

    /// One line from stdin (not a terminal): `None` at its end.
    fn read_line(&self, question: &str) -> Result<String, HandlerError> {
        eprint!("{question}: ");
        let mut line = String::new();
        let n = std::io::stdin().lock().read_line(&mut line).map_err(io)?;
        if n == 0 {
            eprintln!();
            return Err(HandlerError::new(
                "no answer: stdin ended (answer each question on a line, or use --no-input)",
            ));
        }
        let line = line.trim_end_matches(['\r', '\n']).to_string();
        eprintln!("{line}");
        Ok(line)
    }

    /// One of `options`, by name (or number, from stdin).
    pub fn action(&self, question: &str, options: &[&str]) -> Result<String, HandlerError> {
        Ok(options[self.choose(question, options, 0)?].to_string())
    }

    fn choose(&self, question: &str, options: &[&str], default: usize) -> Result<usize, HandlerError> {
        if self.tty {
            return Select::with_theme(&ColorfulTheme::default())
                .with_prompt(question)
                .items(options)
                .default(default)
                .interact()
                .map_err(io);
        }
        loop {
            let line = self.read_line(&format!("{question} [{}]", options.join("/")))?;
            let line = line.trim();
            if line.is_empty() {
                return Ok(default);
            }
            if let Some(i) = options.iter().position(|o| o.eq_ignore_ascii_case(line)) {
                return Ok(i);
            }
            match line.parse::<usize>() {
                Ok(n) if (1..=options.len()).contains(&n) => return Ok(n - 1),
                _ => eprintln!("  one of: {}", options.join(", ")),
            }
        }
    }

    pub fn line(&self, question: &str, default: Option<String>) -> Result<String, HandlerError> {
        if self.tty {
            let theme = ColorfulTheme::default();
            let mut input = Input::<String>::with_theme(&theme)
                .with_prompt(question)
                .allow_empty(true);
            if let Some(d) = default {
                input = input.default(d);
            }
            return input.interact_text().map_err(io);
        }
        let line = self.read_line(question)?;
        Ok(if line.is_empty() {
            default.unwrap_or_default()
        } else {
            line
        })
    }

    /// A value for one field of a form; `None` leaves an optional field out.
    pub fn field(&self, name: &str, schema: &Value, required: bool) -> Result<Option<Value>, HandlerError> {
        let title = schema["title"].as_str().unwrap_or(name);
        if let Some(d) = schema["description"].as_str() {
            eprintln!("  {title}: {d}");
        }
        let mark = if required { "" } else { " (optional)" };
        let question = format!("{title}{mark}");
        let default = schema.get("default");
        let options = enum_options(schema);
        if !options.is_empty() {
            let labels: Vec<&str> = options.iter().map(|(_, l)| l.as_str()).collect();
            let mut labels = labels;
            if !required {
                labels.push("(leave out)");
            }
            let at = default
                .and_then(|d| options.iter().position(|(v, _)| v == d))
                .unwrap_or(0);
            let i = self.choose(&question, &labels, at)?;
            return Ok(options.get(i).map(|(v, _)| json!(v)));
        }
        if schema["type"] == "array" {
            let items = enum_options(&schema["items"]);
            let chosen: Vec<bool> = items
                .iter()
                .map(|(v, _)| default.and_then(Value::as_array).is_some_and(|d| d.contains(v)))
                .collect();
            return self.multi(&question, &items, &chosen).map(Some);
        }
        match schema["type"].as_str() {
            Some("boolean") => {
                let d = default.and_then(Value::as_bool);
                if self.tty {
                    let theme = ColorfulTheme::default();
                    let mut c = Confirm::with_theme(&theme).with_prompt(&question);
                    if let Some(d) = d {
                        c = c.default(d);
                    }
                    return c.interact().map(|b| Some(json!(b))).map_err(io);
                }
                loop {
                    let line = self.line(
                        &format!("{question} [y/n]"),
                        d.map(|b| if b { "y" } else { "n" }.to_string()),
                    )?;
                    match line.trim().to_ascii_lowercase().as_str() {
                        "y" | "yes" | "true" => return Ok(Some(json!(true))),
                        "n" | "no" | "false" => return Ok(Some(json!(false))),
                        "" if !required => return Ok(None),
                        _ => eprintln!("  y or n"),
                    }
                }
            }
            kind => loop {
                let d = default.map(|d| d.as_str().map(str::to_string).unwrap_or_else(|| d.to_string()));
                let kind_note = match kind {
                    Some("integer") => " (integer)",
                    Some("number") => " (number)",
                    _ => "",
                };
                let line = self.line(&format!("{question}{kind_note}"), d)?;
                if line.is_empty() && !required {
                    return Ok(None);
                }
                match typed(kind, &line) {
                    Some(v) => return Ok(Some(v)),
                    None if line.is_empty() => eprintln!("  an answer is required"),
                    None => eprintln!("  not a{}", kind_note.trim_end_matches(')').replace(" (", " ")),
                }
            },
        }
    }

    fn multi(&self, question: &str, items: &[(Value, String)], chosen: &[bool]) -> Result<Value, HandlerError> {
        let labels: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).collect();
        let chosen: Vec<usize> = if self.tty {
            MultiSelect::with_theme(&ColorfulTheme::default())
                .with_prompt(question)
                .items(&labels)
                .defaults(chosen)
                .interact()
                .map_err(io)?
        } else {
            let line = self.read_line(&format!("{question} [comma-separated: {}]", labels.join(", ")))?;
            if line.trim().is_empty() {
                return Ok(Value::Array(
                    items
                        .iter()
                        .zip(chosen)
                        .filter(|(_, c)| **c)
                        .map(|(i, _)| i.0.clone())
                        .collect(),
                ));
            }
            line.split(',')
                .filter_map(|w| labels.iter().position(|l| l.eq_ignore_ascii_case(w.trim())))
                .collect()
        };
        Ok(Value::Array(chosen.into_iter().map(|i| items[i].0.clone()).collect()))
    }
}

/// A string typed as the schema's `type` says: `None` when it is not one.
fn typed(kind: Option<&str>, text: &str) -> Option<Value> {
    match kind {
        Some("integer") => text.trim().parse::<i64>().ok().map(|n| json!(n)),
        Some("number") => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(|f| json!(f)),
        _ if text.is_empty() => None,
        _ => Some(json!(text)),
    }
}

/// An enum's values with their labels: `enum` (+ legacy `enumNames`), or `oneOf`/`anyOf` of
/// `const` with `title`.
fn enum_options(schema: &Value) -> Vec<(Value, String)> {
    if let Some(values) = schema["enum"].as_array() {
        let names = schema["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let label = names.and_then(|n| n.get(i)).and_then(Value::as_str);
                (v.clone(), label.map(str::to_string).unwrap_or_else(|| plain(v)))
            })
            .collect();
    }
    let branches = schema["oneOf"].as_array().or(schema["anyOf"].as_array());
    branches
        .into_iter()
        .flatten()
        .filter_map(|b| {
            let v = b.get("const")?;
            Some((
                v.clone(),
                b["title"].as_str().map(str::to_string).unwrap_or_else(|| plain(v)),
            ))
        })
        .collect()
}

fn plain(v: &Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
}
