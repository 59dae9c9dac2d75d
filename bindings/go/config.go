package mcpclient

import "encoding/json"

// WithConfig sets every key that c sets: Config (config_gen.go, generated from
// include/mcp_client.config.schema.json) has one field per configuration key, so typos and
// wrong types are compile errors. Options after it override it key by key.
func WithConfig(c Config) Option {
	return func(cfg *config) {
		raw, err := json.Marshal(c)
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err != nil {
			// Reported by NewStdio/NewHTTP, which marshal the settings.
			cfg.settings["config"] = badValue{err}
			return
		}
		for k, v := range m {
			cfg.settings[k] = v
		}
	}
}

// badValue fails to marshal with the error that made it, so the client constructor reports it.
type badValue struct{ err error }

func (b badValue) MarshalJSON() ([]byte, error) { return nil, b.err }
