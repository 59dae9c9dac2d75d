//! The server identity pins are filed under: a stdio server is its command, arguments and
//! working directory (the host's when none is set); an HTTP server its endpoint's origin and
//! path (no query, no fragment, no credentials). The configuration may name another
//! (`tool_pinning.identity`), for example to share pins between two URLs of one server.

use crate::transport::TransportConfig;
use serde_json::json;

/// The identity of the server `transport` reaches.
pub fn identity_of(transport: &TransportConfig) -> String {
    match transport {
        TransportConfig::Stdio(cfg) => {
            let cwd = cfg
                .cwd
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .map(|p| p.to_string_lossy().into_owned());
            let parts = json!({"command": cfg.command, "args": cfg.args, "cwd": cwd});
            format!("stdio:{parts}")
        }
        TransportConfig::Http(cfg) => match url::Url::parse(&cfg.url) {
            Ok(u) => format!("http:{}{}", u.origin().ascii_serialization(), u.path()),
            Err(_) => format!("http:{}", cfg.url),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::HttpConfig;
    use crate::transport::stdio::StdioConfig;

    #[test]
    fn identities_name_the_server_not_the_request() {
        let a = identity_of(&TransportConfig::Http(HttpConfig::new(
            "https://u:p@mcp.example:8443/mcp?x=1#f",
        )));
        assert_eq!(a, "http:https://mcp.example:8443/mcp");
        let mut s = StdioConfig::new("srv");
        s.args = vec!["--a".into()];
        s.cwd = Some("/w".into());
        assert_eq!(
            identity_of(&TransportConfig::Stdio(s.clone())),
            r#"stdio:{"command":"srv","args":["--a"],"cwd":"/w"}"#
        );
        s.args.push("--b".into());
        assert_ne!(identity_of(&TransportConfig::Stdio(s)), a);
    }
}
