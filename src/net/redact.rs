//! URLs as errors and logs show them: a request URL may carry an authorization code, a `state`, an
//! API key or a session id in its query, or credentials in its userinfo, so only the scheme, host,
//! port and path are ever printed (docs/network-safety.md, "Where tokens go"). reqwest's own errors
//! print the full request URL; [`http_error`] drops it.

use url::Url;

/// `scheme://host[:port]/path`: no userinfo, query or fragment.
pub fn url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// As [`url()`], for a URL still in text form; text that is not a URL is not shown at all.
pub fn url_text(text: &str) -> String {
    Url::parse(text)
        .map(|u| url(&u))
        .unwrap_or_else(|_| "(not a URL)".into())
}

/// `scheme://host[:port]`.
pub fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// A reqwest error and its causes in one line, without the request URL (reqwest's message
/// alone hides the cause).
pub fn http_error(e: reqwest::Error) -> String {
    chain(&e.without_url())
}

/// An error and its sources in one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// The address guard's refusal inside a reqwest error (raised by the resolver), if that is
/// why the request failed.
pub(crate) fn refusal(e: &reqwest::Error) -> Option<super::policy::Refused> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<super::policy::Refused>() {
            return Some(r.clone());
        }
        source = s.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_scheme_host_port_and_path() {
        let u = Url::parse("https://user:pw@as.example:8443/cb/x?code=SECRET&state=S#frag").unwrap();
        assert_eq!(url(&u), "https://as.example:8443/cb/x");
        assert_eq!(url_text("http://h/p?k=v"), "http://h/p");
        assert_eq!(url_text("not a url ?secret"), "(not a URL)");
        assert_eq!(origin(&u), "https://as.example:8443");
    }
}
