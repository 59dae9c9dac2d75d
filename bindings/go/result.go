package mcpclient

import (
	"encoding/json"
	"strings"
)

// ToolResult is a typed view of a CallToolResult, for convenience; CallTool returns the raw
// JSON, which keeps every field.
type ToolResult struct {
	Content           []ContentBlock  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// ContentBlock is one content item; Raw keeps the whole block.
type ContentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	Data     string          `json:"data,omitempty"`
	Raw      json.RawMessage `json:"-"`
}

func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	type plain ContentBlock
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	b.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// DecodeToolResult decodes a CallTool result.
func DecodeToolResult(raw json.RawMessage) (*ToolResult, error) {
	var r ToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Text joins the text blocks of the result with newlines.
func (r *ToolResult) Text() string {
	var parts []string
	for _, b := range r.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
