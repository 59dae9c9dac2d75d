//! Where the authorization client may send requests of its own (docs/network-safety.md, "What is
//! fetched"): the URLs come from the MCP server (its 401 challenge, its metadata, the authorization
//! server metadata it leads to), so each one is checked before it is fetched, and each name's
//! resolved addresses again before they are dialled (`resolve`).
//!
//! The rules, in order:
//! 1. `https`; plain `http` only between loopback hosts (the MCP URL and the target both
//!    loopback) unless the host allowed plain http (`allow_insecure_http`, `oauth.allow_http`).
//!    No userinfo.
//! 2. A host on the deny list is refused (names, `*.suffix`, addresses and ranges; a range also
//!    matches the addresses a name resolves to).
//! 3. A host on the allow list is accepted whatever its addresses.
//! 4. Every address (the literal, or all a name resolves to) must be public, or in the class of
//!    the MCP server's own host (a loopback MCP URL opens loopback, a private literal opens
//!    private networks: the conformance mocks and intranet deployments), or loopback, private or
//!    carrier-grade NAT with `oauth.allow_private_networks`. The MCP server's class comes from its
//!    URL (an IP literal, or `localhost`), never from DNS: a name that resolves to 127.0.0.1 opens
//!    nothing.

use super::ranges::{classify, Class, Net};
use std::net::IpAddr;
use url::{Host, Url};

/// A refused URL or address; the message names the host and the rule, nothing fetched.
#[derive(Debug, Clone)]
pub(crate) struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// One entry of an allow or deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// A host name, exactly (case-insensitive, without a trailing dot).
    Name(String),
    /// `*.example.com`: every name below `example.com` (not the name itself).
    Below(String),
    /// An address or a range.
    Net(Net),
}

impl Pattern {
    fn parse(text: &str) -> Option<Pattern> {
        let text = text.trim();
        if let Some(net) = Net::parse(text) {
            return Some(Pattern::Net(net));
        }
        let valid = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        };
        match text.strip_prefix("*.") {
            Some(rest) if valid(rest) => Some(Pattern::Below(normalize(rest))),
            None if valid(text) => Some(Pattern::Name(normalize(text))),
            _ => None,
        }
    }

    fn matches_name(&self, name: &str) -> bool {
        match self {
            Pattern::Name(n) => n == name,
            Pattern::Below(suffix) => name.strip_suffix(suffix.as_str()).is_some_and(|p| p.ends_with('.')),
            Pattern::Net(_) => false,
        }
    }

    fn matches_ip(&self, ip: IpAddr) -> bool {
        matches!(self, Pattern::Net(n) if n.contains(ip))
    }
}

/// Lowercase, without a trailing dot.
pub(crate) fn normalize(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// The class of a host name that never needs DNS to be judged.
fn name_class(name: &str) -> Option<Class> {
    if name == "localhost" || name.ends_with(".localhost") {
        Some(Class::Loopback)
    } else if name == "metadata.google.internal" {
        Some(Class::LinkLocal)
    } else {
        None
    }
}

/// The class of a URL's host as written (a literal or a well-known name); `None` for other names.
fn host_class(url: &Url) -> Option<Class> {
    match url.host()? {
        Host::Domain(d) => name_class(&normalize(d)),
        Host::Ipv4(ip) => classify(IpAddr::V4(ip)),
        Host::Ipv6(ip) => classify(IpAddr::V6(ip)),
    }
}

/// A loopback host as written: exactly `localhost`, or a literal in 127/8 or `::1` (unmapped).
/// `*.localhost` counts as loopback when refusing, not here, where it would open something:
/// not every resolver keeps those names on the machine.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => normalize(d) == "localhost",
        Some(_) => host_class(url) == Some(Class::Loopback),
        None => false,
    }
}

/// Checks parsed allow/deny entries; the error names the first bad one.
pub(crate) fn check_patterns(entries: &[String], key: &str) -> Result<(), String> {
    match entries.iter().find(|e| Pattern::parse(e).is_none()) {
        Some(bad) => Err(format!(
            "{key}: {bad:?} is not a host name, *.domain, IP address or address range"
        )),
        None => Ok(()),
    }
}

/// The checks for one client's authorization requests.
#[derive(Debug)]
pub(crate) struct Guard {
    mcp_loopback: bool,
    /// The MCP server's own class, which its authorization may use too.
    mcp_class: Option<Class>,
    allow_http: bool,
    allow_private: bool,
    allow: Vec<Pattern>,
    deny: Vec<Pattern>,
}

impl Guard {
    pub fn new(
        mcp: &Url,
        allow_http: bool,
        allow_private: bool,
        allow: &[String],
        deny: &[String],
    ) -> Result<Guard, String> {
        check_patterns(allow, "allow_hosts")?;
        check_patterns(deny, "deny_hosts")?;
        let parse = |list: &[String]| list.iter().filter_map(|e| Pattern::parse(e)).collect();
        let mcp_class = match mcp.host() {
            Some(Host::Domain(_)) if !is_loopback(mcp) => None,
            _ => host_class(mcp).filter(|c| *c != Class::Special),
        };
        Ok(Guard {
            mcp_loopback: is_loopback(mcp),
            mcp_class,
            allow_http,
            allow_private,
            allow: parse(allow),
            deny: parse(deny),
        })
    }

    /// The scheme rule alone, for URLs the library never fetches itself (the authorization
    /// endpoint, opened in a browser).
    pub fn check_scheme(&self, url: &Url) -> Result<(), Refused> {
        let shown = super::redact::origin(url);
        match url.scheme() {
            "https" => {}
            "http" if self.allow_http || (self.mcp_loopback && is_loopback(url)) => {}
            "http" => {
                return Err(Refused(format!(
                    "{shown} is plain http; authorization servers must use https unless both they and the MCP \
                     server are on loopback (allow_insecure_http permits it)"
                )))
            }
            _ => return Err(Refused("an authorization URL is not http(s)".into())),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refused(format!("a URL on {shown} carries credentials")));
        }
        Ok(())
    }

    /// Everything that can be judged before a request to `url`: the scheme, the lists, and the
    /// class of a literal or well-known name. Other names are judged when resolved.
    pub fn check_url(&self, url: &Url) -> Result<(), Refused> {
        self.check_scheme(url)?;
        let shown = super::redact::origin(url);
        let (name, ip) = match url.host() {
            Some(Host::Domain(d)) => (Some(normalize(d)), None),
            Some(Host::Ipv4(ip)) => (None, Some(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => (None, Some(IpAddr::V6(ip))),
            None => return Err(Refused("an authorization URL has no host".into())),
        };
        if self.denied(name.as_deref(), ip.as_slice()) {
            return Err(Refused(format!("{shown} is on the deny list (deny_hosts)")));
        }
        if self.allowed(name.as_deref(), ip) {
            return Ok(());
        }
        let class = match (&name, ip) {
            (Some(n), _) => name_class(n),
            (None, Some(ip)) => classify(ip),
            _ => None,
        };
        match class {
            Some(c) if !self.opens(c) => Err(self.refusal(&shown, c)),
            _ => Ok(()),
        }
    }

    /// The addresses `name` resolved to, before any is dialled: all must pass.
    pub fn check_answer(&self, name: &str, addrs: &[IpAddr]) -> Result<(), Refused> {
        let name = normalize(name);
        if self.denied(Some(&name), addrs) {
            return Err(Refused(format!("{name} is on the deny list (deny_hosts)")));
        }
        if self.allowed(Some(&name), None) {
            return Ok(());
        }
        match name_class(&name) {
            Some(c) if !self.opens(c) => return Err(self.refusal(&name, c)),
            // An opened `localhost` must really be the machine itself.
            Some(Class::Loopback) if addrs.iter().any(|ip| classify(*ip) != Some(Class::Loopback)) => {
                return Err(Refused(format!("{name} resolves to an address off this machine")))
            }
            _ => {}
        }
        for ip in addrs {
            if self.allowed(None, Some(*ip)) {
                continue;
            }
            if let Some(c) = classify(*ip).filter(|c| !self.opens(*c)) {
                return Err(self.refusal(&format!("{name} (resolved)"), c));
            }
        }
        Ok(())
    }

    /// Whether the host allowed `url`'s host by name or literal (`allow_hosts`): the host's own
    /// trust, which opens more than an address check (a metadata URL the server names off the
    /// well-known path).
    pub fn lists_allowed(&self, url: &Url) -> bool {
        match url.host() {
            Some(Host::Domain(d)) => self.allowed(Some(&normalize(d)), None),
            Some(Host::Ipv4(ip)) => self.allowed(None, Some(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => self.allowed(None, Some(IpAddr::V6(ip))),
            None => false,
        }
    }

    fn denied(&self, name: Option<&str>, addrs: &[IpAddr]) -> bool {
        self.deny
            .iter()
            .any(|p| name.is_some_and(|n| p.matches_name(n)) || addrs.iter().any(|ip| p.matches_ip(*ip)))
    }

    fn allowed(&self, name: Option<&str>, ip: Option<IpAddr>) -> bool {
        self.allow
            .iter()
            .any(|p| name.is_some_and(|n| p.matches_name(n)) || ip.is_some_and(|ip| p.matches_ip(ip)))
    }

    fn opens(&self, class: Class) -> bool {
        self.mcp_class == Some(class)
            || (self.allow_private && matches!(class, Class::Loopback | Class::Private | Class::Shared))
    }

    fn refusal(&self, shown: &str, class: Class) -> Refused {
        Refused(format!(
            "refusing to contact {shown}: it is {}, and the MCP server is not (oauth.allow_hosts or \
             oauth.allow_private_networks permit it)",
            class.describe()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn guard(mcp: &str) -> Guard {
        Guard::new(&url(mcp), false, false, &[], &[]).unwrap()
    }

    #[test]
    fn literals_and_names_by_the_mcp_servers_class() {
        let public = guard("https://mcp.example/mcp");
        for bad in [
            "https://127.0.0.1/",
            "https://0x7f.1/",
            "https://2130706433/",
            "https://[::ffff:a9fe:a9fe]/",
            "https://169.254.169.254/latest",
            "https://[fd00:ec2::254]/",
            "https://100.64.0.1/",
            "https://10.0.0.1/",
            "https://localhost/",
            "https://a.localhost./",
            "https://metadata.google.internal./",
            "https://[::7f00:1]/",
            "https://0.0.0.0/",
            "http://as.example/",
            "javascript:alert(1)",
            "https://user:pw@as.example/",
        ] {
            assert!(public.check_url(&url(bad)).is_err(), "{bad}");
        }
        assert!(public.check_url(&url("https://as.example/x?y")).is_ok());
        assert!(public.check_url(&url("https://93.184.216.34/")).is_ok());

        let local = guard("http://localhost:3000/mcp");
        assert!(local.check_url(&url("http://127.0.0.1:9/")).is_ok());
        assert!(
            local.check_url(&url("http://a.localhost:9/")).is_err(),
            "http only to loopback as written"
        );
        assert!(local.check_url(&url("https://a.localhost:9/")).is_ok());
        let ip = |s: &str| vec![s.parse::<IpAddr>().unwrap()];
        assert!(local.check_answer("localhost", &ip("::1")).is_ok());
        assert!(local.check_answer("a.localhost", &ip("93.184.216.34")).is_err());
        let sub = guard("http://app.localhost:3000/mcp");
        assert!(
            sub.check_url(&url("https://127.0.0.1/")).is_err(),
            "*.localhost opens nothing"
        );
        assert!(local.check_url(&url("http://[::1]:9/")).is_ok());
        assert!(
            local.check_url(&url("http://as.example/")).is_err(),
            "http only between loopback hosts"
        );
        assert!(local.check_url(&url("https://10.0.0.1/")).is_err());
        assert!(local.check_url(&url("https://169.254.169.254/")).is_err());

        let private = guard("https://10.1.2.3/mcp");
        assert!(private.check_url(&url("https://10.9.9.9/")).is_ok());
        assert!(private.check_url(&url("https://127.0.0.1/")).is_err());
    }

    #[test]
    fn resolved_answers_all_pass_or_none() {
        let g = guard("https://mcp.example/mcp");
        let ips = |v: &[&str]| v.iter().map(|s| s.parse().unwrap()).collect::<Vec<IpAddr>>();
        assert!(g.check_answer("as.example", &ips(&["93.184.216.34"])).is_ok());
        assert!(g.check_answer("as.example", &ips(&["10.0.0.1"])).is_err());
        assert!(g
            .check_answer("as.example", &ips(&["93.184.216.34", "127.0.0.1"]))
            .is_err());
        assert!(g.check_answer("LOCALHOST.", &ips(&["93.184.216.34"])).is_err());
    }

    #[test]
    fn host_lists() {
        let g = Guard::new(
            &url("https://mcp.example/mcp"),
            false,
            false,
            &["as.internal".into(), "10.20.0.0/16".into()],
            &["*.evil.example".into(), "93.184.216.0/24".into()],
        )
        .unwrap();
        let ip = |s: &str| vec![s.parse::<IpAddr>().unwrap()];
        assert!(g.check_answer("AS.internal", &ip("10.0.0.1")).is_ok());
        assert!(g.check_answer("other", &ip("10.20.1.1")).is_ok());
        assert!(g.check_answer("other", &ip("10.21.1.1")).is_err());
        assert!(g.check_url(&url("https://10.20.3.4/")).is_ok());
        assert!(g.check_url(&url("https://a.evil.example/")).is_err());
        assert!(g.check_url(&url("https://evil.example/")).is_ok());
        assert!(g.lists_allowed(&url("https://AS.internal./x")));
        assert!(g.lists_allowed(&url("https://10.20.9.9/")));
        assert!(!g.lists_allowed(&url("https://as.example/")));
        assert!(!g.lists_allowed(&url("https://10.21.0.1/")));
        assert!(g.check_answer("fine.example", &ip("93.184.216.34")).is_err());
        let open = Guard::new(&url("https://mcp.example/mcp"), false, true, &[], &[]).unwrap();
        assert!(open.check_url(&url("https://10.0.0.1/")).is_ok());
        assert!(open.check_url(&url("https://169.254.169.254/")).is_err());
        assert!(Guard::new(&url("https://m.example"), false, false, &["a b".into()], &[]).is_err());
        assert!(Guard::new(&url("https://m.example"), false, false, &[], &["*.".into()]).is_err());
    }
}
