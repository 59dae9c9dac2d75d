package mcpclient

/*
#include "mcp_client.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
)

// Status is the library's status code (mcp_status). StatusOK is never returned as an error.
type Status int32

// Status codes, as in include/mcp_client.h.
const (
	StatusOK                      Status = C.MCP_OK
	StatusNullArg                 Status = C.MCP_NULL_ARG
	StatusInvalidUTF8             Status = C.MCP_INVALID_UTF8
	StatusInvalidJSON             Status = C.MCP_INVALID_JSON
	StatusInvalidArg              Status = C.MCP_INVALID_ARG
	StatusClosed                  Status = C.MCP_CLOSED
	StatusReentrantCall           Status = C.MCP_REENTRANT_CALL
	StatusNotConnected            Status = C.MCP_NOT_CONNECTED
	StatusUnsupported             Status = C.MCP_UNSUPPORTED
	StatusForked                  Status = C.MCP_FORKED
	StatusIO                      Status = C.MCP_IO
	StatusTimeout                 Status = C.MCP_TIMEOUT
	StatusCancelled               Status = C.MCP_CANCELLED
	StatusServerExited            Status = C.MCP_SERVER_EXITED
	StatusHTTPStatus              Status = C.MCP_HTTP_STATUS
	StatusAuthRequired            Status = C.MCP_AUTH_REQUIRED
	StatusMessageTooLarge         Status = C.MCP_MESSAGE_TOO_LARGE
	StatusJSONRPCError            Status = C.MCP_JSONRPC_ERROR
	StatusProtocolViolation       Status = C.MCP_PROTOCOL_VIOLATION
	StatusVersionMismatch         Status = C.MCP_VERSION_MISMATCH
	StatusCapabilityMissing       Status = C.MCP_CAPABILITY_MISSING
	StatusInputRequired           Status = C.MCP_INPUT_REQUIRED
	StatusInputRoundsExceeded     Status = C.MCP_INPUT_ROUNDS_EXCEEDED
	StatusHandlerFailed           Status = C.MCP_HANDLER_FAILED
	StatusURLElicitationRequired  Status = C.MCP_URL_ELICITATION_REQUIRED
	StatusSkillVerificationFailed Status = C.MCP_SKILL_VERIFICATION_FAILED
	StatusOutputSchemaInvalid     Status = C.MCP_OUTPUT_SCHEMA_INVALID
	StatusToolPinChanged          Status = C.MCP_TOOL_PIN_CHANGED
	StatusInternal                Status = C.MCP_INTERNAL
	StatusPanic                   Status = C.MCP_PANIC
)

// String is the library's static English text for the status ("timed out").
func (s Status) String() string { return C.GoString(C.mcp_status_str(C.int32_t(s))) }

// Name is the name of the status's C constant ("MCP_TIMEOUT" for StatusTimeout), or
// "MCP_UNKNOWN" for a value that is no status.
func (s Status) Name() string { return C.GoString(C.mcp_status_name(C.int32_t(s))) }

// IsTransport reports whether s is in the transport range (100–199).
func (s Status) IsTransport() bool { return bool(C.mcp_status_is_transport(C.int32_t(s))) }

// Error is every failure this package returns. Match a status with errors.Is against the
// sentinels (ErrClosed, ErrTimeout, ...); get details with errors.As into *RPCError,
// *InputRequiredError or *RoundsExceededError. When the call's context caused the failure,
// errors.Is(err, context.Canceled / context.DeadlineExceeded) holds as well.
type Error struct {
	Status  Status
	Message string

	// HTTPStatus is the HTTP status of the answer that caused the error (StatusAuthRequired,
	// and transport errors caused by an HTTP status such as StatusHTTPStatus); 0 when none.
	HTTPStatus int
	// WWWAuthenticate is the server's WWW-Authenticate challenge for StatusAuthRequired
	// (several are joined with ", "); "" when none. It never holds credentials.
	WWWAuthenticate string
	// OAuthError is the registered OAuth error code an authorization server answered
	// (invalid_grant, invalid_scope, unauthorized_client, ...) for StatusAuthRequired; "" when none.
	OAuthError string

	detail error // *RPCError, *InputRequiredError, *RoundsExceededError or nil
	ctxErr error // the context's error when the context ended the call
	cause  error // a Go-side cause (e.g. a json.Marshal failure)
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "mcpclient: " + e.Status.String()
	}
	return "mcpclient: " + e.Status.String() + ": " + e.Message
}

// Unwrap exposes the typed details and the context's error to errors.Is / errors.As.
func (e *Error) Unwrap() []error {
	var out []error
	for _, x := range []error{e.detail, e.ctxErr, e.cause} {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// Is matches the status sentinels (ErrClosed, ErrTimeout, ...).
func (e *Error) Is(target error) bool {
	s, ok := target.(*statusSentinel)
	return ok && s.status == e.Status
}

type statusSentinel struct{ status Status }

func (s *statusSentinel) Error() string { return "mcpclient: " + s.status.String() }

// Sentinels for errors.Is. A *Error matches the one of its Status. ErrAuthRequired: the
// server demands authorization the client could not obtain (no WithOAuth, a flow that
// failed or was refused, an AuthorizationFunc that returned an error); see
// Error.HTTPStatus and Error.WWWAuthenticate. ErrHTTPStatus: the server answered with an
// unexpected HTTP status (Error.HTTPStatus).
var (
	ErrAuthRequired        error = &statusSentinel{StatusAuthRequired}
	ErrHTTPStatus          error = &statusSentinel{StatusHTTPStatus}
	ErrClosed              error = &statusSentinel{StatusClosed}
	ErrNotConnected        error = &statusSentinel{StatusNotConnected}
	ErrTimeout             error = &statusSentinel{StatusTimeout}
	ErrCancelled           error = &statusSentinel{StatusCancelled}
	ErrServerExited        error = &statusSentinel{StatusServerExited}
	ErrInputRequired       error = &statusSentinel{StatusInputRequired}
	ErrInputRoundsExceeded error = &statusSentinel{StatusInputRoundsExceeded}
	ErrHandlerFailed       error = &statusSentinel{StatusHandlerFailed}
	ErrUnsupported         error = &statusSentinel{StatusUnsupported}
	ErrProtocolViolation   error = &statusSentinel{StatusProtocolViolation}
	ErrInvalidArg          error = &statusSentinel{StatusInvalidArg}
	// ErrSkillVerificationFailed: a skill file or entry failed the SEP-2640 checks; no content
	// was returned.
	ErrSkillVerificationFailed error = &statusSentinel{StatusSkillVerificationFailed}
	// ErrOutputSchemaInvalid: a tool's structuredContent does not match the outputSchema its
	// tools/list entry declared (errors.As into *OutputSchemaError for the raw result).
	ErrOutputSchemaInvalid error = &statusSentinel{StatusOutputSchemaInvalid}
	// ErrToolPinChanged: tool pinning withholds the tool (its definition is not the pinned
	// one, or it is new); ApproveToolPin lets it through.
	ErrToolPinChanged error = &statusSentinel{StatusToolPinChanged}
)

// OutputSchemaError carries the tool result that failed output schema validation
// (StatusOutputSchemaInvalid); Error.Message says where it failed.
type OutputSchemaError struct {
	Result json.RawMessage // the raw CallToolResult
}

func (e *OutputSchemaError) Error() string {
	return "mcpclient: tool result does not match its output schema"
}

// RPCError is the JSON-RPC error object the server answered with (status
// StatusJSONRPCError, or StatusCapabilityMissing for -32021).
type RPCError struct {
	Code    int64
	Message string          // error.message exactly as the server sent it
	Data    json.RawMessage // nil when the server sent no data
	// Elicitations: for StatusURLElicitationRequired (a legacy server's -32042), the
	// data.elicitations array ({mode:"url", elicitationId, url, message} each); else nil.
	Elicitations json.RawMessage
}

func (e *RPCError) Error() string {
	return "mcpclient: JSON-RPC error " + itoa(e.Code) + ": " + e.Message
}

// InputRequiredError carries an `input_required` result no handler could answer
// (StatusInputRequired). Answer InputRequests and retry the same call with
// WithInputResponses and WithRequestState (or RetryOptions).
type InputRequiredError struct {
	InputRequests   json.RawMessage // the inputRequests map ({} when the server sent none)
	RequestState    string          // byte-exact; valid when HasRequestState
	HasRequestState bool
	Result          json.RawMessage // the raw input_required result
	// Unanswered: the entries of InputRequests no registered handler answers (all of them
	// with WithManualInput and no handler).
	Unanswered json.RawMessage
}

func (e *InputRequiredError) Error() string { return "mcpclient: input required" }

// RetryOptions are the call options for the retry: the given inputResponses object plus the
// request state, when the server sent one.
func (e *InputRequiredError) RetryOptions(inputResponses json.RawMessage) []CallOption {
	opts := []CallOption{WithInputResponses(inputResponses)}
	if e.HasRequestState {
		opts = append(opts, WithRequestState(e.RequestState))
	}
	return opts
}

// RoundsExceededError: more `input_required` rounds than input_required_max_rounds
// (StatusInputRoundsExceeded). The fields describe the last round.
type RoundsExceededError struct {
	InputRequests   json.RawMessage
	RequestState    string
	HasRequestState bool
	Result          json.RawMessage
}

func (e *RoundsExceededError) Error() string { return "mcpclient: too many input_required rounds" }

// fromC converts (and frees) a library error. st is the call's status, used when err is NULL.
func fromC(st C.mcp_status, cerr *C.mcp_error) *Error {
	if cerr != nil {
		defer C.mcp_error_free(cerr)
	}
	return readError(st, cerr)
}

// readError converts a library error without freeing it (a completion's error is borrowed).
func readError(st C.mcp_status, cerr *C.mcp_error) *Error {
	if cerr == nil {
		return &Error{Status: Status(st)}
	}
	e := &Error{Status: Status(C.mcp_error_status(cerr)), Message: C.GoString(C.mcp_error_message(cerr))}
	var hs C.uint16_t
	if C.mcp_error_http_status(cerr, &hs) {
		e.HTTPStatus = int(hs)
	}
	if p := C.mcp_error_www_authenticate(cerr); p != nil {
		e.WWWAuthenticate = C.GoString(p)
	}
	if p := C.mcp_error_oauth_error(cerr); p != nil {
		e.OAuthError = C.GoString(p)
	}
	var code C.int64_t
	if C.mcp_error_jsonrpc_code(cerr, &code) {
		rpc := &RPCError{Code: int64(code), Message: e.Message}
		if m := C.mcp_error_jsonrpc_message(cerr); m != nil {
			rpc.Message = C.GoString(m)
		}
		if d := C.mcp_error_data_json(cerr); d != nil {
			rpc.Data = json.RawMessage(C.GoString(d))
		}
		if p := C.mcp_error_elicitations_json(cerr); p != nil {
			rpc.Elicitations = json.RawMessage(C.GoString(p))
		}
		e.detail = rpc
	}
	switch e.Status {
	case StatusOutputSchemaInvalid:
		detail := &OutputSchemaError{}
		if p := C.mcp_error_result_json(cerr); p != nil {
			detail.Result = json.RawMessage(C.GoString(p))
		}
		e.detail = detail
	case StatusInputRequired, StatusInputRoundsExceeded:
		var reqs, result json.RawMessage
		if p := C.mcp_error_input_requests_json(cerr); p != nil {
			reqs = json.RawMessage(C.GoString(p))
		}
		if p := C.mcp_error_result_json(cerr); p != nil {
			result = json.RawMessage(C.GoString(p))
		}
		state, has := "", false
		if p := C.mcp_error_request_state(cerr); p != nil {
			state, has = C.GoString(p), true
		}
		if e.Status == StatusInputRequired {
			ir := &InputRequiredError{InputRequests: reqs, RequestState: state, HasRequestState: has, Result: result}
			if p := C.mcp_error_unanswered_json(cerr); p != nil {
				ir.Unanswered = json.RawMessage(C.GoString(p))
			}
			e.detail = ir
		} else {
			e.detail = &RoundsExceededError{InputRequests: reqs, RequestState: state, HasRequestState: has, Result: result}
		}
	}
	return e
}

func closedError() *Error { return &Error{Status: StatusClosed, Message: "the client is closed"} }

// ctxError is the error for a context that ended before or during a call.
func ctxError(ctx context.Context) *Error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Status: StatusTimeout, Message: "the context's deadline passed", ctxErr: err}
	}
	return &Error{Status: StatusCancelled, Message: "the context was cancelled", ctxErr: err}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
