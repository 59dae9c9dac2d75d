//! The skills extension (SEP-2640, `io.modelcontextprotocol/skills`), client side.
//!
//! `skills/list` and `skills/get` are sent only to a server that declared the extension. Listing
//! fetches no skill file: files are read one at a time, on the host's request, through
//! `resources/read`, and each read is verified against the entry the host holds (length, then
//! SHA-256, then for `SKILL.md` the YAML frontmatter) before any byte is handed out. Entries are
//! checked against the structural rules before they are given to the host, and again when a
//! host passes one back to read a file, so an edited entry cannot widen what is read.
//!
//! Identity is the host's business: a skill is (server, `uri`), never `uri` alone.

mod frontmatter;

use super::{Client, RequestOptions};
use crate::error::{Error, ErrorKind, Result};
use base64::Engine;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// The extension's identifier, under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
const SKILLS_LIST: &str = "skills/list";
const SKILLS_GET: &str = "skills/get";
const SKILL_MD: &str = "SKILL.md";
/// Limits an entry must respect (SEP-2640): files per skill, and bytes summed over them.
const MAX_FILES: usize = 512;
const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;

/// A skill entry that passed the structural rules.
#[derive(Debug)]
struct Entry {
    uri: String,
    /// `uri` without `/SKILL.md`: every file lies below it.
    root: String,
    frontmatter: Map<String, Value>,
    /// `None` for a `"dynamic"` skill, whose files are not listed.
    files: Option<Vec<File>>,
}

#[derive(Debug)]
struct File {
    uri: String,
    digest: [u8; 32],
    size: u64,
}

fn failed(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::SkillVerificationFailed, message)
}

/// True when `path` (the part after a skill root) is a clean relative path: no empty, `.` or
/// `..` segment (also percent-encoded), no query or fragment. Such segments could name a file
/// outside the skill once a server normalises the URI.
fn clean_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['?', '#', '\\'])
        && path.split('/').all(|seg| {
            let lower = seg.to_ascii_lowercase().replace("%2e", ".");
            !lower.is_empty() && lower != "." && lower != ".."
        })
}

impl Entry {
    /// Checks an entry as listed (or as handed back by the host); the error says why it is
    /// rejected.
    fn parse(value: &Value) -> std::result::Result<Entry, String> {
        let obj = value.as_object().ok_or("the entry is not an object")?;
        let uri = obj.get("uri").and_then(Value::as_str).ok_or("the entry has no uri")?;
        let (scheme, rest) = uri.split_once("://").ok_or(format!("{uri:?} is not an absolute URI"))?;
        let root_path = rest
            .strip_suffix(&format!("/{SKILL_MD}"))
            .ok_or(format!("{uri:?} does not end in /{SKILL_MD}"))?;
        // An empty authority (`file:///skills/x/SKILL.md`) is allowed: the path then starts at
        // the first segment. A scheme never proves skill-ness, so any scheme is accepted.
        let skill_path = root_path.strip_prefix('/').unwrap_or(root_path);
        if scheme.is_empty() || !clean_path(skill_path) {
            return Err(format!("{uri:?} is not a skill URI"));
        }
        let name_segment = skill_path.rsplit('/').next().unwrap_or_default();
        let frontmatter = obj
            .get("frontmatter")
            .and_then(Value::as_object)
            .ok_or("the entry has no frontmatter object")?;
        match frontmatter.get("name").and_then(Value::as_str) {
            Some(name) if name == name_segment => {}
            Some(name) => {
                return Err(format!(
                    "frontmatter name {name:?} differs from the URI's {name_segment:?}"
                ))
            }
            None => return Err("the frontmatter has no name".into()),
        }
        if !frontmatter.get("description").is_some_and(Value::is_string) {
            return Err("the frontmatter has no description".into());
        }
        let root = format!("{scheme}://{root_path}");
        let files = match obj.get("resources") {
            Some(Value::String(s)) if s == "dynamic" => None,
            Some(Value::Array(items)) => Some(Self::files(uri, &root, items)?),
            _ => return Err("resources is neither an array nor \"dynamic\"".into()),
        };
        Ok(Entry {
            uri: uri.to_string(),
            root,
            frontmatter: frontmatter.clone(),
            files,
        })
    }

    fn files(uri: &str, root: &str, items: &[Value]) -> std::result::Result<Vec<File>, String> {
        if items.len() > MAX_FILES {
            return Err(format!("it lists {} files, more than {MAX_FILES}", items.len()));
        }
        let mut files = Vec::with_capacity(items.len());
        let mut seen = HashSet::new();
        let mut total: u64 = 0;
        for item in items {
            let file_uri = item.get("uri").and_then(Value::as_str).ok_or("a resource has no uri")?;
            let inside = file_uri
                .strip_prefix(root)
                .and_then(|p| p.strip_prefix('/'))
                .is_some_and(clean_path);
            if !inside {
                return Err(format!("{file_uri:?} lies outside the skill"));
            }
            if !seen.insert(file_uri) {
                return Err(format!("{file_uri:?} is listed twice"));
            }
            let digest = item
                .get("digest")
                .and_then(Value::as_str)
                .and_then(parse_digest)
                .ok_or(format!(
                    "{file_uri:?} has no digest of the form sha256:<64 lowercase hex>"
                ))?;
            let size = item
                .get("size")
                .and_then(Value::as_u64)
                .ok_or(format!("{file_uri:?} has no size"))?;
            total = total.saturating_add(size);
            files.push(File {
                uri: file_uri.to_string(),
                digest,
                size,
            });
        }
        if total > MAX_TOTAL_BYTES {
            return Err(format!("its files total {total} bytes, more than {MAX_TOTAL_BYTES}"));
        }
        if !seen.contains(uri) {
            return Err(format!("its own {SKILL_MD} is not listed in resources"));
        }
        Ok(files)
    }
}

fn parse_digest(s: &str) -> Option<[u8; 32]> {
    let hex = s.strip_prefix("sha256:")?;
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The raw bytes of a resource content item: the UTF-8 of `text` as received, or the decoded
/// `blob`.
fn content_bytes(item: &Value) -> std::result::Result<Vec<u8>, String> {
    if let Some(text) = item.get("text").and_then(Value::as_str) {
        return Ok(text.as_bytes().to_vec());
    }
    let blob = item
        .get("blob")
        .and_then(Value::as_str)
        .ok_or("the content has neither text nor blob")?;
    base64::engine::general_purpose::STANDARD
        .decode(blob)
        .map_err(|e| format!("the blob is not valid base64: {e}"))
}

/// Verifies the bytes read for `uri` against the held entry: length, then SHA-256, then for
/// `SKILL.md` the frontmatter, key by key.
fn verify(entry: &Entry, uri: &str, bytes: &[u8]) -> std::result::Result<(), String> {
    match entry.files.as_ref().and_then(|f| f.iter().find(|f| f.uri == uri)) {
        Some(file) => {
            if bytes.len() as u64 != file.size {
                return Err(format!(
                    "size mismatch: read {} bytes, the entry lists {}",
                    bytes.len(),
                    file.size
                ));
            }
            let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
            if digest.as_ref() != file.digest {
                return Err("digest mismatch: the SHA-256 of the content differs from the entry's".into());
            }
        }
        None if bytes.len() as u64 > MAX_TOTAL_BYTES => {
            return Err(format!(
                "the file has {} bytes, more than {MAX_TOTAL_BYTES}",
                bytes.len()
            ))
        }
        None => {}
    }
    if uri == entry.uri {
        let text = std::str::from_utf8(bytes).map_err(|_| format!("{SKILL_MD} is not UTF-8"))?;
        let found = frontmatter::parse(text)?;
        if let Some(key) = frontmatter::first_difference(&entry.frontmatter, &found) {
            return Err(format!(
                "frontmatter mismatch: {key:?} is {} in the entry but {} in {SKILL_MD}",
                entry.frontmatter.get(key).unwrap_or(&Value::Null),
                found.get(key).unwrap_or(&Value::Null)
            ));
        }
    }
    Ok(())
}

impl Client {
    /// Fails with `Unsupported` unless the server declared the skills extension.
    async fn require_skills(&self, opts: &RequestOptions) -> Result<()> {
        let conn = self.connection(&self.wait_for(opts)).await?;
        let declared = conn
            .info
            .capabilities
            .get("extensions")
            .and_then(|e| e.get(SKILLS_EXTENSION))
            .is_some();
        if declared {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::Unsupported,
                format!("the server does not declare the {SKILLS_EXTENSION} extension"),
            ))
        }
    }

    /// Every page of `skills/list`, checked: `{"skills": [entries], "rejected": [{"uri",
    /// "reason", "entry"}]}`. Entries breaking the structural rules (malformed resources, their
    /// own `SKILL.md` unlisted, a file outside the skill, a name that differs from the URI, over
    /// 512 files or 16 MiB, listed twice) are moved to `rejected`. No skill file is read.
    pub async fn list_skills(&self, opts: &RequestOptions) -> Result<Value> {
        self.require_skills(opts).await?;
        let (mut skills, mut rejected) = (Vec::new(), Vec::new());
        let mut uris = HashSet::new();
        self.for_each_page(
            SKILLS_LIST,
            |cursor| async move {
                self.request(SKILLS_LIST, cursor.map(|c| json!({"cursor": c})), opts)
                    .await
            },
            |page| {
                let entries = match page.get("skills") {
                    Some(Value::Array(a)) => a,
                    None => return Ok(()),
                    Some(_) => return Err(Error::protocol("skills/list: skills is not an array")),
                };
                for entry in entries {
                    let uri = entry.get("uri").cloned().unwrap_or(Value::Null);
                    let verdict = Entry::parse(entry).and_then(|e| {
                        uris.insert(e.uri.clone())
                            .then_some(())
                            .ok_or_else(|| "the skill is listed twice".to_string())
                    });
                    match verdict {
                        Ok(()) => skills.push(entry.clone()),
                        Err(reason) => rejected.push(json!({"uri": uri, "reason": reason, "entry": entry})),
                    }
                }
                Ok(())
            },
        )
        .await?;
        Ok(json!({"skills": skills, "rejected": rejected}))
    }

    /// `skills/get` for a `SKILL.md` URI (listed or not): the checked entry. An entry breaking
    /// the structural rules, or naming another URI, fails with `SkillVerificationFailed`.
    pub async fn get_skill(&self, uri: &str, opts: &RequestOptions) -> Result<Value> {
        self.require_skills(opts).await?;
        let result = self.request(SKILLS_GET, Some(json!({"uri": uri})), opts).await?;
        let entry = match result.get("skill") {
            Some(e @ Value::Object(_)) => e.clone(),
            _ => return Err(Error::protocol("skills/get: the result has no skill object")),
        };
        let parsed = Entry::parse(&entry).map_err(|why| failed(format!("skill entry {uri} rejected: {why}")))?;
        if parsed.uri != uri {
            return Err(failed(format!(
                "skills/get for {uri} answered the entry of {}",
                parsed.uri
            )));
        }
        Ok(entry)
    }

    /// Reads one file of a skill through `resources/read` and verifies it against `entry` (as
    /// given by [`Client::list_skills`] or [`Client::get_skill`]): `file_uri` `None` is the
    /// entry's `SKILL.md` (loading the skill). Only files the entry lists are read (for a
    /// `"dynamic"` skill, files below its root, capped at 16 MiB); the byte length must equal
    /// the listed `size`, the SHA-256 the listed `digest`, and a `SKILL.md`'s YAML frontmatter
    /// must equal the entry's key by key. Returns the verified content item (`{uri, mimeType?,
    /// text | blob}`). Any failure is `SkillVerificationFailed` and no content is returned: the
    /// host may refresh the entry once ([`Client::get_skill`]) and must ask for approval again
    /// if its files changed.
    pub async fn read_skill_file(&self, entry: &Value, file_uri: Option<&str>, opts: &RequestOptions) -> Result<Value> {
        let entry = Entry::parse(entry).map_err(|why| failed(format!("skill entry rejected: {why}")))?;
        let uri = file_uri.unwrap_or(&entry.uri);
        let allowed = match &entry.files {
            Some(files) => files.iter().any(|f| f.uri == uri),
            None => uri
                .strip_prefix(entry.root.as_str())
                .and_then(|p| p.strip_prefix('/'))
                .is_some_and(clean_path),
        };
        if !allowed {
            return Err(failed(format!(
                "{uri} is not a file of the skill {}; it was not read",
                entry.uri
            )));
        }
        let result = self.read_resource(uri, opts).await?;
        let items: Vec<&Value> = result
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
            .collect();
        let item = match items.as_slice() {
            [one] => *one,
            [] => return Err(failed(format!("{uri}: the server returned no contents for it"))),
            _ => return Err(failed(format!("{uri}: the server returned it more than once"))),
        };
        let bytes = content_bytes(item).map_err(|why| failed(format!("{uri}: {why}")))?;
        verify(&entry, uri, &bytes).map_err(|why| failed(format!("{uri} failed verification: {why}")))?;
        Ok(item.clone())
    }
}

/// The entry rules and the frontmatter parser, for the property tests (`fuzzing` feature only).
#[cfg(feature = "fuzzing")]
pub mod fuzz {
    use serde_json::{Map, Value};

    /// The entry rules of `skills/list`.
    pub fn check_entry(entry: &Value) -> Result<(), String> {
        super::Entry::parse(entry).map(drop)
    }

    /// The `SKILL.md` frontmatter parser.
    pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, String> {
        super::frontmatter::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str =
        "---\nname: pdf\ndescription: Work with PDFs\nmetadata:\n  version: 1.0\n  tags: [a, b]\n---\n\nBody.\n";

    fn digest(bytes: &[u8]) -> String {
        let d = ring::digest::digest(&ring::digest::SHA256, bytes);
        format!(
            "sha256:{}",
            d.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    }

    fn entry(body: &str) -> Value {
        json!({"uri": "skill://acme/pdf/SKILL.md",
               "frontmatter": {"name": "pdf", "description": "Work with PDFs",
                               "metadata": {"version": 1, "tags": ["a", "b"]}},
               "resources": [{"uri": "skill://acme/pdf/SKILL.md", "digest": digest(body.as_bytes()),
                              "size": body.len()}]})
    }

    #[test]
    fn a_genuine_skill_md_verifies() {
        let e = Entry::parse(&entry(SKILL)).unwrap();
        assert_eq!(e.root, "skill://acme/pdf");
        verify(&e, "skill://acme/pdf/SKILL.md", SKILL.as_bytes()).unwrap();
    }

    #[test]
    fn size_then_digest_then_frontmatter() {
        let e = Entry::parse(&entry(SKILL)).unwrap();
        let longer = format!("{SKILL}x");
        assert!(verify(&e, &e.uri, longer.as_bytes())
            .unwrap_err()
            .starts_with("size mismatch"));
        let altered = SKILL.replace("Body.", "Evil!");
        assert!(verify(&e, &e.uri, altered.as_bytes())
            .unwrap_err()
            .starts_with("digest mismatch"));
        let other = SKILL.replace("Work with PDFs", "Steal secrets");
        let e = Entry::parse(
            &entry(&other)
                .as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o["frontmatter"]["description"] = json!("Work with PDFs");
                    Value::Object(o)
                })
                .unwrap(),
        )
        .unwrap();
        let why = verify(&e, &e.uri, other.as_bytes()).unwrap_err();
        assert!(why.contains("\"description\""), "{why}");
    }

    #[test]
    fn structural_rules() {
        let bad = |f: &dyn Fn(&mut Value)| {
            let mut v = entry(SKILL);
            f(&mut v);
            Entry::parse(&v).unwrap_err()
        };
        assert!(bad(&|v| v["frontmatter"]["name"] = json!("other")).contains("differs"));
        assert!(bad(&|v| v["resources"] = json!([])).contains("not listed"));
        assert!(bad(&|v| v["resources"][0]["digest"] = json!("sha256:ABC")).contains("digest"));
        assert!(bad(&|v| v["resources"][0]["size"] = json!(-1)).contains("size"));
        assert!(bad(&|v| v["resources"] = json!("static")).contains("dynamic"));
        assert!(bad(&|v| v["uri"] = json!("skill://acme/pdf/README.md")).contains("SKILL.md"));
        assert!(bad(&|v| v["uri"] = json!("skill://acme/../pdf/SKILL.md")).contains("not a skill URI"));
        let mut file = entry(SKILL);
        file["uri"] = json!("file:///srv/pdf/SKILL.md");
        file["resources"][0]["uri"] = json!("file:///srv/pdf/SKILL.md");
        assert_eq!(Entry::parse(&file).unwrap().root, "file:///srv/pdf");
        let outside = |u: &str| {
            bad(&|v| {
                let extra = json!({"uri": u, "digest": digest(b""), "size": 0});
                v["resources"].as_array_mut().unwrap().push(extra);
            })
        };
        assert!(outside("skill://acme/other/x.md").contains("outside"));
        assert!(outside("skill://acme/pdf/../other/x.md").contains("outside"));
        assert!(outside("skill://acme/pdf/%2E%2e/x.md").contains("outside"));
        assert!(bad(&|v| v["resources"][0]["size"] = json!(MAX_TOTAL_BYTES + 1)).contains("more than"));
        let mut many = entry(SKILL);
        for i in 0..MAX_FILES {
            let extra = json!({"uri": format!("skill://acme/pdf/f{i}"), "digest": digest(b""), "size": 0});
            many["resources"].as_array_mut().unwrap().push(extra);
        }
        assert!(Entry::parse(&many).unwrap_err().contains("more than 512"));
    }
}
