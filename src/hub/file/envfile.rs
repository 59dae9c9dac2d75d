//! VS Code's `envFile`: a dotenv file of `KEY=VALUE` lines for a stdio server's environment.
//! Blank lines and `#` comment lines are skipped, `export ` before a key is allowed, a value may
//! be double-quoted (with `\n`, `\t`, `\"` and `\\` escapes), single-quoted (taken as written)
//! or bare (a ` #` starts a comment; surrounding blanks are dropped). Values are not expanded.

/// The variables of a dotenv text, in order; an error names the line (never its value).
pub(super) fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut vars = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected KEY=VALUE", n + 1));
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        {
            return Err(format!("line {}: {key:?} is not a variable name", n + 1));
        }
        let value = value.trim();
        let value = if let Some(quoted) = value.strip_prefix('"') {
            unquote(quoted).ok_or_else(|| format!("line {}: the value's closing \" is missing", n + 1))?
        } else if let Some(quoted) = value.strip_prefix('\'') {
            let end = quoted
                .find('\'')
                .ok_or_else(|| format!("line {}: the value's closing ' is missing", n + 1))?;
            quoted[..end].to_string()
        } else {
            let bare = value.find(" #").map_or(value, |i| &value[..i]);
            bare.trim_end().to_string()
        };
        vars.push((key.to_string(), value));
    }
    Ok(vars)
}

/// The double-quoted value starting after its opening quote, up to the closing one.
fn unquote(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn lines_comments_quotes() {
        let text = "# comment\n\nA=1\nexport B = two words # note\nC=\"x # y\\n\\\"z\\\"\"\nD='$HOME \\n'\nE=\nF=a=b\n";
        let vars = parse(text).unwrap();
        let want = [
            ("A", "1"),
            ("B", "two words"),
            ("C", "x # y\n\"z\""),
            ("D", "$HOME \\n"),
            ("E", ""),
            ("F", "a=b"),
        ];
        assert_eq!(vars, want.map(|(k, v)| (k.to_string(), v.to_string())));
    }

    #[test]
    fn errors_name_the_line_not_the_value() {
        assert_eq!(
            parse("A=1\nsecret-value-without-equals").unwrap_err(),
            "line 2: expected KEY=VALUE"
        );
        assert_eq!(
            parse("A=\"open secret").unwrap_err(),
            "line 1: the value's closing \" is missing"
        );
        assert_eq!(parse("A B=1").unwrap_err(), "line 1: \"A B\" is not a variable name");
    }
}
