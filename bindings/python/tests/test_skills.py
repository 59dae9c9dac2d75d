"""The skills extension (SEP-2640): listing without fetching, verified reads, and tampered
files rejected with SkillVerificationError (fixture ``--skills`` modes)."""

from __future__ import annotations

import pytest

import mcp_client

HELLO = "skill://fixture/hello-world/SKILL.md"
USAGE = "skill://fixture/hello-world/notes/usage.md"


def entry(listing, uri):
    return next(e for e in listing["skills"] if e["uri"] == uri)


@pytest.mark.parametrize("flags", [(), ("--era", "legacy")])
def test_list_then_verified_reads(make_client, flags):
    c = make_client("--skills", "genuine", "--page-size", "1", *flags, skills=True)
    listing = c.list_skills()
    assert [e["uri"] for e in listing["skills"]] == [HELLO, "skill://live-data/SKILL.md"]
    assert listing["rejected"] == []
    hello = entry(listing, HELLO)
    assert "Say hello" in c.read_skill_file(hello)["text"]
    assert c.read_skill_file(hello, USAGE)["text"] == "Use a friendly tone.\n"
    assert c.get_skill(HELLO)["frontmatter"]["name"] == "hello-world"
    with pytest.raises(mcp_client.RpcError) as info:
        c.get_skill("skill://nope/SKILL.md")
    assert info.value.code == -32602


@pytest.mark.parametrize(
    "mode, reason",
    [("digest", "digest mismatch"), ("size", "size mismatch"), ("frontmatter", "frontmatter mismatch")],
)
def test_tampered_skill_md_is_rejected(make_client, mode, reason):
    c = make_client("--skills", mode, skills=True)
    hello = entry(c.list_skills(), HELLO)
    with pytest.raises(mcp_client.SkillVerificationError) as info:
        c.read_skill_file(hello)
    assert info.value.status == mcp_client.MCP_SKILL_VERIFICATION_FAILED
    assert reason in info.value.message


def test_unlisted_files_and_malformed_entries(make_client):
    c = make_client("--skills", "malformed", skills=True)
    listing = c.list_skills()
    reasons = {r["uri"]: r["reason"] for r in listing["rejected"]}
    assert "differs" in reasons["skill://fixture/bad-name/SKILL.md"]
    assert "outside the skill" in reasons["skill://fixture/escape/SKILL.md"]
    with pytest.raises(mcp_client.SkillVerificationError, match="not a file of the skill"):
        c.read_skill_file(entry(listing, HELLO), "skill://fixture/hello-world/other.md")


def test_undeclared_server_is_unsupported(make_client):
    c = make_client()
    with pytest.raises(mcp_client.UnsupportedError, match="io.modelcontextprotocol/skills"):
        c.list_skills()
