package mcpclient

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const helloSkill = "skill://fixture/hello-world/SKILL.md"

func firstSkill(t *testing.T, c *Client) json.RawMessage {
	t.Helper()
	raw, err := c.ListSkills(testCtx(t))
	if err != nil {
		t.Fatalf("ListSkills: %v", err)
	}
	var list struct {
		Skills   []json.RawMessage `json:"skills"`
		Rejected []json.RawMessage `json:"rejected"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || len(list.Skills) == 0 || len(list.Rejected) != 0 {
		t.Fatalf("listing %s: %v", raw, err)
	}
	return list.Skills[0]
}

func TestSkillsListAndVerifiedReads(t *testing.T) {
	c := newFixture(t, []string{"--skills", "genuine"}, WithSkills())
	entry := firstSkill(t, c)
	md, err := c.ReadSkillFile(testCtx(t), entry, "")
	if err != nil || !strings.Contains(string(md), "Say hello") {
		t.Fatalf("SKILL.md: %s %v", md, err)
	}
	usage, err := c.ReadSkillFile(testCtx(t), entry, "skill://fixture/hello-world/notes/usage.md")
	if err != nil || !strings.Contains(string(usage), "Use a friendly tone.") {
		t.Fatalf("usage.md: %s %v", usage, err)
	}
	got, err := c.GetSkill(testCtx(t), helloSkill)
	if err != nil || !strings.Contains(string(got), `"name":"hello-world"`) {
		t.Fatalf("GetSkill: %s %v", got, err)
	}
}

func TestSkillsTamperedFileFailsVerification(t *testing.T) {
	c := newFixture(t, []string{"--skills", "digest"}, WithSkills())
	entry := firstSkill(t, c)
	_, err := c.ReadSkillFile(testCtx(t), entry, "")
	if !errors.Is(err, ErrSkillVerificationFailed) || !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("want ErrSkillVerificationFailed, got %v", err)
	}
}

func TestSkillsUndeclaredServerIsUnsupported(t *testing.T) {
	c := newFixture(t, nil)
	if _, err := c.ListSkills(testCtx(t)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want ErrUnsupported, got %v", err)
	}
}
