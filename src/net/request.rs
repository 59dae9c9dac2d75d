//! A request to the MCP endpoint as the HTTP transport makes it: its method, URL, fields and
//! JSON body, nothing more. The direct connections (`net::direct`) write an HTTP/1.1 head from
//! it straight away; HTTP/2 and reqwest (the paths that still take reqwest's client) get their
//! own request types made from it.
//!
//! Why not `reqwest::Request`: its `HeaderMap` hashes every field name and allocates twice
//! however few fields there are, and the request carries a second copy of the URL; for a
//! handful of fields written out in order once, a vector of them does the same work (~2k
//! instructions a call less, docs/performance.md "HTTPS, HTTP/2 and proxies").

use hyper::body::Bytes;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, HOST, TE, TRANSFER_ENCODING, UPGRADE,
};
use reqwest::{Body, Method, Url};

/// A request's fields, in the order they were set. Setting a name again replaces its value
/// (every value it had), as `HeaderMap::insert` does; `append` adds another value.
#[derive(Clone, Default)]
pub(crate) struct Fields(Vec<(HeaderName, HeaderValue)>);

impl Fields {
    pub fn with_capacity(n: usize) -> Fields {
        Fields(Vec::with_capacity(n))
    }

    /// Sets `name` to `value` alone: in the place of its first value, its others removed.
    pub fn insert(&mut self, name: HeaderName, value: HeaderValue) {
        match self.0.iter().position(|(n, _)| *n == name) {
            Some(first) => {
                self.0[first].1 = value;
                let mut i = first + 1;
                while i < self.0.len() {
                    if self.0[i].0 == name {
                        self.0.remove(i);
                    } else {
                        i += 1;
                    }
                }
            }
            None => self.0.push((name, value)),
        }
    }

    /// Adds a value of `name` after those it has.
    pub fn append(&mut self, name: HeaderName, value: HeaderValue) {
        self.0.push((name, value));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
        self.0.iter().map(|(n, v)| (n, v))
    }

    /// `self` with `over` set on top (each of its names replacing this one's values).
    pub fn overlaid(&self, over: Fields) -> Fields {
        if self.is_empty() {
            return over;
        }
        let mut fields = self.clone();
        for (name, value) in over.0 {
            fields.insert(name, value);
        }
        fields
    }

    fn into_map(self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.0.len());
        for (name, value) in self.0 {
            map.append(name, value);
        }
        map
    }

    pub fn from_map(map: HeaderMap) -> Fields {
        let mut fields = Fields::with_capacity(map.len());
        let mut last = None;
        for (name, value) in map {
            // `None`: another value of the name before.
            if let Some(name) = name {
                last = Some(name);
            }
            if let Some(name) = &last {
                fields.append(name.clone(), value);
            }
        }
        fields
    }
}

/// A request to `url`.
#[derive(Clone)]
pub(crate) struct Request<'a> {
    method: Method,
    url: &'a Url,
    fields: Fields,
    body: Option<Bytes>,
}

impl<'a> Request<'a> {
    pub fn new(method: Method, url: &'a Url, fields: Fields, body: Option<Bytes>) -> Request<'a> {
        Request {
            method,
            url,
            fields,
            body,
        }
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    pub fn url(&self) -> &'a Url {
        self.url
    }

    pub fn fields(&self) -> &Fields {
        &self.fields
    }

    pub fn fields_mut(&mut self) -> &mut Fields {
        &mut self.fields
    }

    pub fn body(&self) -> Option<&Bytes> {
        self.body.as_ref()
    }

    /// The same request for reqwest's client.
    pub fn into_reqwest(self) -> reqwest::Request {
        let mut request = reqwest::Request::new(self.method, self.url.clone());
        *request.headers_mut() = self.fields.into_map();
        *request.body_mut() = self.body.map(Body::from);
        request
    }

    /// The same request's head as an HTTP/2 stream's, to `uri`: `Host` left out (`:authority`
    /// says it), and the fields HTTP/2 forbids (RFC 9113 8.2.2); `content-length` set from the
    /// body (as HTTP/1.1's head has it).
    pub fn h2_head(&self, uri: hyper::Uri) -> hyper::Request<()> {
        let mut head = hyper::Request::new(());
        *head.method_mut() = self.method.clone();
        *head.uri_mut() = uri;
        let headers = head.headers_mut();
        headers.reserve(self.fields.0.len() + 1);
        for (name, value) in self.fields.iter() {
            let te_trailers = *name == TE && value == "trailers";
            if [HOST, CONTENT_LENGTH, CONNECTION, TRANSFER_ENCODING, UPGRADE, TE].contains(name) && !te_trailers
                || ["keep-alive", "proxy-connection"].contains(&name.as_str())
            {
                continue;
            }
            headers.append(name.clone(), value.clone());
        }
        if self.body.is_some() || self.method == Method::POST {
            let length = self.body.as_ref().map_or(0, |b| b.len());
            headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
        }
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};

    fn value(text: &'static str) -> HeaderValue {
        HeaderValue::from_static(text)
    }

    #[test]
    fn setting_a_name_again_replaces_every_value_in_the_first_place() {
        let mut fields = Fields::default();
        fields.append(ACCEPT, value("a"));
        fields.append(CONTENT_TYPE, value("c"));
        fields.append(ACCEPT, value("b"));
        fields.insert(ACCEPT, value("z"));
        let seen: Vec<_> = fields.iter().map(|(n, v)| (n.as_str(), v.to_str().unwrap())).collect();
        assert_eq!(seen, [("accept", "z"), ("content-type", "c")]);
        let over = fields.overlaid({
            let mut over = Fields::default();
            over.insert(CONTENT_TYPE, value("d"));
            over.insert(AUTHORIZATION, value("e"));
            over
        });
        let seen: Vec<_> = over.iter().map(|(n, v)| (n.as_str(), v.to_str().unwrap())).collect();
        assert_eq!(seen, [("accept", "z"), ("content-type", "d"), ("authorization", "e")]);
    }

    #[test]
    fn other_request_types_carry_the_same_fields_and_body() {
        let url = Url::parse("https://example.com/mcp?x=1").unwrap();
        let mut fields = Fields::default();
        fields.append(ACCEPT, value("a"));
        fields.append(ACCEPT, value("b"));
        fields.append(reqwest::header::HOST, value("example.com"));
        let request = Request::new(Method::POST, &url, fields, Some(Bytes::from_static(b"{}")));
        let reqwest = request.clone().into_reqwest();
        assert_eq!(reqwest.url(), &url);
        assert_eq!(reqwest.headers().get_all(ACCEPT).iter().count(), 2);
        assert_eq!(reqwest.body().and_then(Body::as_bytes), Some(&b"{}"[..]));
        let mut request = request;
        request.fields_mut().append(reqwest::header::CONNECTION, value("close"));
        let h2 = request.h2_head(url.as_str().parse().unwrap());
        let seen: Vec<_> = h2
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap()))
            .collect();
        assert_eq!(seen, [("accept", "a"), ("accept", "b"), ("content-length", "2")]);
        assert_eq!(h2.uri(), "https://example.com/mcp?x=1");
    }
}
