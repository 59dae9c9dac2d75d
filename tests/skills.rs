//! The skills extension (SEP-2640) against the fixture's `--skills` modes, in both eras:
//! the declaration gate, `skills/list` over every page with nothing prefetched, `skills/get`,
//! verified reads (text, blob, dynamic), and each tampered variant rejected with
//! `SkillVerificationFailed` before anything is returned; over modern HTTP, the headers.

mod common;

use common::*;
use mcp_client::HttpConfig;
use mcp_client::{Client, ClientConfig, ConnectMode, ErrorKind, TransportConfig, SKILLS_EXTENSION};
use serde_json::{json, Value};

const HELLO: &str = "skill://fixture/hello-world/SKILL.md";
const USAGE: &str = "skill://fixture/hello-world/notes/usage.md";
const WAVE: &str = "skill://fixture/hello-world/assets/wave.bin";
const LIVE: &str = "skill://live-data/SKILL.md";

fn skills_client(fx: &Fixture) -> Client {
    fx.client_with(|c| c.skills = true)
}

fn entry<'a>(list: &'a Value, uri: &str) -> &'a Value {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"] == uri)
        .unwrap_or_else(|| panic!("{uri} not listed: {list}"))
}

fn reads(fx: &Fixture) -> Vec<String> {
    fx.wire
        .requests("resources/read")
        .iter()
        .map(|r| r["params"]["uri"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_merges_every_page_and_reads_no_file_then_files_verify() {
    for fx in [
        Fixture::modern(&["--skills", "genuine", "--page-size", "1"]),
        Fixture::legacy(&["--skills", "genuine", "--page-size", "1"]),
    ] {
        let client = skills_client(&fx);
        let list = client.list_skills(&none()).await.unwrap();
        assert_eq!(list["rejected"], json!([]), "{list}");
        let uris: Vec<&str> = list["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["uri"].as_str().unwrap())
            .collect();
        assert_eq!(uris, [HELLO, LIVE]);
        assert_eq!(fx.wire.requests("skills/list").len(), 2, "one request per page");
        assert!(reads(&fx).is_empty(), "listing fetched a file: {:?}", reads(&fx));

        let hello = entry(&list, HELLO).clone();
        let md = client.read_skill_file(&hello, None, &none()).await.unwrap();
        assert_eq!(md["uri"], HELLO);
        assert!(md["text"].as_str().unwrap().contains("Say hello"), "{md}");
        let usage = client.read_skill_file(&hello, Some(USAGE), &none()).await.unwrap();
        assert_eq!(usage["text"], "Use a friendly tone.\n");
        let wave = client.read_skill_file(&hello, Some(WAVE), &none()).await.unwrap();
        assert_eq!(wave["blob"], "AAEC/w==", "the blob is verified on its decoded bytes");
        assert_eq!(reads(&fx), [HELLO, USAGE, WAVE], "exactly the files asked for");

        let live = entry(&list, LIVE).clone();
        assert_eq!(live["resources"], "dynamic");
        client.read_skill_file(&live, None, &none()).await.unwrap();
        let today = client
            .read_skill_file(&live, Some("skill://live-data/data/today.txt"), &none())
            .await
            .unwrap();
        assert_eq!(today["text"], "sunny\n");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_declares_the_extension_only_when_asked() {
    let fx = Fixture::modern(&["--skills", "genuine"]);
    let client = skills_client(&fx);
    client.list_skills(&none()).await.unwrap();
    let sent = &fx.wire.requests("skills/list")[0];
    let caps = &sent["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(caps["extensions"][SKILLS_EXTENSION], json!({}), "{sent}");
    client.close().await;

    let fx = Fixture::legacy(&["--skills", "genuine"]);
    let client = fx.client();
    client.list_skills(&none()).await.unwrap();
    let init = &fx.wire.requests("initialize")[0];
    assert!(init["params"]["capabilities"].get("extensions").is_none(), "{init}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_to_a_server_that_did_not_declare_skills() {
    let fx = Fixture::modern(&[]);
    let client = skills_client(&fx);
    for err in [
        client.list_skills(&none()).await.unwrap_err(),
        client.get_skill(HELLO, &none()).await.unwrap_err(),
    ] {
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
        assert!(err.message().contains(SKILLS_EXTENSION), "{err}");
    }
    assert!(fx.wire.requests("skills/list").is_empty());
    assert!(fx.wire.requests("skills/get").is_empty());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_returns_the_checked_entry_and_unknown_uris_are_server_errors() {
    let fx = Fixture::modern(&["--skills", "genuine"]);
    let client = skills_client(&fx);
    let hello = client.get_skill(HELLO, &none()).await.unwrap();
    assert_eq!(hello["frontmatter"]["name"], "hello-world");
    client.read_skill_file(&hello, None, &none()).await.unwrap();
    let err = client.get_skill("skill://nope/SKILL.md", &none()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rpc);
    assert_eq!(err.rpc_error().unwrap().code, -32602);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_skill_md_fails_verification_with_the_reason() {
    for (mode, reason) in [
        ("digest", "digest mismatch"),
        ("size", "size mismatch"),
        ("frontmatter", "frontmatter mismatch: \"description\""),
    ] {
        let fx = Fixture::modern(&["--skills", mode]);
        let client = skills_client(&fx);
        let list = client.list_skills(&none()).await.unwrap();
        let hello = entry(&list, HELLO).clone();
        let err = client.read_skill_file(&hello, None, &none()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::SkillVerificationFailed, "{mode}: {err}");
        assert!(err.message().contains(reason), "{mode}: {err}");
        // The other files are untouched and still verify: the failure is the SKILL.md's own.
        client.read_skill_file(&hello, Some(USAGE), &none()).await.unwrap();
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_breaking_the_rules_are_rejected_and_unlisted_files_are_never_read() {
    let fx = Fixture::modern(&["--skills", "malformed"]);
    let client = skills_client(&fx);
    let list = client.list_skills(&none()).await.unwrap();
    let rejected = list["rejected"].as_array().unwrap();
    let why = |uri: &str| {
        rejected
            .iter()
            .find(|r| r["uri"] == uri)
            .unwrap_or_else(|| panic!("{uri} not rejected: {list}"))["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(why("skill://fixture/bad-name/SKILL.md").contains("differs"));
    assert!(why("skill://fixture/escape/SKILL.md").contains("outside the skill"));
    assert_eq!(
        list["skills"].as_array().unwrap().len(),
        2,
        "the valid ones stay: {list}"
    );

    // A rejected entry handed back is refused before anything is sent, and so is a file the
    // held entry does not list.
    let escape = &rejected
        .iter()
        .find(|r| r["uri"] == "skill://fixture/escape/SKILL.md")
        .unwrap()["entry"];
    let err = client.read_skill_file(escape, None, &none()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SkillVerificationFailed, "{err}");
    let hello = entry(&list, HELLO).clone();
    let err = client
        .read_skill_file(&hello, Some("skill://fixture/hello-world/unlisted.md"), &none())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SkillVerificationFailed, "{err}");
    assert!(err.message().contains("not a file of the skill"), "{err}");
    assert!(reads(&fx).is_empty(), "{:?}", reads(&fx));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_modern_http_skills_methods_carry_mcp_method_and_no_mcp_name() {
    let record = TempPath::new("skills-http.jsonl");
    let server = HttpFixture::start(&["--skills", "genuine", "--record", &record.as_string()]);
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
    config.mode = ConnectMode::Modern;
    config.skills = true;
    let client = Client::new(config);
    let list = client.list_skills(&none()).await.unwrap();
    let hello = client.get_skill(HELLO, &none()).await.unwrap();
    assert_eq!(&hello, entry(&list, HELLO));
    client.read_skill_file(&hello, None, &none()).await.unwrap();
    client.close().await;

    let sent: Vec<Value> = record
        .lines()
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let header = |req: &Value, name: &str| {
        req["http"]["headers"]
            .as_object()
            .and_then(|h| h.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
            .map(|(_, v)| v.as_str().unwrap().to_string())
    };
    for method in ["skills/list", "skills/get"] {
        let req = sent.iter().find(|r| r["body"]["method"] == method).expect(method);
        assert_eq!(header(req, "Mcp-Method").as_deref(), Some(method), "{req}");
        assert_eq!(header(req, "Mcp-Name"), None, "{req}");
    }
    let read = sent.iter().find(|r| r["body"]["method"] == "resources/read").unwrap();
    assert_eq!(header(read, "Mcp-Name").as_deref(), Some(HELLO));
}
