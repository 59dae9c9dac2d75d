//! Variables in a configuration file's strings, in the forms the hosts define:
//! `${VAR}` and `${VAR:-default}` (Claude Code; the default also stands in for an empty value),
//! `${env:NAME}`, `${userHome}`, `${workspaceFolder}`, `${pathSeparator}` and `${/}` (Cursor,
//! VS Code), `${input:id}` (VS Code, asked of the host). `$${` is a literal `${`; a `$` not
//! followed by `{` is itself.

use super::context::{InputPrompt, ReadContext};
use std::collections::HashMap;

/// One declared input of the file's `inputs` array.
#[derive(Debug, Clone)]
pub(super) struct Input {
    pub kind: String,
    pub description: String,
    pub password: bool,
    pub default: Option<String>,
    /// A `pickString`'s `options` (their values); empty for a `promptString`.
    pub options: Vec<String>,
}

/// The input types a host is asked for; a `command` input names an editor command, which a
/// library cannot run.
pub(super) const ASKED_KINDS: &[&str] = &["promptString", "pickString"];

/// Expands variables for one read: inputs are asked once per id, answered or declined.
pub(super) struct Expander<'a> {
    ctx: &'a ReadContext,
    inputs: &'a HashMap<String, Input>,
    answers: HashMap<String, Option<String>>,
}

impl<'a> Expander<'a> {
    pub fn new(ctx: &'a ReadContext, inputs: &'a HashMap<String, Input>) -> Self {
        Expander {
            ctx,
            inputs,
            answers: HashMap::new(),
        }
    }

    /// `text` with its variables replaced; an error says which variable (never a value).
    pub fn expand(&mut self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            if let Some(tail) = after.strip_prefix("${") {
                out.push_str("${");
                rest = tail;
            } else if let Some(body) = after.strip_prefix('{') {
                let end = body
                    .find('}')
                    .ok_or_else(|| "a \"${\" has no closing \"}\" (write \"$${\" for a literal \"${\")".to_string())?;
                out.push_str(&self.resolve(&body[..end])?);
                rest = &body[end + 1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Every answer given so far (to keep them out of error texts).
    pub fn answers(&self) -> impl Iterator<Item = &str> {
        self.answers
            .values()
            .flatten()
            .map(String::as_str)
            .filter(|a| !a.is_empty())
    }

    fn resolve(&mut self, body: &str) -> Result<String, String> {
        if let Some(id) = body.strip_prefix("input:") {
            return self.input(id);
        }
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        let value = match name {
            "userHome" => self.ctx.home(),
            "workspaceFolder" => match &self.ctx.workspace_folder {
                Some(folder) => Some(folder.to_string_lossy().into_owned()),
                None if default.is_none() => {
                    return Err("${workspaceFolder}: the host named no workspace folder".into())
                }
                None => None,
            },
            "pathSeparator" | "/" => Some(std::path::MAIN_SEPARATOR.to_string()),
            _ => {
                let var = name.strip_prefix("env:").unwrap_or(name);
                if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("${{{name}}} is not a variable this library knows"));
                }
                (self.ctx.env)(var)
            }
        };
        match (value, default) {
            (Some(v), Some(d)) if v.is_empty() => Ok(d.to_string()),
            (Some(v), _) => Ok(v),
            (None, Some(d)) => Ok(d.to_string()),
            (None, None) => Err(format!("${{{name}}} is not set and has no default")),
        }
    }

    fn input(&mut self, id: &str) -> Result<String, String> {
        if let Some(answer) = self.answers.get(id) {
            return answer.clone().ok_or_else(|| declined(id));
        }
        let declared = self
            .inputs
            .get(id)
            .ok_or_else(|| format!("${{input:{id}}}: the file's \"inputs\" declare no input {id:?}"))?;
        if !ASKED_KINDS.contains(&declared.kind.as_str()) {
            return Err(format!(
                "${{input:{id}}}: an input of type {:?} (only \"promptString\" and \"pickString\" inputs are asked)",
                declared.kind
            ));
        }
        let asked = InputPrompt {
            id: id.to_string(),
            description: declared.description.clone(),
            password: declared.password,
            default: declared.default.clone(),
            options: declared.options.clone(),
        };
        if let Some(kept) = self.ctx.remembered.as_ref().and_then(|r| r.get(&asked)) {
            self.answers.insert(id.to_string(), Some(kept.clone()));
            return Ok(kept);
        }
        let prompt = self
            .ctx
            .prompt
            .as_ref()
            .ok_or_else(|| format!("${{input:{id}}}: the host set no input prompt"))?;
        let answer = prompt(&asked);
        let outside = |a: &String| !declared.options.is_empty() && !declared.options.contains(a);
        if answer.as_ref().is_some_and(outside) {
            self.answers.insert(id.to_string(), None);
            return Err(format!(
                "${{input:{id}}}: the host's answer is not one of the input's options ({})",
                quoted(&declared.options)
            ));
        }
        if let (Some(answer), Some(remembered)) = (&answer, &self.ctx.remembered) {
            remembered.keep(&asked, answer);
        }
        self.answers.insert(id.to_string(), answer.clone());
        answer.ok_or_else(|| declined(id))
    }
}

fn quoted(options: &[String]) -> String {
    let options: Vec<String> = options.iter().map(|o| format!("{o:?}")).collect();
    options.join(", ")
}

fn declined(id: &str) -> String {
    format!("${{input:{id}}}: the host declined the input")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn ctx() -> ReadContext {
        ReadContext::new()
            .env(|name| match name {
                "A" => Some("a".into()),
                "EMPTY" => Some(String::new()),
                "HOME" => Some("/home/u".into()),
                _ => None,
            })
            .workspace_folder("/ws")
    }

    #[test]
    fn forms() {
        let ctx = ctx();
        let inputs = HashMap::new();
        let mut x = Expander::new(&ctx, &inputs);
        let cases = [
            ("plain", "plain"),
            ("${A}-${env:A}", "a-a"),
            ("${B:-dflt}", "dflt"),
            ("${EMPTY:-d}|${EMPTY}", "d|"),
            ("${userHome}${/}x", "/home/u/x"),
            ("${workspaceFolder}/src", "/ws/src"),
            ("$HOME $$ $${A} $", "$HOME $$ ${A} $"),
            ("${A:-${B}", "a"),
        ];
        for (text, want) in cases {
            assert_eq!(x.expand(text).unwrap(), want, "{text}");
        }
        assert_eq!(x.expand("${B}").unwrap_err(), "${B} is not set and has no default");
        assert_eq!(
            x.expand("${env:B}").unwrap_err(),
            "${env:B} is not set and has no default"
        );
        assert!(x.expand("${command:x}").unwrap_err().contains("not a variable"));
        assert!(x.expand("${A").unwrap_err().contains("no closing"));
        let bare = ReadContext::new().env(|_| None);
        let mut x = Expander::new(&bare, &inputs);
        assert!(x
            .expand("${workspaceFolder}")
            .unwrap_err()
            .contains("no workspace folder"));
        assert!(x.expand("${userHome}").is_err());
    }

    #[test]
    fn inputs_are_asked_once() {
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let ctx = ctx().prompt(move |p| {
            counter.fetch_add(1, Ordering::SeqCst);
            (p.id == "tok").then(|| format!("secret-{}", p.password))
        });
        let mut inputs = HashMap::new();
        for id in ["tok", "no"] {
            let input = Input {
                kind: "promptString".into(),
                description: "d".into(),
                password: true,
                default: None,
                options: Vec::new(),
            };
            inputs.insert(id.to_string(), input);
        }
        inputs.insert(
            "cmd".into(),
            Input {
                kind: "command".into(),
                description: String::new(),
                password: false,
                default: None,
                options: Vec::new(),
            },
        );
        let mut x = Expander::new(&ctx, &inputs);
        assert_eq!(x.expand("Bearer ${input:tok}").unwrap(), "Bearer secret-true");
        assert_eq!(x.expand("${input:tok}").unwrap(), "secret-true");
        assert_eq!(
            x.expand("${input:no}").unwrap_err(),
            "${input:no}: the host declined the input"
        );
        assert!(x.expand("${input:no}").is_err());
        assert!(x.expand("${input:gone}").unwrap_err().contains("declare no input"));
        assert!(x.expand("${input:cmd}").unwrap_err().contains("\"command\""));
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        assert_eq!(x.answers().collect::<Vec<_>>(), ["secret-true"]);
    }
}
