// The skills extension (SEP-2640): list without fetching, verified reads, and a tampered
// SKILL.md rejected with SkillVerificationError (fixture --skills modes).
#include "harness.hpp"

namespace {
const char* kHello = "skill://fixture/hello-world/SKILL.md";

mcp::Client skills_client(const char* mode) {
    mcp::Options o;
    o.extra_json = R"({"skills":true})";
    return t::fixture({"--skills", mode}, o);
}
}  // namespace

TEST(skills, list_then_verified_reads) {
    auto client = skills_client("genuine");
    std::string list = client.list_skills();
    CHECK_CONTAINS(list, "\"rejected\":[]");
    CHECK_EQ(mcp::json::string_at(list, "/skills/0/uri"), std::string(kHello));
    std::string entry = mcp::json::at(list, "/skills/0");
    CHECK_CONTAINS(client.read_skill_file(entry), "Say hello");
    CHECK_CONTAINS(client.read_skill_file(entry, std::string("skill://fixture/hello-world/notes/usage.md")),
                   "Use a friendly tone.");
    CHECK_CONTAINS(client.get_skill(kHello), "\"name\":\"hello-world\"");
}

TEST(skills, tampered_skill_md_is_rejected) {
    auto client = skills_client("size");
    std::string entry = mcp::json::at(client.list_skills(), "/skills/0");
    auto e = EXPECT_THROW(mcp::SkillVerificationError, client.read_skill_file(entry));
    CHECK_EQ(e.status(), MCP_SKILL_VERIFICATION_FAILED);
    CHECK_CONTAINS(std::string(e.what()), "size mismatch");
}

TEST(skills, undeclared_server_is_unsupported) {
    auto client = t::fixture();
    EXPECT_THROW(mcp::UnsupportedError, client.list_skills());
}
