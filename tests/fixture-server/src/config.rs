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
    pub stderr_banner: Option<String>,
    pub page_size: Option<usize>,
    pub require_elicitation: bool,
    pub ignore_stdin_eof: bool,
    pub spawn_grandchild: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            era: EraMode::Dual,
            on_discover: OnDiscover::Answer,
            supported_versions: vec![MODERN_DEFAULT.to_string()],
            record: None,
            stderr_banner: None,
            page_size: None,
            require_elicitation: false,
            ignore_stdin_eof: false,
            spawn_grandchild: false,
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
[--on-discover answer|exit|silent|not-found] [--supported-versions V1,V2] [--record PATH] \
[--stderr-banner TEXT] [--page-size N] [--require-elicitation] [--ignore-stdin-eof] \
[--spawn-grandchild]";

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
            "--stderr-banner" => cfg.stderr_banner = Some(value("--stderr-banner")?),
            "--page-size" => {
                let raw = value("--page-size")?;
                match raw.parse::<usize>() {
                    Ok(n) if n > 0 => cfg.page_size = Some(n),
                    _ => return Err(format!("--page-size must be a positive integer, got '{raw}'")),
                }
            }
            "--require-elicitation" => cfg.require_elicitation = true,
            "--ignore-stdin-eof" => cfg.ignore_stdin_eof = true,
            "--spawn-grandchild" => cfg.spawn_grandchild = true,
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
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
        ]))
        .unwrap();
        assert_eq!(cfg.era, EraMode::Legacy);
        assert_eq!(cfg.on_discover, OnDiscover::NotFound);
        assert_eq!(cfg.supported_versions, vec!["2026-07-28", "2027-01-01"]);
        assert_eq!(cfg.record.unwrap().to_str(), Some("/tmp/x"));
        assert_eq!(cfg.stderr_banner.as_deref(), Some("hi there"));
        assert_eq!(cfg.page_size, Some(2));
        assert!(cfg.require_elicitation && cfg.ignore_stdin_eof && cfg.spawn_grandchild);
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
    fn error_supported_list_adds_legacy_in_dual_only() {
        let mut cfg = Config::default();
        assert_eq!(cfg.error_supported_versions(), vec!["2026-07-28", "2025-11-25"]);
        cfg.era = EraMode::Modern;
        assert_eq!(cfg.error_supported_versions(), vec!["2026-07-28"]);
    }
}
