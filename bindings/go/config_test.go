package mcpclient

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// The generated structs carry exactly the schema's keys (the Rust test regenerates both).
func TestConfigStructsFollowTheSchema(t *testing.T) {
	raw, err := os.ReadFile("../../include/mcp_client.config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	tags := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := 0; i < ty.NumField(); i++ {
			out = append(out, strings.Split(ty.Field(i).Tag.Get("json"), ",")[0])
		}
		sort.Strings(out)
		return out
	}
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		v    any
		want []string
	}{
		{Config{}, keys(schema.Properties)},
		{OAuthConfig{}, keys(schema.Defs["OAuth"].Properties)},
		{ReconnectConfig{}, keys(schema.Defs["Reconnect"].Properties)},
	} {
		if got := tags(c.v); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%T keys %v, schema %v", c.v, got, c.want)
		}
	}
}

func TestWithConfig(t *testing.T) {
	c := connected(t, nil, WithConfig(Config{
		Mode:                   ptr("modern"),
		ClientInfo:             map[string]any{"name": "go-typed", "version": "1.0"},
		ConnectTimeoutMs:       ptr(uint64(0)), // an explicit zero is sent (0: no bound)
		Reconnect:              &ReconnectConfig{MaxAttempts: ptr(uint32(2))},
		InputRequiredMaxRounds: ptr(uint32(3)),
	}))
	if raw := callText(t, c, "echo_meta", nil); !strings.Contains(raw, `"go-typed"`) {
		t.Fatalf("clientInfo not sent: %s", raw)
	}
	// A bad value is refused with its key named.
	_, err := NewStdio(fixture, nil, WithConfig(Config{EnvMode: ptr("everything")}))
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArg || !strings.Contains(e.Message, "env_mode") {
		t.Fatalf("bad env_mode: %v", err)
	}
	// A value that does not marshal is reported by the constructor.
	_, err = NewStdio(fixture, nil, WithConfig(Config{Capabilities: map[string]any{"x": make(chan int)}}))
	if !errors.As(err, &e) || e.Status != StatusInvalidArg {
		t.Fatalf("unmarshalable config: %v", err)
	}
}
