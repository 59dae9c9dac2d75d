//! `--legacy-sse`: the 2024-11-05 HTTP+SSE transport. A GET opens the
//! session's event stream, whose first event is `endpoint`; the client then
//! POSTs every message to that endpoint (202) and all replies, server→client
//! requests and notifications arrive on the stream.

use crate::http::Conn;
use crate::http_parse::{self, Request};
use crate::server::{Chan, Era};
use crate::sessions::HttpSession;
use crate::sink::SinkRef;
use serde_json::Value;
use std::io;
use std::sync::Arc;

/// Where the client POSTs (plus `?sessionId=<id>`).
pub const MESSAGE_PATH: &str = "/message";

pub fn handle(conn: &mut Conn, req: Request) -> io::Result<bool> {
    match (req.method.as_str(), req.path.as_str()) {
        ("POST", MESSAGE_PATH) => post_message(conn, req),
        ("GET", path) if path != MESSAGE_PATH => open_stream(conn, req),
        // Including `initialize` POSTed to /mcp: a client then falls back
        // to HTTP+SSE (spec §4.6).
        (_, MESSAGE_PATH) => {
            conn.respond_text(405, &[("Allow", "POST".into())], "Method Not Allowed")?;
            Ok(true)
        }
        _ => {
            let text = "Method Not Allowed: this server speaks HTTP+SSE (GET /sse, then POST the endpoint)";
            conn.respond_text(405, &[("Allow", "GET".into())], text)?;
            Ok(true)
        }
    }
}

/// GET /sse (or any path but the message endpoint, so a client falling back
/// with the URL it POSTed to also works).
fn open_stream(conn: &mut Conn, req: Request) -> io::Result<bool> {
    if !http_parse::accepts(req.headers.get("accept").as_deref(), "text/event-stream") {
        conn.respond_text(406, &[], "Not Acceptable: GET needs Accept: text/event-stream")?;
        return Ok(true);
    }
    let session = HttpSession::new();
    let hs = Arc::clone(&conn.hs);
    hs.sessions.insert(Arc::clone(&session));
    let (token, rx, _) = session.hub.attach(None);
    eprintln!("fixture: HTTP+SSE session {} opened", session.id);
    let endpoint = format!("{MESSAGE_PATH}?sessionId={}", session.id);
    let result = conn
        .start_sse(&[])
        .and_then(|_| conn.sse_write(&http_parse::sse_event(None, Some("endpoint"), None, &endpoint)))
        .and_then(|_| conn.stream_events(rx, Vec::new(), false));
    session.hub.detach(token);
    // The stream is the session: when it goes, so does the session.
    hs.sessions.remove(&session.id, &hs.srv);
    eprintln!("fixture: HTTP+SSE session {} closed", session.id);
    result
}

/// `POST /message?sessionId=<id>`: 202, the answer goes to the stream.
fn post_message(conn: &mut Conn, req: Request) -> io::Result<bool> {
    let Some(sid) = req.query_param("sessionId") else {
        conn.respond_text(400, &[], "Bad Request: missing sessionId")?;
        return Ok(true);
    };
    let Some(session) = conn.hs.sessions.get(&sid) else {
        conn.respond_text(404, &[], "Not Found: unknown sessionId")?;
        return Ok(true);
    };
    if !http_parse::is_json_content_type(req.headers.get("content-type").as_deref()) {
        conn.respond_text(
            415,
            &[],
            "Unsupported Media Type: Content-Type must be application/json",
        )?;
        return Ok(true);
    }
    let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
        conn.respond_text(400, &[], "Bad Request: invalid JSON")?;
        return Ok(true);
    };
    let out: SinkRef = session.hub.clone();
    let chan = Chan {
        out,
        session: Arc::clone(&session.cell),
        era: Some(Era::Legacy),
        // `initialize` completes before the 202, as over stdio.
        inline_ordering: true,
        param_headers: Some(req.headers.with_prefix("mcp-param-")),
    };
    conn.hs.srv.dispatch(msg, &chan);
    conn.respond_text(202, &[], "Accepted")?;
    Ok(true)
}
