//! A response to one of the HTTP transport's requests, whichever way it came: the library's
//! own HTTP/1.1 exchange on a direct connection (`h1`), a stream of a direct HTTP/2 connection
//! (the `h2` crate's), or a `reqwest::Response` (reqwest's own client). The transport reads its status, a few fields
//! and its body, by pieces, appended to a vector of its own, or whole.
//!
//! A direct HTTP/1.1 body read to its end gives its connection back to the pool (unless the
//! server said it closes); dropped earlier, it closes the connection with it, so a half-read
//! reply never stays on a reused connection.

use super::direct::DirectOrigin;
use super::h1::{Body, Head};
use super::redact;
use hyper::body::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::StatusCode;
use std::sync::Weak;

pub(crate) struct Reply {
    status: StatusCode,
    from: From,
}

enum From {
    Own {
        head: Head,
        /// `None` once the body was read to its end (its connection then went home).
        body: Option<Body>,
        home: Weak<DirectOrigin>,
    },
    /// A body received in pieces (a direct HTTP/2 stream's or reqwest's).
    Pieces {
        source: Source,
        /// The piece last handed out.
        last: Bytes,
        /// What was received and not yet handed out ([`Reply::append`] takes less than a
        /// piece when asked for less).
        rest: Bytes,
    },
}

/// Where a body received in pieces comes from.
enum Source {
    /// A stream of a direct HTTP/2 connection: its fields, and its body still on the stream.
    H2 {
        fields: HeaderMap,
        body: h2::RecvStream,
    },
    Reqwest(reqwest::Response),
}

impl Source {
    fn fields(&self) -> &HeaderMap {
        match self {
            Source::H2 { fields, .. } => fields,
            Source::Reqwest(response) => response.headers(),
        }
    }

    /// The body's declared length, 0 when it has none.
    fn declared(&self) -> usize {
        match self {
            Source::H2 { fields, .. } => fields
                .get(reqwest::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.parse().ok())
                .unwrap_or(0),
            Source::Reqwest(response) => response.content_length().unwrap_or(0) as usize,
        }
    }

    /// The body's next piece; `None` at its end. An HTTP/2 stream's window is given back to the
    /// server at once (as hyper's body does).
    async fn next(&mut self) -> Result<Option<Bytes>, String> {
        match self {
            Source::H2 { body, .. } => match body.data().await {
                Some(Ok(bytes)) => {
                    let _ = body.flow_control().release_capacity(bytes.len());
                    Ok(Some(bytes))
                }
                Some(Err(e)) => Err(format!("reading the response body failed: {}", redact::chain(&e))),
                None => Ok(None),
            },
            Source::Reqwest(response) => response.chunk().await.map_err(redact::http_error),
        }
    }
}

impl Reply {
    /// A direct HTTP/1.1 response, its body still on `body`'s connection.
    pub(super) fn own(status: StatusCode, head: Head, body: Body, home: Weak<DirectOrigin>) -> Reply {
        let mut reply = Reply {
            status,
            from: From::Own {
                head,
                body: Some(body),
                home,
            },
        };
        reply.go_home_if_done();
        reply
    }

    /// A direct HTTP/2 response, its body still on its stream.
    pub(super) fn h2(response: hyper::Response<h2::RecvStream>) -> Reply {
        let (parts, body) = response.into_parts();
        Reply::pieces(
            parts.status,
            Source::H2 {
                fields: parts.headers,
                body,
            },
        )
    }

    pub(crate) fn from_reqwest(response: reqwest::Response) -> Reply {
        Reply::pieces(response.status(), Source::Reqwest(response))
    }

    fn pieces(status: StatusCode, source: Source) -> Reply {
        let (last, rest) = (Bytes::new(), Bytes::new());
        Reply {
            status,
            from: From::Pieces { source, last, rest },
        }
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Whether the response came over HTTP/2.
    pub fn is_h2(&self) -> bool {
        match &self.from {
            From::Own { .. } => false,
            From::Pieces {
                source: Source::H2 { .. },
                ..
            } => true,
            From::Pieces {
                source: Source::Reqwest(response),
                ..
            } => response.version() == reqwest::Version::HTTP_2,
        }
    }

    /// The first value of the field `name` (lowercase), if it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        match &self.from {
            From::Own { head, .. } => head.value(name),
            From::Pieces { source, .. } => source.fields().get(name).and_then(|v| v.to_str().ok()),
        }
    }

    /// Every value of the field `name` (lowercase) that is text.
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        match &self.from {
            From::Own { head, .. } => head.values(name),
            From::Pieces { source, .. } => source
                .fields()
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect(),
        }
    }

    /// The fields as a map (built on demand: only the authorization's hooks want one).
    pub fn header_map(&self) -> HeaderMap {
        match &self.from {
            From::Own { head, .. } => {
                let mut map = HeaderMap::new();
                for (name, value) in head.fields() {
                    if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name), HeaderValue::from_bytes(value)) {
                        map.append(name, value);
                    }
                }
                map
            }
            From::Pieces { source, .. } => source.fields().clone(),
        }
    }

    /// Whether the body was read to its end (known without reading: a direct body with a
    /// length, all of it taken); its connection then goes home now.
    pub fn at_end(&mut self) -> bool {
        let ended = match &mut self.from {
            From::Own { body: Some(body), .. } => body.at_end(),
            From::Own { body: None, .. } => true,
            From::Pieces { .. } => false,
        };
        self.go_home_if_done();
        ended
    }

    fn go_home_if_done(&mut self) {
        if let From::Own { body, home, .. } = &mut self.from {
            if body.as_ref().is_some_and(Body::is_done) {
                let done = body.take().expect("checked");
                if let (true, Some(origin)) = (done.reusable(), home.upgrade()) {
                    origin.put_back(done.conn);
                }
            }
        }
    }

    /// The next piece of the body; `None` at its end. The error says what broke.
    pub async fn chunk(&mut self) -> Result<Option<&[u8]>, String> {
        self.go_home_if_done();
        if let From::Own { body, .. } = &mut self.from {
            let range = match body {
                Some(body) => body.piece().await,
                None => return Ok(None),
            };
            self.go_home_if_done();
            return match (range, &self.from) {
                (Ok(Some(range)), From::Own { body: Some(body), .. }) => Ok(Some(body.bytes(range))),
                (Ok(_), _) => Ok(None),
                (Err(e), _) => Err(e),
            };
        }
        let From::Pieces { source, last, rest } = &mut self.from else {
            return Ok(None);
        };
        if rest.is_empty() {
            match source.next().await? {
                Some(bytes) => *rest = bytes,
                None => return Ok(None),
            }
        }
        *last = std::mem::take(rest);
        Ok(Some(&last[..]))
    }

    /// Appends the body's next bytes to `dst`, at most `max` (> 0) of them; `Ok(0)` at its end.
    /// On a direct HTTP/1.1 connection, bytes not yet read from the socket are read straight
    /// into `dst`'s spare capacity (see `h1::Body::append`); otherwise they are copied.
    pub async fn append(&mut self, dst: &mut Vec<u8>, max: usize) -> Result<usize, String> {
        self.go_home_if_done();
        let appended = match &mut self.from {
            From::Own { body: None, .. } => return Ok(0),
            From::Own { body: Some(body), .. } => body.append(dst, max).await,
            From::Pieces { source, rest, .. } => {
                while rest.is_empty() {
                    match source.next().await? {
                        Some(bytes) => *rest = bytes,
                        None => return Ok(0),
                    }
                }
                let piece = rest.split_to(rest.len().min(max));
                dst.extend_from_slice(&piece);
                Ok(piece.len())
            }
        };
        self.go_home_if_done();
        appended
    }

    /// Reads the body to its end, up to `max` bytes; `Ok(Err(len))` when it is longer (the rest
    /// is not read, and the connection goes with the reply).
    pub async fn read_bounded(&mut self, max: usize) -> Result<Result<Vec<u8>, usize>, String> {
        let read = match &mut self.from {
            From::Own { body: None, .. } => return Ok(Ok(Vec::new())),
            From::Own { body: Some(body), .. } => body.read_all(max).await,
            From::Pieces { source, rest, .. } => {
                let declared = source.declared().max(rest.len());
                if declared > max {
                    return Ok(Err(declared));
                }
                // Sized by the declared length (at most `max`), so a large body is not copied
                // again each time the vector grows. A length is a claim, not bytes received,
                // but a vector's capacity is not written until bytes arrive: a false claim
                // reserves address space (large blocks are mapped lazily), not memory.
                // What an earlier `append` left of a piece comes first.
                let mut body = Vec::with_capacity(declared);
                body.extend_from_slice(&std::mem::take(rest));
                loop {
                    match source.next().await {
                        Ok(Some(bytes)) => {
                            if body.len() + bytes.len() > max {
                                return Ok(Err(body.len() + bytes.len()));
                            }
                            body.extend_from_slice(&bytes);
                        }
                        Ok(None) => break Ok(Ok(body)),
                        Err(e) => break Err(e),
                    }
                }
            }
        };
        self.go_home_if_done();
        read
    }
}
