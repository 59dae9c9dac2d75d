//! Command-line flags.

use std::path::PathBuf;

/// The latest modern revision, the default for `--supported-versions`.
pub const MODERN_DEFAULT: &str = "2026-07-28";
/// The legacy revisions `initialize` accepts, oldest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The legacy revision offered when the client asks for an unknown one.
pub const LEGACY_LATEST: &str = "2025-11-25";

/// Which protocol era(s) the server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EraMode {
    Dual,
    Modern,
    Legacy,
}

/// How `server/discover` is treated (before any era logic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnDiscover {
    Answer,
    Exit,
    Silent,
    NotFound,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub era: EraMode,
    pub on_discover: OnDiscover,
    pub supported_versions: Vec<String>,
    pub record: Option<PathBuf>,
    /// `--signal PATH`: a line per received message (see signal.rs).
    pub signal: Option<PathBuf>,
    pub stderr_banner: Option<String>,
    /// A stderr line per request, as servers that log each request do (`--log-requests`).
    pub log_requests: bool,
    pub page_size: Option<usize>,
    pub require_elicitation: bool,
    /// `--lax-capabilities`: modern MRTR rounds ask for input the request's capabilities do not
    /// declare (by default they answer -32021, as the official SDK servers do).
    pub lax_capabilities: bool,
    /// `--apps`: MCP Apps tools in `tools/list` and their `ui://` resources (`apps.rs`).
    pub apps: bool,
    pub ignore_stdin_eof: bool,
    pub spawn_grandchild: bool,
    /// `--http ADDR`: serve HTTP on ADDR instead of stdio.
    pub http: Option<String>,
    /// Modern (and legacy Streamable HTTP) requests get SSE responses.
    pub sse_responses: bool,
    /// Serve the 2024-11-05 HTTP+SSE transport instead of Streamable HTTP.
    pub legacy_sse: bool,
    /// The first legacy session is dropped after this many requests.
    pub expire_session_after: Option<u64>,
    /// The legacy GET stream sends a priming event with this `retry:` and
    /// closes (SEP-1699).
    pub sse_retry_ms: Option<u64>,
    /// Benchmark mode: every request is served on the thread that read it.
    pub fast: bool,
    /// `--oauth` and its `--oauth-*` flags (see `oauth.rs`).
    pub oauth: crate::oauth::OAuthFlags,
    /// `--skills MODE`: declare and serve the skills extension (see `skills.rs`).
    pub skills: Option<crate::skills::Mode>,
    /// `--cache-ttl-ms N`: the `ttlMs` of modern cacheable results (discover, lists, reads).
    pub cache_ttl_ms: u64,
    /// `--cache-scope public|private`: their `cacheScope`.
    pub cache_scope: String,
    /// `--exit-after-lists N`: the server exits, unanswered, at its Nth `tools/list` (a
    /// reconnect test's lost connection).
    pub exit_after_lists: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            era: EraMode::Dual,
            on_discover: OnDiscover::Answer,
            supported_versions: vec![MODERN_DEFAULT.to_string()],
            record: None,
            signal: None,
            stderr_banner: None,
            log_requests: false,
            page_size: None,
            require_elicitation: false,
            lax_capabilities: false,
            apps: false,
            ignore_stdin_eof: false,
            spawn_grandchild: false,
            http: None,
            sse_responses: false,
            legacy_sse: false,
            expire_session_after: None,
            sse_retry_ms: None,
            fast: false,
            oauth: Default::default(),
            skills: None,
            cache_ttl_ms: 0,
            cache_scope: "private".into(),
            exit_after_lists: None,
        }
    }
}

impl Config {
    /// The `supported` list put in -32022 errors: the modern versions, plus the
    /// latest legacy version when the server also speaks legacy (dual).
    pub fn error_supported_versions(&self) -> Vec<String> {
        let mut list = self.supported_versions.clone();
        if self.era == EraMode::Dual && !list.iter().any(|v| v == LEGACY_LATEST) {
            list.push(LEGACY_LATEST.to_string());
        }
        list
    }
}

pub const USAGE: &str = "usage: mcp-fixture-server [--era dual|modern|legacy] \
[--on-discover answer|exit|silent|not-found] [--supported-versions V1,V2] [--record PATH] [--signal PATH] \
[--stderr-banner TEXT] [--log-requests] [--page-size N] [--require-elicitation] [--lax-capabilities] [--ignore-stdin-eof] \
[--spawn-grandchild] [--fast] [--exit-after-lists N] [--cache-ttl-ms N] [--cache-scope public|private] [--redefine none|description|param|rename|reorder] [--skills genuine|digest|size|frontmatter|malformed] [--http ADDR [--sse-responses] [--legacy-sse] [--expire-session-after N] \
[--sse-retry-ms MS] [--oauth [--oauth-client ID:SECRET] [--oauth-token-ttl SECS] [--oauth-step-up-tool NAME] [--oauth-hostile-auth MODE]]]";

fn number(flag: &str, raw: &str, min: u64) -> Result<u64, String> {
    match raw.parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("{flag} must be an integer >= {min}, got '{raw}'")),
    }
}

/// Rejects flag combinations that would silently do nothing.
fn validate(cfg: &Config) -> Result<(), String> {
    cfg.oauth.validate(cfg.http.is_some())?;
    if cfg.http.is_none() {
        for (set, flag) in [
            (cfg.sse_responses, "--sse-responses"),
            (cfg.legacy_sse, "--legacy-sse"),
            (cfg.expire_session_after.is_some(), "--expire-session-after"),
            (cfg.sse_retry_ms.is_some(), "--sse-retry-ms"),
        ] {
            if set {
                return Err(format!("{flag} needs --http"));
            }
        }
    }
    if cfg.legacy_sse {
        if cfg.era == EraMode::Modern {
            return Err("--legacy-sse cannot serve --era modern".into());
        }
        for (set, flag) in [
            (cfg.sse_responses, "--sse-responses"),
            (cfg.expire_session_after.is_some(), "--expire-session-after"),
            (cfg.sse_retry_ms.is_some(), "--sse-retry-ms"),
        ] {
            if set {
                return Err(format!("{flag} applies to Streamable HTTP, not --legacy-sse"));
            }
        }
    }
    Ok(())
}

/// Parses the arguments (without the program name). Accepts `--flag value`
/// and `--flag=value`.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it.next().ok_or_else(|| format!("{name} needs a value")),
            }
        };
        match flag.as_str() {
            "--era" => {
                cfg.era = match value("--era")?.as_str() {
                    "dual" => EraMode::Dual,
                    "modern" => EraMode::Modern,
                    "legacy" => EraMode::Legacy,
                    other => return Err(format!("unknown era '{other}'")),
                }
            }
            "--on-discover" => {
                cfg.on_discover = match value("--on-discover")?.as_str() {
                    "answer" => OnDiscover::Answer,
                    "exit" => OnDiscover::Exit,
                    "silent" => OnDiscover::Silent,
                    "not-found" => OnDiscover::NotFound,
                    other => return Err(format!("unknown --on-discover mode '{other}'")),
                }
            }
            "--supported-versions" => {
                let list: Vec<String> = value("--supported-versions")?
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                if list.is_empty() {
                    return Err("--supported-versions needs at least one version".into());
                }
                cfg.supported_versions = list;
            }
            "--record" => cfg.record = Some(PathBuf::from(value("--record")?)),
            "--signal" => cfg.signal = Some(PathBuf::from(value("--signal")?)),
            "--stderr-banner" => cfg.stderr_banner = Some(value("--stderr-banner")?),
            "--log-requests" => cfg.log_requests = true,
            "--page-size" => {
                let raw = value("--page-size")?;
                match raw.parse::<usize>() {
                    Ok(n) if n > 0 => cfg.page_size = Some(n),
                    _ => return Err(format!("--page-size must be a positive integer, got '{raw}'")),
                }
            }
            "--require-elicitation" => cfg.require_elicitation = true,
            "--lax-capabilities" => cfg.lax_capabilities = true,
            "--apps" => cfg.apps = true,
            "--ignore-stdin-eof" => cfg.ignore_stdin_eof = true,
            "--spawn-grandchild" => cfg.spawn_grandchild = true,
            "--fast" => cfg.fast = true,
            "--skills" => cfg.skills = Some(crate::skills::Mode::parse(&value("--skills")?)?),
            "--cache-ttl-ms" => cfg.cache_ttl_ms = number("--cache-ttl-ms", &value("--cache-ttl-ms")?, 0)?,
            "--cache-scope" => {
                cfg.cache_scope = match value("--cache-scope")?.as_str() {
                    s @ ("public" | "private") => s.to_string(),
                    other => return Err(format!("--cache-scope is public or private, got '{other}'")),
                }
            }
            "--redefine" => {
                let mode = value("--redefine")?;
                if !crate::redefine::set(&mode) {
                    return Err(format!(
                        "--redefine is one of {:?}, got '{mode}'",
                        crate::redefine::MODES
                    ));
                }
            }
            "--exit-after-lists" => {
                let raw = value("--exit-after-lists")?;
                cfg.exit_after_lists = Some(number("--exit-after-lists", &raw, 1)?);
            }
            "--http" => cfg.http = Some(value("--http")?),
            "--sse-responses" => cfg.sse_responses = true,
            "--legacy-sse" => cfg.legacy_sse = true,
            "--expire-session-after" => {
                let raw = value("--expire-session-after")?;
                cfg.expire_session_after = Some(number("--expire-session-after", &raw, 1)?);
            }
            "--oauth" => cfg.oauth.enabled = true,
            "--oauth-client" => cfg.oauth.add_client(&value("--oauth-client")?)?,
            "--oauth-token-ttl" => {
                let raw = value("--oauth-token-ttl")?;
                cfg.oauth.token_ttl = Some(number("--oauth-token-ttl", &raw, 1)?);
            }
            "--oauth-step-up-tool" => cfg.oauth.step_up_tool = Some(value("--oauth-step-up-tool")?),
            "--oauth-hostile-auth" => {
                cfg.oauth.hostile_auth = Some(crate::oauth_hostile_auth::Mode::parse(&value("--oauth-hostile-auth")?)?)
            }
            "--sse-retry-ms" => {
                let raw = value("--sse-retry-ms")?;
                cfg.sse_retry_ms = Some(number("--sse-retry-ms", &raw, 0)?);
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    validate(&cfg)?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn defaults() {
        let cfg = parse(Vec::new()).unwrap();
        assert_eq!(cfg.era, EraMode::Dual);
        assert_eq!(cfg.on_discover, OnDiscover::Answer);
        assert_eq!(cfg.supported_versions, vec!["2026-07-28"]);
        assert_eq!(cfg.page_size, None);
        assert!(!cfg.fast);
    }

    #[test]
    fn all_flags() {
        let cfg = parse(args(&[
            "--era",
            "legacy",
            "--on-discover=not-found",
            "--supported-versions",
            "2026-07-28, 2027-01-01",
            "--record",
            "/tmp/x",
            "--stderr-banner",
            "hi there",
            "--page-size=2",
            "--require-elicitation",
            "--ignore-stdin-eof",
            "--spawn-grandchild",
            "--fast",
        ]))
        .unwrap();
        assert_eq!(cfg.era, EraMode::Legacy);
        assert_eq!(cfg.on_discover, OnDiscover::NotFound);
        assert_eq!(cfg.supported_versions, vec!["2026-07-28", "2027-01-01"]);
        assert_eq!(cfg.record.unwrap().to_str(), Some("/tmp/x"));
        assert_eq!(cfg.stderr_banner.as_deref(), Some("hi there"));
        assert_eq!(cfg.page_size, Some(2));
        assert!(cfg.require_elicitation && cfg.ignore_stdin_eof && cfg.spawn_grandchild && cfg.fast);
    }

    #[test]
    fn rejects_bad_values() {
        assert!(parse(args(&["--era", "future"])).is_err());
        assert!(parse(args(&["--page-size", "0"])).is_err());
        assert!(parse(args(&["--page-size"])).is_err());
        assert!(parse(args(&["--bogus"])).is_err());
        assert!(parse(args(&["--supported-versions", ","])).is_err());
    }

    #[test]
    fn http_flags() {
        let cfg = parse(args(&[
            "--http",
            "127.0.0.1:0",
            "--sse-responses",
            "--expire-session-after=3",
            "--sse-retry-ms",
            "250",
        ]))
        .unwrap();
        assert_eq!(cfg.http.as_deref(), Some("127.0.0.1:0"));
        assert!(cfg.sse_responses && !cfg.legacy_sse);
        assert_eq!(cfg.expire_session_after, Some(3));
        assert_eq!(cfg.sse_retry_ms, Some(250));
        assert!(
            parse(args(&["--http", "127.0.0.1:0", "--legacy-sse"]))
                .unwrap()
                .legacy_sse
        );
        // HTTP-only flags without --http, and meaningless combinations.
        assert!(parse(args(&["--sse-responses"])).is_err());
        assert!(parse(args(&["--sse-retry-ms", "5"])).is_err());
        assert!(parse(args(&["--http", "x", "--expire-session-after", "0"])).is_err());
        assert!(parse(args(&["--http", "x", "--legacy-sse", "--era", "modern"])).is_err());
        assert!(parse(args(&["--http", "x", "--legacy-sse", "--sse-retry-ms", "5"])).is_err());
        assert!(parse(args(&["--http"])).is_err());
    }

    #[test]
    fn error_supported_list_adds_legacy_in_dual_only() {
        let mut cfg = Config::default();
        assert_eq!(cfg.error_supported_versions(), vec!["2026-07-28", "2025-11-25"]);
        cfg.era = EraMode::Modern;
        assert_eq!(cfg.error_supported_versions(), vec!["2026-07-28"]);
    }
}
