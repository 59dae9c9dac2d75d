package mcpclient

import "testing"

// Every Status constant carries its C constant's name, and the library names no other status:
// a status added to the library without a constant here fails.
func TestStatusNames(t *testing.T) {
	want := map[Status]string{
		StatusOK: "MCP_OK", StatusNullArg: "MCP_NULL_ARG", StatusInvalidUTF8: "MCP_INVALID_UTF8",
		StatusInvalidJSON: "MCP_INVALID_JSON", StatusInvalidArg: "MCP_INVALID_ARG",
		StatusClosed: "MCP_CLOSED", StatusReentrantCall: "MCP_REENTRANT_CALL",
		StatusNotConnected: "MCP_NOT_CONNECTED", StatusUnsupported: "MCP_UNSUPPORTED",
		StatusForked: "MCP_FORKED", StatusIO: "MCP_IO", StatusTimeout: "MCP_TIMEOUT",
		StatusCancelled: "MCP_CANCELLED", StatusServerExited: "MCP_SERVER_EXITED",
		StatusHTTPStatus: "MCP_HTTP_STATUS", StatusAuthRequired: "MCP_AUTH_REQUIRED",
		StatusMessageTooLarge: "MCP_MESSAGE_TOO_LARGE", StatusJSONRPCError: "MCP_JSONRPC_ERROR",
		StatusProtocolViolation: "MCP_PROTOCOL_VIOLATION", StatusVersionMismatch: "MCP_VERSION_MISMATCH",
		StatusCapabilityMissing: "MCP_CAPABILITY_MISSING", StatusInputRequired: "MCP_INPUT_REQUIRED",
		StatusInputRoundsExceeded: "MCP_INPUT_ROUNDS_EXCEEDED", StatusHandlerFailed: "MCP_HANDLER_FAILED",
		StatusURLElicitationRequired:  "MCP_URL_ELICITATION_REQUIRED",
		StatusSkillVerificationFailed: "MCP_SKILL_VERIFICATION_FAILED",
		StatusOutputSchemaInvalid:     "MCP_OUTPUT_SCHEMA_INVALID",
		StatusToolPinChanged:          "MCP_TOOL_PIN_CHANGED",
		StatusInternal:                "MCP_INTERNAL", StatusPanic: "MCP_PANIC",
	}
	for s, name := range want {
		if got := s.Name(); got != name {
			t.Errorf("Status(%d).Name() = %q, want %q", int32(s), got, name)
		}
	}
	named := 0
	for s := Status(0); s < 1000; s++ {
		if s.Name() != "MCP_UNKNOWN" {
			named++
			if _, ok := want[s]; !ok {
				t.Errorf("the library names status %d %q, which has no Status constant", int32(s), s.Name())
			}
		}
	}
	if named != len(want) {
		t.Errorf("the library names %d statuses, the binding has %d", named, len(want))
	}
	for _, s := range []Status{-1, 7, 99, 12345} {
		if s.Name() != "MCP_UNKNOWN" {
			t.Errorf("Status(%d).Name() = %q, want MCP_UNKNOWN", int32(s), s.Name())
		}
	}
	if StatusTimeout.String() != "timed out" {
		t.Errorf("StatusTimeout.String() = %q", StatusTimeout.String())
	}
}
