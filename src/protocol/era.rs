//! Protocol eras and the versions this client speaks in each.

/// The one modern revision: stateless, `_meta` on every request, no `initialize`.
pub const MODERN_VERSION: &str = "2026-07-28";
/// Modern versions we speak, newest first.
pub const MODERN_VERSIONS: &[&str] = &[MODERN_VERSION];
/// Legacy (`initialize`-based) versions we speak, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The version offered in `initialize` unless one is pinned.
pub const LATEST_LEGACY_VERSION: &str = LEGACY_VERSIONS[0];

/// The protocol era of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: stateless, every request carries its version in `_meta`.
    Modern,
    /// 2024-11-05 … 2025-11-25: a session opened by `initialize`.
    Legacy,
}

impl Era {
    /// The era a supported version belongs to; `None` for versions we do not speak.
    pub fn of_version(version: &str) -> Option<Era> {
        if MODERN_VERSIONS.contains(&version) {
            Some(Era::Modern)
        } else if LEGACY_VERSIONS.contains(&version) {
            Some(Era::Legacy)
        } else {
            None
        }
    }

    /// `"modern"` or `"legacy"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        }
    }
}

/// The newest version of ours that `offered` also lists, restricted to `era` when given.
pub fn mutual_version<'a>(offered: impl IntoIterator<Item = &'a str>, era: Option<Era>) -> Option<&'static str> {
    let offered: Vec<&str> = offered.into_iter().collect();
    MODERN_VERSIONS
        .iter()
        .chain(LEGACY_VERSIONS.iter())
        .copied()
        .filter(|v| era.is_none_or(|e| Era::of_version(v) == Some(e)))
        .find(|v| offered.contains(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_of_versions() {
        assert_eq!(Era::of_version("2026-07-28"), Some(Era::Modern));
        assert_eq!(Era::of_version("2024-11-05"), Some(Era::Legacy));
        assert_eq!(Era::of_version("1900-01-01"), None);
    }

    #[test]
    fn mutual_version_prefers_newest_within_era() {
        let offered = ["2025-06-18", "2026-07-28", "2025-11-25"];
        assert_eq!(mutual_version(offered, None), Some("2026-07-28"));
        assert_eq!(mutual_version(offered, Some(Era::Legacy)), Some("2025-11-25"));
        assert_eq!(mutual_version(["1900-01-01"], None), None);
    }
}
