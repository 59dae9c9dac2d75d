//! The JSON configuration parsers (`ClientConfig::from_json`, `OAuthConfig::from_json`): any
//! JSON is accepted or refused with an error, never a panic, and an accepted configuration
//! never makes the transports' parsers misbehave.

use mcp_client::fuzzing::sse::{SseItem, SseParser};
use mcp_client::ClientConfig;
use mcp_client::OAuthConfig;
use proptest::prelude::*;
use serde_json::{Map, Value};

/// The keys of the top-level object or of one nested settings object (`"oauth"`), from the
/// configuration's schema: every key the parser accepts is generated, new ones included.
fn keys_of(section: &str) -> Vec<String> {
    let keys = mcp_client::config::keys();
    let found = keys.into_iter().find(|(name, _)| name == section);
    found.unwrap_or_else(|| panic!("no settings object {section:?}")).1
}

/// Values of every type, with the edges the parsers must handle (huge numbers, negatives,
/// floats, odd strings, URLs).
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![
            0u64,
            1,
            1023,
            1024,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
            u64::MAX
        ])
        .prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop::sample::select(vec![
            "auto",
            "modern",
            "legacy",
            "inherit",
            "replace",
            "client_credentials",
            "authorization_code",
            "none",
            "private_key_jwt",
            "http://127.0.0.1:1/mcp",
            "https://example.invalid/mcp",
            "ftp://x",
            "",
            "=",
            "A=B",
            "echo",
            "native",
            "web",
            "ES256",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        ])
        .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec(("[A-Za-z=_ ]{0,4}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn object(keys: Vec<String>, nested: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        8 => prop::sample::select(keys),
        1 => "[a-z_]{1,8}",
    ];
    prop::collection::vec((key, prop_oneof![4 => value(), 1 => nested]), 0..8)
        .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>()))
}

fn oauth() -> impl Strategy<Value = Value> {
    object(keys_of("oauth"), value())
}

/// A value for a top-level key: mostly any value, sometimes one of the settings objects.
fn nested() -> impl Strategy<Value = Value> {
    prop_oneof![
        oauth(),
        object(keys_of("reconnect"), value()),
        object(keys_of("tool_pinning"), value())
    ]
}

/// Mostly a valid base (a command or a URL) with any other keys, so most cases get past the
/// first check; sometimes anything at all.
fn config() -> impl Strategy<Value = Value> {
    let base = prop::sample::select(vec![
        ("command", "mcp-fixture-server"),
        ("url", "http://127.0.0.1:1/mcp"),
        ("url", "https://example.invalid/mcp"),
    ]);
    prop_oneof![
        6 => (base, object(keys_of(""), nested())).prop_map(|((key, v), mut obj)| {
            let map = obj.as_object_mut().unwrap();
            map.remove("command");
            map.remove("url");
            map.insert(key.into(), v.into());
            obj
        }),
        3 => object(keys_of(""), nested()),
        1 => value(),
    ]
}

proptest! {
    #[test]
    fn oauth_configs_parse_or_fail_cleanly(v in oauth()) {
        let _ = OAuthConfig::from_json(&v);
    }

    #[test]
    fn client_configs_parse_or_fail_cleanly(v in config()) {
        if let Ok(cfg) = ClientConfig::from_json(&v) {
            // An accepted bound is one the transports can run with.
            let max = cfg.transport.max_message_bytes();
            prop_assert!(max >= 1024);
            let mut sse = SseParser::new(max);
            sse.feed(b"data: x\n\n");
            prop_assert_eq!(sse.next_item().map(|i| matches!(i, SseItem::Event(_))), Some(true));
            let _ = format!("{cfg:?}");
        }
    }
}
