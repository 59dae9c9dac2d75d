//! HTTP/1.1 message parsing and formatting: request heads, Content-Length
//! and chunked bodies, media-type checks, response heads, chunks and SSE
//! events. Everything here is pure (works on any `BufRead`) and never
//! panics on bad input: errors carry the status to answer with.

use serde_json::{Map, Value};
use std::io::{BufRead, Read};

/// Longest request line or header line.
pub const MAX_LINE: usize = 16 * 1024;
/// Largest request head (request line plus headers).
pub const MAX_HEAD: usize = 64 * 1024;
pub const MAX_HEADERS: usize = 100;
/// Largest request body (Content-Length or chunked).
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// A request that cannot be served; `status` is the answer (400, 413, …).
#[derive(Debug, PartialEq, Eq)]
pub struct HttpError {
    pub status: u16,
    pub message: String,
}

fn err(status: u16, message: impl Into<String>) -> HttpError {
    HttpError {
        status,
        message: message.into(),
    }
}

fn bad(message: impl Into<String>) -> HttpError {
    err(400, message)
}

/// Header fields in arrival order: lower-case name, value without the
/// surrounding whitespace (bytes that are not UTF-8 become U+FFFD).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<(String, String)>);

impl Headers {
    /// The value of `name` (any case); repeated fields are joined with ", ".
    pub fn get(&self, name: &str) -> Option<String> {
        let name = name.to_ascii_lowercase();
        let values: Vec<&str> = self
            .0
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    /// Every field as a JSON object (lower-case names, repeats joined).
    pub fn to_json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        for (name, _) in &self.0 {
            if !map.contains_key(name) {
                map.insert(name.clone(), Value::String(self.get(name).unwrap_or_default()));
            }
        }
        map
    }

    /// The fields whose (lower-case) name starts with `prefix`.
    pub fn with_prefix(&self, prefix: &str) -> Map<String, Value> {
        let mut map = self.to_json();
        map.retain(|name, _| name.starts_with(prefix));
        map
    }
}

#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The request target as sent (path plus query).
    pub target: String,
    pub path: String,
    pub query: Option<String>,
    /// Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor: u8,
    pub headers: Headers,
    pub body: Vec<u8>,
}

impl Request {
    /// Whether the connection may serve another request afterwards.
    pub fn keep_alive(&self) -> bool {
        let connection = self.headers.get("connection").unwrap_or_default().to_ascii_lowercase();
        let has = |token: &str| connection.split(',').any(|t| t.trim() == token);
        if self.minor == 0 {
            has("keep-alive")
        } else {
            !has("close")
        }
    }

    pub fn query_param(&self, name: &str) -> Option<String> {
        query_param(self.query.as_deref()?, name)
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `s` is an RFC 9110 token (`1*tchar`).
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// Reads one line (through "\n"), at most `max` bytes. None at a clean EOF.
fn read_line<R: BufRead>(r: &mut R, max: usize) -> Result<Option<Vec<u8>>, HttpError> {
    let mut line = Vec::new();
    let n = r
        .by_ref()
        .take(max as u64 + 1)
        .read_until(b'\n', &mut line)
        .map_err(|e| bad(format!("read error: {e}")))?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        if line.len() > max {
            return Err(err(431, "line too long"));
        }
        return Err(bad("connection closed in the middle of a line"));
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(line))
}

/// Parses "METHOD SP target SP HTTP/1.x".
fn parse_request_line(line: &[u8]) -> Result<(String, String, u8), HttpError> {
    let text = std::str::from_utf8(line).map_err(|_| bad("request line is not UTF-8"))?;
    let parts: Vec<&str> = text.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Err(bad("malformed request line"));
    };
    if !is_token(method) {
        return Err(bad("malformed method"));
    }
    if target.is_empty() || target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(bad("malformed request target"));
    }
    let minor = match version {
        "HTTP/1.1" => 1,
        "HTTP/1.0" => 0,
        v if v.starts_with("HTTP/") && v.len() == 8 => return Err(err(505, "HTTP version not supported")),
        _ => return Err(bad("malformed HTTP version")),
    };
    Ok((method.to_string(), target.to_string(), minor))
}

/// Parses one header line into (lower-case name, trimmed value).
pub fn parse_header_line(line: &[u8]) -> Result<(String, String), HttpError> {
    if matches!(line.first(), Some(b' ' | b'\t')) {
        return Err(bad("obsolete line folding"));
    }
    let colon = line
        .iter()
        .position(|b| *b == b':')
        .ok_or_else(|| bad("header without ':'"))?;
    let name = std::str::from_utf8(&line[..colon]).unwrap_or_default();
    if !is_token(name) {
        return Err(bad("malformed header name"));
    }
    let value = line[colon + 1..].trim_ascii();
    if value.iter().any(|b| matches!(b, 0 | b'\r' | b'\n')) {
        return Err(bad("control character in header value"));
    }
    Ok((name.to_ascii_lowercase(), String::from_utf8_lossy(value).into_owned()))
}

fn parse_content_length(headers: &Headers) -> Result<Option<usize>, HttpError> {
    let Some(raw) = headers.get("content-length") else {
        return Ok(None);
    };
    // Repeated fields must agree ("5, 5" is the same length).
    let mut length = None;
    for part in raw.split(',').map(str::trim) {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("malformed Content-Length"));
        }
        let n = part.parse::<u64>().unwrap_or(u64::MAX);
        if length.is_some_and(|l| l != n) {
            return Err(bad("conflicting Content-Length values"));
        }
        length = Some(n);
    }
    match length {
        Some(n) if n > MAX_BODY as u64 => Err(err(413, "request body too large")),
        Some(n) => Ok(Some(n as usize)),
        None => Err(bad("malformed Content-Length")),
    }
}

fn read_chunked<R: BufRead>(r: &mut R) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r, MAX_LINE)?.ok_or_else(|| bad("connection closed in a chunked body"))?;
        let text = std::str::from_utf8(&line).map_err(|_| bad("malformed chunk size"))?;
        let size_text = text.split(';').next().unwrap_or_default().trim();
        if size_text.is_empty() || size_text.len() > 15 {
            return Err(bad("malformed chunk size"));
        }
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad("malformed chunk size"))?;
        if size == 0 {
            // Trailer fields (ignored) up to the empty line.
            loop {
                match read_line(r, MAX_LINE)? {
                    Some(l) if l.is_empty() => return Ok(body),
                    Some(_) => {}
                    None => return Err(bad("connection closed in chunk trailers")),
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(err(413, "request body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])
            .map_err(|_| bad("connection closed in a chunk"))?;
        match read_line(r, 2)? {
            Some(l) if l.is_empty() => {}
            _ => return Err(bad("chunk not followed by CRLF")),
        }
    }
}

/// Reads one request. `Ok(None)`: the peer closed the connection before
/// sending anything. `on_continue` runs before a body is read when the
/// request carries `Expect: 100-continue`.
pub fn read_request<R: BufRead>(r: &mut R, on_continue: &mut dyn FnMut()) -> Result<Option<Request>, HttpError> {
    // Empty lines before the request line are ignored (RFC 9112 §2.2).
    let mut line = loop {
        match read_line(r, MAX_LINE)? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let (method, target, minor) = parse_request_line(&line)?;
    let mut head_size = line.len();
    let mut fields = Vec::new();
    loop {
        line = read_line(r, MAX_LINE)?.ok_or_else(|| bad("connection closed in the header section"))?;
        if line.is_empty() {
            break;
        }
        head_size += line.len();
        if head_size > MAX_HEAD || fields.len() >= MAX_HEADERS {
            return Err(err(431, "request header section too large"));
        }
        fields.push(parse_header_line(&line)?);
    }
    let headers = Headers(fields);
    let chunked = match headers.get("transfer-encoding") {
        None => false,
        Some(te) if te.trim().eq_ignore_ascii_case("chunked") => true,
        Some(_) => return Err(err(501, "unsupported Transfer-Encoding")),
    };
    let length = parse_content_length(&headers)?;
    if chunked && length.is_some() {
        return Err(bad("both Content-Length and Transfer-Encoding"));
    }
    let expects_body = chunked || length.unwrap_or(0) > 0;
    if expects_body {
        match headers.get("expect") {
            Some(e) if e.eq_ignore_ascii_case("100-continue") => on_continue(),
            Some(_) => return Err(err(417, "unsupported Expect")),
            None => {}
        }
    }
    let body = if chunked {
        read_chunked(r)?
    } else {
        let mut body = vec![0; length.unwrap_or(0)];
        r.read_exact(&mut body)
            .map_err(|_| bad("connection closed in the body"))?;
        body
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (target.clone(), None),
    };
    Ok(Some(Request {
        method,
        target,
        path,
        query,
        minor,
        headers,
        body,
    }))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let hex = |b: u8| (b as char).to_digit(16);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The (percent-decoded) value of `name` in a query string.
pub fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(k) == name).then(|| percent_decode(v))
    })
}

/// The media types of an `Accept` or `Content-Type` value: lower case,
/// without parameters.
pub fn media_types(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|part| part.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether `Accept` lists `wanted` literally (wildcards do not count: the
/// fixture checks that clients list the types themselves).
pub fn accepts(accept: Option<&str>, wanted: &str) -> bool {
    accept.is_some_and(|a| media_types(a).iter().any(|t| t == wanted))
}

/// Whether `Content-Type` is application/json (parameters allowed).
pub fn is_json_content_type(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| media_types(ct) == ["application/json"])
}

pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// A response head (status line, the given fields, the empty line).
pub fn response_head(status: u16, fields: &[(&str, String)]) -> String {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in fields {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head
}

/// One chunk of a chunked body (never empty: that would end the body).
pub fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// The end of a chunked body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// One SSE event; a multi-line `data` becomes several `data:` lines.
pub fn sse_event(id: Option<u64>, event: Option<&str>, retry: Option<u64>, data: &str) -> String {
    let mut out = String::new();
    if let Some(id) = id {
        out.push_str(&format!("id: {id}\n"));
    }
    if let Some(event) = event {
        out.push_str(&format!("event: {event}\n"));
    }
    if let Some(retry) = retry {
        out.push_str(&format!("retry: {retry}\n"));
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out.push('\n');
    out
}

/// An SSE comment line (clients must ignore it).
pub const SSE_KEEP_ALIVE: &str = ": keep-alive\n\n";

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(raw: &[u8]) -> Result<Option<Request>, HttpError> {
        read_request(&mut Cursor::new(raw.to_vec()), &mut || {})
    }

    fn status(raw: &[u8]) -> u16 {
        parse(raw).unwrap_err().status
    }

    #[test]
    fn content_length_request() {
        let req = parse(
            b"POST /mcp?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n\
              MCP-Protocol-Version:  2026-07-28 \r\nContent-Length: 2\r\n\r\n{}",
        )
        .unwrap()
        .unwrap();
        assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/mcp"));
        assert_eq!((req.target.as_str(), req.query.as_deref()), ("/mcp?x=1", Some("x=1")));
        assert_eq!(req.headers.get("mcp-protocol-version").as_deref(), Some("2026-07-28"));
        assert_eq!(req.headers.get("Content-TYPE").as_deref(), Some("application/json"));
        assert_eq!(req.body, b"{}");
        assert!(req.keep_alive());
    }

    #[test]
    fn bare_lf_pipelining_and_eof() {
        let mut input = Cursor::new(b"\r\nGET /a HTTP/1.1\nA: 1\n\nGET /b HTTP/1.0\r\n\r\n".to_vec());
        let first = read_request(&mut input, &mut || {}).unwrap().unwrap();
        assert_eq!(first.path, "/a");
        let second = read_request(&mut input, &mut || {}).unwrap().unwrap();
        assert_eq!((second.path.as_str(), second.minor), ("/b", 0));
        assert!(!second.keep_alive());
        assert!(read_request(&mut input, &mut || {}).unwrap().is_none());
    }

    #[test]
    fn chunked_body_and_continue() {
        let mut continued = false;
        let raw = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n\
                    3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n";
        let req = read_request(&mut Cursor::new(raw.to_vec()), &mut || continued = true)
            .unwrap()
            .unwrap();
        assert_eq!(req.body, b"abcde");
        assert!(continued);
    }

    #[test]
    fn malformed_requests_are_errors_not_panics() {
        for raw in [
            &b"GARBAGE\r\n\r\n"[..],
            b"GET  /mcp HTTP/1.1\r\n\r\n",
            b"GET /mcp HTTP/1.1 extra\r\n\r\n",
            b"G(T /mcp HTTP/1.1\r\n\r\n",
            b"GET /mcp FTP/1.1\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nNo colon\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nBad Name: x\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nA: 1\r\n folded\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nA: x\ry\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\nab",
            b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab",
            b"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nA: 1",
            b"\xff\xfe / HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(status(raw), 400, "{}", String::from_utf8_lossy(raw));
        }
        assert_eq!(status(b"GET / HTTP/2.0\r\n\r\n"), 505);
        assert_eq!(status(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nExpect: x\r\n\r\na"),
            417
        );
    }

    #[test]
    fn size_limits() {
        let big = format!("POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n", MAX_BODY + 1);
        assert_eq!(status(big.as_bytes()), 413);
        let huge_chunk = format!(
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
            MAX_BODY + 1
        );
        assert_eq!(status(huge_chunk.as_bytes()), 413);
        let long_line = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_LINE));
        assert_eq!(status(long_line.as_bytes()), 431);
        let many: String = (0..=MAX_HEADERS).map(|i| format!("H{i}: v\r\n")).collect();
        assert_eq!(status(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()), 431);
        // Exactly at the body limit is fine (declared, not sent: the read fails as 400).
        let at_limit = format!("POST / HTTP/1.1\r\nContent-Length: {MAX_BODY}\r\n\r\n");
        assert_eq!(status(at_limit.as_bytes()), 400);
    }

    #[test]
    fn headers_join_repeats_and_keep_raw_bytes() {
        let req = parse(b"GET / HTTP/1.1\r\nX-A: 1\r\nx-a: 2\r\nX-Empty:\r\nX-U: R\xc3\xa9gion\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(req.headers.get("x-a").as_deref(), Some("1, 2"));
        assert_eq!(req.headers.get("x-empty").as_deref(), Some(""));
        assert_eq!(req.headers.get("x-u").as_deref(), Some("Région"));
        assert_eq!(req.headers.get("x-missing"), None);
        let json = Value::Object(req.headers.to_json());
        assert_eq!(json.to_string(), r#"{"x-a":"1, 2","x-empty":"","x-u":"Région"}"#);
        assert_eq!(req.headers.with_prefix("x-e").len(), 1);
    }

    #[test]
    fn connection_handling() {
        let req = |raw: &[u8]| parse(raw).unwrap().unwrap();
        assert!(!req(b"GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive());
        assert!(req(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive());
        assert!(req(b"GET / HTTP/1.1\r\nConnection: Upgrade, keep-alive\r\n\r\n").keep_alive());
    }

    #[test]
    fn media_type_checks() {
        assert!(accepts(
            Some("application/json, text/event-stream"),
            "text/event-stream"
        ));
        assert!(accepts(
            Some("Text/Event-Stream;q=0.9,application/json"),
            "application/json"
        ));
        assert!(!accepts(Some("*/*"), "application/json"));
        assert!(!accepts(None, "application/json"));
        assert!(is_json_content_type(Some("application/json; charset=utf-8")));
        assert!(!is_json_content_type(Some("text/plain")));
        assert!(!is_json_content_type(Some("application/json, text/plain")));
        assert!(!is_json_content_type(None));
    }

    #[test]
    fn query_params() {
        assert_eq!(query_param("sessionId=abc&x=1", "sessionId").as_deref(), Some("abc"));
        assert_eq!(query_param("a=%41%2f+b", "a").as_deref(), Some("A/ b"));
        assert_eq!(query_param("a=%4", "a").as_deref(), Some("%4"));
        assert_eq!(query_param("a", "a").as_deref(), Some(""));
        assert_eq!(query_param("b=1", "a"), None);
    }

    #[test]
    fn formatting() {
        assert_eq!(
            response_head(202, &[("Content-Length", "0".into())]),
            "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
        );
        assert_eq!(chunk(b"hello, world!!!!"), b"10\r\nhello, world!!!!\r\n");
        assert_eq!(
            sse_event(Some(3), Some("message"), None, "{}"),
            "id: 3\nevent: message\ndata: {}\n\n"
        );
        assert_eq!(sse_event(Some(4), None, Some(500), ""), "id: 4\nretry: 500\ndata: \n\n");
        assert_eq!(sse_event(None, None, None, "a\nb"), "data: a\ndata: b\n\n");
    }
}
