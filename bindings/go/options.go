package mcpclient

import (
	"encoding/json"
	"time"
)

// Option configures a client (NewStdio, NewHTTP). Each option sets one key of the library's
// flat JSON configuration (see mcp_config_new in include/mcp_client.h).
type Option func(*config)

type config struct {
	settings map[string]any
	env      map[string]string
	headers  map[string]string
}

func newConfig() *config {
	return &config{settings: map[string]any{}}
}

func (c *config) json() ([]byte, error) {
	m := make(map[string]any, len(c.settings)+2)
	for k, v := range c.settings {
		m[k] = v
	}
	if c.env != nil {
		m["env"] = c.env
	}
	if c.headers != nil {
		m["headers"] = c.headers
	}
	return json.Marshal(m)
}

// EnvMode says which of the host's environment variables the server gets (stdio).
type EnvMode int

const (
	EnvInherit   EnvMode = iota // all of them (an explicit choice), plus the variables set
	EnvReplace                  // none: only the variables set with WithEnv
	EnvAllowlist                // HOME LOGNAME PATH SHELL TERM USER LANG LC_* plus the variables set (default)
)

// Mode selects the protocol era.
type Mode int

const (
	ModeAuto   Mode = iota // server/discover, falling back to initialize (default)
	ModeModern             // 2026-07-28 only
	ModeLegacy             // initialize (2024-11-05 … 2025-11-25) only
)

// Era is the protocol era a connection settled on.
type Era string

const (
	EraNone   Era = ""
	EraModern Era = "modern"
	EraLegacy Era = "legacy"
)

func ms(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// WithEnv sets one environment variable for the server process (stdio).
func WithEnv(name, value string) Option {
	return func(c *config) {
		if c.env == nil {
			c.env = map[string]string{}
		}
		c.env[name] = value
	}
}

// WithEnvMode chooses which of the host's environment variables the server gets (stdio;
// default EnvAllowlist, so the host's secrets stay out of servers).
func WithEnvMode(m EnvMode) Option {
	return func(c *config) {
		switch m {
		case EnvReplace:
			c.settings["env_mode"] = "replace"
		case EnvInherit:
			c.settings["env_mode"] = "inherit"
		default:
			c.settings["env_mode"] = "allowlist"
		}
	}
}

// WithCwd sets the server's working directory (stdio).
func WithCwd(dir string) Option { return func(c *config) { c.settings["cwd"] = dir } }

// WithMode selects the era (default ModeAuto).
func WithMode(m Mode) Option {
	return func(c *config) {
		switch m {
		case ModeModern:
			c.settings["mode"] = "modern"
		case ModeLegacy:
			c.settings["mode"] = "legacy"
		default:
			c.settings["mode"] = "auto"
		}
	}
}

// WithProtocolVersion pins one protocol version (e.g. "2025-06-18"); its era follows and the
// mode is ignored.
func WithProtocolVersion(v string) Option {
	return func(c *config) { c.settings["protocol_version"] = v }
}

// WithRequestTimeout sets the default per-request timeout (library default 60 s; 0: none).
func WithRequestTimeout(d time.Duration) Option {
	return func(c *config) { c.settings["request_timeout_ms"] = ms(d) }
}

// WithProbeTimeout sets how long auto mode waits for server/discover (library default 5 s).
func WithProbeTimeout(d time.Duration) Option {
	return func(c *config) { c.settings["probe_timeout_ms"] = ms(d) }
}

// WithConnectTimeout bounds a whole connect (server start, era detection, handshake); the
// library's default is 60 s, 0 means none.
func WithConnectTimeout(d time.Duration) Option {
	return func(c *config) { c.settings["connect_timeout_ms"] = ms(d) }
}

// WithReconnect opts into the reconnect policy: a lost connection (the server exited, the HTTP
// server restarted) is re-established on the next call, up to maxAttempts connects with
// exponential backoff from initial to max; lists and reads are retried, CallTool never is.
// OnConnectionState reports the states.
func WithReconnect(maxAttempts int, initial, max time.Duration) Option {
	return func(c *config) {
		c.settings["reconnect"] = map[string]any{
			"max_attempts": maxAttempts, "initial_backoff_ms": ms(initial), "max_backoff_ms": ms(max),
		}
	}
}

// WithMaxRounds sets how many input_required rounds are driven automatically (default 10).
func WithMaxRounds(n int) Option {
	return func(c *config) { c.settings["input_required_max_rounds"] = n }
}

// WithMaxPages bounds ListAll (library default 1000 pages).
func WithMaxPages(n int) Option { return func(c *config) { c.settings["max_pages"] = n } }

// WithSkills declares the skills extension (io.modelcontextprotocol/skills, SEP-2640). Only a
// host that loads skills itself should: servers seeing it stop offering their fallback tool.
func WithSkills() Option { return func(c *config) { c.settings["skills"] = true } }

// WithSamplingTools declares sampling.tools (SEP-1577) with sampling: sampling requests may then
// offer tools and a toolChoice, which the OnSampling handler receives in its params, and its
// answer may hold tool_use content (each naming an offered tool, with an id and an object input;
// a malformed answer fails the call instead of reaching the server).
func WithSamplingTools() Option { return func(c *config) { c.settings["sampling_tools"] = true } }

// WithMaxMessageBytes bounds one incoming message (library default 8 MiB; stdio).
func WithMaxMessageBytes(n int) Option {
	return func(c *config) { c.settings["max_message_bytes"] = n }
}

// WithStderrTailLines sets how many server stderr lines an exit error quotes (stdio).
func WithStderrTailLines(n int) Option {
	return func(c *config) { c.settings["stderr_tail_lines"] = n }
}

// WithShutdownGrace sets each wait of the close sequence (stdin closed, SIGTERM, SIGKILL).
func WithShutdownGrace(d time.Duration) Option {
	return func(c *config) { c.settings["shutdown_grace_ms"] = ms(d) }
}

// WithClientInfo sets the clientInfo sent to the server.
func WithClientInfo(name, version string) Option {
	return func(c *config) { c.settings["client_info"] = map[string]string{"name": name, "version": version} }
}

// WithCapabilities overrides the client capabilities (a JSON object); by default they are
// derived from the registered handlers.
func WithCapabilities(caps json.RawMessage) Option {
	return func(c *config) { c.settings["capabilities"] = caps }
}

// WithHeader adds an HTTP header sent with every request (HTTP).
func WithHeader(name, value string) Option {
	return func(c *config) {
		if c.headers == nil {
			c.headers = map[string]string{}
		}
		c.headers[name] = value
	}
}

// WithBearerToken sends `Authorization: Bearer <token>` on every HTTP request (HTTP).
func WithBearerToken(token string) Option {
	return func(c *config) { c.settings["bearer_token"] = token }
}

// WithSetting sets any configuration key verbatim (for keys this package does not model yet).
// value must marshal to the JSON the library expects for that key.
func WithSetting(key string, value any) Option {
	return func(c *config) { c.settings[key] = value }
}

// CallOption configures one call.
type CallOption func(*callSettings)

type callSettings struct {
	timeout         time.Duration // 0: client default
	noTimeout       bool
	op              Operation // the call's operation, for a TraceScope (set by the call, not an option)
	maxTotal        time.Duration
	resetOnProgress bool
	meta            json.RawMessage
	logLevel        string
	progress        func(progress, total float64, message string)
	inputResponses  json.RawMessage
	requestState    *string
	cacheMode       CacheMode
	skipValidation  bool
}

// WithTimeout sets this call's per-request timeout (each MRTR round is one request); a
// negative duration means none. Without it the client default applies.
func WithTimeout(d time.Duration) CallOption {
	return func(s *callSettings) {
		if d < 0 {
			s.noTimeout, s.timeout = true, 0
		} else {
			s.noTimeout, s.timeout = false, d
		}
	}
}

// WithMaxTotal caps the whole call (MRTR rounds and progress resets included). A context
// deadline caps it as well; the earlier one wins.
func WithMaxTotal(d time.Duration) CallOption { return func(s *callSettings) { s.maxTotal = d } }

// WithResetTimeoutOnProgress restarts the per-request timeout on each progress notification.
func WithResetTimeoutOnProgress() CallOption {
	return func(s *callSettings) { s.resetOnProgress = true }
}

// WithMeta adds `_meta` entries (a JSON object) to the request.
func WithMeta(meta json.RawMessage) CallOption { return func(s *callSettings) { s.meta = meta } }

// WithLogLevel sets this request's log level on modern servers ("debug" … "emergency").
func WithLogLevel(level string) CallOption { return func(s *callSettings) { s.logLevel = level } }

// WithProgress receives the call's progress notifications (total is NaN when unknown), in
// order, on a goroutine of the call (never on a library thread); every one has run by the
// time the call returns.
func WithProgress(fn func(progress, total float64, message string)) CallOption {
	return func(s *callSettings) { s.progress = fn }
}

// WithInputResponses passes an `inputResponses` object for a manual MRTR retry (CallTool,
// GetPrompt, ReadResource only).
func WithInputResponses(responses json.RawMessage) CallOption {
	return func(s *callSettings) { s.inputResponses = responses }
}

// WithRequestState passes the byte-exact `requestState` of an earlier InputRequiredError for
// a manual MRTR retry (CallTool, GetPrompt, ReadResource only).
func WithRequestState(state string) CallOption {
	return func(s *callSettings) { s.requestState = &state }
}
