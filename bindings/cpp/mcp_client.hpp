// mcp_client.hpp: header-only C++17 binding of the mcp_client C ABI (include/mcp_client.h).
//
//   #include "mcp_client.hpp"      // needs include/ on the include path
//   link: libmcp_client.a -lpthread -ldl -lm -lrt -lutil   (or -lmcp_client)
//
// DESIGN
// - RAII, move-only handles: mcp::Client, mcp::Hub, mcp::Subscription, mcp::Responder, mcp::AuthResponder,
//   mcp::Config.
//   mcp::CancelToken is copyable (each copy is a clone of the same library token).
//   A moved-from handle is empty: destroying it is a no-op; calling it throws
//   mcp::InvalidArgumentError (the library reports MCP_NULL_ARG).
// - Every library string is taken into a std::unique_ptr with mcp_string_free as deleter and
//   copied into a std::string. JSON goes in and out as std::string (no JSON library needed:
//   mcp::json::quote / mcp::json::object build small documents, and mcp::json::at /
//   string_at / find / find_string read values by JSON pointer through the library).
// - Every failure throws a subclass of mcp::Error, built from the call's own mcp_error (never
//   from thread-local state) and freed before the throw.
// - Callbacks (handlers, listeners, progress) run on the client's dispatcher thread. Their
//   std::function lives in a heap box that the library releases through a userdata_free
//   trampoline. No exception ever crosses into the library: every trampoline catches
//   everything. An exception thrown by an input handler becomes
//   mcp_responder_reply_error(-32603, what()); exceptions from listeners and progress callbacks
//   are swallowed.
// - Responders: the trampoline always defers the library responder, so an mcp::Responder can be
//   moved anywhere (another std::thread, a UI queue) and completed later. A responder that is
//   destroyed without a reply answers with an error (JSON-RPC -32603), so no call ever hangs on
//   a forgotten responder. To decline an elicitation, reply {"action":"decline"}
//   (Responder::decline()).
// - OAuth (Options::oauth / Config::oauth): Client::on_authorization handles the browser step.
//   Its full form gets a move-only mcp::AuthResponder (deferred the same way; destroyed
//   unanswered it fails the authorization). Its simple form returns the redirect URL, or "" for
//   the loopback listener. An exception fails the authorization. Client::set_token_store keeps
//   credentials; mcp::fetch_redirect is for tests. AuthRequiredError and the other errors carry
//   http_status() and www_authenticate().
// - Thread safety follows the C ABI: one Client may be used from many threads at once (calls are
//   multiplexed), except destruction/move-assignment, which must not race with other calls.
//   From inside a callback, blocking calls on the same client throw mcp::ReentrantCallError;
//   close(), cancel tokens and responders are fine.
#ifndef MCP_CLIENT_HPP
#define MCP_CLIENT_HPP

#include "mcp_client.h"

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace mcp {

// ============================================================================================
// Versions and small enums
// ============================================================================================

/// "mcp_client/<semver>" of the linked library.
inline std::string version() { return mcp_version(); }

/// True when the linked library implements the ABI this header was generated for.
inline bool abi_compatible() noexcept { return mcp_abi_version() == MCP_ABI_VERSION; }

/// English text for a status code ("timed out").
inline std::string status_string(mcp_status status) { return mcp_status_str(status); }

/// The name of a status code's constant ("MCP_TIMEOUT"), or "MCP_UNKNOWN" for a value that is no
/// status. Static storage.
inline const char* status_name(mcp_status status) noexcept { return mcp_status_name(status); }

enum class ListKind : int32_t {
    Tools = MCP_LIST_TOOLS,
    Prompts = MCP_LIST_PROMPTS,
    Resources = MCP_LIST_RESOURCES,
    ResourceTemplates = MCP_LIST_RESOURCE_TEMPLATES,
};

enum class Era : int32_t { None = MCP_ERA_NONE, Modern = MCP_ERA_MODERN, Legacy = MCP_ERA_LEGACY };

enum class Mode : int32_t { Auto = MCP_MODE_AUTO, Modern = MCP_MODE_MODERN, Legacy = MCP_MODE_LEGACY };

// ============================================================================================
// JSON helpers (building small documents without a JSON library)
// ============================================================================================

namespace json {

/// `s` as a JSON string literal, quotes included (s must be UTF-8).
inline std::string quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out.push_back('"');
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (u < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u));
                    out += buf;
                } else {
                    out.push_back(c);
                }
        }
    }
    out.push_back('"');
    return out;
}

/// A JSON object from (key, raw JSON value) pairs: object({{"text", quote("hi")}, {"n", "3"}}).
inline std::string object(const std::vector<std::pair<std::string, std::string>>& members) {
    std::string out = "{";
    bool first = true;
    for (const auto& m : members) {
        if (!first) out.push_back(',');
        first = false;
        out += quote(m.first);
        out.push_back(':');
        out += m.second;
    }
    out.push_back('}');
    return out;
}

}  // namespace json

// ============================================================================================
// Errors
// ============================================================================================

/// Base of every exception this binding throws for a failed library call.
class Error : public std::runtime_error {
public:
    Error(mcp_status status, std::string message, std::optional<int64_t> jsonrpc_code = std::nullopt,
          std::optional<std::string> data_json = std::nullopt, std::optional<int> http_status = std::nullopt,
          std::optional<std::string> www_authenticate = std::nullopt,
          std::optional<std::string> jsonrpc_message = std::nullopt,
          std::optional<std::string> oauth_error = std::nullopt)
        : std::runtime_error(std::string(mcp_status_str(status)) + ": " + message),
          status_(status),
          message_(std::move(message)),
          jsonrpc_code_(jsonrpc_code),
          data_json_(std::move(data_json)),
          http_status_(http_status),
          www_authenticate_(std::move(www_authenticate)),
          jsonrpc_message_(std::move(jsonrpc_message)),
          oauth_error_(std::move(oauth_error)) {}

    /// The library status (MCP_TIMEOUT, MCP_JSONRPC_ERROR, ...).
    mcp_status status() const noexcept { return status_; }
    /// The library's message (what() adds the status name in front).
    const std::string& message() const noexcept { return message_; }
    /// The name of the status's constant ("MCP_TIMEOUT"); static storage.
    const char* status_name() const noexcept { return mcp_status_name(status_); }
    /// The library's static English text for the status ("timed out").
    const char* status_text() const noexcept { return mcp_status_str(status_); }
    /// The JSON-RPC error.code when the server answered with an error object.
    std::optional<int64_t> jsonrpc_code() const noexcept { return jsonrpc_code_; }
    /// The JSON-RPC error.data as JSON, when present.
    const std::optional<std::string>& data_json() const noexcept { return data_json_; }
    /// The JSON-RPC error.message exactly as the server sent it (message() adds context).
    const std::optional<std::string>& jsonrpc_message() const noexcept { return jsonrpc_message_; }
    /// True for the transport range (100-199).
    bool is_transport() const noexcept { return mcp_status_is_transport(status_); }
    /// The HTTP status of the answer that caused the error (AuthRequiredError: 401 or 403;
    /// HttpStatusError and other transport errors caused by an HTTP status), when there is one.
    std::optional<int> http_status() const noexcept { return http_status_; }
    /// AuthRequiredError: the server's WWW-Authenticate challenge (several are joined with
    /// ", "), when it sent one. It never holds credentials.
    const std::optional<std::string>& www_authenticate() const noexcept { return www_authenticate_; }
    /// AuthRequiredError: the registered OAuth error code an authorization server answered
    /// (invalid_grant, invalid_scope, unauthorized_client, ...), when there is one.
    const std::optional<std::string>& oauth_error() const noexcept { return oauth_error_; }

private:
    mcp_status status_;
    std::string message_;
    std::optional<int64_t> jsonrpc_code_;
    std::optional<std::string> data_json_;
    std::optional<int> http_status_;
    std::optional<std::string> www_authenticate_;
    std::optional<std::string> jsonrpc_message_;
    std::optional<std::string> oauth_error_;
};

#define MCP_CPP_ERROR_CLASS(Name, Base) \
    class Name : public Base {          \
    public:                             \
        using Base::Base;               \
    };

// API misuse (1-99).
MCP_CPP_ERROR_CLASS(InvalidArgumentError, Error)  // MCP_NULL_ARG, MCP_INVALID_UTF8/JSON/ARG
MCP_CPP_ERROR_CLASS(ClosedError, Error)           // MCP_CLOSED
MCP_CPP_ERROR_CLASS(ReentrantCallError, Error)    // MCP_REENTRANT_CALL
MCP_CPP_ERROR_CLASS(AlreadyUsedError, Error)      // binding-level: a Responder answered twice or moved from
MCP_CPP_ERROR_CLASS(NotConnectedError, Error)     // MCP_NOT_CONNECTED
MCP_CPP_ERROR_CLASS(UnsupportedError, Error)      // MCP_UNSUPPORTED
MCP_CPP_ERROR_CLASS(ForkedError, Error)           // MCP_FORKED
// Transport (100-199).
MCP_CPP_ERROR_CLASS(TransportError, Error)            // MCP_IO and unknown transport statuses
MCP_CPP_ERROR_CLASS(TimeoutError, TransportError)     // MCP_TIMEOUT
MCP_CPP_ERROR_CLASS(CancelledError, TransportError)   // MCP_CANCELLED
MCP_CPP_ERROR_CLASS(ServerExitedError, TransportError)  // MCP_SERVER_EXITED
MCP_CPP_ERROR_CLASS(HttpStatusError, TransportError)  // MCP_HTTP_STATUS
MCP_CPP_ERROR_CLASS(AuthRequiredError, TransportError)  // MCP_AUTH_REQUIRED (a 401/403, or a failed OAuth flow)
MCP_CPP_ERROR_CLASS(MessageTooLargeError, TransportError)  // MCP_MESSAGE_TOO_LARGE
// Protocol (200-299).
MCP_CPP_ERROR_CLASS(ProtocolError, Error)         // MCP_PROTOCOL_VIOLATION
MCP_CPP_ERROR_CLASS(VersionMismatchError, Error)  // MCP_VERSION_MISMATCH
// MCP semantics (300-399) and internal (900-999).
MCP_CPP_ERROR_CLASS(HandlerError, Error)   // MCP_HANDLER_FAILED
MCP_CPP_ERROR_CLASS(SkillVerificationError, Error)  // MCP_SKILL_VERIFICATION_FAILED (SEP-2640)
MCP_CPP_ERROR_CLASS(ToolPinChangedError, Error)  // MCP_TOOL_PIN_CHANGED (tool pinning withholds the tool)
MCP_CPP_ERROR_CLASS(InternalError, Error)  // MCP_INTERNAL
MCP_CPP_ERROR_CLASS(PanicError, InternalError)  // MCP_PANIC (the client is poisoned)

/// MCP_JSONRPC_ERROR: the server answered with a JSON-RPC error object.
class RpcError : public Error {
public:
    using Error::Error;
    /// error.code (0 if the library did not report one).
    int64_t code() const noexcept { return jsonrpc_code().value_or(0); }
};

MCP_CPP_ERROR_CLASS(CapabilityMissingError, RpcError)       // MCP_CAPABILITY_MISSING (-32021)
MCP_CPP_ERROR_CLASS(UrlElicitationRequiredError, RpcError)  // MCP_URL_ELICITATION_REQUIRED (-32042): data_json() holds "elicitations"

#undef MCP_CPP_ERROR_CLASS

/// MCP_OUTPUT_SCHEMA_INVALID: a tool's structuredContent does not match the outputSchema its
/// tools/list entry declared (or is missing). what() says where; result_json() is the tool's
/// raw CallToolResult. Off per client (Config::validate_output_schema) or per call
/// (CallOptions::validate_output = false).
class OutputSchemaError : public Error {
public:
    OutputSchemaError(mcp_status status, std::string message, std::optional<int64_t> code,
                      std::optional<std::string> data, std::string result_json)
        : Error(status, std::move(message), code, std::move(data)), result_json_(std::move(result_json)) {}
    const std::string& result_json() const noexcept { return result_json_; }

private:
    std::string result_json_;
};

/// Common base of the two input-required failures: the server's inputRequests, its opaque
/// requestState (byte-exact) and the raw input_required result.
class InputRequestsError : public Error {
public:
    InputRequestsError(mcp_status status, std::string message, std::optional<int64_t> code,
                       std::optional<std::string> data, std::string input_requests_json,
                       std::optional<std::string> request_state, std::string result_json)
        : Error(status, std::move(message), code, std::move(data)),
          input_requests_json_(std::move(input_requests_json)),
          request_state_(std::move(request_state)),
          result_json_(std::move(result_json)) {}

    /// The inputRequests map as JSON (`{}` when the server sent none).
    const std::string& input_requests_json() const noexcept { return input_requests_json_; }
    /// The requestState to send back verbatim, or nullopt when the server sent none.
    const std::optional<std::string>& request_state() const noexcept { return request_state_; }
    /// The raw input_required result JSON (the last one for RoundsExceededError).
    const std::string& result_json() const noexcept { return result_json_; }

private:
    std::string input_requests_json_;
    std::optional<std::string> request_state_;
    std::string result_json_;
};

/// MCP_INPUT_REQUIRED: answer input_requests_json() yourself and retry the same call with
/// CallOptions::input_responses_json and CallOptions::request_state.
class InputRequiredError : public InputRequestsError {
public:
    using InputRequestsError::InputRequestsError;
    InputRequiredError(mcp_status status, std::string message, std::optional<int64_t> code,
                       std::optional<std::string> data, std::string input_requests_json,
                       std::optional<std::string> request_state, std::string result_json,
                       std::string unanswered_json)
        : InputRequestsError(status, std::move(message), code, std::move(data), std::move(input_requests_json),
                             std::move(request_state), std::move(result_json)),
          unanswered_json_(std::move(unanswered_json)) {}

    /// The entries of input_requests_json() no registered handler answers (all of them with
    /// "manual_input" and no handler), as a JSON object.
    const std::string& unanswered_json() const noexcept { return unanswered_json_; }

private:
    std::string unanswered_json_ = "{}";
};

/// MCP_INPUT_ROUNDS_EXCEEDED: more input_required rounds than input_required_max_rounds.
class RoundsExceededError : public InputRequestsError {
public:
    using InputRequestsError::InputRequestsError;
};

namespace detail {

struct ErrorDeleter {
    void operator()(mcp_error* e) const noexcept { mcp_error_free(e); }
};
using ErrorPtr = std::unique_ptr<mcp_error, ErrorDeleter>;

struct StringDeleter {
    void operator()(char* s) const noexcept { mcp_string_free(s); }
};
/// A library-owned string.
using OwnedString = std::unique_ptr<char, StringDeleter>;

/// Takes ownership of a library string and copies it ("" for NULL).
inline std::string take_string(char* s) {
    OwnedString owned(s);
    return owned ? std::string(owned.get()) : std::string();
}

inline std::optional<std::string> opt_string(const char* s) {
    if (!s) return std::nullopt;
    return std::string(s);
}

/// A string argument as the C ABI's NUL-terminated UTF-8. An embedded NUL would end the C
/// string there (a name, URI or requestState silently cut short): refused with
/// Error(MCP_INVALID_ARG) before anything is sent. Inside JSON text write U+0000 as \u0000.
inline const char* c_arg(const std::string& s) {
    auto at = s.find('\0');
    if (at != std::string::npos) {
        throw Error(MCP_INVALID_ARG, "a string argument contains a NUL byte (at byte " + std::to_string(at) +
                                         "), which a C string cannot carry; remove it (in JSON write \\u0000)");
    }
    return s.c_str();
}
inline const char* c_or_null(const std::string& s) { return s.empty() ? nullptr : c_arg(s); }
inline const char* c_or_null(const std::optional<std::string>& s) { return s ? c_arg(*s) : nullptr; }

/// Message text for the C ABI: a NUL shows as \u0000 rather than ending the message.
inline std::string shown(std::string s) {
    for (auto at = s.find('\0'); at != std::string::npos; at = s.find('\0', at + 6)) s.replace(at, 1, "\\u0000");
    return s;
}

/// Throws the exception for `status`, built from `err` (borrowed; may be NULL).
[[noreturn]] inline void throw_borrowed(mcp_status status, const mcp_error* err) {
    if (err) status = mcp_error_status(err);
    std::string message = err ? std::string(mcp_error_message(err)) : std::string(mcp_status_str(status));
    std::optional<int64_t> code;
    std::optional<std::string> data;
    std::optional<int> http;
    std::optional<std::string> challenge, rpc_message, oauth_error;
    if (err) {
        int64_t c = 0;
        if (mcp_error_jsonrpc_code(err, &c)) code = c;
        rpc_message = opt_string(mcp_error_jsonrpc_message(err));
        data = opt_string(mcp_error_data_json(err));
        uint16_t h = 0;
        if (mcp_error_http_status(err, &h)) http = h;
        challenge = opt_string(mcp_error_www_authenticate(err));
        oauth_error = opt_string(mcp_error_oauth_error(err));
    }
    std::string requests = "{}", result = "{}", unanswered = "{}";
    std::optional<std::string> state;
    if (err && status == MCP_OUTPUT_SCHEMA_INVALID) {
        if (const char* r = mcp_error_result_json(err)) result = r;
    }
    if (err && (status == MCP_INPUT_REQUIRED || status == MCP_INPUT_ROUNDS_EXCEEDED)) {
        if (const char* r = mcp_error_input_requests_json(err)) requests = r;
        if (const char* r = mcp_error_unanswered_json(err)) unanswered = r;
        state = opt_string(mcp_error_request_state(err));
        if (const char* r = mcp_error_result_json(err)) result = r;
    }
    switch (status) {
        case MCP_NULL_ARG:
        case MCP_INVALID_UTF8:
        case MCP_INVALID_JSON:
        case MCP_INVALID_ARG: throw InvalidArgumentError(status, message, code, data, http, challenge);
        case MCP_CLOSED: throw ClosedError(status, message, code, data, http, challenge);
        case MCP_REENTRANT_CALL: throw ReentrantCallError(status, message, code, data, http, challenge);
        case MCP_NOT_CONNECTED: throw NotConnectedError(status, message, code, data, http, challenge);
        case MCP_UNSUPPORTED: throw UnsupportedError(status, message, code, data, http, challenge);
        case MCP_FORKED: throw ForkedError(status, message, code, data, http, challenge);
        case MCP_TIMEOUT: throw TimeoutError(status, message, code, data, http, challenge);
        case MCP_CANCELLED: throw CancelledError(status, message, code, data, http, challenge);
        case MCP_SERVER_EXITED: throw ServerExitedError(status, message, code, data, http, challenge);
        case MCP_HTTP_STATUS: throw HttpStatusError(status, message, code, data, http, challenge);
        case MCP_AUTH_REQUIRED:
            throw AuthRequiredError(status, message, code, data, http, challenge, std::nullopt, oauth_error);
        case MCP_MESSAGE_TOO_LARGE: throw MessageTooLargeError(status, message, code, data, http, challenge);
        case MCP_JSONRPC_ERROR: throw RpcError(status, message, code, data, http, challenge, rpc_message);
        case MCP_PROTOCOL_VIOLATION: throw ProtocolError(status, message, code, data, http, challenge);
        case MCP_VERSION_MISMATCH: throw VersionMismatchError(status, message, code, data, http, challenge);
        case MCP_CAPABILITY_MISSING: throw CapabilityMissingError(status, message, code, data, http, challenge, rpc_message);
        case MCP_INPUT_REQUIRED:
            throw InputRequiredError(status, message, code, data, std::move(requests), std::move(state), std::move(result),
                                     std::move(unanswered));
        case MCP_INPUT_ROUNDS_EXCEEDED:
            throw RoundsExceededError(status, message, code, data, std::move(requests), std::move(state), std::move(result));
        case MCP_HANDLER_FAILED: throw HandlerError(status, message, code, data, http, challenge);
        case MCP_SKILL_VERIFICATION_FAILED: throw SkillVerificationError(status, message, code, data, http, challenge);
        case MCP_OUTPUT_SCHEMA_INVALID: throw OutputSchemaError(status, message, code, data, std::move(result));
        case MCP_TOOL_PIN_CHANGED: throw ToolPinChangedError(status, message, code, data, http, challenge);
        case MCP_URL_ELICITATION_REQUIRED: throw UrlElicitationRequiredError(status, message, code, data, http, challenge, rpc_message);
        case MCP_PANIC: throw PanicError(status, message, code, data, http, challenge);
        default:
            if (mcp_status_is_transport(status)) throw TransportError(status, message, code, data, http, challenge);
            if (status >= 900) throw InternalError(status, message, code, data, http, challenge);
            throw Error(status, message, code, data, http, challenge);
    }
}

/// Throws the exception for `status`, built from (and freeing) `raw`.
[[noreturn]] inline void throw_error(mcp_status status, mcp_error* raw) {
    ErrorPtr err(raw);
    throw_borrowed(status, raw);
}

/// The exception for a started call's failure, as an exception_ptr (the error is borrowed).
inline std::exception_ptr error_ptr(mcp_status status, const mcp_error* err) {
    try {
        throw_borrowed(status, err);
    } catch (...) {
        return std::current_exception();
    }
}

/// Runs a C call `f(&err)` and throws on failure.
template <class F>
void check(F&& f) {
    mcp_error* err = nullptr;
    mcp_status st = f(&err);
    if (st != MCP_OK) throw_error(st, err);
    mcp_error_free(err);  // never set on success; harmless
}

/// Runs a C call `f(&out, &err)` returning a library string and throws on failure.
template <class F>
std::string check_string(F&& f) {
    char* out = nullptr;
    mcp_error* err = nullptr;
    mcp_status st = f(&out, &err);
    if (st != MCP_OK) {
        mcp_string_free(out);
        throw_error(st, err);
    }
    mcp_error_free(err);
    return take_string(out);
}

}  // namespace detail

/// Tools for the model (mcp_export_*): a tool list in the OpenAI, Anthropic or Gemini
/// function-calling format, the model's calls found in its reply, results as the API's
/// messages. Pure functions over JSON text, callable from any thread; Client::dispatch_tool_call
/// makes a call.
namespace model {

/// Exports `tools_json` (a tools/list result or its `tools` array). `options_json`: {"format":
/// "openai-chat" | "openai-responses" | "anthropic" | "gemini", "strict", ...} ("" for the
/// defaults); `origins_json`: listed name -> {"server", "tool"} ("" for none). Returns
/// {"format", "tools", "routes", "report"}.
inline std::string export_tools(const std::string& tools_json, const std::string& options_json = std::string(),
                                const std::string& origins_json = std::string()) {
    return detail::check_string([&](char** out, mcp_error** e) {
        return mcp_export_tools(detail::c_arg(tools_json), detail::c_or_null(options_json), detail::c_or_null(origins_json),
                                out, e);
    });
}

/// The tool calls in a model's reply, as a JSON array of the API-shaped call objects.
inline std::string find_calls(const std::string& exported_json, const std::string& reply_json) {
    return detail::check_string([&](char** out, mcp_error** e) {
        return mcp_export_calls(detail::c_arg(exported_json), detail::c_arg(reply_json), out, e);
    });
}

/// The API's tool-result message answering `call_json` with a CallToolResult the host got.
inline std::string result_message(const std::string& exported_json, const std::string& call_json,
                                  const std::string& result_json, const std::string& options_json = std::string()) {
    return detail::check_string([&](char** out, mcp_error** e) {
        return mcp_export_result(detail::c_arg(exported_json), detail::c_arg(call_json), detail::c_arg(result_json),
                                 detail::c_or_null(options_json), out, e);
    });
}

}  // namespace model

namespace apps {

/// MCP Apps (SEP-1865): a tool's UI link, {"resourceUri", "visibility", "model", "app"}, or
/// "null" without one (a link that is not ui:// counts as none); see mcp_tool_ui.
inline std::string tool_ui(const std::string& tool_json) {
    return detail::check_string([&](char** out, mcp_error** e) { return mcp_tool_ui(detail::c_arg(tool_json), out, e); });
}

}  // namespace apps

namespace json {

/// The value at `pointer` (RFC 6901; "" is the whole document) in `json`, as JSON text, or
/// nullopt when there is no such value. Throws InvalidArgumentError for invalid JSON.
inline std::optional<std::string> find(const std::string& json, const std::string& pointer) {
    char* out = nullptr;
    mcp_error* err = nullptr;
    mcp_status st = mcp_json_pointer(json.c_str(), pointer.c_str(), &out, &err);
    if (st == MCP_INVALID_ARG) {
        mcp_error_free(err);
        return std::nullopt;
    }
    if (st != MCP_OK) detail::throw_error(st, err);
    return detail::take_string(out);
}

/// As find(), but a missing value throws InvalidArgumentError.
inline std::string at(const std::string& json, const std::string& pointer) {
    return detail::check_string(
        [&](char** out, mcp_error** e) { return mcp_json_pointer(json.c_str(), pointer.c_str(), out, e); });
}

/// The string at `pointer`, unquoted, or nullopt when absent or not a string.
inline std::optional<std::string> find_string(const std::string& json, const std::string& pointer) {
    char* out = nullptr;
    mcp_error* err = nullptr;
    mcp_status st = mcp_json_string(json.c_str(), pointer.c_str(), &out, &err);
    if (st == MCP_INVALID_ARG) {
        mcp_error_free(err);
        return std::nullopt;
    }
    if (st != MCP_OK) detail::throw_error(st, err);
    return detail::take_string(out);
}

/// As find_string(), but a missing or non-string value throws InvalidArgumentError.
inline std::string string_at(const std::string& json, const std::string& pointer) {
    return detail::check_string(
        [&](char** out, mcp_error** e) { return mcp_json_string(json.c_str(), pointer.c_str(), out, e); });
}

}  // namespace json

// ============================================================================================
// Observability records (Client::on_span): parsed for a tracer or meter of the host's
// ============================================================================================

namespace observe {

/// The bucket boundaries (seconds) the conventions give both histograms.
inline const std::vector<double>& duration_buckets() {
    static const std::vector<double> buckets{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300};
    return buckets;
}

/// Something that happened within an operation: mcp.mrtr.round, mcp.task.poll,
/// mcp.reconnect.retry, mcp.auth.*, mcp.session.renewed.
struct Event {
    std::string name;
    uint64_t time_unix_nano = 0;
    /// Its attributes, a JSON object.
    std::string attributes_json = "{}";
};

/// One record given to the span listener: an ended CLIENT span ("record":"span") or an ended
/// session ("record":"session"); see docs/observability.md.
struct Record {
    enum class Kind { Span, Session, Other };
    Kind kind = Kind::Other;
    /// The span's name, "{mcp.method.name} {target}" ("" for a session).
    std::string name;
    uint64_t start_unix_nano = 0;
    uint64_t end_unix_nano = 0;
    /// The attributes, a JSON object keyed by the OpenTelemetry names.
    std::string attributes_json = "{}";
    /// The span's status is ERROR (with error.type); for a session, error.type is set.
    bool error = false;
    /// The status description of an ERROR span.
    std::string status_message;
    /// The trace context the operation carried (its parent), when it had one.
    std::optional<std::string> traceparent;
    std::optional<std::string> tracestate;
    std::vector<Event> events;

    /// A string attribute ("mcp.method.name", "error.type", ...), nullopt when absent.
    std::optional<std::string> attribute(const std::string& key) const {
        return json::find_string(attributes_json, pointer(key));
    }

    /// An integer attribute ("server.port"), nullopt when absent.
    std::optional<int64_t> int_attribute(const std::string& key) const {
        auto raw = json::find(attributes_json, pointer(key));
        if (!raw || raw->empty() || raw->front() == '"') return std::nullopt;
        try {
            return std::stoll(*raw);
        } catch (...) {
            return std::nullopt;
        }
    }

    /// The histogram value: the duration in seconds.
    double duration_seconds() const {
        return end_unix_nano > start_unix_nano ? static_cast<double>(end_unix_nano - start_unix_nano) / 1e9 : 0.0;
    }

    /// The histogram to record it in: mcp.client.operation.duration or mcp.client.session.duration.
    const char* metric_name() const {
        return kind == Kind::Session ? "mcp.client.session.duration" : "mcp.client.operation.duration";
    }

    /// The attributes the histogram is recorded with, as (name, JSON value) pairs: the
    /// record's, less the high-cardinality ones the conventions keep off the metric.
    std::vector<std::pair<std::string, std::string>> metric_attributes() const {
        static const char* const operation[] = {
            "mcp.method.name", "error.type", "gen_ai.prompt.name", "gen_ai.tool.name",
            "rpc.response.status_code", "gen_ai.operation.name", "mcp.protocol.version",
            "network.protocol.name", "network.protocol.version", "network.transport",
            "server.address", "server.port"};
        static const char* const session[] = {
            "error.type", "mcp.protocol.version", "network.protocol.name", "network.protocol.version",
            "network.transport", "server.address", "server.port"};
        std::vector<std::pair<std::string, std::string>> out;
        auto add = [&](const char* key) {
            if (auto v = json::find(attributes_json, pointer(key))) out.emplace_back(key, *v);
        };
        if (kind == Kind::Session) {
            for (const char* k : session) add(k);
        } else {
            for (const char* k : operation) add(k);
        }
        return out;
    }

    /// A JSON pointer to attribute `key` (RFC 6901: "~" and "/" escaped).
    static std::string pointer(const std::string& key) {
        std::string p = "/";
        for (char c : key) {
            if (c == '~') {
                p += "~0";
            } else if (c == '/') {
                p += "~1";
            } else {
                p.push_back(c);
            }
        }
        return p;
    }
};

namespace detail_observe {
inline uint64_t number(const std::string& json, const std::string& pointer) {
    auto raw = json::find(json, pointer);
    if (!raw) return 0;
    try {
        return std::stoull(*raw);
    } catch (...) {
        return 0;
    }
}
}  // namespace detail_observe

/// Parses one record the span listener was given. Throws InvalidArgumentError when it is not
/// JSON; a record of a kind this header does not know is Kind::Other.
inline Record parse_record(const std::string& record_json) {
    Record r;
    auto kind = json::find_string(record_json, "/record");
    // Before "record" existed every record was a span.
    if (!kind || *kind == "span") {
        r.kind = Record::Kind::Span;
    } else if (*kind == "session") {
        r.kind = Record::Kind::Session;
    } else {
        return r;
    }
    r.name = json::find_string(record_json, "/name").value_or("");
    r.start_unix_nano = detail_observe::number(record_json, "/start_unix_nano");
    r.end_unix_nano = detail_observe::number(record_json, "/end_unix_nano");
    r.attributes_json = json::find(record_json, "/attributes").value_or("{}");
    if (r.kind == Record::Kind::Session) {
        r.error = r.attribute("error.type").has_value();
    } else {
        r.error = json::find_string(record_json, "/status/code").value_or("unset") == "error";
        r.status_message = json::find_string(record_json, "/status/message").value_or("");
    }
    r.traceparent = json::find_string(record_json, "/parent/traceparent");
    r.tracestate = json::find_string(record_json, "/parent/tracestate");
    for (size_t i = 0;; ++i) {
        std::string at = "/events/" + std::to_string(i);
        auto event = json::find(record_json, at);
        if (!event) break;
        Event e;
        e.name = json::find_string(*event, "/name").value_or("");
        e.time_unix_nano = detail_observe::number(*event, "/time_unix_nano");
        e.attributes_json = json::find(*event, "/attributes").value_or("{}");
        r.events.push_back(std::move(e));
    }
    return r;
}

}  // namespace observe

// ============================================================================================
// Cancellation
// ============================================================================================

/// A cancellation token. Copies share the library token (clone), so cancelling any copy
/// cancels every call using any of them. Cancel from any thread, callbacks included.
class CancelToken {
public:
    CancelToken() : token_(mcp_cancel_token_new()) {
        if (!token_) throw std::bad_alloc();
    }
    CancelToken(const CancelToken& other) : token_(mcp_cancel_token_clone(other.token_)) {
        if (other.token_ && !token_) throw std::bad_alloc();
    }
    CancelToken(CancelToken&& other) noexcept : token_(std::exchange(other.token_, nullptr)) {}
    CancelToken& operator=(const CancelToken& other) {
        if (this != &other) {
            mcp_cancel_token* copy = mcp_cancel_token_clone(other.token_);
            if (other.token_ && !copy) throw std::bad_alloc();
            mcp_cancel_token_free(token_);
            token_ = copy;
        }
        return *this;
    }
    CancelToken& operator=(CancelToken&& other) noexcept {
        if (this != &other) {
            mcp_cancel_token_free(token_);
            token_ = std::exchange(other.token_, nullptr);
        }
        return *this;
    }
    ~CancelToken() { mcp_cancel_token_free(token_); }

    /// Cancels every call using this token, now and later. Idempotent. Waits for a running
    /// callback of an affected call to return (except when called from that callback).
    void cancel() const noexcept { mcp_cancel_token_cancel(token_); }
    bool is_cancelled() const noexcept { return mcp_cancel_token_is_cancelled(token_); }
    /// The library handle (borrowed).
    const mcp_cancel_token* native() const noexcept { return token_; }

private:
    mcp_cancel_token* token_;
};

// ============================================================================================
// Per-call options
// ============================================================================================

/// One progress notification. `total` and `message` are absent when the server omitted them.
struct Progress {
    double progress = 0;
    std::optional<double> total;
    std::optional<std::string> message;
};

/// Options for one call. Every field is optional; the defaults are the library's.
struct CallOptions {
    /// Per-request timeout. nullopt or 0: the client default; negative (no_timeout): none. It
    /// also bounds a call's wait for a task (then TimeoutError, and tasks/cancel is sent).
    std::optional<std::chrono::milliseconds> timeout;
    /// Cap for the whole call (MRTR rounds and progress resets included); nullopt: none. When
    /// it ends the wait for a task, the task is left running (resume_task follows it again).
    std::optional<std::chrono::milliseconds> max_total;
    /// Restart the timeout on each progress notification.
    bool reset_timeout_on_progress = false;
    /// Cancels the call when cancelled.
    std::optional<CancelToken> cancel;
    /// Called on the dispatcher thread for each progress notification, never after the call
    /// returns. Exceptions it throws are swallowed.
    std::function<void(const Progress&)> on_progress;
    /// Extra `_meta` entries (a JSON object).
    std::optional<std::string> meta_json;
    /// Modern servers: this request's log level ("debug" ... "emergency").
    std::optional<std::string> log_level;
    /// Manual MRTR (call_tool, get_prompt, read_resource): the inputResponses object answering
    /// an InputRequiredError's input_requests_json().
    std::optional<std::string> input_responses_json;
    /// Manual MRTR: InputRequiredError::request_state(), verbatim.
    std::optional<std::string> request_state;
    /// Response cache use (SEP-2549) for discover, the lists and read_resource:
    /// MCP_CACHE_USE (default), MCP_CACHE_REFRESH or MCP_CACHE_BYPASS.
    uint32_t cache_mode = MCP_CACHE_USE;
    /// call_tool: false skips the check of structuredContent against the tool's outputSchema.
    bool validate_output = true;

    static constexpr std::chrono::milliseconds no_timeout{-1};
};

namespace detail {

inline void progress_trampoline(void* userdata, double progress, double total, const char* message) noexcept {
    try {
        const auto* fn = static_cast<const std::function<void(const Progress&)>*>(userdata);
        Progress p;
        p.progress = progress;
        if (!std::isnan(total)) p.total = total;
        if (message) p.message = std::string(message);
        (*fn)(p);
    } catch (...) {
        // Progress is informational: an exception must not unwind into the library.
    }
}

/// The C options for `o`; borrows from `o`, which must outlive the call.
inline mcp_call_opts native_opts(const CallOptions& o) {
    mcp_call_opts c;
    mcp_status st = mcp_call_opts_init(&c, MCP_CALL_OPTS_VERSION);
    if (st != MCP_OK) throw InvalidArgumentError(st, "the library does not know this header's mcp_call_opts version");
    if (o.timeout) {
        int64_t ms = o.timeout->count();
        c.timeout_ms = ms < 0 ? -1 : ms;
    }
    if (o.max_total) c.max_total_ms = o.max_total->count();
    c.reset_timeout_on_progress = o.reset_timeout_on_progress;
    c.cancel = o.cancel ? o.cancel->native() : nullptr;
    c.meta_json = c_or_null(o.meta_json);
    c.log_level = c_or_null(o.log_level);
    c.cache_mode = o.cache_mode;
    c.skip_output_validation = !o.validate_output;
    if (o.on_progress) {
        c.on_progress = &progress_trampoline;
        c.progress_userdata = const_cast<void*>(static_cast<const void*>(&o.on_progress));
    }
    return c;
}

}  // namespace detail

// ============================================================================================
// Responder
// ============================================================================================

namespace detail {

/// Shared between the handler trampoline and the mcp::Responder it hands out.
struct ResponderCore {
    explicit ResponderCore(mcp_responder* r) : raw(r) {}
    std::mutex mutex;
    mcp_responder* raw;          // NULL once a reply consumed it
    bool in_callback = true;     // the handler callback is still running
    bool abandoned = false;      // the Responder died (unanswered) while the callback ran
    bool auto_answered = false;  // the trampoline answered (the handler threw)
};

inline void reply_error_quietly(mcp_responder* r, int64_t code, const char* message) noexcept {
    if (!r) return;
    mcp_status answered = mcp_responder_reply_error(r, code, message, nullptr);
    (void)answered;  // quietly: nobody is left to tell
}

}  // namespace detail

/// The answer to one input request (elicitation, sampling, roots: reply_json, reply_error) or to
/// the browser step of an OAuth flow (reply_url, fail). Move-only; may be moved to any thread and
/// completed later, exactly once. Destroying it unanswered fails the request (JSON-RPC -32603;
/// an authorization: AuthRequiredError) so the call never hangs.
class Responder {
public:
    Responder() = default;
    explicit Responder(std::shared_ptr<detail::ResponderCore> core) : core_(std::move(core)) {}
    Responder(Responder&&) noexcept = default;
    Responder& operator=(Responder&& other) noexcept {
        if (this != &other) {
            release();
            core_ = std::move(other.core_);
        }
        return *this;
    }
    Responder(const Responder&) = delete;
    Responder& operator=(const Responder&) = delete;
    ~Responder() { release(); }

    /// Answers with a result object (ElicitResult, CreateMessageResult, ListRootsResult).
    /// Returns false when the answer is no longer wanted (call cancelled, timed out, closed, or
    /// the handler threw and its error was sent instead). Throws InvalidArgumentError for
    /// unusable JSON (the input then fails) and AlreadyUsedError when already answered.
    bool reply_json(const std::string& result_json) {
        detail::c_arg(result_json);  // checked before the responder is taken
        mcp_responder* r = take_or_throw();
        if (!r) return false;
        mcp_error* err = nullptr;
        mcp_status st = mcp_responder_reply_json(r, result_json.c_str(), &err);
        return finish(st, err);
    }

    /// Fails the input with a JSON-RPC error (modern: the call ends with HandlerError; legacy:
    /// the server receives this error). Returns false when no longer wanted.
    bool reply_error(int64_t code, const std::string& message) {
        mcp_responder* r = take_or_throw();
        if (!r) return false;
        mcp_error* err = nullptr;
        mcp_status st = mcp_responder_reply_error(r, code, detail::shown(message).c_str(), &err);
        return finish(st, err);
    }

    /// Authorization only: completes the flow with the full URL the browser was redirected to
    /// (with code, state and maybe iss); the library checks state and iss and exchanges the code.
    /// Returns false when no longer wanted; throws InvalidArgumentError for an unusable string
    /// or an input responder (that request then fails).
    bool reply_url(const std::string& redirect_url) {
        mcp_responder* r = take_or_throw();
        if (!r) return false;
        mcp_error* err = nullptr;
        mcp_status st = mcp_responder_reply_url(r, detail::c_arg(redirect_url), &err);
        return finish(st, err);
    }
    /// Same as reply_url (the authorization responder's historical name).
    bool reply(const std::string& redirect_url) { return reply_url(redirect_url); }

    /// Authorization: ends the flow (the waiting call throws AuthRequiredError with `message`,
    /// "" for a generic one). Input: fails it with JSON-RPC -32603.
    bool fail(const std::string& message = std::string()) {
        mcp_responder* r = take_or_throw();
        if (!r) return false;
        mcp_error* err = nullptr;
        mcp_status st = mcp_responder_reply_error(r, 0, detail::c_or_null(message), &err);
        return finish(st, err);
    }

    /// Elicitation only: replies {"action":"decline"}.
    bool decline() { return reply_json(R"({"action":"decline"})"); }

    /// True once the answer is no longer wanted, or after it was given.
    bool is_cancelled() const {
        if (!core_) return true;
        std::lock_guard<std::mutex> lock(core_->mutex);
        return !core_->raw || mcp_responder_is_cancelled(core_->raw);
    }

    /// True while a reply is still owed.
    bool pending() const {
        if (!core_) return false;
        std::lock_guard<std::mutex> lock(core_->mutex);
        return core_->raw != nullptr;
    }
    explicit operator bool() const { return pending(); }

private:
    /// The library responder to complete; NULL (reply returns false) when the handler threw and
    /// the binding already answered with its error; throws when answered twice or moved from.
    mcp_responder* take_or_throw() {
        if (core_) {
            std::lock_guard<std::mutex> lock(core_->mutex);
            if (core_->raw) return std::exchange(core_->raw, nullptr);
            if (core_->auto_answered) return nullptr;
        }
        throw AlreadyUsedError(MCP_INVALID_ARG, "this responder was already answered (or moved from)");
    }

    static bool finish(mcp_status st, mcp_error* err) {
        if (st == MCP_OK) return true;
        if (st == MCP_CANCELLED) {
            mcp_error_free(err);
            return false;
        }
        detail::throw_error(st, err);
    }

    void release() noexcept {
        if (!core_) return;
        mcp_responder* r = nullptr;
        {
            std::lock_guard<std::mutex> lock(core_->mutex);
            if (core_->raw) {
                if (core_->in_callback) {
                    core_->abandoned = true;  // the trampoline answers when the callback ends
                } else {
                    r = std::exchange(core_->raw, nullptr);
                }
            }
        }
        detail::reply_error_quietly(r, -32603, "the C++ responder was destroyed without a reply");
        core_.reset();
    }

    std::shared_ptr<detail::ResponderCore> core_;
};

/// A full input handler: complete the responder now or later (from any thread).
using InputHandler = std::function<void(const std::string& params_json, Responder responder)>;
/// A simple input handler: return the result JSON; throw to fail the input.
using SimpleInputHandler = std::function<std::string(const std::string& params_json)>;
/// A notification listener (every server notification except progress).
using NotificationHandler = std::function<void(const std::string& method, const std::string& params_json)>;
/// The host's current W3C trace context (SEP-414): empty strings for absent members.
struct TraceContext {
    std::string traceparent;
    std::string tracestate;
    std::string baggage;
};
/// Gives the current trace context (all members empty: none); asked on the calling thread when
/// a call starts.
using TraceContextSource = std::function<TraceContext()>;
/// A log listener: server stderr lines (source "stderr") and library warnings.
using LogHandler = std::function<void(const std::string& level, const std::string& source, const std::string& message)>;

namespace detail {

struct InputBox {
    InputHandler fn;
};
struct TraceBox {
    TraceContextSource fn;
};

struct NotificationBox {
    NotificationHandler fn;
};
struct LogBox {
    LogHandler fn;
};
/// Task status listener (tasks extension): the task JSON, on the dispatcher thread.
using TaskStatusHandler = std::function<void(const std::string& task_json)>;
/// Span listener: one ended operation's span JSON (OpenTelemetry MCP conventions), on the
/// dispatcher thread.
using SpanHandler = std::function<void(const std::string& span_json)>;
/// A listener given one JSON object (a task status, a span).
struct JsonListenerBox {
    std::function<void(const std::string&)> fn;
};

template <class Box>
void free_box(void* userdata) noexcept {
    delete static_cast<Box*>(userdata);
}

inline void input_trampoline(void* userdata, const char* /*method*/, const char* params_json, size_t params_len,
                             mcp_responder* raw) noexcept {
    // Always deferred: the C++ side owns the responder and guarantees exactly one reply.
    mcp_responder_defer(raw);
    std::shared_ptr<ResponderCore> core;
    try {
        core = std::make_shared<ResponderCore>(raw);
    } catch (...) {
        reply_error_quietly(raw, -32603, "out of memory in the C++ input handler");
        return;
    }
    bool failed = false;
    std::string failure;
    try {
        std::string params(params_json ? params_json : "{}", params_json ? params_len : 2);
        static_cast<InputBox*>(userdata)->fn(params, Responder(core));
    } catch (const std::exception& e) {
        failed = true;
        try {
            failure = std::string("the C++ handler threw: ") + e.what();
        } catch (...) {
        }
    } catch (...) {
        failed = true;
        try {
            failure = "the C++ handler threw a non-std exception";
        } catch (...) {
        }
    }
    mcp_responder* unanswered = nullptr;
    bool abandoned = false;
    {
        std::lock_guard<std::mutex> lock(core->mutex);
        core->in_callback = false;
        abandoned = core->abandoned;
        if (failed || abandoned) {
            unanswered = std::exchange(core->raw, nullptr);
            core->auto_answered = unanswered != nullptr;
        }
    }
    if (unanswered) {
        failure = shown(failure);
        const char* text = failed ? (failure.empty() ? "the C++ handler threw" : failure.c_str())
                                  : "the C++ handler returned without replying";
        reply_error_quietly(unanswered, -32603, text);
    }
}

/// A tool pin hook: the event JSON ({"server","tool","change","policy","old","new","diff"});
/// under policy "ask" the answer approves (true) or withholds (false) the tool.
using ToolPinHandler = std::function<bool(const std::string& event_json)>;
struct ToolPinBox {
    ToolPinHandler fn;
};

inline bool tool_pin_trampoline(void* userdata, const char* event_json) noexcept {
    try {
        return static_cast<ToolPinBox*>(userdata)->fn(std::string(event_json ? event_json : "{}"));
    } catch (...) {
        return false;  // a hook that throws approves nothing
    }
}

inline void json_listener_trampoline(void* userdata, const char* task_json, size_t task_len) noexcept {
    try {
        static_cast<JsonListenerBox*>(userdata)->fn(std::string(task_json ? task_json : "{}", task_json ? task_len : 2));
    } catch (...) {
        // Listeners cannot fail anything: swallow.
    }
}

inline void trace_trampoline(void* userdata, mcp_trace_slot* slot) noexcept {
    try {
        TraceContext t = static_cast<TraceBox*>(userdata)->fn();
        auto c = [](const std::string& v) { return v.empty() ? nullptr : v.c_str(); };
        // An invalid value is remembered by the slot and fails the call (MCP_INVALID_ARG).
        mcp_status refused = mcp_trace_slot_set(slot, c(t.traceparent), c(t.tracestate), c(t.baggage), nullptr);
        (void)refused;
    } catch (...) {
        // A throwing source means no context for this call.
    }
}

inline void notification_trampoline(void* userdata, const char* method, const char* params_json,
                                    size_t params_len) noexcept {
    try {
        std::string m(method ? method : "");
        std::string p(params_json ? params_json : "{}", params_json ? params_len : 2);
        static_cast<NotificationBox*>(userdata)->fn(m, p);
    } catch (...) {
        // Listeners cannot fail anything: swallow.
    }
}

inline void log_trampoline(void* userdata, const char* level, const char* source, const char* message) noexcept {
    try {
        static_cast<LogBox*>(userdata)->fn(level ? level : "", source ? source : "", message ? message : "");
    } catch (...) {
    }
}


template <class>
inline constexpr bool always_false = false;

template <class T>
struct is_std_function : std::false_type {};
template <class Sig>
struct is_std_function<std::function<Sig>> : std::true_type {};

template <class F>
InputHandler to_input_handler(F&& f) {
    using Fn = std::decay_t<F>;
    if constexpr (is_std_function<Fn>::value) {
        if (!f) return InputHandler();  // an empty std::function unregisters
    }
    if constexpr (std::is_invocable_v<Fn&, const std::string&, Responder>) {
        return InputHandler(std::forward<F>(f));
    } else if constexpr (std::is_invocable_r_v<std::string, Fn&, const std::string&>) {
        return [g = Fn(std::forward<F>(f))](const std::string& params, Responder r) mutable {
            r.reply_json(g(params));
        };
    } else {
        static_assert(always_false<Fn>,
                      "an input handler is callable as void(const std::string&, mcp::Responder) or "
                      "std::string(const std::string&)");
        return {};
    }
}

}  // namespace detail

// ============================================================================================
// OAuth: the authorization handler, its responder, the token store, fetch_redirect
// ============================================================================================

/// The authorization callback's responder is the same type as an input handler's (one
/// `mcp_responder` in the C API): answer it with reply_url or fail.
using AuthResponder = Responder;

/// The browser step, full form: open `authorization_url` (in a browser), then complete the
/// responder, now or later from any thread, with the URL the browser was redirected to.
/// `redirect_uri` is where the authorization server will send the browser (the configured
/// oauth.redirect_uri, or the built-in loopback listener's http://127.0.0.1:<port>/callback).
using AuthorizationHandler = std::function<void(const std::string& authorization_url,
                                                const std::optional<std::string>& redirect_uri, AuthResponder responder)>;
/// The browser step, simple form: return the URL the browser was redirected to, or "" to leave
/// it to the loopback listener (when oauth.redirect_uri is configured, "" fails the flow).
/// Throw to fail the authorization.
using SimpleAuthorizationHandler = std::function<std::string(const std::string& authorization_url)>;

/// Token store: the record kept for `issuer` (as save received it), or nullopt.
using TokenLoader = std::function<std::optional<std::string>(const std::string& issuer)>;
/// Token store: keep `record_json` for `issuer` (it holds client credentials and tokens: keep it
/// secret), or forget the issuer's record (nullopt).
using TokenSaver = std::function<void(const std::string& issuer, const std::optional<std::string>& record_json)>;
/// Supplies the JWT an assertion grant needs when the configuration holds none: `kind` is
/// "workload_jwt" (grant "jwt_bearer") or "id_token" (grant "enterprise"), `audience` the
/// authorization server or identity provider. nullopt (or an exception) ends that authorization.
using AssertionProvider = std::function<std::optional<std::string>(const std::string& kind, const std::string& audience)>;

/// FOR TESTS AND AUTOMATION ONLY: GETs `authorization_url` once without following redirects
/// and returns the absolute Location it redirects to. Against an authorization server that
/// redirects at once (no login page), an authorization handler can reply with this; a real host
/// opens a browser instead. Blocking; fine inside an authorization handler. `timeout` <= 0:
/// the library default (30 s). Throws (e.g. TransportError) when there is no redirect.
inline std::string fetch_redirect(const std::string& authorization_url,
                                  std::chrono::milliseconds timeout = std::chrono::milliseconds(30000)) {
    int64_t c_ms = timeout.count() <= 0 ? MCP_TIMEOUT_DEFAULT : static_cast<int64_t>(timeout.count());
    return detail::check_string([&](char** out, mcp_error** e) {
        return mcp_auth_fetch_redirect(detail::c_arg(authorization_url), c_ms, out, e);
    });
}

namespace detail {

struct AuthBox {
    AuthorizationHandler full;         // one of the two is set
    SimpleAuthorizationHandler simple;
};
struct TokenStoreBox {
    TokenLoader load;
    TokenSaver save;
};
struct AssertionBox {
    AssertionProvider provide;
};

inline std::string describe_exception(const char* prefix) noexcept {
    try {
        try {
            throw;
        } catch (const std::exception& e) {
            return std::string(prefix) + e.what();
        } catch (...) {
            return std::string(prefix) + "a non-std exception";
        }
    } catch (...) {
        return std::string();  // out of memory: the library's generic message is used
    }
}

inline void authorization_simple(SimpleAuthorizationHandler& fn, const char* url, mcp_responder* raw) noexcept {
    // Runs entirely inside the callback: the responder is never deferred.
    std::string redirect;
    try {
        redirect = fn(url ? url : "");
    } catch (...) {
        std::string failure = describe_exception("the C++ authorization handler threw: ");
        failure = shown(failure);
        reply_error_quietly(raw, 0, failure.empty() ? nullptr : failure.c_str());
        return;
    }
    if (redirect.find('\0') != std::string::npos) {
        reply_error_quietly(raw, 0, "the redirect URL contains a NUL byte");
        return;
    }
    if (!redirect.empty()) {
        mcp_status answered = mcp_responder_reply_url(raw, redirect.c_str(), nullptr);
        (void)answered;  // an unusable URL fails the flow, which the waiting call reports
    }
    // "" leaves the responder untouched: the loopback listener receives the redirect (without
    // one the library ends the flow).
}

inline void authorization_trampoline(void* userdata, const char* url, const char* redirect_uri,
                                     mcp_responder* raw) noexcept {
    auto* box = static_cast<AuthBox*>(userdata);
    if (box->simple) {
        authorization_simple(box->simple, url, raw);
        return;
    }
    // Always deferred: the C++ side owns the responder and guarantees exactly one answer.
    mcp_responder_defer(raw);
    std::shared_ptr<ResponderCore> core;
    try {
        core = std::make_shared<ResponderCore>(raw);
    } catch (...) {
        reply_error_quietly(raw, 0, "out of memory in the C++ authorization handler");
        return;
    }
    bool failed = false;
    std::string failure;
    try {
        std::optional<std::string> redirect;
        if (redirect_uri) redirect = std::string(redirect_uri);
        box->full(std::string(url ? url : ""), redirect, AuthResponder(core));
    } catch (...) {
        failed = true;
        failure = describe_exception("the C++ authorization handler threw: ");
    }
    mcp_responder* unanswered = nullptr;
    {
        std::lock_guard<std::mutex> lock(core->mutex);
        core->in_callback = false;
        if (failed || core->abandoned) {
            unanswered = std::exchange(core->raw, nullptr);
            core->auto_answered = unanswered != nullptr;
        }
    }
    if (unanswered) {
        failure = shown(failure);
        const char* text = failed ? (failure.empty() ? nullptr : failure.c_str())
                                  : "the C++ authorization handler returned without replying";
        reply_error_quietly(unanswered, 0, text);
    }
}

inline void token_load_trampoline(void* userdata, const char* issuer, mcp_token_slot* slot) noexcept {
    try {
        std::optional<std::string> record = static_cast<TokenStoreBox*>(userdata)->load(issuer ? issuer : "");
        // An invalid record (not a JSON object) leaves the slot empty: nothing stored.
        if (record) {
            mcp_status st = mcp_token_slot_set(slot, record->c_str(), nullptr);
            (void)st;  // an unusable record reads as "nothing stored"
        }
    } catch (...) {
        // A failing store counts as an empty one.
    }
}

inline void token_save_trampoline(void* userdata, const char* issuer, const char* record_json) noexcept {
    try {
        static_cast<TokenStoreBox*>(userdata)->save(issuer ? issuer : "", opt_string(record_json));
    } catch (...) {
        // Nothing to report to: the credentials stay usable for this client's lifetime.
    }
}

inline void assertion_trampoline(void* userdata, const char* kind, const char* audience,
                                 mcp_assertion_slot* slot) noexcept {
    try {
        std::optional<std::string> jwt =
            static_cast<AssertionBox*>(userdata)->provide(kind ? kind : "", audience ? audience : "");
        if (jwt && !jwt->empty()) {
            // A refused JWT (e.g. an embedded NUL) leaves the slot empty: the grant then fails
            // with AuthRequiredError, which is the report.
            mcp_status st = mcp_assertion_slot_set(slot, jwt->c_str(), nullptr);
            (void)st;
        }
    } catch (...) {
        // No JWT: the authorization fails with AuthRequiredError.
    }
}

template <class F>
AuthBox to_auth_box(F&& f) {
    using Fn = std::decay_t<F>;
    AuthBox box;
    if constexpr (is_std_function<Fn>::value) {
        if (!f) return box;  // an empty std::function unregisters
    }
    if constexpr (std::is_invocable_v<Fn&, const std::string&, const std::optional<std::string>&, AuthResponder>) {
        box.full = AuthorizationHandler(std::forward<F>(f));
    } else if constexpr (std::is_invocable_r_v<std::string, Fn&, const std::string&>) {
        box.simple = SimpleAuthorizationHandler(std::forward<F>(f));
    } else {
        static_assert(always_false<Fn>,
                      "an authorization handler is callable as void(const std::string&, const "
                      "std::optional<std::string>&, mcp::AuthResponder) or std::string(const std::string&)");
    }
    return box;
}

}  // namespace detail

// ============================================================================================
// Configuration
// ============================================================================================

/// Connection settings (a builder over mcp_config). Move-only.
class Config {
public:
    /// From a flat JSON object (see mcp_config_new for the keys); "" means empty.
    explicit Config(const std::string& json = std::string()) {
        detail::check([&](mcp_error** e) { return mcp_config_new(detail::c_or_null(json), &config_, e); });
    }
    Config(Config&& o) noexcept : config_(std::exchange(o.config_, nullptr)) {}
    Config& operator=(Config&& o) noexcept {
        if (this != &o) {
            mcp_config_free(config_);
            config_ = std::exchange(o.config_, nullptr);
        }
        return *this;
    }
    Config(const Config&) = delete;
    Config& operator=(const Config&) = delete;
    ~Config() { mcp_config_free(config_); }

    /// stdio: the server program (PATH lookup or a path).
    Config& command(const std::string& c) { return set([&](mcp_error** e) { return mcp_config_set_command(config_, detail::c_arg(c), e); }); }
    Config& arg(const std::string& a) { return set([&](mcp_error** e) { return mcp_config_add_arg(config_, detail::c_arg(a), e); }); }
    Config& args(const std::vector<std::string>& as) {
        for (const auto& a : as) arg(a);
        return *this;
    }
    Config& env(const std::string& name, const std::string& value) {
        return set([&](mcp_error** e) { return mcp_config_set_env(config_, detail::c_arg(name), detail::c_arg(value), e); });
    }
    /// true: the server sees only the variables set with env(); false: the whole environment.
    /// Not called: the library's default (HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG, LC_*).
    Config& replace_env(bool replace) {
        return set([&](mcp_error** e) {
            return mcp_config_set_env_mode(config_, replace ? MCP_ENV_REPLACE : MCP_ENV_INHERIT, e);
        });
    }
    Config& cwd(const std::string& dir) { return set([&](mcp_error** e) { return mcp_config_set_cwd(config_, detail::c_arg(dir), e); }); }
    /// HTTP: the server URL.
    Config& url(const std::string& u) { return set([&](mcp_error** e) { return mcp_config_set_url(config_, detail::c_arg(u), e); }); }
    Config& header(const std::string& name, const std::string& value) {
        return set([&](mcp_error** e) { return mcp_config_add_header(config_, detail::c_arg(name), detail::c_arg(value), e); });
    }
    Config& bearer_token(const std::string& token) {
        return set([&](mcp_error** e) { return mcp_config_set_bearer_token(config_, detail::c_arg(token), e); });
    }
    /// HTTP: OAuth 2.1 authorization instead of a static bearer token. `oauth_json` is the
    /// configuration's "oauth" object (keys: grant, client_id, client_secret, issuer,
    /// redirect_uri, scopes, ... see mcp_config_set_oauth); "{}" enables OAuth with dynamic
    /// registration and the loopback listener. Checked by the Client constructor.
    Config& oauth(const std::string& oauth_json) {
        return set([&](mcp_error** e) { return mcp_config_set_oauth(config_, detail::c_arg(oauth_json), e); });
    }
    Config& mode(Mode m) {
        return set([&](mcp_error** e) { return mcp_config_set_mode(config_, static_cast<int32_t>(m), e); });
    }
    Config& protocol_version(const std::string& v) {
        return set([&](mcp_error** e) { return mcp_config_set_protocol_version(config_, detail::c_arg(v), e); });
    }
    /// The per-request timeout: 0 the default (60 s), negative none (the C API's convention).
    Config& request_timeout(std::chrono::milliseconds t) {
        auto ms = static_cast<int64_t>(t.count());
        return set([&](mcp_error** e) { return mcp_config_set_request_timeout_ms(config_, ms, e); });
    }
    Config& max_input_rounds(uint32_t rounds) {
        return set([&](mcp_error** e) { return mcp_config_set_input_required_max_rounds(config_, rounds, e); });
    }
    /// Response caching (SEP-2549; default on, 512 entries); false or 0 entries turn it off.
    Config& response_cache(bool enabled, uint32_t max_entries = 512) {
        return set([&](mcp_error** e) { return mcp_config_set_response_cache(config_, enabled, max_entries, e); });
    }
    /// Output schema validation of tool results (default on).
    Config& validate_output_schema(bool enabled) {
        return set([&](mcp_error** e) { return mcp_config_set_validate_output_schema(config_, enabled, e); });
    }
    /// Declares sampling.tools (SEP-1577) with sampling: the on_sampling handler's params may
    /// carry tools and toolChoice, and its answer tool_use content (see mcp_config_set_sampling_tools).
    Config& sampling_tools(bool enabled) {
        return set([&](mcp_error** e) { return mcp_config_set_sampling_tools(config_, enabled, e); });
    }

    const mcp_config* native() const noexcept { return config_; }

private:
    template <class F>
    Config& set(F&& f) {
        detail::check(std::forward<F>(f));
        return *this;
    }
    mcp_config* config_ = nullptr;
};

/// Common settings for Client::stdio and Client::http.
struct Options {
    Mode mode = Mode::Auto;
    /// Pins one protocol version (its era follows); overrides `mode`.
    std::optional<std::string> protocol_version;
    /// Default per-request timeout (library default 60 s; 0: none).
    std::optional<std::chrono::milliseconds> request_timeout;
    /// How many input_required rounds are driven automatically (library default 10).
    std::optional<uint32_t> max_input_rounds;
    /// stdio: extra environment variables, and whether they replace the inherited ones.
    std::vector<std::pair<std::string, std::string>> env;
    bool replace_env = false;
    /// stdio: the server's working directory.
    std::optional<std::string> cwd;
    /// HTTP: sent as `Authorization: Bearer <token>`.
    std::optional<std::string> bearer_token;
    /// HTTP: OAuth 2.1 authorization, the configuration's "oauth" JSON object, e.g.
    /// R"({"client_id":"app","client_secret":"s3cret","issuer":"https://as.example","scopes":["mcp"]})"
    /// (a secret needs the issuer it belongs to) or "{}" (dynamic
    /// registration, loopback listener). Register Client::on_authorization for the browser step.
    std::optional<std::string> oauth;
    /// Declares sampling.tools (SEP-1577): see Config::sampling_tools.
    bool sampling_tools = false;
    /// Any other configuration keys as a JSON object, e.g. R"({"shutdown_grace_ms":200})".
    std::string extra_json;
};

// ============================================================================================
// Client
// ============================================================================================

/// An MCP client. Move-only. Calls block the calling thread; many threads may call at once.
// ============================================================================================
// Started calls (non-blocking): a callback or a std::future over the C ABI's *_start calls
// ============================================================================================

/// The outcome of a started call, handed to its callback: the result JSON, or the error.
struct Outcome {
    mcp_status status = MCP_OK;
    /// The result JSON when ok().
    std::string result;
    /// The mcp::Error subclass the blocking call would have thrown, otherwise.
    std::exception_ptr error;
    bool ok() const noexcept { return status == MCP_OK; }
    /// The result, or throws the error.
    std::string get() const {
        if (error) std::rethrow_exception(error);
        return result;
    }
};

/// A started call's completion: runs exactly once (on the dispatcher thread, or inside
/// Client::dispatch() in host-loop mode), also when the call is cancelled (CancelledError),
/// times out or the client closes (ClosedError). Exceptions it throws are swallowed.
/// Calling future.get() or a blocking call of the same client from it deadlocks or throws
/// ReentrantCallError: hand work to your own executor instead.
using Completion = std::function<void(Outcome)>;

/// Tag selecting the std::future overloads: client.call_tool("echo", args, {}, mcp::use_future).
struct use_future_t {};
inline constexpr use_future_t use_future{};

namespace detail {

struct CallState {
    std::mutex mutex;
    mcp_call* handle = nullptr;  // NULL once completed (the completion frees it)
};

/// Lives from the start until the completion: what the C options point to, and the callback.
struct StartedBox {
    CallOptions options;
    Completion done;
    std::shared_ptr<CallState> state;
};

inline void started_trampoline(void* userdata, mcp_status status, const char* result, size_t result_len,
                               const mcp_error* error) noexcept {
    std::unique_ptr<StartedBox> box(static_cast<StartedBox*>(userdata));
    mcp_call* handle = nullptr;
    {
        std::lock_guard<std::mutex> lock(box->state->mutex);
        handle = std::exchange(box->state->handle, nullptr);
    }
    mcp_call_free(handle);  // completed: freeing cancels nothing
    try {
        Outcome o;
        o.status = status;
        if (status == MCP_OK) {
            o.result.assign(result, result_len);
        } else {
            o.error = error_ptr(status, error);
        }
        box->done(std::move(o));
    } catch (...) {
        // A completion must not unwind into the library.
    }
}

}  // namespace detail

/// A started call. cancel() cancels it (from any thread; its completion still runs once, with
/// CancelledError, unless it had already completed). Dropping a Call does not cancel.
class Call {
public:
    Call() = default;
    explicit Call(std::shared_ptr<detail::CallState> state) : state_(std::move(state)) {}
    void cancel() noexcept {
        if (!state_) return;
        std::lock_guard<std::mutex> lock(state_->mutex);
        if (state_->handle && mcp_call_cancel(state_->handle) != MCP_OK) {
            // only MCP_NULL_ARG, excluded by the check above
        }
    }
    /// True once the completion started.
    bool done() const noexcept {
        if (!state_) return true;
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->handle == nullptr;
    }

private:
    std::shared_ptr<detail::CallState> state_;
};

namespace detail {

/// Starts one call: `start_call(opts, userdata, &handle, &err)` runs one `*_start` function with
/// `started_trampoline`; throws (and starts nothing) when it fails.
template <class Start>
Call start(const CallOptions& options, Completion done, Start&& start_call) {
    auto box = std::make_unique<StartedBox>();
    box->options = options;
    box->done = std::move(done);
    box->state = std::make_shared<CallState>();
    std::shared_ptr<CallState> state = box->state;
    mcp_call_opts o = native_opts(box->options);
    mcp_error* err = nullptr;
    mcp_status st;
    {
        // The completion (another thread) waits for the handle to be stored.
        std::lock_guard<std::mutex> lock(state->mutex);
        st = start_call(&o, box.get(), &state->handle, &err);
    }
    if (st != MCP_OK) throw_error(st, err);  // nothing started: the box goes here
    box.release();                           // the completion owns it now
    return Call(std::move(state));
}

/// The std::future form of a callback-started call.
template <class Starter>
std::future<std::string> as_future(Starter&& starter) {
    auto promise = std::make_shared<std::promise<std::string>>();
    std::future<std::string> future = promise->get_future();
    starter([promise](Outcome o) {
        if (o.error) {
            promise->set_exception(o.error);
        } else {
            promise->set_value(std::move(o.result));
        }
    });
    return future;
}

}  // namespace detail

// ============================================================================================
// Subscription
// ============================================================================================

/// A live `subscriptions/listen`. Move-only; one reader at a time, any thread.
class Subscription {
public:
    Subscription() = default;
    explicit Subscription(mcp_subscription* s) noexcept : sub_(s) {}
    Subscription(Subscription&& o) noexcept : sub_(std::exchange(o.sub_, nullptr)) {}
    Subscription& operator=(Subscription&& o) noexcept {
        if (this != &o) {
            mcp_subscription_free(sub_);
            sub_ = std::exchange(o.sub_, nullptr);
        }
        return *this;
    }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { mcp_subscription_free(sub_); }

    /// The next notification as {"method":..., "params":...}, or nullopt when none arrived
    /// within `timeout` (nullopt: wait without limit). Throws ClosedError once the subscription
    /// ended gracefully, CancelledError after cancel(), another Error if it ended with one.
    std::optional<std::string> next(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        int64_t ms = -1;
        if (timeout) ms = timeout->count();
        if (timeout && ms < 0) ms = 0;
        char* out = nullptr;
        mcp_error* err = nullptr;
        mcp_status st = mcp_subscription_next(sub_, ms, &out, &err);
        if (st == MCP_TIMEOUT) {
            mcp_error_free(err);
            return std::nullopt;
        }
        if (st != MCP_OK) detail::throw_error(st, err);
        return detail::take_string(out);
    }
    /// Started next(): the completion gets the notification, or TimeoutError's status
    /// (MCP_TIMEOUT) when none arrived within `timeout`, ClosedError's once the subscription
    /// ended. Cancelling the Call ends this read only. One read at a time; the subscription
    /// may be destroyed while one is in flight (it then completes with ClosedError or
    /// CancelledError).
    Call next(std::optional<std::chrono::milliseconds> timeout, Completion done) {
        int64_t ms = -1;
        if (timeout) ms = timeout->count() < 0 ? 0 : static_cast<int64_t>(timeout->count());
        return detail::start(CallOptions(), std::move(done),
                             [&](const mcp_call_opts*, void* ud, mcp_call** call, mcp_error** e) {
                                 return mcp_subscription_next_start(sub_, ms, &detail::started_trampoline, ud, call,
                                                                    e);
                             });
    }
    /// Started next() as a future: nullopt when none arrived within `timeout`, as next().
    std::future<std::optional<std::string>> next(std::optional<std::chrono::milliseconds> timeout, use_future_t) {
        auto promise = std::make_shared<std::promise<std::optional<std::string>>>();
        auto future = promise->get_future();
        next(timeout, [promise](Outcome o) {
            if (o.ok()) {
                promise->set_value(std::move(o.result));
            } else if (o.status == MCP_TIMEOUT) {
                promise->set_value(std::nullopt);
            } else {
                promise->set_exception(o.error);
            }
        });
        return future;
    }

    /// The filter the server acknowledged (the subset it honours), as JSON.
    std::string acknowledged() const {
        return detail::check_string([&](char** out, mcp_error** e) { return mcp_subscription_acknowledged(sub_, out, e); });
    }

    /// Ends the subscription (the server is told). Safe from another thread while next() waits.
    void cancel() {
        detail::check([&](mcp_error** e) { return mcp_subscription_cancel(sub_, e); });
    }

    explicit operator bool() const noexcept { return sub_ != nullptr; }
    mcp_subscription* native() const noexcept { return sub_; }

private:
    mcp_subscription* sub_ = nullptr;
};

class Client {
public:
    /// A client for `config` (copied). Nothing starts until connect() or the first call.
    explicit Client(const Config& config) {
        if (!abi_compatible()) {
            throw UnsupportedError(MCP_UNSUPPORTED, "libmcp_client implements ABI " + std::to_string(mcp_abi_version()) +
                                                        ", this header expects " + std::to_string(MCP_ABI_VERSION));
        }
        detail::check([&](mcp_error** e) { return mcp_client_new(config.native(), &client_, e); });
    }

    /// A stdio client: runs `command args...` and talks over its stdin/stdout.
    static Client stdio(const std::string& command, const std::vector<std::string>& args = {},
                        const Options& options = Options()) {
        Config config = base_config(options);
        config.command(command).args(args);
        for (const auto& kv : options.env) config.env(kv.first, kv.second);
        if (options.replace_env) config.replace_env(true);
        if (options.cwd) config.cwd(*options.cwd);
        return Client(config);
    }

    /// A Streamable HTTP client for `url`, sending `headers` with every request.
    static Client http(const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers = {},
                       const Options& options = Options()) {
        Config config = base_config(options);
        config.url(url);
        for (const auto& h : headers) config.header(h.first, h.second);
        if (options.bearer_token) config.bearer_token(*options.bearer_token);
        if (options.oauth) config.oauth(*options.oauth);
        return Client(config);
    }

    Client(Client&& o) noexcept : client_(std::exchange(o.client_, nullptr)) {}
    Client& operator=(Client&& o) noexcept {
        if (this != &o) {
            mcp_client_free(client_);
            client_ = std::exchange(o.client_, nullptr);
        }
        return *this;
    }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    /// Closes and frees: after it returns no callback runs again.
    ~Client() { mcp_client_free(client_); }

    // ---- lifecycle -----------------------------------------------------------------------

    /// Starts the server and settles the era. Idempotent. Returns the server info JSON
    /// {"era","protocolVersion","capabilities","serverInfo","instructions","raw"}. Options as for
    /// calls: a cancel token, and timeout / max_total capping the whole connect.
    std::string connect(const CallOptions& opts = CallOptions()) {
        mcp_call_opts c = detail::native_opts(opts);
        return detail::check_string([&](char** out, mcp_error** e) { return mcp_client_connect(client_, &c, out, e); });
    }
    /// The server info JSON (NotConnectedError before connecting).
    std::string server_info() const {
        return detail::check_string([&](char** out, mcp_error** e) { return mcp_client_server_info(client_, out, e); });
    }
    Era era() const noexcept { return static_cast<Era>(mcp_client_era(client_)); }

    /// Wakes every blocked call (ClosedError), ends subscriptions, shuts the server down.
    /// Idempotent; any thread, callbacks included.
    void close() noexcept { mcp_client_close(client_); }

    /// The authorization context the response cache files private entries under; a new value
    /// drops the old context's private entries (public ones stay shared).
    void set_cache_partition(const std::string& partition) {
        detail::check([&](mcp_error** e) { return mcp_client_set_cache_partition(client_, detail::c_arg(partition), e); });
    }
    /// Empties the response cache.
    void clear_cache() {
        detail::check([&](mcp_error** e) { return mcp_client_clear_cache(client_, e); });
    }

    // ---- requests ------------------------------------------------------------------------

    /// One page of a list; `cursor` is the previous page's nextCursor. Raw list result JSON.
    std::string list(ListKind kind, const std::optional<std::string>& cursor = std::nullopt,
                     const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_list(client_, static_cast<int32_t>(kind), detail::c_or_null(cursor), &o, out, e);
        });
    }
    /// Every page merged: {"tools":[...]} (or prompts, resources, resourceTemplates).
    std::string list_all(ListKind kind, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_list_all(client_, static_cast<int32_t>(kind), &o, out, e);
        });
    }

    /// tools/call; `arguments_json` is a JSON object ("" for none). A tool error (isError) is
    /// a normal result. MRTR is driven by the registered handlers; without one the call throws
    /// InputRequiredError (retry with options.input_responses_json and request_state).
    std::string call_tool(const std::string& name, const std::string& arguments_json = std::string(),
                          const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_call_tool(client_, detail::c_arg(name), detail::c_or_null(arguments_json),
                                        detail::c_or_null(options.input_responses_json),
                                        detail::c_or_null(options.request_state), &o, out, e);
        });
    }

    /// Makes one model tool call (`call_json`: one call in the format of `exported_json`, from
    /// model::export_tools) and returns the API's tool-result message. Bad arguments, tool
    /// errors, protocol errors and timeouts come back as messages the model reads unless
    /// `options_json` says {"errors_as_results": false}; see mcp_client_export_dispatch.
    std::string dispatch_tool_call(const std::string& exported_json, const std::string& call_json,
                                   const std::string& options_json = std::string(),
                                   const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_export_dispatch(client_, detail::c_arg(exported_json), detail::c_arg(call_json),
                                              detail::c_or_null(options_json), &o, out, e);
        });
    }

    /// prompts/get; `arguments_json` is an object of strings ("" for none). MRTR as call_tool.
    std::string get_prompt(const std::string& name, const std::string& arguments_json = std::string(),
                           const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_get_prompt(client_, detail::c_arg(name), detail::c_or_null(arguments_json),
                                         detail::c_or_null(options.input_responses_json),
                                         detail::c_or_null(options.request_state), &o, out, e);
        });
    }

    /// resources/read. MRTR as call_tool.
    std::string read_resource(const std::string& uri, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_read_resource(client_, detail::c_arg(uri), detail::c_or_null(options.input_responses_json),
                                            detail::c_or_null(options.request_state), &o, out, e);
        });
    }

    // ---- tasks extension (SEP-2663; set "tasks": true in Options::extra_json) ----------------

    /// Follows task `task_id` (from on_task_status, possibly of another process) to its end as
    /// call_tool would: the tool's result JSON. A failed task throws RpcError, a cancelled one
    /// CancelledError.
    std::string resume_task(const std::string& task_id, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_resume_task(client_, detail::c_arg(task_id), &o, out, e);
        });
    }
    /// One tasks/get: the task JSON as the server has it now.
    std::string get_task(const std::string& task_id, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_get_task(client_, detail::c_arg(task_id), &o, out, e);
        });
    }
    /// tasks/cancel (the task ends as cancelled when the server gets to it).
    void cancel_task(const std::string& task_id, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        detail::check([&](mcp_error** e) { return mcp_client_cancel_task(client_, detail::c_arg(task_id), &o, e); });
    }
    /// tasks/update with answers gathered by hand (after InputRequiredError from a task); then
    /// resume_task.
    void update_task(const std::string& task_id, const std::string& input_responses_json,
                     const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        detail::check([&](mcp_error** e) {
            return mcp_client_update_task(client_, detail::c_arg(task_id), detail::c_arg(input_responses_json), &o, e);
        });
    }
    /// Every status of every task a call follows (task JSON; keep its taskId to resume). nullptr
    /// removes the listener.
    void on_task_status(detail::TaskStatusHandler listener) {
        if (!listener) {
            detail::check([&](mcp_error** e) { return mcp_client_on_task_status(client_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::JsonListenerBox{std::move(listener)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_client_on_task_status(client_, &detail::json_listener_trampoline, box,
                                             &detail::free_box<detail::JsonListenerBox>, e);
        });
    }

    /// Once per MCP operation this client sends, after it ended: a span record, its CLIENT
    /// span by the OpenTelemetry semantic conventions for MCP as JSON ("record":"span", name,
    /// kind, start_unix_nano, end_unix_nano, attributes, events, status, parent); and once per
    /// ended session a session record ("record":"session"). mcp::observe::parse_record reads
    /// them. A span record comes on the thread that completes the call, before the call returns
    /// (a started call's: just before its completion); session records on the dispatcher
    /// thread. An exception it throws is swallowed. nullptr removes the listener (nothing is
    /// built then).
    void on_span(detail::SpanHandler listener) {
        if (!listener) {
            detail::check([&](mcp_error** e) { return mcp_client_on_span(client_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::JsonListenerBox{std::move(listener)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_client_on_span(client_, &detail::json_listener_trampoline, box,
                                      &detail::free_box<detail::JsonListenerBox>, e);
        });
    }

    // ---- tool pinning ("tool_pinning" in the configuration) --------------------------------

    /// Sets (an empty function removes) the hook told of each changed, new or removed tool; under
    /// policy "ask" its answer approves or withholds the tool. Runs on the dispatcher thread, and
    /// the listing waits for it. UnsupportedError when pinning is off.
    void on_tool_pin(detail::ToolPinHandler hook) {
        if (!hook) {
            detail::check([&](mcp_error** e) { return mcp_client_on_tool_pin(client_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::ToolPinBox{std::move(hook)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_client_on_tool_pin(client_, &detail::tool_pin_trampoline, box,
                                          &detail::free_box<detail::ToolPinBox>, e);
        });
    }
    /// The pins of the client's server: {"server","policy","tools":[{"name","digest","definition",
    /// "state","pending"?}]}. Reads the pin store; sends nothing.
    std::string tool_pins() {
        return detail::check_string([&](char** out, mcp_error** e) { return mcp_client_tool_pins(client_, out, e); });
    }
    /// Pins the last listed definition of `tool` (changed or new): listed and callable again.
    void approve_tool_pin(const std::string& tool) {
        detail::check([&](mcp_error** e) { return mcp_client_approve_tool_pin(client_, tool.c_str(), e); });
    }
    /// Forgets the pin of `tool` (pinned afresh when next listed); std::nullopt: every pin of
    /// the server (the next listing is a first use).
    void forget_tool_pin(const std::optional<std::string>& tool = std::nullopt) {
        detail::check([&](mcp_error** e) { return mcp_client_forget_tool_pin(client_, detail::c_or_null(tool), e); });
    }

    // ---- skills extension (SEP-2640) -------------------------------------------------------

    /// Every page of skills/list, checked: {"skills":[entry...],"rejected":[{"uri","reason",
    /// "entry"}...]}. Reads no skill file. UnsupportedError when the server did not declare
    /// io.modelcontextprotocol/skills. Set "skills": true in Options::extra_json to declare it.
    std::string list_skills(const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_list_skills(client_, &o, out, e);
        });
    }
    /// skills/get for a SKILL.md URI: the checked entry JSON.
    std::string get_skill(const std::string& uri, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_get_skill(client_, uri.c_str(), &o, out, e);
        });
    }
    /// Reads one file of the skill `entry_json` describes (no file_uri: its SKILL.md, which
    /// loads the skill), verified against the entry (size, SHA-256, frontmatter): the content
    /// item JSON. SkillVerificationError on any mismatch or for a file the entry does not list.
    std::string read_skill_file(const std::string& entry_json,
                                const std::optional<std::string>& file_uri = std::nullopt,
                                const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_read_skill_file(client_, entry_json.c_str(), detail::c_or_null(file_uri), &o, out, e);
        });
    }

    /// MCP Apps: reads a view (a ui:// resource) verified: text/html;profile=mcp-app, text or
    /// base64 blob, at most max_bytes (0: 4 MiB). Result {"uri", "html", "meta"}; see
    /// mcp_client_read_app. Set "apps": true in Options::extra_json to declare the extension.
    std::string read_app(const std::string& uri, size_t max_bytes = 0, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_read_app(client_, detail::c_arg(uri), max_bytes, &o, out, e);
        });
    }

    /// completion/complete with {ref, argument, context?}.
    std::string complete(const std::string& params_json, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_complete(client_, detail::c_arg(params_json), &o, out, e);
        });
    }

    /// Any request by method name ("" params: none); the era's _meta is added.
    std::string request(const std::string& method, const std::string& params_json = std::string(),
                        const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_client_request(client_, detail::c_arg(method), detail::c_or_null(params_json), &o, out, e);
        });
    }

    // ---- started calls (callback or std::future; see Completion) ---------------------------

    /// Started connect: the server info JSON.
    Call connect(const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_connect_start(client_, o, &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> connect(const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return connect(options, std::move(d)); });
    }
    /// Started call_tool (options.input_responses_json / request_state as for the blocking one).
    Call call_tool(const std::string& name, const std::string& arguments_json, const CallOptions& options,
                   Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_call_tool_start(client_, detail::c_arg(name), detail::c_or_null(arguments_json),
                                              detail::c_or_null(options.input_responses_json),
                                              detail::c_or_null(options.request_state), o,
                                              &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> call_tool(const std::string& name, const std::string& arguments_json,
                                       const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return call_tool(name, arguments_json, options, std::move(d)); });
    }
    Call get_prompt(const std::string& name, const std::string& arguments_json, const CallOptions& options,
                    Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_get_prompt_start(client_, detail::c_arg(name), detail::c_or_null(arguments_json),
                                               detail::c_or_null(options.input_responses_json),
                                               detail::c_or_null(options.request_state), o,
                                               &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> get_prompt(const std::string& name, const std::string& arguments_json,
                                        const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return get_prompt(name, arguments_json, options, std::move(d)); });
    }
    /// dispatch_tool_call, started: `done` gets the API-shaped tool-result message.
    Call dispatch_tool_call(const std::string& exported_json, const std::string& call_json,
                            const std::string& options_json, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_export_dispatch_start(client_, detail::c_arg(exported_json), detail::c_arg(call_json),
                                                    detail::c_or_null(options_json), o, &detail::started_trampoline,
                                                    ud, call, e);
        });
    }
    std::future<std::string> dispatch_tool_call(const std::string& exported_json, const std::string& call_json,
                                                const std::string& options_json, const CallOptions& options,
                                                use_future_t) {
        return as_future([&](Completion d) {
            return dispatch_tool_call(exported_json, call_json, options_json, options, std::move(d));
        });
    }
    Call read_resource(const std::string& uri, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_read_resource_start(client_, detail::c_arg(uri),
                                                  detail::c_or_null(options.input_responses_json),
                                                  detail::c_or_null(options.request_state), o,
                                                  &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> read_resource(const std::string& uri, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return read_resource(uri, options, std::move(d)); });
    }
    Call list(ListKind kind, const std::optional<std::string>& cursor, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_list_start(client_, static_cast<int32_t>(kind), detail::c_or_null(cursor), o,
                                         &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> list(ListKind kind, const std::optional<std::string>& cursor, const CallOptions& options,
                                  use_future_t) {
        return as_future([&](Completion d) { return list(kind, cursor, options, std::move(d)); });
    }
    Call list_all(ListKind kind, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_list_all_start(client_, static_cast<int32_t>(kind), o, &detail::started_trampoline, ud,
                                             call, e);
        });
    }
    std::future<std::string> list_all(ListKind kind, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return list_all(kind, options, std::move(d)); });
    }
    Call complete(const std::string& params_json, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_complete_start(client_, detail::c_arg(params_json), o, &detail::started_trampoline, ud,
                                             call, e);
        });
    }
    std::future<std::string> complete(const std::string& params_json, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return complete(params_json, options, std::move(d)); });
    }
    Call request(const std::string& method, const std::string& params_json, const CallOptions& options,
                 Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_request_start(client_, detail::c_arg(method), detail::c_or_null(params_json), o,
                                            &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> request(const std::string& method, const std::string& params_json,
                                     const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return request(method, params_json, options, std::move(d)); });
    }
    /// Started ping: completes with "{}" (UnsupportedError's status on modern servers).
    Call ping(const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_ping_start(client_, o, &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> ping(const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return ping(options, std::move(d)); });
    }
    /// Started set_log_level: completes with "{}"; an unknown level throws here (nothing is sent).
    Call set_log_level(const std::string& level, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_set_log_level_start(client_, detail::c_arg(level), o, &detail::started_trampoline, ud,
                                                  call, e);
        });
    }
    std::future<std::string> set_log_level(const std::string& level, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return set_log_level(level, options, std::move(d)); });
    }
    /// Started resume_task: the tool's result JSON; cancelling the Call sends tasks/cancel.
    Call resume_task(const std::string& task_id, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_resume_task_start(client_, detail::c_arg(task_id), o, &detail::started_trampoline, ud,
                                                call, e);
        });
    }
    std::future<std::string> resume_task(const std::string& task_id, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return resume_task(task_id, options, std::move(d)); });
    }
    Call get_task(const std::string& task_id, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_get_task_start(client_, detail::c_arg(task_id), o, &detail::started_trampoline, ud, call,
                                             e);
        });
    }
    std::future<std::string> get_task(const std::string& task_id, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return get_task(task_id, options, std::move(d)); });
    }
    /// Started cancel_task: completes with "{}".
    Call cancel_task(const std::string& task_id, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_cancel_task_start(client_, detail::c_arg(task_id), o, &detail::started_trampoline, ud,
                                                call, e);
        });
    }
    std::future<std::string> cancel_task(const std::string& task_id, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return cancel_task(task_id, options, std::move(d)); });
    }
    /// Started update_task: completes with "{}"; bad answers JSON throws here.
    Call update_task(const std::string& task_id, const std::string& input_responses_json, const CallOptions& options,
                     Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_update_task_start(client_, detail::c_arg(task_id), detail::c_arg(input_responses_json), o,
                                                &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> update_task(const std::string& task_id, const std::string& input_responses_json,
                                         const CallOptions& options, use_future_t) {
        return as_future(
            [&](Completion d) { return update_task(task_id, input_responses_json, options, std::move(d)); });
    }
    Call list_skills(const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_list_skills_start(client_, o, &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> list_skills(const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return list_skills(options, std::move(d)); });
    }
    Call get_skill(const std::string& uri, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_get_skill_start(client_, detail::c_arg(uri), o, &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> get_skill(const std::string& uri, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return get_skill(uri, options, std::move(d)); });
    }
    /// Started read_skill_file (SkillVerificationError's status on a mismatch).
    Call read_skill_file(const std::string& entry_json, const std::optional<std::string>& file_uri,
                         const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_read_skill_file_start(client_, detail::c_arg(entry_json), detail::c_or_null(file_uri), o,
                                                    &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> read_skill_file(const std::string& entry_json, const std::optional<std::string>& file_uri,
                                             const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return read_skill_file(entry_json, file_uri, options, std::move(d)); });
    }
    /// Started read_app.
    Call read_app(const std::string& uri, size_t max_bytes, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_read_app_start(client_, detail::c_arg(uri), max_bytes, o, &detail::started_trampoline, ud,
                                             call, e);
        });
    }
    std::future<std::string> read_app(const std::string& uri, size_t max_bytes, const CallOptions& options,
                                      use_future_t) {
        return as_future([&](Completion d) { return read_app(uri, max_bytes, options, std::move(d)); });
    }
    /// Started subscribe_resource (legacy): completes with "{}".
    Call subscribe_resource(const std::string& uri, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_subscribe_resource_start(client_, detail::c_arg(uri), o, &detail::started_trampoline, ud,
                                                       call, e);
        });
    }
    std::future<std::string> subscribe_resource(const std::string& uri, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return subscribe_resource(uri, options, std::move(d)); });
    }
    Call unsubscribe_resource(const std::string& uri, const CallOptions& options, Completion done) {
        return start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_unsubscribe_resource_start(client_, detail::c_arg(uri), o, &detail::started_trampoline,
                                                         ud, call, e);
        });
    }
    std::future<std::string> unsubscribe_resource(const std::string& uri, const CallOptions& options, use_future_t) {
        return as_future([&](Completion d) { return unsubscribe_resource(uri, options, std::move(d)); });
    }
    /// Started notify_roots_changed: completes with "{}" once sent (at once on modern servers).
    Call notify_roots_changed(Completion done) {
        return start(CallOptions(), std::move(done), [&](const mcp_call_opts*, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_client_notify_roots_changed_start(client_, &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> notify_roots_changed(use_future_t) {
        return as_future([&](Completion d) { return notify_roots_changed(std::move(d)); });
    }
    /// A started listen's completion: the Subscription once the server acknowledged, or an
    /// empty one with the error (the same exception classes as the blocking listen).
    using ListenCompletion = std::function<void(Subscription, std::exception_ptr)>;
    /// Started listen. Cancelling the Call gives the listen up (the completion gets
    /// CancelledError). Exceptions `done` throws are swallowed.
    Call listen(const std::string& filter_json, const CallOptions& options, ListenCompletion done) {
        // Written by the start, before the completion can run (it waits for the call handle).
        auto slot = std::make_shared<mcp_subscription*>(nullptr);
        return start(
            options,
            [slot, done = std::move(done)](Outcome o) {
                Subscription sub(std::exchange(*slot, nullptr));  // owns the handle either way
                if (o.ok()) {
                    done(std::move(sub), nullptr);
                } else {
                    done(Subscription(), o.error);  // `sub`, never acknowledged, is freed here
                }
            },
            [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
                return mcp_client_listen_start(client_, detail::c_arg(filter_json), o, &detail::started_trampoline, ud,
                                               slot.get(), call, e);
            });
    }
    std::future<Subscription> listen(const std::string& filter_json, const CallOptions& options, use_future_t) {
        auto promise = std::make_shared<std::promise<Subscription>>();
        auto future = promise->get_future();
        listen(filter_json, options, [promise](Subscription sub, std::exception_ptr error) {
            if (error) {
                promise->set_exception(error);
            } else {
                promise->set_value(std::move(sub));
            }
        });
        return future;
    }

    // ---- host-loop mode ------------------------------------------------------------------

    /// Moves every callback of this client (completions, handlers, listeners, progress) to the
    /// host's thread: watch the returned descriptor for reading (asio::posix::stream_descriptor,
    /// uv_poll, poll()) and call dispatch() when it is readable. Call right after construction.
    int use_host_loop() {
        int fd = -1;
        detail::check([&](mcp_error** e) { return mcp_client_use_host_loop(client_, &fd, e); });
        return fd;
    }
    /// Runs queued callbacks on this thread (at most `max`, 0: those queued now); how many wait.
    size_t dispatch(uint32_t max = 0) {
        size_t remaining = 0;
        detail::check([&](mcp_error** e) { return mcp_client_dispatch(client_, max, &remaining, e); });
        return remaining;
    }

    /// Legacy ping (UnsupportedError on modern servers).
    void ping(const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        detail::check([&](mcp_error** e) { return mcp_client_ping(client_, &o, e); });
    }

    /// The server log level: legacy logging/setLevel; modern: sent with every later request.
    void set_log_level(const std::string& level, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        detail::check([&](mcp_error** e) { return mcp_client_set_log_level(client_, detail::c_arg(level), &o, e); });
    }

    /// Legacy resources/subscribe (updates go to the notification listener).
    void subscribe_resource(const std::string& uri, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        detail::check([&](mcp_error** e) { return mcp_client_subscribe_resource(client_, detail::c_arg(uri), &o, e); });
    }
    void unsubscribe_resource(const std::string& uri, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        detail::check([&](mcp_error** e) { return mcp_client_unsubscribe_resource(client_, detail::c_arg(uri), &o, e); });
    }

    /// Tells a legacy server the roots changed (no-op on modern servers).
    void notify_roots_changed() {
        detail::check([&](mcp_error** e) { return mcp_client_notify_roots_changed(client_, e); });
    }

    /// Opens subscriptions/listen with a SubscriptionFilter, e.g. R"({"toolsListChanged":true})",
    /// and waits for the acknowledgement.
    Subscription listen(const std::string& filter_json, const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        mcp_subscription* sub = nullptr;
        detail::check([&](mcp_error** e) { return mcp_client_listen(client_, detail::c_arg(filter_json), &o, &sub, e); });
        return Subscription(sub);
    }

    // ---- handlers and listeners -----------------------------------------------------------
    // Each accepts `void(const std::string& params_json, mcp::Responder)` or
    // `std::string(const std::string& params_json)`, or nullptr to unregister. Registering
    // declares the matching client capability; register before connecting.

    template <class F>
    void on_elicitation(F&& handler) {
        register_input(&mcp_client_on_elicitation, std::forward<F>(handler));
    }
    /// The elicitation handler for `modes` (MCP_ELICITATION_FORM | MCP_ELICITATION_URL),
    /// declaring exactly those: URL mode hands `{"mode":"url","url",...}` requests to the
    /// handler (an accept carries no content); a request in another mode never reaches it
    /// (servers that check capabilities answer -32021, others leave it to the host). Throws
    /// InvalidArgumentError, registering nothing, for no mode or a mode the configuration's
    /// `capabilities` override does not declare.
    template <class F>
    void on_elicitation_modes(uint32_t modes, F&& handler) {
        register_input(
            [modes](mcp_client* c, mcp_input_fn fn, void* ud, mcp_userdata_free_fn fr, mcp_error** e) {
                return mcp_client_on_elicitation_modes(c, modes, fn, ud, fr, e);
            },
            std::forward<F>(handler));
    }
    /// Sampling (with tools under Options::sampling_tools) and roots are deprecated by the
    /// 2026-07-28 specification (SEP-2577, removal no earlier than the first release after
    /// 2027-07-28); both keep working, on both eras.
    template <class F>
    void on_sampling(F&& handler) {
        register_input(&mcp_client_on_sampling, std::forward<F>(handler));
    }
    template <class F>
    void on_roots(F&& handler) {
        register_input(&mcp_client_on_roots, std::forward<F>(handler));
    }

    /// The host's current trace context, asked on the calling thread at the start of each call
    /// whose options carry no trace members; it goes on every request of the call (MRTR
    /// retries, task polls, pages, reconnect retries). An invalid value fails the call with
    /// MCP_INVALID_ARG. nullptr removes it.
    void set_trace_context(TraceContextSource source) {
        if (!source) {
            detail::check([&](mcp_error** e) { return mcp_client_set_trace_context_fn(client_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::TraceBox{std::move(source)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_client_set_trace_context_fn(client_, &detail::trace_trampoline, box,
                                                   &detail::free_box<detail::TraceBox>, e);
        });
    }

    /// Every server notification except progress: (method, params_json). nullptr removes.
    void on_notification(NotificationHandler listener) {
        if (!listener) {
            detail::check([&](mcp_error** e) { return mcp_client_set_notification_handler(client_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::NotificationBox{std::move(listener)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_client_set_notification_handler(client_, &detail::notification_trampoline, box,
                                                       &detail::free_box<detail::NotificationBox>, e);
        });
    }

    /// Server stderr lines and library warnings: (level, source, message). nullptr removes.
    void on_log(LogHandler listener) {
        if (!listener) {
            detail::check([&](mcp_error** e) { return mcp_client_set_log_handler(client_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::LogBox{std::move(listener)};
        detail::check([&](mcp_error** e) {
            return mcp_client_set_log_handler(client_, &detail::log_trampoline, box, &detail::free_box<detail::LogBox>, e);
        });
    }

    // ---- OAuth -----------------------------------------------------------------------------
    // With Options::oauth (or Config::oauth), a server answering 401 is authorized through
    // OAuth 2.1. The authorization-code grant needs a browser step: register a handler.

    /// Registers the browser step of the authorization-code flow. Accepts
    /// `void(const std::string& authorization_url, const std::optional<std::string>& redirect_uri,
    /// mcp::AuthResponder)` (complete the responder now or later, from any thread; destroying it
    /// unanswered fails the authorization) or `std::string(const std::string& authorization_url)`
    /// (return the redirected-to URL, or "" to leave it to the loopback listener), or nullptr to
    /// unregister. Runs on the dispatcher thread; an exception fails the authorization (the call
    /// throws AuthRequiredError with its what()).
    template <class F>
    void on_authorization(F&& handler) {
        if constexpr (std::is_same_v<std::decay_t<F>, std::nullptr_t>) {
            detail::check([&](mcp_error** e) { return mcp_client_on_authorization(client_, nullptr, nullptr, nullptr, e); });
        } else {
            detail::AuthBox fn = detail::to_auth_box(std::forward<F>(handler));
            if (!fn.full && !fn.simple) {
                detail::check([&](mcp_error** e) { return mcp_client_on_authorization(client_, nullptr, nullptr, nullptr, e); });
                return;
            }
            auto* box = new detail::AuthBox(std::move(fn));
            // The library owns the box from here: userdata_free runs exactly once, even on failure.
            detail::check([&](mcp_error** e) {
                return mcp_client_on_authorization(client_, &detail::authorization_trampoline, box,
                                                   &detail::free_box<detail::AuthBox>, e);
            });
        }
    }

    /// Keeps OAuth credentials in the host's store (a keychain, a file): one record (a JSON
    /// object, opaque) per authorization-server issuer. `load` runs before a flow and returns the
    /// record `save` received, or nullopt; `save` runs after a registration or a new token, with
    /// nullopt to forget. Both run on the dispatcher thread; exceptions are swallowed (a failing
    /// load counts as nothing stored). Without a store, credentials live as long as the client.
    void set_token_store(TokenLoader load, TokenSaver save) {
        if (!load && !save) {
            reset_token_store();
            return;
        }
        if (!load || !save) {
            throw InvalidArgumentError(MCP_INVALID_ARG, "a token store needs both load and save");
        }
        auto* box = new detail::TokenStoreBox{std::move(load), std::move(save)};
        detail::check([&](mcp_error** e) {
            return mcp_client_set_token_store(client_, &detail::token_load_trampoline, &detail::token_save_trampoline,
                                              box, &detail::free_box<detail::TokenStoreBox>, e);
        });
    }

    /// Registers the source of the assertion grants' JWTs (an empty function removes it). Runs
    /// on the dispatcher thread; read rotated tokens fresh each time.
    void set_assertion_provider(AssertionProvider provide) {
        if (!provide) {
            detail::check([&](mcp_error** e) {
                return mcp_client_set_assertion_provider(client_, nullptr, nullptr, nullptr, e);
            });
            return;
        }
        auto* box = new detail::AssertionBox{std::move(provide)};
        detail::check([&](mcp_error** e) {
            return mcp_client_set_assertion_provider(client_, &detail::assertion_trampoline, box,
                                                     &detail::free_box<detail::AssertionBox>, e);
        });
    }

    /// Restores the in-memory default store.
    void reset_token_store() {
        detail::check([&](mcp_error** e) { return mcp_client_set_token_store(client_, nullptr, nullptr, nullptr, nullptr, e); });
    }

    explicit operator bool() const noexcept { return client_ != nullptr; }
    mcp_client* native() const noexcept { return client_; }

private:
    template <class Start>
    Call start(const CallOptions& options, Completion done, Start&& start_call) {
        return detail::start(options, std::move(done), std::forward<Start>(start_call));
    }
    template <class Starter>
    static std::future<std::string> as_future(Starter&& starter) {
        return detail::as_future(std::forward<Starter>(starter));
    }
    static Config base_config(const Options& options) {
        Config config(options.extra_json);
        if (options.mode != Mode::Auto) config.mode(options.mode);
        if (options.protocol_version) config.protocol_version(*options.protocol_version);
        if (options.request_timeout) config.request_timeout(*options.request_timeout);
        if (options.max_input_rounds) config.max_input_rounds(*options.max_input_rounds);
        if (options.sampling_tools) config.sampling_tools(true);
        return config;
    }

    template <class Reg, class F>
    void register_input(Reg reg, F&& handler) {
        if constexpr (std::is_same_v<std::decay_t<F>, std::nullptr_t>) {
            detail::check([&](mcp_error** e) { return reg(client_, nullptr, nullptr, nullptr, e); });
        } else {
            InputHandler fn = detail::to_input_handler(std::forward<F>(handler));
            if (!fn) {  // an empty std::function unregisters too
                detail::check([&](mcp_error** e) { return reg(client_, nullptr, nullptr, nullptr, e); });
                return;
            }
            auto* box = new detail::InputBox{std::move(fn)};
            // The library owns the box from here: userdata_free runs exactly once, even on failure.
            detail::check([&](mcp_error** e) {
                return reg(client_, &detail::input_trampoline, box, &detail::free_box<detail::InputBox>, e);
            });
        }
    }

    mcp_client* client_ = nullptr;
};

// ============================================================================================
// Hub
// ============================================================================================

/// Hub construction options (mcp_hub_new).
struct HubOptions {
    /// Between member and name in exported tool and prompt names.
    std::string separator = "__";
    /// false: names are exported unprefixed (a name two members offer makes list() throw).
    bool prefix = true;
    /// Configuration keys every member gets unless its own configuration sets them, as a JSON
    /// object ("" for none), e.g. R"({"connect_timeout_ms":5000})".
    std::string defaults_json;
};

/// A hub event listener: `event_json` is {"type":"state","server","state","error"?},
/// {"type":"list_changed","server","list"}, {"type":"resource_updated","server","uri"},
/// {"type":"log","server","source","level","message"} or {"type":"notification","server",
/// "method","params"}. Runs on the shared dispatcher thread, in order; exceptions are swallowed.
using HubEventHandler = std::function<void(const std::string& event_json)>;

namespace detail {
struct HubEventBox {
    HubEventHandler fn;
};
inline void hub_event_trampoline(void* userdata, const char* event_json) noexcept {
    try {
        static_cast<HubEventBox*>(userdata)->fn(event_json ? event_json : "{}");
    } catch (...) {
        // Listeners cannot fail anything: swallow.
    }
}
}  // namespace detail

/// One ${input:id} of a VS Code configuration file the host is asked to answer.
struct HubInput {
    std::string id;
    std::string description;
    /// Mask what the user types.
    bool password = false;
    std::optional<std::string> default_value;
    /// A pickString's choices as a JSON array of strings (answer with one of them: another answer
    /// fails the servers using the input; read them with mcp::json::string_at(options_json, "/0")
    /// …); "[]" for a promptString, which takes free text.
    std::string options_json = "[]";
};
/// Answers an input (nullopt declines: the servers using it are failed). Runs on the thread
/// reading the file, at most once per id and read; an exception declines.
using HubInputHandler = std::function<std::optional<std::string>(const HubInput& input)>;

/// How a host's configuration file is read (Hub::from_file, from_text, reload_from_*).
struct HubReadOptions {
    /// What ${workspaceFolder} stands for, and where a relative envFile starts.
    std::optional<std::string> workspace_folder;
    /// What ${userHome} stands for (default: $HOME).
    std::optional<std::string> user_home;
    HubInputHandler on_input;
};

namespace detail {
inline void hub_input_trampoline(void* userdata, const char* id, const char* description, bool password,
                                 const char* default_value, mcp_hub_input_slot* slot) noexcept {
    try {
        char* options = nullptr;
        mcp_error* oerr = nullptr;
        if (mcp_hub_input_slot_options_json(slot, &options, &oerr) != MCP_OK) {
            mcp_error_free(oerr);
            return;  // declined: the choice cannot be shown
        }
        HubInput in{id ? id : "", description ? description : "", password, opt_string(default_value),
                    take_string(options)};
        std::optional<std::string> answer = (*static_cast<const HubInputHandler*>(userdata))(in);
        if (answer && answer->find('\0') == std::string::npos) {
            mcp_error* err = nullptr;
            if (mcp_hub_input_slot_set(slot, answer->c_str(), &err) != MCP_OK) mcp_error_free(err);
        }
    } catch (...) {
        // Declined: nothing may unwind into the library.
    }
}

/// The C view of `read`, valid while `read` lives.
inline mcp_hub_read_opts native_read_opts(const HubReadOptions& read) {
    mcp_hub_read_opts o;
    if (mcp_hub_read_opts_init(&o, MCP_HUB_READ_OPTS_VERSION) != MCP_OK) {
        throw UnsupportedError(MCP_UNSUPPORTED, "the library does not know this header's mcp_hub_read_opts version");
    }
    o.workspace_folder = c_or_null(read.workspace_folder);
    o.user_home = c_or_null(read.user_home);
    if (read.on_input) {
        o.on_input = &hub_input_trampoline;
        o.input_userdata = const_cast<HubInputHandler*>(&read.on_input);
    }
    return o;
}
}  // namespace detail

/// Many MCP servers as one client (mcp_hub_*): members start at once, their tools, prompts and
/// resources form one catalogue (tool and prompt names "<member>__<name>", each item naming its
/// member in _meta["mcp-client/server"]), and each call goes to the member that owns it. A
/// member that cannot start is "failed" in members(); the hub keeps going. Move-only; any
/// thread may call (blocking calls not from callbacks). The destructor closes every member (no
/// server process is left) and frees the hub.
class Hub {
public:
    explicit Hub(const HubOptions& options = HubOptions()) : Hub(nullptr) {
        std::string js = options_json(options);
        detail::check([&](mcp_error** e) { return mcp_hub_new(detail::c_arg(js), &hub_, e); });
    }

    /// A hub of the servers of a host's configuration file: mcpServers (claude_desktop_config.json,
    /// .mcp.json, Cursor's mcp.json) or VS Code's servers and inputs, comments and trailing commas
    /// allowed. Entries that cannot be built (an unset variable, a declined input, a refused
    /// setting) are failed members; other hosts' keys are in warnings(). Only a file that cannot
    /// be read as a whole throws. Nothing starts before start().
    static Hub from_file(const std::string& path, const HubOptions& options = HubOptions(),
                         const HubReadOptions& read = HubReadOptions()) {
        Hub hub(nullptr);
        std::string js = options_json(options);
        mcp_hub_read_opts r = detail::native_read_opts(read);
        detail::check([&](mcp_error** e) {
            return mcp_hub_new_from_file(detail::c_arg(path), detail::c_arg(js), &r, &hub.hub_, e);
        });
        return hub;
    }
    /// from_file for the file's text.
    static Hub from_text(const std::string& text, const HubOptions& options = HubOptions(),
                         const HubReadOptions& read = HubReadOptions()) {
        Hub hub(nullptr);
        std::string js = options_json(options);
        mcp_hub_read_opts r = detail::native_read_opts(read);
        detail::check([&](mcp_error** e) {
            return mcp_hub_new_from_text(detail::c_arg(text), detail::c_arg(js), &r, &hub.hub_, e);
        });
        return hub;
    }
    Hub(Hub&& o) noexcept : hub_(std::exchange(o.hub_, nullptr)) {}
    Hub& operator=(Hub&& o) noexcept {
        if (this != &o) {
            mcp_hub_free(hub_);
            hub_ = std::exchange(o.hub_, nullptr);
        }
        return *this;
    }
    Hub(const Hub&) = delete;
    Hub& operator=(const Hub&) = delete;
    /// Closes every member and frees the hub: after it returns no listener runs again.
    ~Hub() { mcp_hub_free(hub_); }

    /// Adds member `name` with its flat client configuration JSON ({"command":...} or
    /// {"url":...}, the keys mcp_config_new takes); start() connects it. A configuration the
    /// library refuses makes the member "failed"; a name the hub has throws InvalidArgumentError.
    void add_member(const std::string& name, const std::string& config_json) {
        detail::check([&](mcp_error** e) {
            return mcp_hub_add_member(hub_, detail::c_arg(name), detail::c_arg(config_json), e);
        });
    }
    /// Connects every member not yet started, all at once; returns when each has connected or
    /// failed (each bounded by its connect_timeout_ms). A failed member does not throw.
    void start() {
        detail::check([&](mcp_error** e) { return mcp_hub_start(hub_, e); });
    }
    /// The members' states as a JSON array, in the order added: {"name","state","error"?,"era"?,
    /// "protocolVersion"?,"serverInfo"?}. Does not block.
    std::string members() const {
        return detail::check_string([&](char** out, mcp_error** e) { return mcp_hub_members_json(hub_, out, e); });
    }
    /// The merged list over the connected members: {"tools":[...]} (or prompts, resources,
    /// resourceTemplates), names exported.
    std::string list(ListKind kind) {
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_hub_list(hub_, static_cast<int32_t>(kind), out, e);
        });
    }

    /// Calls the tool the merged list names `name` on its member; `arguments_json` a JSON object
    /// ("" for none). An unknown name throws InvalidArgumentError listing the nearest names.
    std::string call_tool(const std::string& name, const std::string& arguments_json = std::string(),
                          const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_hub_call_tool(hub_, detail::c_arg(name), detail::c_or_null(arguments_json), &o, out, e);
        });
    }
    /// Gets the prompt the merged list names `name`; `arguments_json` an object of strings.
    std::string get_prompt(const std::string& name, const std::string& arguments_json = std::string(),
                           const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_hub_get_prompt(hub_, detail::c_arg(name), detail::c_or_null(arguments_json), &o, out, e);
        });
    }
    /// Reads `uri` from member `server`.
    std::string read_resource(const std::string& server, const std::string& uri,
                              const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_hub_read_resource(hub_, detail::c_arg(server), detail::c_arg(uri), &o, out, e);
        });
    }
    /// Makes one model tool call on the member its route names (`exported_json`: model::export_tools
    /// of list(ListKind::Tools), whose routes lead back to each tool's member and own name) and
    /// returns the API's tool-result message. A name the export lacks, a tool the member's filter
    /// withholds or a member the hub no longer has is a message the model reads, as are bad
    /// arguments and tool errors; see mcp_hub_export_dispatch.
    std::string dispatch_tool_call(const std::string& exported_json, const std::string& call_json,
                                   const std::string& options_json = std::string(),
                                   const CallOptions& options = CallOptions()) {
        mcp_call_opts o = detail::native_opts(options);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_hub_export_dispatch(hub_, detail::c_arg(exported_json), detail::c_arg(call_json),
                                           detail::c_or_null(options_json), &o, out, e);
        });
    }

    // ---- started calls (callback or std::future; see Completion) ---------------------------

    Call call_tool(const std::string& name, const std::string& arguments_json, const CallOptions& options,
                   Completion done) {
        return detail::start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_hub_call_tool_start(hub_, detail::c_arg(name), detail::c_or_null(arguments_json), o,
                                           &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> call_tool(const std::string& name, const std::string& arguments_json,
                                       const CallOptions& options, use_future_t) {
        return detail::as_future([&](Completion d) { call_tool(name, arguments_json, options, std::move(d)); });
    }
    Call get_prompt(const std::string& name, const std::string& arguments_json, const CallOptions& options,
                    Completion done) {
        return detail::start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_hub_get_prompt_start(hub_, detail::c_arg(name), detail::c_or_null(arguments_json), o,
                                            &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> get_prompt(const std::string& name, const std::string& arguments_json,
                                        const CallOptions& options, use_future_t) {
        return detail::as_future([&](Completion d) { get_prompt(name, arguments_json, options, std::move(d)); });
    }
    Call read_resource(const std::string& server, const std::string& uri, const CallOptions& options, Completion done) {
        return detail::start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_hub_read_resource_start(hub_, detail::c_arg(server), detail::c_arg(uri), o,
                                               &detail::started_trampoline, ud, call, e);
        });
    }
    std::future<std::string> read_resource(const std::string& server, const std::string& uri,
                                           const CallOptions& options, use_future_t) {
        return detail::as_future([&](Completion d) { read_resource(server, uri, options, std::move(d)); });
    }
    /// dispatch_tool_call, started: `done` gets the API-shaped tool-result message.
    Call dispatch_tool_call(const std::string& exported_json, const std::string& call_json,
                            const std::string& options_json, const CallOptions& options, Completion done) {
        return detail::start(options, std::move(done), [&](const mcp_call_opts* o, void* ud, mcp_call** call, mcp_error** e) {
            return mcp_hub_export_dispatch_start(hub_, detail::c_arg(exported_json), detail::c_arg(call_json),
                                                 detail::c_or_null(options_json), o, &detail::started_trampoline,
                                                 ud, call, e);
        });
    }
    std::future<std::string> dispatch_tool_call(const std::string& exported_json, const std::string& call_json,
                                                const std::string& options_json, const CallOptions& options,
                                                use_future_t) {
        return detail::as_future([&](Completion d) {
            dispatch_tool_call(exported_json, call_json, options_json, options, std::move(d));
        });
    }

    // ---- reload --------------------------------------------------------------------------

    /// Applies a changed configuration to one member, as a reload does: a new name is added
    /// and started, a changed (or failed) one is closed and started again, an equal one keeps
    /// its connection. Returns once the member has connected or failed.
    void set_member(const std::string& name, const std::string& config_json) {
        detail::check([&](mcp_error** e) {
            return mcp_hub_set_member(hub_, detail::c_arg(name), detail::c_arg(config_json), e);
        });
    }
    /// Removes member `name` and shuts its server down (an unknown name: InvalidArgumentError).
    void remove_member(const std::string& name) {
        detail::check([&](mcp_error** e) { return mcp_hub_remove_member(hub_, detail::c_arg(name), e); });
    }
    /// Reads the configuration file again and applies it: new members are added and started,
    /// removed ones closed, changed (or failed) ones restarted, the others keep their
    /// connections. Returns the report {"added","removed","restarted","unchanged"} (arrays of
    /// names). A file that cannot be read as a whole throws and changes nothing.
    std::string reload_from_file(const std::string& path, const HubReadOptions& read = HubReadOptions()) {
        mcp_hub_read_opts r = detail::native_read_opts(read);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_hub_reload_from_file(hub_, detail::c_arg(path), &r, out, e);
        });
    }
    /// reload_from_file for the file's text.
    std::string reload_from_text(const std::string& text, const HubReadOptions& read = HubReadOptions()) {
        mcp_hub_read_opts r = detail::native_read_opts(read);
        return detail::check_string([&](char** out, mcp_error** e) {
            return mcp_hub_reload_from_text(hub_, detail::c_arg(text), &r, out, e);
        });
    }
    /// The configuration's warnings as a JSON array of strings: other hosts' keys this library
    /// ignores (autoApprove, alwaysAllow, ...), each once with the servers it is on.
    std::string warnings() const {
        return detail::check_string([&](char** out, mcp_error** e) { return mcp_hub_warnings_json(hub_, out, e); });
    }

    /// The span and session records of every member (as Client::on_span gives them), members
    /// added later included, each with the attribute "mcp.server.name" (the member's name). A
    /// blocking call's records come on its thread before it returns, a started call's just
    /// before its completion; session records and those of start()'s connects on the library's
    /// threads. An exception it throws is swallowed. nullptr removes it.
    void on_span(detail::SpanHandler listener) {
        if (!listener) {
            detail::check([&](mcp_error** e) { return mcp_hub_on_span(hub_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::JsonListenerBox{std::move(listener)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_hub_on_span(hub_, &detail::json_listener_trampoline, box,
                                   &detail::free_box<detail::JsonListenerBox>, e);
        });
    }

    /// The host's current trace context for the hub's calls whose options carry no trace
    /// members: a blocking call asks on its thread once per member request it sends (the routed
    /// request, the member lists it fetches), a started call once when it starts; it goes in
    /// those requests' _meta. nullptr removes it.
    void set_trace_context(TraceContextSource source) {
        if (!source) {
            detail::check([&](mcp_error** e) { return mcp_hub_set_trace_context_fn(hub_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::TraceBox{std::move(source)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_hub_set_trace_context_fn(hub_, &detail::trace_trampoline, box,
                                                &detail::free_box<detail::TraceBox>, e);
        });
    }

    /// Sets the hub's listener (nullptr or an empty function removes it).
    void on_event(HubEventHandler listener) {
        if (!listener) {
            detail::check([&](mcp_error** e) { return mcp_hub_on_event(hub_, nullptr, nullptr, nullptr, e); });
            return;
        }
        auto* box = new detail::HubEventBox{std::move(listener)};
        // The library owns the box from here: userdata_free runs exactly once, even on failure.
        detail::check([&](mcp_error** e) {
            return mcp_hub_on_event(hub_, &detail::hub_event_trampoline, box, &detail::free_box<detail::HubEventBox>, e);
        });
    }

    /// Closes every member (no server process is left): started calls complete with
    /// ClosedError, later calls throw it. Idempotent; not from a callback.
    void close() {
        detail::check([&](mcp_error** e) { return mcp_hub_close(hub_, e); });
    }

    mcp_hub* native() const noexcept { return hub_; }

private:
    explicit Hub(std::nullptr_t) {
        if (!abi_compatible()) {
            throw UnsupportedError(MCP_UNSUPPORTED, "libmcp_client implements ABI " + std::to_string(mcp_abi_version()) +
                                                        ", this header expects " + std::to_string(MCP_ABI_VERSION));
        }
    }
    static std::string options_json(const HubOptions& options) {
        std::vector<std::pair<std::string, std::string>> o = {{"separator", json::quote(options.separator)},
                                                              {"prefix", options.prefix ? "true" : "false"}};
        if (!options.defaults_json.empty()) o.emplace_back("defaults", options.defaults_json);
        return json::object(o);
    }
    mcp_hub* hub_ = nullptr;
};

}  // namespace mcp

#endif  // MCP_CLIENT_HPP
