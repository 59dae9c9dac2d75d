/*
 * mcp_client: a Model Context Protocol client with a C ABI.
 *
 * Speaks the modern protocol (2026-07-28: stateless, `_meta` on every request, `server/discover`,
 * Multi Round-Trip Requests) and the legacy one (2024-11-05 ... 2025-11-25: `initialize`),
 * choosing the era automatically.
 *
 * CONVENTIONS
 * - Every fallible function returns an `mcp_status`; MCP_OK (0) is success. Outputs are written
 *   only on success. The optional last parameter `mcp_error **err_out` (may be NULL) receives an
 *   error object on failure, which the caller frees with mcp_error_free. Initialise out-pointers
 *   to NULL.
 * - Strings in are NUL-terminated UTF-8, borrowed for the call only: a name, URI or
 *   requestState ends at its first NUL byte, so U+0000 cannot be passed in one (the bindings
 *   refuse such strings; inside JSON it travels escaped as \u0000). JSON in is validated
 *   (MCP_INVALID_UTF8 / MCP_INVALID_JSON, nothing is sent). Strings out (`char **..._out`) are
 *   owned by the caller and freed with mcp_string_free, never free().
 * - Strings out never contain a raw NUL: JSON escapes U+0000 as \u0000 (a server line with a raw
 *   control character in a string is refused as a protocol violation); messages show it as the
 *   six characters \u0000. Data that must be exact is never altered: mcp_json_string refuses a
 *   string holding U+0000 and mcp_error_request_state returns NULL for such a requestState.
 * - JSON payloads are MCP JSON without the JSON-RPC envelope: results as the schema defines them
 *   (CallToolResult, GetPromptResult, ReadResourceResult, ...), unknown fields preserved.
 * - A tool error (`isError: true`) is MCP_OK with its result; protocol, transport and API
 *   failures are non-zero statuses. An `input_required` result that no handler can answer is
 *   MCP_INPUT_REQUIRED, whose error object carries the inputRequests JSON, the requestState and
 *   the raw result; retry the same call with `input_responses_json` and `request_state`.
 * - Every `_free(NULL)` is a no-op. Objects may be freed in any order.
 * - Pointers: every pointer argument is NULL (where the function allows it) or valid for its
 *   type for the duration of the call; handles are ones this library returned and not yet freed.
 *   The library checks for NULL, never for a dangling pointer.
 * - Option structs are versioned so they can grow: initialise with
 *   `mcp_call_opts o; mcp_call_opts_init(&o, MCP_CALL_OPTS_VERSION);`, then set fields. The
 *   library reads only the fields of the version the struct was initialised with, and accepts
 *   every older version; a version newer than the library's is MCP_INVALID_ARG.
 * - Timeouts: every `int64_t ..._ms` argument or field is milliseconds; a positive value is the
 *   limit (at most MCP_MAX_TIMEOUT_MS), MCP_TIMEOUT_DEFAULT (0) takes the default the function
 *   documents, MCP_TIMEOUT_NONE (any negative value) means no limit. (Keys `*_ms` of the JSON
 *   configuration keep their own documented meaning: 0 is "none" there.)
 * - Byte-exact strings: a string the library returns never holds a NUL byte before its
 *   terminator, so strlen() is its length; the library guarantees it (JSON escapes U+0000, and a
 *   requestState or string value holding U+0000 is refused, never cut, see below).
 *
 * OWNERSHIP (who frees what)
 * - mcp_config, mcp_client, mcp_subscription, mcp_cancel_token, mcp_error: made by the library,
 *   owned by the caller, released once with their `_free`. `char *` outputs: mcp_string_free.
 * - Borrowed results (mcp_error_* strings, mcp_status_str, mcp_version) live as long as their
 *   owner (the error object; static text) and are never freed by the caller.
 * - mcp_responder (input handlers and the authorization callback alike): owned by the library
 *   while the callback runs; answered by exactly one mcp_responder_reply_* call, which always
 *   consumes it, even when it fails. After mcp_responder_defer the host owns it until that reply
 *   (from any thread). A callback that neither replies nor defers declines (see each handler).
 * - mcp_token_slot and every callback argument: borrowed for the callback's duration only.
 * - userdata: the host's; the library calls its `userdata_free` exactly once, even when the
 *   registering call fails, and only once no callback can use it any more.
 *
 * THREADING
 * - Every function may be called from any thread. An mcp_client is fully thread-safe except
 *   mcp_client_free; concurrent calls on one client are multiplexed over its connection.
 * - Callbacks (input handlers, listeners, progress) run on one dispatcher thread per client
 *   (started with its first callback), one at a time, with no library lock held. Do long work
 *   elsewhere: defer the responder.
 * - From a callback, non-blocking functions are allowed (responder replies, cancel tokens,
 *   mcp_client_close, error accessors, mcp_string_free); a blocking call on the same client
 *   returns MCP_REENTRANT_CALL instead of deadlocking.
 * - mcp_client_close wakes every blocked caller (MCP_CLOSED). After mcp_client_free returns, no
 *   callback runs again. Callbacks must not unwind (no C++ exceptions, no longjmp) out of them.
 * - A host thread whose blocking call finds the client idle (no call for 5 ms) waits for the
 *   answer in poll(2), and keeps one close-on-exec event descriptor for that (an eventfd on
 *   Linux, a pipe elsewhere) until the thread exits.
 * - Create clients after fork(); a client used in a forked child returns MCP_FORKED, and freeing
 *   it there only releases the handle (the parent's server and threads are left alone).
 * - mcp_client_new sets SIGPIPE to "ignore" when it still has the default disposition, so a
 *   server that goes away makes writes fail (MCP_SERVER_EXITED) instead of killing the host.
 * - No panic crosses this boundary: an internal panic returns MCP_PANIC and poisons the client.
 *
 * BOUNDS (a hostile or broken server cannot make the client wait or grow without limit)
 * - Writes never hold a call: timeouts, total caps, cancel tokens and mcp_client_close hold while
 *   a server is not reading. At most 16 MiB may wait to be written to a stdio server; past that
 *   a call fails at once with MCP_IO and answers to the server's requests are dropped.
 * - Incoming messages: back-pressure. The library stops reading once 4 MiB of them wait to be
 *   handled; the server waits, the answers still arrive.
 * - Listener and progress callbacks: at most 4096 wait for the dispatcher thread; more are
 *   dropped and counted (mcp_client_dropped_callbacks). Input handlers are never dropped.
 * - A subscription holds 1024 events the host has not taken; then it ends with MCP_IO after them.
 * - Legacy servers: at most 64 of their requests are answered at once (more get an error
 *   answer). A 2026-07-28 server's requests are refused (-32601) without running a handler.
 * - A message nested deeper than 127 levels (its envelope included) fails alone: its call gets
 *   MCP_PROTOCOL_VIOLATION, other messages are skipped. Results are always readable by
 *   mcp_json_pointer.
 * - Timeouts past MCP_MAX_TIMEOUT_MS are refused (MCP_INVALID_ARG), never wrapped.
 *
 * RESPONSE CACHING (SEP-2549) AND OUTPUT SCHEMAS (both on by default)
 * - Results of server/discover, the list calls and resources/read are cached while the server's
 *   ttlMs lasts (absent or negative: 0, i.e. not cached; capped at 24 h): a fresh entry answers
 *   without a round trip. Each page is its own entry. `private` (or unscoped) entries belong to
 *   the authorization context set with mcp_client_set_cache_partition, `public` ones are shared.
 *   list_changed and resources/updated notifications (listen or legacy) evict before any
 *   listener sees them; input_required results and MRTR retries are never stored; at most
 *   `response_cache_max_entries` (512) entries. Per call: mcp_call_opts.cache_mode
 *   (MCP_CACHE_USE, MCP_CACHE_REFRESH, MCP_CACHE_BYPASS); client-wide: mcp_config_set_response_cache.
 * - A tools/call result's structuredContent is checked against the outputSchema its tool
 *   declared in the last tools/list (JSON Schema 2020-12 assertions; $refs resolve inside the
 *   schema only, nothing is fetched; a `pattern` the engine cannot compile, such as a lookahead,
 *   passes; `format` is not checked); a mismatch or a missing structuredContent is MCP_OUTPUT_SCHEMA_INVALID
 *   (mcp_error_result_json: the raw result). A client without a tools/list lists the tools once
 *   when the first structured result arrives. Off per call (mcp_call_opts.skip_output_validation)
 *   or per client (mcp_config_set_validate_output_schema).
 */
/* MCP_API marks the library's exported functions (default visibility, so a host building with
 * -fvisibility=hidden still links them). MCP_WARN_UNUSED_RESULT marks functions returning an
 * mcp_status: ignoring one is a bug (to ignore a status on purpose, assign it). Define either
 * before including this header to override it. */
#ifndef MCP_API
#  if defined(__GNUC__) || defined(__clang__)
#    define MCP_API __attribute__((visibility("default")))
#  else
#    define MCP_API
#  endif
#endif
#ifndef MCP_WARN_UNUSED_RESULT
#  if defined(__GNUC__) || defined(__clang__)
#    define MCP_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#  else
#    define MCP_WARN_UNUSED_RESULT
#  endif
#endif


#ifndef MCP_CLIENT_H
#define MCP_CLIENT_H

/* Generated by cbindgen from the doc comments in src/ffi and cbindgen.toml. Do not edit: `cargo build` (build.rs) regenerates it. */

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define MCP_VERSION_MAJOR 0
#define MCP_VERSION_MINOR 1
#define MCP_VERSION_PATCH 0
/** `resultType` values, for hosts that inspect raw results. */
#define MCP_RESULT_TYPE_COMPLETE "complete"
#define MCP_RESULT_TYPE_INPUT_REQUIRED "input_required"


/**
 * `mcp_call_opts.cache_mode`: answer from a fresh cache entry when there is one (default).
 */
#define MCP_CACHE_USE 0

/**
 * `mcp_call_opts.cache_mode`: always ask the server, then store its answer.
 */
#define MCP_CACHE_REFRESH 1

/**
 * `mcp_call_opts.cache_mode`: always ask the server and store nothing.
 */
#define MCP_CACHE_BYPASS 2

/**
 * List kinds for `mcp_client_list` and `mcp_client_list_all`.
 */
#define MCP_LIST_TOOLS 0

#define MCP_LIST_PROMPTS 1

#define MCP_LIST_RESOURCES 2

#define MCP_LIST_RESOURCE_TEMPLATES 3

/**
 * Eras reported by `mcp_client_era`.
 */
#define MCP_ERA_NONE 0

#define MCP_ERA_MODERN 1

#define MCP_ERA_LEGACY 2

#define MCP_JSONRPC_PARSE_ERROR -32700

#define MCP_JSONRPC_INVALID_REQUEST -32600

#define MCP_JSONRPC_METHOD_NOT_FOUND -32601

#define MCP_JSONRPC_INVALID_PARAMS -32602

#define MCP_JSONRPC_INTERNAL_ERROR -32603

/**
 * Modern HTTP: a header disagrees with the body.
 */
#define MCP_JSONRPC_HEADER_MISMATCH -32020

/**
 * Modern: the request needs client capabilities that were not declared.
 */
#define MCP_JSONRPC_MISSING_REQUIRED_CLIENT_CAPABILITY -32021

/**
 * Modern: `_meta` protocol version unsupported; `data.supported` lists the server's versions.
 */
#define MCP_JSONRPC_UNSUPPORTED_PROTOCOL_VERSION -32022

/**
 * Legacy: URL elicitation required (2025-11-25).
 */
#define MCP_JSONRPC_URL_ELICITATION_REQUIRED -32042

/**
 * Era modes for `mcp_config_set_mode`.
 */
#define MCP_MODE_AUTO 0

#define MCP_MODE_MODERN 1

#define MCP_MODE_LEGACY 2

/**
 * Environment modes for `mcp_config_set_env_mode`.
 */
#define MCP_ENV_INHERIT 0

#define MCP_ENV_REPLACE 1

#define MCP_ENV_ALLOWLIST 2

/**
 * A connect succeeded (the first one, and each reconnect).
 */
#define MCP_CONNECTION_CONNECTED 1

/**
 * The connection was lost (the server exited, the HTTP server went away); `detail` says why.
 */
#define MCP_CONNECTION_DISCONNECTED 2

/**
 * Reconnect attempt `attempt` (1-based) starts.
 */
#define MCP_CONNECTION_RECONNECTING 3

/**
 * Every attempt of the policy failed; `detail` is the last error. The next call starts over.
 */
#define MCP_CONNECTION_FAILED 4

/**
 * Elicitation mode flag: form mode (`requestedSchema`, answered with `content`).
 */
#define MCP_ELICITATION_FORM 1

/**
 * Elicitation mode flag: URL mode (the user opens `url` out of band; `accept` carries no
 * content, and the library drops any the handler gives).
 */
#define MCP_ELICITATION_URL 2

/**
 * Manual input flag (`mcp_config_set_manual_input`): sampling.
 */
#define MCP_INPUT_SAMPLING 4

/**
 * Manual input flag (`mcp_config_set_manual_input`): roots.
 */
#define MCP_INPUT_ROOTS 8

/**
 * The newest `mcp_hub_read_opts` layout this header describes (grows as `mcp_call_opts` does).
 */
#define MCP_HUB_READ_OPTS_VERSION 1

/**
 * The newest `mcp_call_opts` layout this header describes. A struct only grows by appending
 * fields, each new layout with a new version; the library reads only the fields of the version
 * the caller initialised, so a program built against an older header keeps working.
 */
#define MCP_CALL_OPTS_VERSION 1

/**
 * Timeouts (every `*_ms` argument and field of type `int64_t`): a positive value is the limit in
 * milliseconds (at most `MCP_MAX_TIMEOUT_MS`); `MCP_TIMEOUT_DEFAULT` (0) takes the documented
 * default; `MCP_TIMEOUT_NONE` (or any negative value) means no limit.
 */
#define MCP_TIMEOUT_DEFAULT 0

/**
 * See `MCP_TIMEOUT_DEFAULT`.
 */
#define MCP_TIMEOUT_NONE -1

/**
 * The longest timeout, total cap or grace period the library takes, in milliseconds (2^40,
 * about 34.8 years); longer values are refused with `MCP_INVALID_ARG`, never wrapped.
 */
#define MCP_MAX_TIMEOUT_MS 1099511627776

/**
 * Each client owns its runtime thread and, from its first callback on, its dispatcher thread
 * (the default).
 */
#define MCP_RUNTIME_ISOLATED 0

/**
 * The client shares the process-wide runtime threads and dispatcher thread.
 */
#define MCP_RUNTIME_SHARED 1

/**
 * Bumped on any ABI break; bindings compare it with `MCP_ABI_VERSION` at load.
 */
#define MCP_ABI_VERSION 2

/**
 * Where an assertion callback puts the JWT. Valid only during that callback.
 */
typedef struct mcp_assertion_slot mcp_assertion_slot;

/**
 * A started call. Owned by the caller (when `call_out` was given) and freed with
 * `mcp_call_free`, before or after its completion, from any thread (its own completion
 * callback included).
 */
typedef struct mcp_call mcp_call;

/**
 * Reference-counted; every clone cancels the same calls.
 */
typedef struct mcp_cancel_token mcp_cancel_token;

/**
 * An MCP client. Thread-safe except `mcp_client_free`.
 */
typedef struct mcp_client mcp_client;

/**
 * Connection settings. Not thread-safe: build it on one thread, then pass it to
 * `mcp_client_new`, which copies it.
 */
typedef struct mcp_config mcp_config;

/**
 * Details of a failed call. Immutable; readable from any thread; strings it returns are
 * borrowed and live until `mcp_error_free`.
 */
typedef struct mcp_error mcp_error;

/**
 * A hub of MCP servers. Thread-safe except `mcp_hub_free`.
 */
typedef struct mcp_hub mcp_hub;

/**
 * Where an input callback puts the answer. Valid only during that callback.
 */
typedef struct mcp_hub_input_slot mcp_hub_input_slot;

/**
 * The handle a callback completes. Owned by the library during the callback; after
 * `mcp_responder_defer`, owned by the host until a reply call consumes it. Thread-safe.
 */
typedef struct mcp_responder mcp_responder;

/**
 * A live subscription. Safe to use from any thread, one reader at a time.
 */
typedef struct mcp_subscription mcp_subscription;

/**
 * Where a token load callback puts the record it found. Valid only during that callback.
 */
typedef struct mcp_token_slot mcp_token_slot;

/**
 * Where a trace context callback puts the host's current context. Valid only during that
 * callback.
 */
typedef struct mcp_trace_slot mcp_trace_slot;

/**
 * A status code; `MCP_OK` (0) is success.
 */
typedef int32_t mcp_status;

/**
 * Progress for one call: `total` is NaN when unknown, `message` NULL when absent.
 */
typedef void (*mcp_progress_fn)(void *userdata, double progress, double total, const char *message);

/**
 * Per-call options. Initialise with `mcp_call_opts_init`, then set fields. Every pointer is
 * borrowed for the duration of the call only.
 */
typedef struct mcp_call_opts {
  /**
   * The layout version, set by `mcp_call_opts_init`; do not change it.
   */
  uint32_t version;
  /**
   * Per-request timeout (see `MCP_TIMEOUT_DEFAULT`; default: the client's request timeout).
   * A `tools/call` the server answers with a task (`"tasks": true`) waits at most this long
   * for the task's end, counted from the request the task answered (for
   * `mcp_client_resume_task`, from its start) and started again by each answered input
   * round; when it passes the call fails with `MCP_TIMEOUT`, `tasks/cancel` is sent (its
   * answer awaited at most 1 s) and polling stops. Each `tasks/get` poll has this timeout too.
   */
  int64_t timeout_ms;
  /**
   * Cap for the whole call, MRTR rounds and progress resets included (see
   * `MCP_TIMEOUT_DEFAULT`; default: none). When it ends the wait for a task (`MCP_TIMEOUT`),
   * the task is left running: `mcp_client_resume_task` follows it again.
   */
  int64_t max_total_ms;
  /**
   * Restart the timeout on each progress notification (a progress token is sent); for a
   * followed task, on each change of its status or status message too.
   */
  bool reset_timeout_on_progress;
  /**
   * Cancels the call when cancelled; may be NULL.
   */
  const struct mcp_cancel_token *cancel;
  /**
   * Extra `_meta` entries (a JSON object); may be NULL. Its `traceparent`, `tracestate` and
   * `baggage` members (W3C Trace Context and Baggage, SEP-414) are the call's trace context:
   * they go on every request the call sends (each MRTR retry, each task poll, each page,
   * each retry after a reconnect); an invalid value (or `tracestate` without `traceparent`)
   * fails the call with `MCP_INVALID_ARG` before anything is sent.
   */
  const char *meta_json;
  /**
   * Modern servers: this request's log level ("debug" … "emergency"); may be NULL.
   */
  const char *log_level;
  /**
   * Called on the dispatcher thread for each progress notification; never after the call
   * returns. May be NULL.
   */
  mcp_progress_fn on_progress;
  void *progress_userdata;
  /**
   * Response cache use (SEP-2549) for `server/discover`, the list calls and
   * `resources/read`: `MCP_CACHE_USE` (default), `MCP_CACHE_REFRESH` or `MCP_CACHE_BYPASS`.
   */
  uint32_t cache_mode;
  /**
   * `mcp_client_call_tool`: do not check `structuredContent` against the tool's
   * `outputSchema` for this call (no `MCP_OUTPUT_SCHEMA_INVALID`).
   */
  bool skip_output_validation;
} mcp_call_opts;

/**
 * A started call's completion: `status` is `MCP_OK` with `result_json` (`result_len` bytes,
 * NUL-terminated), or a failure with `error` (status, message and the `mcp_error_*` accessors,
 * `MCP_INPUT_REQUIRED` included). Both are borrowed until the callback returns. Runs exactly
 * once per started call — also when it is cancelled (`MCP_CANCELLED`), times out
 * (`MCP_TIMEOUT`) or its client closes (`MCP_CLOSED`) — and never inside the `*_start` call.
 */
typedef void (*mcp_call_done_fn)(void *userdata,
                                 mcp_status status,
                                 const char *result_json,
                                 size_t result_len,
                                 const struct mcp_error *error);

/**
 * The browser step of an OAuth authorization-code flow. Open `authorization_url` (borrowed
 * for the callback) in a browser; the authorization server will redirect it to
 * `redirect_uri`. Complete `responder` with the full URL the browser was redirected to
 * (`mcp_responder_reply_url`), or `mcp_responder_reply_error`, now or later from any thread
 * (after `mcp_responder_defer`). With the built-in loopback listener (no `redirect_uri`
 * configured) the callback may just open the browser and return: the listener receives the
 * redirect. Otherwise returning without replying or deferring ends the flow.
 */
typedef void (*mcp_authorization_fn)(void *userdata,
                                     const char *authorization_url,
                                     const char *redirect_uri,
                                     struct mcp_responder *responder);

/**
 * Releases host userdata.
 */
typedef void (*mcp_userdata_free_fn)(void *userdata);

/**
 * Loads the record of one authorization server (`issuer`, borrowed): call
 * `mcp_token_slot_set(slot, record_json)` during the callback, or leave the slot empty when
 * nothing is stored. The slot is valid only during the callback.
 */
typedef void (*mcp_token_load_fn)(void *userdata, const char *issuer, struct mcp_token_slot *slot);

/**
 * Stores the record of one authorization server (`record_json`, borrowed; it holds client
 * credentials and tokens: keep it secret), or forgets it (`record_json` NULL).
 */
typedef void (*mcp_token_save_fn)(void *userdata, const char *issuer, const char *record_json);

/**
 * Asked for a JWT before each token request that needs one the configuration does not hold:
 * `kind` is `"workload_jwt"` (workload identity federation) or `"id_token"` (enterprise-managed
 * authorization), `audience` the authorization server (or identity provider) it is for; both
 * borrowed for the call. Call `mcp_assertion_slot_set(slot, jwt)` during the callback; leaving
 * the slot empty ends the flow (`MCP_AUTH_REQUIRED`). Read a rotated token each time.
 */
typedef void (*mcp_assertion_fn)(void *userdata,
                                 const char *kind,
                                 const char *audience,
                                 struct mcp_assertion_slot *slot);

/**
 * Takes (`acquire` true) or releases (false) the token store's lock for `issuer` (borrowed),
 * held while a refresh token is spent and its successor saved, so that processes sharing the
 * store never spend the same one (an advisory file lock, for instance). Taking it may block
 * until it is free; releasing must not block.
 */
typedef void (*mcp_token_lock_fn)(void *userdata, const char *issuer, bool acquire);

/**
 * A responder's cancel hook (`mcp_responder_on_cancel`).
 */
typedef void (*mcp_responder_cancel_fn)(void *userdata);

/**
 * A connection-state listener: `state` is an `MCP_CONNECTION_*` value, `attempt` the reconnect
 * attempt (0 outside `MCP_CONNECTION_RECONNECTING`), `detail` a message (empty when none),
 * borrowed for the callback's duration. Runs on the dispatcher thread, in order.
 */
typedef void (*mcp_connection_state_fn)(void *userdata,
                                        int32_t state,
                                        uint32_t attempt,
                                        const char *detail);

/**
 * An input handler: `params_json` (borrowed, `params_len` bytes, `{}` when the server sent no
 * params) is the request's params; complete `responder` exactly once, now or later.
 */
typedef void (*mcp_input_fn)(void *userdata,
                             const char *method,
                             const char *params_json,
                             size_t params_len,
                             struct mcp_responder *responder);

/**
 * Called (on a library thread, no library lock held) when the queue goes from empty to
 * non-empty: it must only signal the host's loop (e.g. `uv_async_send`,
 * `loop.call_soon_threadsafe`), never dispatch itself.
 */
typedef void (*mcp_wakeup_fn)(void *userdata);

/**
 * A notification listener: every server notification except progress (which goes to the
 * call's own progress callback). Arguments are borrowed for the callback's duration.
 */
typedef void (*mcp_notification_fn)(void *userdata,
                                    const char *method,
                                    const char *params_json,
                                    size_t params_len);

/**
 * A log listener: the server's stderr lines (`source` "stderr", level "info") and the
 * library's warnings (`source` "transport" or "client", level "warning").
 */
typedef void (*mcp_log_fn)(void *userdata,
                           const char *level,
                           const char *source,
                           const char *message);

/**
 * A hub event listener: `event_json` (borrowed for the callback's duration) is one of
 * `{"type": "state", "server", "state", "error"?}`, `{"type": "list_changed", "server",
 * "list"}`, `{"type": "resource_updated", "server", "uri"}`, `{"type": "log", "server",
 * "source", "level", "message"}`, `{"type": "notification", "server", "method", "params"}`.
 * Runs on the shared dispatcher thread, in order.
 */
typedef void (*mcp_hub_event_fn)(void *userdata, const char *event_json);

/**
 * Asked for one `${input:id}` of a VS Code `inputs` array while a file is read: `id`,
 * `description` and `default_value` (NULL when the input has none) are borrowed for the call;
 * `password` asks the host to mask what the user types. Call `mcp_hub_input_slot_set(slot,
 * answer)` during the callback to answer (the library copies the answer, uses it as typed and
 * never logs it nor shows it in an error); leaving the slot empty declines, which makes the
 * servers that use the input `failed`. A `pickString` input offers a choice: its options are
 * `mcp_hub_input_slot_options_json(slot, …)`, and an answer outside them fails the servers
 * that use the input. Called on the thread that reads the file, at most once
 * per id and read, before the reading call returns. A hub keeps the answers of the reads that
 * made and reloaded it: a reload asks only for inputs that are new, declared differently, or
 * were declined before.
 */
typedef void (*mcp_hub_input_fn)(void *userdata,
                                 const char *id,
                                 const char *description,
                                 bool password,
                                 const char *default_value,
                                 struct mcp_hub_input_slot *slot);

/**
 * How a configuration file is read. Initialise with `mcp_hub_read_opts_init`, then set
 * fields; NULL where a function takes one means the defaults. Every pointer is borrowed for
 * the duration of the call only.
 */
typedef struct mcp_hub_read_opts {
  /**
   * The layout version, set by `mcp_hub_read_opts_init`; do not change it.
   */
  uint32_t version;
  /**
   * The folder `${workspaceFolder}` stands for, where a relative `envFile` starts (default:
   * none: `${workspaceFolder}` is then an error of the servers that use it, and `envFile`
   * starts at the file's folder, or the working directory for text).
   */
  const char *workspace_folder;
  /**
   * The folder `${userHome}` stands for (default: the `HOME` environment variable).
   */
  const char *user_home;
  /**
   * Asks the user for an `${input:id}` (default: none; an `${input:…}` is then an error of
   * the servers that use it).
   */
  mcp_hub_input_fn on_input;
  /**
   * Handed to `on_input`; the library never frees it.
   */
  void *input_userdata;
} mcp_hub_read_opts;

/**
 * A span listener: `span_json` (borrowed, `span_len` bytes) is one record. A span record is
 * one ended CLIENT span — `{"record": "span", "name", "kind": "client", "start_unix_nano",
 * "end_unix_nano", "attributes": {…}, "events": [{"name", "time_unix_nano", "attributes"}],
 * "status": {"code": "unset"|"error", "message"}, "parent": {"traceparent", "tracestate"}}`
 * (`parent` when the operation carried a trace context) — with the OpenTelemetry MCP
 * conventions' attribute names (`mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`,
 * `error.type`, `server.port`, …). Record its duration in the `mcp.client.operation.duration`
 * histogram (unit `s`, the convention's boundaries 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5,
 * 10, 30, 60, 120, 300). With `"span_tool_payloads": true` in the configuration a
 * `tools/call` record also has `gen_ai.tool.call.arguments` and (when it succeeded)
 * `gen_ai.tool.call.result`, each as JSON text. A session record — `{"record": "session",
 * "start_unix_nano", "end_unix_nano", "attributes": {"mcp.protocol.version",
 * "mcp.session.id"?, "network.transport", "network.protocol.name"?, "server.address"?,
 * "server.port"?, "error.type"?}}` — is one ended session (closed, lost, or a legacy HTTP
 * session the server expired and the client renewed), the value of the
 * `mcp.client.session.duration` histogram (same unit and boundaries; drop `mcp.session.id`
 * for it). Other `record` values may come: skip what you do not know.
 */
typedef void (*mcp_span_fn)(void *userdata, const char *span_json, size_t span_len);

/**
 * A tool pin hook: `event_json` is `{"type": "tool_pin", "server", "tool", "change": "new" |
 * "changed" | "removed", "policy", "old", "new", "diff"}`, borrowed for the callback's duration.
 * Under policy `ask` the answer approves (`true`: the new definition is pinned) or withholds
 * (`false`) the tool; under `warn` and `block` it is ignored. Runs on the dispatcher thread, in
 * order; the listing that saw the change waits for it (at most the request timeout, then
 * `false`).
 */
typedef bool (*mcp_tool_pin_fn)(void *userdata, const char *event_json);

/**
 * A task status listener: `task_json` (borrowed, `task_len` bytes) is the task object —
 * `taskId`, `status` (`working`, `input_required`, `completed`, `failed`, `cancelled`),
 * `statusMessage`, `pollIntervalMs`, `ttlMs`, `createdAt`, ... — on creation and on every
 * change of status or status message. Persist `taskId` to resume the task in a new process.
 */
typedef void (*mcp_task_status_fn)(void *userdata, const char *task_json, size_t task_len);

/**
 * Asked for the host's current trace context: call `mcp_trace_slot_set` during the callback,
 * or leave the slot empty when there is none.
 */
typedef void (*mcp_trace_context_fn)(void *userdata, struct mcp_trace_slot *slot);

#define MCP_OK 0

#define MCP_NULL_ARG 1

#define MCP_INVALID_UTF8 2

#define MCP_INVALID_JSON 3

#define MCP_INVALID_ARG 4

#define MCP_CLOSED 5

#define MCP_REENTRANT_CALL 6

#define MCP_UNSUPPORTED 8

#define MCP_FORKED 9

/**
 * The client has not connected yet (`mcp_client_server_info` before `mcp_client_connect`);
 * `MCP_CLOSED` is only for a client that was closed.
 */
#define MCP_NOT_CONNECTED 10

#define MCP_IO 100

#define MCP_TIMEOUT 101

#define MCP_CANCELLED 102

#define MCP_SERVER_EXITED 103

#define MCP_HTTP_STATUS 104

#define MCP_AUTH_REQUIRED 105

#define MCP_MESSAGE_TOO_LARGE 106

#define MCP_JSONRPC_ERROR 200

#define MCP_PROTOCOL_VIOLATION 201

#define MCP_VERSION_MISMATCH 202

#define MCP_CAPABILITY_MISSING 203

#define MCP_INPUT_REQUIRED 300

#define MCP_INPUT_ROUNDS_EXCEEDED 301

#define MCP_HANDLER_FAILED 302

/**
 * A legacy server answered -32042: the user must open the URLs of
 * `mcp_error_elicitations_json`, then the call may be retried.
 */
#define MCP_URL_ELICITATION_REQUIRED 303

/**
 * A skill file or entry failed verification (SEP-2640): size, digest or frontmatter differ from
 * the listed entry, or the entry breaks the structural rules. No content is returned.
 */
#define MCP_SKILL_VERIFICATION_FAILED 304

/**
 * A tool's `structuredContent` does not match the `outputSchema` its `tools/list` entry
 * declared, or is missing. `mcp_error_message` says where; `mcp_error_result_json` holds the
 * raw result. On by default; off per client (`"validate_output_schema": false`) or per call
 * (`mcp_call_opts.skip_output_validation`).
 */
#define MCP_OUTPUT_SCHEMA_INVALID 305

/**
 * A `tools/call` of a tool that tool pinning withholds (`"tool_pinning"` with policy `block`,
 * or `ask` refused): its listed definition differs from the pinned one, or it is new on a
 * server whose tools were pinned. `mcp_client_approve_tool_pin` lets it through.
 */
#define MCP_TOOL_PIN_CHANGED 306

#define MCP_INTERNAL 900

#define MCP_PANIC 901

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * The UI link of one tool (`tool_json`: a tool object from a `tools/list` result) under the
 * MCP Apps extension (SEP-1865): `{"resourceUri": "ui://...", "visibility": ["model", "app"],
 * "model": true, "app": true}`, or `null` when the tool has none. The nested
 * `_meta.ui.resourceUri` wins over the deprecated flat `_meta["ui/resourceUri"]`; a link that
 * is not `ui://` counts as none. `visibility` defaults to both; a tool whose visibility leaves
 * out "model" is app-only, and `mcp_export_tools` (and so a hub's export) leaves it out of
 * what the model sees. Pure: any thread. Free the output with `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_tool_ui(const char *tool_json,
                       char **ui_json_out,
                       struct mcp_error **err_out);

/**
 * Reads an app's view (`uri`, a `ui://` resource named by a tool's UI link) with
 * `resources/read` and verifies it before returning it: the answer's entry for `uri` has the
 * MIME type `text/html;profile=mcp-app` and its HTML as `text` or base64 `blob` (UTF-8), at
 * most `max_bytes` long (0: 4 MiB). Result: `{"uri", "html", "meta"}`, `meta` the entry's
 * `_meta.ui` (CSP domains, permissions, domain, border preference; `null` without one) for the
 * host's sandbox. `MCP_INVALID_ARG` for a URI that is not `ui://` (nothing is sent),
 * `MCP_MESSAGE_TOO_LARGE` over the bound, `MCP_PROTOCOL_VIOLATION` for any other failed check;
 * nothing unverified is returned. Declare the extension with `"apps": true` in the
 * configuration (the host renders the views). Any thread; not from a callback. Free the result
 * with `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_read_app(struct mcp_client *client,
                               const char *uri,
                               size_t max_bytes,
                               const struct mcp_call_opts *opts,
                               char **app_json_out,
                               struct mcp_error **err_out);

/**
 * Started `mcp_client_read_app`: completes with the verified `{"uri", "html", "meta"}`, or
 * its failure. `uri` is copied now.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_read_app_start(struct mcp_client *client,
                                     const char *uri,
                                     size_t max_bytes,
                                     const struct mcp_call_opts *opts,
                                     mcp_call_done_fn done,
                                     void *userdata,
                                     struct mcp_call **call_out,
                                     struct mcp_error **err_out);

/**
 * Registers the OAuth authorization callback (NULL `callback` unregisters). It runs when a
 * server needs an authorization-code flow (the "oauth" configuration). `userdata_free` runs
 * exactly once, even when this call fails.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_authorization(struct mcp_client *client,
                                       mcp_authorization_fn callback,
                                       void *userdata,
                                       mcp_userdata_free_fn userdata_free,
                                       struct mcp_error **err_out);

/**
 * Sets the record a load callback found (`record_json`: a JSON object, copied, exactly as
 * the save callback received it). Only valid inside the load callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_token_slot_set(struct mcp_token_slot *slot,
                              const char *record_json,
                              struct mcp_error **err_out);

/**
 * Keeps OAuth credentials in the host's store (a keychain, a file): one record per
 * authorization-server issuer, loaded before a flow and saved after a registration or a new
 * token. Both callbacks NULL restores the in-memory default (credentials live as long as the
 * client). `userdata_free` runs exactly once, even when this call fails.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_token_store(struct mcp_client *client,
                                      mcp_token_load_fn load,
                                      mcp_token_save_fn save,
                                      void *userdata,
                                      mcp_userdata_free_fn userdata_free,
                                      struct mcp_error **err_out);

/**
 * GETs `authorization_url` once, without following redirects, and returns the absolute
 * `Location` it redirects to (free with `mcp_string_free`); `timeout_ms` as
 * `MCP_TIMEOUT_DEFAULT` (default: 30 s).
 * FOR TESTS AND AUTOMATION ONLY: against an authorization server that redirects at once (the
 * conformance suite's), an authorization callback can reply with this. A real host opens a
 * browser. Blocking; not from a runtime thread (`MCP_REENTRANT_CALL`), callbacks are fine.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_auth_fetch_redirect(const char *authorization_url,
                                   int64_t timeout_ms,
                                   char **redirect_url_out,
                                   struct mcp_error **err_out);

/**
 * Sets the JWT an assertion callback was asked for (copied). Only valid inside the callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_assertion_slot_set(struct mcp_assertion_slot *slot,
                                  const char *jwt,
                                  struct mcp_error **err_out);

/**
 * Registers the host's source of assertions for `oauth.grant` `jwt_bearer` and `enterprise`
 * (used when the configuration has no `workload_jwt*` / `id_token*`); NULL removes it.
 * `userdata_free` runs exactly once, even when this call fails.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_assertion_provider(struct mcp_client *client,
                                             mcp_assertion_fn callback,
                                             void *userdata,
                                             mcp_userdata_free_fn userdata_free,
                                             struct mcp_error **err_out);

/**
 * `mcp_client_set_token_store` with the store's lock (`lock` may be NULL: no lock). Both load
 * and save NULL restores the in-memory default. `userdata_free` runs exactly once, even when
 * this call fails.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_locking_token_store(struct mcp_client *client,
                                              mcp_token_load_fn load,
                                              mcp_token_save_fn save,
                                              mcp_token_lock_fn lock,
                                              void *userdata,
                                              mcp_userdata_free_fn userdata_free,
                                              struct mcp_error **err_out);

/**
 * The registered OAuth error code behind an authorization failure (`invalid_grant`,
 * `invalid_scope`, `unauthorized_client`, `access_denied`, `invalid_target`, …), or NULL.
 * Borrowed from `error`.
 */
MCP_API const char *mcp_error_oauth_error(const struct mcp_error *error);

/**
 * Sets the authorization context the response cache files `private` entries under (the
 * host's name for the current principal, e.g. issuer plus subject; "" at creation). A new
 * value drops the previous context's private entries; `public` entries stay shared. Any
 * thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_cache_partition(struct mcp_client *client,
                                          const char *partition,
                                          struct mcp_error **err_out);

/**
 * Empties the client's response cache. Any thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_clear_cache(struct mcp_client *client,
                                  struct mcp_error **err_out);

/**
 * Response caching (SEP-2549) for the whole client (default on, at most 512 entries): fresh
 * results of `server/discover`, the list calls and `resources/read` are served without a round
 * trip while `now < received + ttlMs` (capped at 24 h); list_changed and resources/updated
 * notifications invalidate. `enabled` false, or `max_entries` 0, turns it off.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_response_cache(struct mcp_config *config,
                                         bool enabled,
                                         uint32_t max_entries,
                                         struct mcp_error **err_out);

/**
 * Output schema validation for the whole client (default on): a tool result whose
 * `structuredContent` does not match the tool's `outputSchema` fails with
 * `MCP_OUTPUT_SCHEMA_INVALID`. Per call: `mcp_call_opts.skip_output_validation`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_validate_output_schema(struct mcp_config *config,
                                                 bool enabled,
                                                 struct mcp_error **err_out);

/**
 * Forgets the eras `auto` detected per HTTP origin in the cache this client uses (by default
 * the process's, shared by every client), so the next connect to such an origin probes
 * `server/discover` again. A connect whose cached era the server refuses (a server upgraded in
 * place) detects again by itself; clearing spares it that refused `initialize`, and lets a
 * server that still accepts the old era be probed for a newer one. Any thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_clear_era_cache(struct mcp_client *client,
                                      struct mcp_error **err_out);

/**
 * Started `mcp_client_connect`: completes with the server info JSON. Calls started
 * before the connection is up wait for it (each call connects lazily).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_connect_start(struct mcp_client *client,
                                    const struct mcp_call_opts *opts,
                                    mcp_call_done_fn done,
                                    void *userdata,
                                    struct mcp_call **call_out,
                                    struct mcp_error **err_out);

/**
 * Started `mcp_client_call_tool` (same arguments, copied now). MRTR input requests are
 * answered by the registered handlers, whose callbacks run on the delivery path like the
 * completion; a missing handler completes with `MCP_INPUT_REQUIRED`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_call_tool_start(struct mcp_client *client,
                                      const char *name,
                                      const char *arguments_json,
                                      const char *input_responses_json,
                                      const char *request_state,
                                      const struct mcp_call_opts *opts,
                                      mcp_call_done_fn done,
                                      void *userdata,
                                      struct mcp_call **call_out,
                                      struct mcp_error **err_out);

/**
 * Started `mcp_client_get_prompt`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_get_prompt_start(struct mcp_client *client,
                                       const char *name,
                                       const char *arguments_json,
                                       const char *input_responses_json,
                                       const char *request_state,
                                       const struct mcp_call_opts *opts,
                                       mcp_call_done_fn done,
                                       void *userdata,
                                       struct mcp_call **call_out,
                                       struct mcp_error **err_out);

/**
 * Started `mcp_client_read_resource`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_read_resource_start(struct mcp_client *client,
                                          const char *uri,
                                          const char *input_responses_json,
                                          const char *request_state,
                                          const struct mcp_call_opts *opts,
                                          mcp_call_done_fn done,
                                          void *userdata,
                                          struct mcp_call **call_out,
                                          struct mcp_error **err_out);

/**
 * Started `mcp_client_list` (one page).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_list_start(struct mcp_client *client,
                                 int32_t kind,
                                 const char *cursor,
                                 const struct mcp_call_opts *opts,
                                 mcp_call_done_fn done,
                                 void *userdata,
                                 struct mcp_call **call_out,
                                 struct mcp_error **err_out);

/**
 * Started `mcp_client_list_all` (every page, merged).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_list_all_start(struct mcp_client *client,
                                     int32_t kind,
                                     const struct mcp_call_opts *opts,
                                     mcp_call_done_fn done,
                                     void *userdata,
                                     struct mcp_call **call_out,
                                     struct mcp_error **err_out);

/**
 * Started `mcp_client_complete`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_complete_start(struct mcp_client *client,
                                     const char *params_json,
                                     const struct mcp_call_opts *opts,
                                     mcp_call_done_fn done,
                                     void *userdata,
                                     struct mcp_call **call_out,
                                     struct mcp_error **err_out);

/**
 * Started `mcp_client_request` (any method; MRTR driven for the three MRTR methods).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_request_start(struct mcp_client *client,
                                    const char *method,
                                    const char *params_json,
                                    const struct mcp_call_opts *opts,
                                    mcp_call_done_fn done,
                                    void *userdata,
                                    struct mcp_call **call_out,
                                    struct mcp_error **err_out);

/**
 * Started `mcp_client_ping` (legacy `ping`): completes with `{}`, or `MCP_UNSUPPORTED` on
 * modern servers (which removed it).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_ping_start(struct mcp_client *client,
                                 const struct mcp_call_opts *opts,
                                 mcp_call_done_fn done,
                                 void *userdata,
                                 struct mcp_call **call_out,
                                 struct mcp_error **err_out);

/**
 * Started `mcp_client_set_log_level`: completes with `{}` once legacy servers acknowledged
 * `logging/setLevel` (modern servers: at once, the level going into later requests' `_meta`).
 * An unknown level is refused here (`MCP_INVALID_ARG`, `done` never runs).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_log_level_start(struct mcp_client *client,
                                          const char *level,
                                          const struct mcp_call_opts *opts,
                                          mcp_call_done_fn done,
                                          void *userdata,
                                          struct mcp_call **call_out,
                                          struct mcp_error **err_out);

/**
 * Started `mcp_subscription_next`: completes with the next notification
 * (`{"method","params"}`), `MCP_TIMEOUT` after `timeout_ms` (negative: no limit),
 * `MCP_CLOSED` once the subscription ended, or its error. One `next` at a time per
 * subscription; the subscription may be freed while one is in flight (it then completes with
 * `MCP_CLOSED` or `MCP_CANCELLED`).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_subscription_next_start(struct mcp_subscription *subscription,
                                       int64_t timeout_ms,
                                       mcp_call_done_fn done,
                                       void *userdata,
                                       struct mcp_call **call_out,
                                       struct mcp_error **err_out);

/**
 * Cancels a started call: unless it already completed, its completion runs (soon, on the
 * delivery path) with `MCP_CANCELLED` and the server is told. Never waits for a callback
 * (not even a running one of this call); any thread, callbacks included. After completion a
 * no-op. `MCP_OK`, or `MCP_NULL_ARG` for NULL.
 */
MCP_API MCP_WARN_UNUSED_RESULT mcp_status mcp_call_cancel(struct mcp_call *call);

/**
 * Frees the handle. Before completion this cancels the call (as `mcp_call_cancel`); its
 * completion still runs exactly once, so free userdata there. NULL is a no-op.
 */
MCP_API void mcp_call_free(struct mcp_call *call);

/**
 * Pushed cancellation for an input handler or the authorization callback: `on_cancel(userdata)`
 * runs once, on the delivery path (the dispatcher thread, or the host's loop), when the answer
 * stops being wanted (the call was cancelled, timed out or closed, a sibling input failed, or
 * the authorization flow ended) — at once if that
 * already happened — so a handler answering later need not poll
 * `mcp_responder_is_cancelled`. It never runs once the responder was answered. It does not
 * consume the responder, which must still be completed (a reply then returns
 * `MCP_CANCELLED`); it must not touch a responder another thread may have completed. Only
 * while the host owns the responder (in the handler, or deferred). One hook per responder (a
 * new one replaces it); `userdata_free` runs exactly once, when the hook ran or can no longer
 * run.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_responder_on_cancel(struct mcp_responder *responder,
                                   mcp_responder_cancel_fn on_cancel,
                                   void *userdata,
                                   mcp_userdata_free_fn userdata_free,
                                   struct mcp_error **err_out);

/**
 * A new, uncancelled token; free with `mcp_cancel_token_free`. NULL only on allocation panic.
 */
MCP_API struct mcp_cancel_token *mcp_cancel_token_new(void);

/**
 * Another handle on the same token (free each handle once). NULL for NULL.
 */
MCP_API struct mcp_cancel_token *mcp_cancel_token_clone(const struct mcp_cancel_token *token);

/**
 * Cancels every call using this token, now and later. Idempotent; any thread; callbacks too.
 * Returns once no callback of those calls (input handler, progress) is running on another
 * thread, and none starts afterwards, so the host may then free what they use. Called from
 * such a callback, it does not wait for that callback itself.
 */
MCP_API void mcp_cancel_token_cancel(const struct mcp_cancel_token *token);

/**
 * Whether this token (or a clone of it) was cancelled. Any thread; callbacks too. NULL: false.
 */
MCP_API bool mcp_cancel_token_is_cancelled(const struct mcp_cancel_token *token);

/**
 * Releases this handle. NULL is a no-op.
 */
MCP_API void mcp_cancel_token_free(struct mcp_cancel_token *token);

/**
 * Creates a client from `config` (copied; the caller still frees it). Nothing is started until
 * `mcp_client_connect` (or the first call, which connects). Free with `mcp_client_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_new(const struct mcp_config *config,
                          struct mcp_client **client_out,
                          struct mcp_error **err_out);

/**
 * Connects: starts the server and settles the era (auto: `server/discover`, falling back to
 * `initialize`). Idempotent. `server_info_json_out` (may be NULL) receives the server info
 * JSON: `{"era","protocolVersion","capabilities","serverInfo","instructions","raw"}`.
 * Under per-call options (`opts` may be NULL): the cancel token, and `timeout_ms` and
 * `max_total_ms` (each capping the whole connect), end this call with `MCP_CANCELLED` or
 * `MCP_TIMEOUT`. The attempt itself goes on in the background for later calls, bounded by the
 * configured timeouts, until the client is closed; with a token that is already cancelled
 * nothing starts. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_connect(struct mcp_client *client,
                              const struct mcp_call_opts *opts,
                              char **server_info_json_out,
                              struct mcp_error **err_out);

/**
 * The server info JSON (see `mcp_client_connect`); `MCP_NOT_CONNECTED` before connecting.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_server_info(const struct mcp_client *client,
                                  char **server_info_json_out,
                                  struct mcp_error **err_out);

/**
 * How many listener and progress callbacks were dropped, not run, because 4096 callbacks
 * already waited for the dispatcher thread (host callbacks slower than the server's flow; the
 * queue is bounded so memory stays bounded). 0 for NULL. Input handlers are never dropped.
 */
MCP_API uint64_t mcp_client_dropped_callbacks(const struct mcp_client *client);

/**
 * `MCP_ERA_MODERN`, `MCP_ERA_LEGACY`, or `MCP_ERA_NONE` before connecting (or for NULL).
 */
MCP_API int32_t mcp_client_era(const struct mcp_client *client);

/**
 * One page of tools, prompts, resources or templates (`MCP_LIST_*`). `cursor` (may be NULL)
 * is the previous page's `nextCursor`. Result: the raw list result JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_list(struct mcp_client *client,
                           int32_t kind,
                           const char *cursor,
                           const struct mcp_call_opts *opts,
                           char **result_json_out,
                           struct mcp_error **err_out);

/**
 * Every page of a list, merged: `{"tools": [...]}` (or prompts, resources,
 * resourceTemplates). Bounded by the `max_pages` setting.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_list_all(struct mcp_client *client,
                               int32_t kind,
                               const struct mcp_call_opts *opts,
                               char **result_json_out,
                               struct mcp_error **err_out);

/**
 * `tools/call`. `arguments_json` (a JSON object) may be NULL. For manual MRTR, pass the
 * `inputResponses` object and the `requestState` from an earlier `MCP_INPUT_REQUIRED` error
 * (each may be NULL). Input requests are answered by the registered handlers; when one is
 * missing the call fails with `MCP_INPUT_REQUIRED` (see `mcp_error_input_requests_json`).
 * A tool error (`isError: true`) is `MCP_OK` with the `CallToolResult` JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_call_tool(struct mcp_client *client,
                                const char *name,
                                const char *arguments_json,
                                const char *input_responses_json,
                                const char *request_state,
                                const struct mcp_call_opts *opts,
                                char **result_json_out,
                                struct mcp_error **err_out);

/**
 * `prompts/get`; `arguments_json` is an object of strings (may be NULL). MRTR as for
 * `mcp_client_call_tool`. Result: the `GetPromptResult` JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_get_prompt(struct mcp_client *client,
                                 const char *name,
                                 const char *arguments_json,
                                 const char *input_responses_json,
                                 const char *request_state,
                                 const struct mcp_call_opts *opts,
                                 char **result_json_out,
                                 struct mcp_error **err_out);

/**
 * `resources/read`. MRTR as for `mcp_client_call_tool`. Result: the `ReadResourceResult` JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_read_resource(struct mcp_client *client,
                                    const char *uri,
                                    const char *input_responses_json,
                                    const char *request_state,
                                    const struct mcp_call_opts *opts,
                                    char **result_json_out,
                                    struct mcp_error **err_out);

/**
 * `completion/complete` with `params_json` `{ref, argument, context?}`. Result: the
 * `CompleteResult` JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_complete(struct mcp_client *client,
                               const char *params_json,
                               const struct mcp_call_opts *opts,
                               char **result_json_out,
                               struct mcp_error **err_out);

/**
 * Any request by method name, for methods this library does not model; `params_json` (a JSON
 * object, may be NULL) gets the era's `_meta`. MRTR is driven for the three MRTR methods.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_request(struct mcp_client *client,
                              const char *method,
                              const char *params_json,
                              const struct mcp_call_opts *opts,
                              char **result_json_out,
                              struct mcp_error **err_out);

/**
 * Legacy `ping` (`MCP_UNSUPPORTED` on modern servers, which removed it).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_ping(struct mcp_client *client,
                           const struct mcp_call_opts *opts,
                           struct mcp_error **err_out);

/**
 * Sets the server log level ("debug" … "emergency"): legacy `logging/setLevel`; modern
 * servers get it in every later request's `_meta`. Logging is deprecated by the 2026-07-28
 * specification (SEP-2577, removal no earlier than the first release after 2027-07-28): it
 * keeps working, on both eras.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_log_level(struct mcp_client *client,
                                    const char *level,
                                    const struct mcp_call_opts *opts,
                                    struct mcp_error **err_out);

/**
 * Legacy `resources/subscribe`; updates arrive at the notification listener
 * (modern servers: use `mcp_client_listen`).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_subscribe_resource(struct mcp_client *client,
                                         const char *uri,
                                         const struct mcp_call_opts *opts,
                                         struct mcp_error **err_out);

/**
 * Legacy `resources/unsubscribe`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_unsubscribe_resource(struct mcp_client *client,
                                           const char *uri,
                                           const struct mcp_call_opts *opts,
                                           struct mcp_error **err_out);

/**
 * Tells a legacy server the host's roots changed (no-op on modern servers). Roots are
 * deprecated by the 2026-07-28 specification (SEP-2577); this keeps working.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_notify_roots_changed(struct mcp_client *client,
                                           struct mcp_error **err_out);

/**
 * Closes the connection: every blocked call returns `MCP_CLOSED`, subscriptions end, the
 * server is shut down (stdin closed, then SIGTERM, then SIGKILL to its process group).
 * Idempotent; any thread, callbacks included (from a callback it does not wait for the
 * server to exit). Later calls return `MCP_CLOSED`.
 */
MCP_API void mcp_client_close(struct mcp_client *client);

/**
 * Closes (as `mcp_client_close`), stops the dispatcher and releases handlers: after it returns
 * no callback runs again and every `userdata_free` not still needed by a live responder or
 * subscription has run. NULL is a no-op. Subscriptions and deferred responders stay valid and
 * must still be freed/completed. Calling it from a callback is allowed.
 */
MCP_API void mcp_client_free(struct mcp_client *client);

/**
 * Creates settings from a JSON object (NULL: empty). The keys, their types, defaults and
 * meaning are in the JSON Schema `mcp_client.config.schema.json`, installed beside this header
 * and generated from the library's configuration types. In short: exactly one of `command`
 * (stdio: `args`, `env`, `env_mode`, `cwd`, `stderr_tail_lines`, `shutdown_grace_ms`) or `url`
 * (HTTP: `headers`, `bearer_token` or `oauth` (see `mcp_config_set_oauth`),
 * `allow_insecure_http`, `resolve`, `proxy`), and for both `mode`, `protocol_version`, `client_info`,
 * `capabilities`, `request_timeout_ms`, `probe_timeout_ms`, `connect_timeout_ms`,
 * `input_required_max_rounds`, `max_pages`, `max_message_bytes`, `skills` (see
 * `mcp_client_list_skills`), `tasks` (see `mcp_config_set_tasks`), `manual_input` (see
 * `mcp_config_set_manual_input`), `sampling_tools` (see `mcp_config_set_sampling_tools`), `apps`
 * (declares MCP Apps; see `mcp_client_read_app`),
 * `response_cache` (true; false turns response caching off),
 * `response_cache_max_entries` (512), `validate_output_schema` (true; see
 * `MCP_OUTPUT_SCHEMA_INVALID`), `span_tool_payloads` (false; true puts a `tools/call`'s
 * arguments and result in its span, see `mcp_client_on_span`), `tool_pinning` (`{"policy": "off" | "warn" | "block" | "ask",
 * "identity"?, "store_dir"?, "ignore_meta"?}`; see `mcp_client_tool_pins`) and the opt-in
 * `reconnect` policy (see `mcp_client_on_connection_state`). A null value counts as absent. An unknown key or a wrong
 * type makes `mcp_client_new` fail with `MCP_INVALID_ARG` and a message naming the key
 * (`unknown configuration key "x"`, `oauth.scopes: ...`). Free with `mcp_config_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_new(const char *json,
                          struct mcp_config **config_out,
                          struct mcp_error **err_out);

/**
 * The server command (stdio): a program name looked up in PATH, or a path.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_command(struct mcp_config *config,
                                  const char *command,
                                  struct mcp_error **err_out);

/**
 * Appends one argument for the server command.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_add_arg(struct mcp_config *config,
                              const char *arg,
                              struct mcp_error **err_out);

/**
 * Sets one environment variable for the server process.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_env(struct mcp_config *config,
                              const char *name,
                              const char *value,
                              struct mcp_error **err_out);

/**
 * Which of the host's environment variables the server process gets, besides those set with
 * `mcp_config_set_env`: `MCP_ENV_ALLOWLIST` (the default: only HOME, LOGNAME, PATH, SHELL,
 * TERM, USER, LANG and LC_*, skipping values that start with "()", so the host's secrets stay
 * out of servers), `MCP_ENV_INHERIT` (all of them: an explicit choice) or `MCP_ENV_REPLACE`
 * (none). JSON key `env_mode`: "allowlist", "inherit" or "replace".
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_env_mode(struct mcp_config *config,
                                   int32_t mode,
                                   struct mcp_error **err_out);

/**
 * The server's working directory.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_cwd(struct mcp_config *config,
                              const char *dir,
                              struct mcp_error **err_out);

/**
 * The server URL (Streamable HTTP; http or https). A configuration has a URL or a command.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_url(struct mcp_config *config,
                              const char *url,
                              struct mcp_error **err_out);

/**
 * Adds an HTTP header sent with every request (HTTP transports).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_add_header(struct mcp_config *config,
                                 const char *name,
                                 const char *value,
                                 struct mcp_error **err_out);

/**
 * A static bearer token, sent as `Authorization: Bearer <token>` on every HTTP request.
 * Tokens (this one, OAuth's, or an Authorization header) go over https, or over plain http
 * only to a loopback host (127.0.0.0/8, ::1, localhost): `mcp_client_new` refuses an
 * `http://` URL on another host unless the JSON key `allow_insecure_http` is true.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_bearer_token(struct mcp_config *config,
                                       const char *token,
                                       struct mcp_error **err_out);

/**
 * OAuth 2.1 authorization for an HTTP server (instead of a static bearer token):
 * `oauth_json` is a JSON object, checked by `mcp_client_new`. Keys (all optional):
 * `grant` ("authorization_code" or "client_credentials"); pre-registered or
 * client-credentials `client_id`, `client_secret`, `token_endpoint_auth_method`
 * ("client_secret_basic", "client_secret_post", "none", "private_key_jwt") and `issuer` (the
 * authorization server they belong to); `private_key_pem` and `signing_algorithm` (ES256,
 * ES384, RS256..., PS256..., EdDSA) for private_key_jwt. `issuer` is required with a
 * `client_secret` or `private_key_pem` (`MCP_INVALID_ARG` otherwise): they are sent on every
 * grant (authorization code, refresh, client credentials) to that authorization server only,
 * never to one a server's metadata names instead; `client_metadata_url` (a Client ID
 * Metadata Document, tried before dynamic registration); `client_name` and `application_type`
 * ("native", "web") for dynamic registration (deprecated by the 2026-07-28 specification in
 * favour of Client ID Metadata Documents; it keeps working as the last resort); `redirect_uri` (a redirect the host receives itself; the authorization
 * callback must reply), else the built-in listener on 127.0.0.1 (`loopback_port`, 0: any;
 * `loopback_path`, "/callback"); `scopes`; `offline_access` (true); `authorization_timeout_ms`
 * (300000, at most a day); `max_step_up` (2); `open_browser` (false: without an authorization
 * callback, an authorization-code flow then fails, since the authorization URL is never
 * logged); `allow_http` (false).
 *
 * Where the flows go: the MCP server's 401 challenge and metadata name the URLs that are
 * fetched (protected resource and authorization server metadata, registration and token
 * endpoints), so each is checked first. https only (plain http when both the MCP URL and the
 * target are loopback, or with `allow_http` / the top-level `allow_insecure_http`); no
 * credentials in URLs; redirects are never followed; no proxy is used for them. Loopback,
 * private (10/8, 172.16/12, 192.168/16, fc00::/7), carrier-grade NAT (100.64/10),
 * link-local (169.254/16, fe80::/10, the cloud metadata service) and other special-purpose
 * addresses are refused, judged on every address a name resolves to and on IP literals,
 * unless the MCP URL's own host (an IP literal or localhost) is in that class. Host controls:
 * `allow_private_networks` (false: true opens loopback, private and carrier-grade NAT
 * addresses); `allow_hosts` and `deny_hosts`: arrays of host names, "*.domain", IP addresses
 * or ranges ("10.0.0.0/8"); an allowed host may have any address, a denied one is never
 * contacted (a range also matches resolved addresses). The MCP server's own origin is always
 * allowed; a `resource_metadata` the challenge names on another origin is fetched only at the
 * well-known path `/.well-known/oauth-protected-resource` (or below it) unless its host is in
 * `allow_hosts` (`MCP_AUTH_REQUIRED` otherwise, nothing fetched). Errors never quote what a fetched document says.
 *
 * Authorization extensions (off unless set): `dpop` (true: DPoP, RFC 9449, with a P-256 key
 * generated for the client; or the host's key as `dpop_private_key_pem` (PKCS#8) or
 * `dpop_private_key_jwk`; the key never leaves the library); `grant` "jwt_bearer" (workload
 * identity federation: `workload_jwt`, or `workload_jwt_file` read again before every token
 * request, else `mcp_client_set_assertion_provider`); `grant` "enterprise" (enterprise-managed
 * authorization: `id_token` / `id_token_file` / the assertion provider, `idp_token_endpoint`,
 * `idp_client_id`, `idp_client_secret`, plus `client_id`, `client_secret` or
 * `private_key_pem`, and `issuer` for the MCP authorization server); `token_store_dir` (keep
 * credentials in 0600 files there, with an advisory lock so processes sharing it never spend
 * a refresh token twice). A refused grant fails with `MCP_AUTH_REQUIRED` and its OAuth error
 * code in `mcp_error_oauth_error`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_oauth(struct mcp_config *config,
                                const char *oauth_json,
                                struct mcp_error **err_out);

/**
 * `MCP_MODE_AUTO` (default), `MCP_MODE_MODERN` or `MCP_MODE_LEGACY`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_mode(struct mcp_config *config,
                               int32_t mode,
                               struct mcp_error **err_out);

/**
 * Pins one protocol version (e.g. "2025-06-18"); its era follows. Overrides the mode.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_protocol_version(struct mcp_config *config,
                                           const char *version,
                                           struct mcp_error **err_out);

/**
 * The client's per-request timeout (see `MCP_TIMEOUT_DEFAULT`: 0 is the default, 60000 ms;
 * negative is none). (The JSON key `request_timeout_ms` keeps its own meaning: 0 is none.)
 * It also bounds a call's wait for a task (`mcp_config_set_tasks`) unless the call's options
 * set `timeout_ms`; a timeout's error message names which of the two expired.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_request_timeout_ms(struct mcp_config *config,
                                             int64_t timeout_ms,
                                             struct mcp_error **err_out);

/**
 * How many `input_required` rounds are driven automatically (default 10).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_input_required_max_rounds(struct mcp_config *config,
                                                    uint32_t rounds,
                                                    struct mcp_error **err_out);

/**
 * Declares the skills extension (`io.modelcontextprotocol/skills`, SEP-2640) in the derived
 * capabilities (default false). Only a host that loads skills itself should: servers seeing it
 * stop offering their fallback tool for loading skills.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_skills(struct mcp_config *config,
                                 bool enabled,
                                 struct mcp_error **err_out);

/**
 * Declares `sampling.tools` (SEP-1577) with `sampling` (default false): sampling requests may
 * then offer `tools` and a `toolChoice`, which reach the handler of `mcp_client_on_sampling` in
 * its params JSON, and its answer may hold `tool_use` content. Same as the key `sampling_tools`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_sampling_tools(struct mcp_config *config,
                                         bool enabled,
                                         struct mcp_error **err_out);

/**
 * Frees settings. NULL is a no-op.
 */
MCP_API void mcp_config_free(struct mcp_config *config);

/**
 * Sets (NULL: removes) the connection-state listener. `userdata_free` runs exactly once.
 * Without a `reconnect` policy in the configuration only `MCP_CONNECTION_CONNECTED` is
 * reported; with one, a lost connection is `MCP_CONNECTION_DISCONNECTED`, then one
 * `MCP_CONNECTION_RECONNECTING` per attempt, then `MCP_CONNECTION_CONNECTED` or
 * `MCP_CONNECTION_FAILED`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_connection_state(struct mcp_client *client,
                                          mcp_connection_state_fn listener,
                                          void *userdata,
                                          mcp_userdata_free_fn userdata_free,
                                          struct mcp_error **err_out);

/**
 * Registers the `elicitation/create` handler for `modes` (`MCP_ELICITATION_FORM`,
 * `MCP_ELICITATION_URL`, or both or-ed) and declares exactly those (`elicitation: {"url": {}}`
 * for URL mode alone). A request in another mode is not handed to `handler`: modern servers
 * that check capabilities answer -32021 (`MCP_CAPABILITY_MISSING`), lax ones get the call
 * failing with `MCP_INPUT_REQUIRED` listing it (`mcp_error_unanswered_json`), and legacy
 * servers get an error answer. URL-mode params are `{"mode":"url","message","url"}` (legacy
 * adds `elicitationId`; the completion then arrives as the notification
 * `notifications/elicitation/complete` on the notification listener). NULL `handler`
 * unregisters. `MCP_INVALID_ARG`, registering nothing, for unknown bits and for a handler that
 * could never be asked: no mode, or a mode the configuration's `capabilities` override does not
 * declare. `userdata_free` runs exactly once.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_elicitation_modes(struct mcp_client *client,
                                           uint32_t modes,
                                           mcp_input_fn handler,
                                           void *userdata,
                                           mcp_userdata_free_fn userdata_free,
                                           struct mcp_error **err_out);

/**
 * Manual input mode: declares the input kinds in `kinds` (`MCP_ELICITATION_FORM`,
 * `MCP_ELICITATION_URL`, `MCP_INPUT_SAMPLING`, `MCP_INPUT_ROOTS`, or-ed; 0: none) without a
 * handler, so servers that ask only for declared input (the official SDK servers answer
 * -32021 otherwise) send their `input_required` round; the call then fails with
 * `MCP_INPUT_REQUIRED` (`mcp_error_unanswered_json` lists what to answer) and the host retries
 * with `input_responses_json` and the `requestState`. The JSON key is `manual_input`: an array
 * of "elicitation", "elicitation.url", "sampling", "roots".
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_manual_input(struct mcp_config *config,
                                       uint32_t kinds,
                                       struct mcp_error **err_out);

/**
 * For `MCP_URL_ELICITATION_REQUIRED` (a legacy server's -32042): the `data.elicitations` array
 * as JSON, each `{"mode":"url","elicitationId","url","message"}`; show the URLs, then retry
 * the call. NULL otherwise. Borrowed, valid until `mcp_error_free`.
 */
MCP_API const char *mcp_error_elicitations_json(const struct mcp_error *error);

/**
 * For `MCP_INPUT_REQUIRED`: the entries of `mcp_error_input_requests_json` that no registered
 * handler answers (key → request), as a JSON object — all of them in manual input mode (the
 * `manual_input` configuration key). `{}` for `MCP_INPUT_ROUNDS_EXCEEDED`; NULL otherwise.
 * Borrowed, valid until `mcp_error_free`.
 */
MCP_API const char *mcp_error_unanswered_json(const struct mcp_error *error);

/**
 * The error's status code (`MCP_INVALID_ARG` for a NULL error).
 */
MCP_API MCP_WARN_UNUSED_RESULT mcp_status mcp_error_status(const struct mcp_error *error);

/**
 * UTF-8 message; borrowed, valid until `mcp_error_free`. Never NULL for a non-NULL error.
 */
MCP_API const char *mcp_error_message(const struct mcp_error *error);

/**
 * The JSON-RPC `error.code` when the server answered with an error object; false otherwise.
 */
MCP_API bool mcp_error_jsonrpc_code(const struct mcp_error *error, int64_t *code_out);

/**
 * The JSON-RPC `error.message` exactly as the server sent it (`mcp_error_message` adds
 * context), or NULL when the server did not answer with an error object. Borrowed.
 */
MCP_API const char *mcp_error_jsonrpc_message(const struct mcp_error *error);

/**
 * The JSON-RPC `error.data` as JSON, or NULL. Borrowed.
 */
MCP_API const char *mcp_error_data_json(const struct mcp_error *error);

/**
 * For `MCP_INPUT_REQUIRED` and `MCP_INPUT_ROUNDS_EXCEEDED`: the `inputRequests` map as JSON
 * (`{}` when the server sent none); NULL otherwise. Borrowed.
 */
MCP_API const char *mcp_error_input_requests_json(const struct mcp_error *error);

/**
 * For the input-required statuses: the opaque `requestState`, byte-exact, or NULL when the
 * server sent none — or sent one holding U+0000, which a C string cannot carry (the message
 * then says so; it is never handed over shortened). Borrowed.
 */
MCP_API const char *mcp_error_request_state(const struct mcp_error *error);

/**
 * For the input-required statuses: the raw `input_required` result as JSON (the last one for
 * `MCP_INPUT_ROUNDS_EXCEEDED`); for `MCP_OUTPUT_SCHEMA_INVALID`: the tool's raw result; NULL
 * otherwise. Borrowed.
 */
MCP_API const char *mcp_error_result_json(const struct mcp_error *error);

/**
 * The HTTP status of the answer that caused the error (`MCP_AUTH_REQUIRED`, and transport
 * errors caused by an HTTP status) in `*status_out`; false when there is none.
 */
MCP_API bool mcp_error_http_status(const struct mcp_error *error, uint16_t *status_out);

/**
 * For `MCP_AUTH_REQUIRED`: the server's `WWW-Authenticate` challenge (several are joined with
 * ", "), or NULL. It never holds credentials. Borrowed.
 */
MCP_API const char *mcp_error_www_authenticate(const struct mcp_error *error);

/**
 * Frees an error. NULL is a no-op.
 */
MCP_API void mcp_error_free(struct mcp_error *error);

/**
 * Switches `client` to host-loop delivery and writes the descriptor to watch for reading
 * (an eventfd on Linux, a pipe on other Unix systems; on Windows a manual-reset event's
 * `HANDLE` in the int: `(HANDLE)(intptr_t)fd`, to wait on with `WaitForSingleObject` or
 * `MsgWaitForMultipleObjects`; signaled while work is queued. Owned by the client, closed by
 * `mcp_client_free`, so stop watching it before freeing). From then on every callback of this client —
 * completions of started calls, input handlers, listeners, progress — runs only inside
 * `mcp_client_dispatch` on the host's thread, never on a library thread. Call it once, right
 * after `mcp_client_new` (callbacks already queued for the dispatcher thread still run there);
 * again it returns the same descriptor. Blocking calls stay usable, but an input handler or
 * progress callback they need runs only when the host dispatches: host-loop programs should
 * use the started calls (`*_start`).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_use_host_loop(struct mcp_client *client,
                                    int *fd_out,
                                    struct mcp_error **err_out);

/**
 * Optional for host-loop clients: `wakeup` runs (on a library thread, no lock held) each time
 * work is queued onto an empty queue; use it where the descriptor cannot be watched (e.g. to
 * call `uv_async_send`). Wakeups coalesce: on each, dispatch until nothing remains. NULL
 * removes it. `userdata_free` runs exactly once. `MCP_INVALID_ARG` before
 * `mcp_client_use_host_loop`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_wakeup(struct mcp_client *client,
                                 mcp_wakeup_fn wakeup,
                                 void *userdata,
                                 mcp_userdata_free_fn userdata_free,
                                 struct mcp_error **err_out);

/**
 * Runs queued callbacks on the calling thread: at most `max` (0: all that were queued when it
 * started). `*remaining_out` (may be NULL) gets how many still wait; while it is non-zero the
 * descriptor stays readable (level-triggered loops need nothing more; edge-triggered ones
 * dispatch again). Callbacks count from the moment the descriptor announces them: completions
 * of started calls are announced when the library's runtime ends its turn, all of one turn at
 * once, and calls started by the callbacks of one dispatch are sent when it returns. Spurious
 * calls are harmless. Callbacks may start, cancel and free calls and
 * close the client; calling this from a callback or a wakeup returns `MCP_REENTRANT_CALL`, as
 * does a second thread dispatching the same client at the same time. `MCP_INVALID_ARG` for a
 * client not in host-loop mode.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_dispatch(struct mcp_client *client,
                               uint32_t max,
                               size_t *remaining_out,
                               struct mcp_error **err_out);

/**
 * Exports a tool list (`tools_json`: a `tools/list` result or its `tools` array, or a hub's
 * merged list from `mcp_hub_list`) to a model API's format. `options_json` (may be NULL): `{"format": "openai-chat" | "openai-responses" |
 * "anthropic" | "gemini", "strict", "gemini_legacy_parameters", "describe_title",
 * "describe_annotations", "max_ref_depth"}`. `origins_json` (may be NULL): `{listed name:
 * {"server", "tool"}}`; without an entry, a tool of a hub's merged list goes to the member and
 * own name its `_meta` holds (`"mcp-client/server"`, `"mcp-client/name"`). Output: `{"format", "tools", "routes",
 * "report"}`: `tools` goes to the API, the whole document to the other `mcp_export_*` calls.
 * A tool whose schema the format cannot take is left out and `report` says why. Pure: any
 * thread. Free the output with `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_export_tools(const char *tools_json,
                            const char *options_json,
                            const char *origins_json,
                            char **exported_json_out,
                            struct mcp_error **err_out);

/**
 * The tool calls in a model's reply (`reply_json`: a message, a response, a list of blocks or
 * one call, in the export's format), as a JSON array of the call objects as the API shaped
 * them; each goes to `mcp_client_export_dispatch` or `mcp_export_result`. Pure: any thread.
 * Free the output with `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_export_calls(const char *exported_json,
                            const char *reply_json,
                            char **calls_json_out,
                            struct mcp_error **err_out);

/**
 * The API's tool-result message answering `call_json` (one call in the export's format) with
 * `result_json`, a `CallToolResult` the host got itself. `options_json` (may be NULL):
 * `{"max_chars", "resources_as_text", "images"}`. Pure: any thread. Free the output with
 * `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_export_result(const char *exported_json,
                             const char *call_json,
                             const char *result_json,
                             const char *options_json,
                             char **message_json_out,
                             struct mcp_error **err_out);

/**
 * Makes one model tool call on `client`: `call_json` (one call in the export's format) is
 * mapped back to its tool, its arguments are checked against the tool's original input
 * schema, the tool is called, and the result comes back as the API's tool-result message
 * (Chat `role: "tool"` message, Responses `function_call_output`, Anthropic `tool_result`
 * block, Gemini `functionResponse` part). A call that does not fit, a tool error, a protocol
 * error or a timeout is a message the model reads (`MCP_OK`), unless `options_json` says
 * `"errors_as_results": false`, when protocol errors and timeouts fail the call as
 * `mcp_client_call_tool` would. `options_json` (may be NULL): `{"max_chars",
 * "resources_as_text", "images", "errors_as_results", "timeout_ms"}`. Blocks the calling
 * thread like `mcp_client_call_tool` (same threads, same `opts`). Free the output with
 * `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_export_dispatch(struct mcp_client *client,
                                      const char *exported_json,
                                      const char *call_json,
                                      const char *options_json,
                                      const struct mcp_call_opts *opts,
                                      char **message_json_out,
                                      struct mcp_error **err_out);

/**
 * Started `mcp_client_export_dispatch` (same arguments, copied now): completes once through
 * `done` with the message JSON, like `mcp_client_call_tool_start`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_export_dispatch_start(struct mcp_client *client,
                                            const char *exported_json,
                                            const char *call_json,
                                            const char *options_json,
                                            const struct mcp_call_opts *opts,
                                            mcp_call_done_fn done,
                                            void *userdata,
                                            struct mcp_call **call_out,
                                            struct mcp_error **err_out);

/**
 * `mcp_client_export_dispatch` on a hub: the call goes to the member the export's route names
 * (for a hub's list, the tool's member and its own name there), with that member's state,
 * lazy start, call cap and tool filter applied; a member the hub no longer has or a tool its
 * filter withholds is a message the model reads, as is a name the export does not have.
 * Same arguments, options and outcomes as `mcp_client_export_dispatch`. Blocks like
 * `mcp_hub_call_tool`: any thread, not from a callback. Free the output with
 * `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_export_dispatch(struct mcp_hub *hub,
                                   const char *exported_json,
                                   const char *call_json,
                                   const char *options_json,
                                   const struct mcp_call_opts *opts,
                                   char **message_json_out,
                                   struct mcp_error **err_out);

/**
 * Started `mcp_hub_export_dispatch` (same arguments, copied now): completes once through
 * `done` with the message JSON, on the shared dispatcher thread, like
 * `mcp_hub_call_tool_start`. Any thread, callbacks included.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_export_dispatch_start(struct mcp_hub *hub,
                                         const char *exported_json,
                                         const char *call_json,
                                         const char *options_json,
                                         const struct mcp_call_opts *opts,
                                         mcp_call_done_fn done,
                                         void *userdata,
                                         struct mcp_call **call_out,
                                         struct mcp_error **err_out);

/**
 * Registers the `elicitation/create` handler (NULL `handler` unregisters) and declares the
 * `elicitation` capability for form mode (URL mode: `mcp_client_on_elicitation_modes`). Replacing a handler releases the old userdata once it is idle.
 * `userdata_free` runs exactly once, even when this call fails.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_elicitation(struct mcp_client *client,
                                     mcp_input_fn handler,
                                     void *userdata,
                                     mcp_userdata_free_fn userdata_free,
                                     struct mcp_error **err_out);

/**
 * Registers the `sampling/createMessage` handler and declares `sampling` (with `tools` when
 * the configuration sets `sampling_tools`: the params JSON then may carry `tools` and
 * `toolChoice`, and the answer `tool_use` blocks, each naming an offered tool with an `id` and
 * an object `input`; a malformed answer goes to the server as an error). As
 * `mcp_client_on_elicitation`. Deprecated by the 2026-07-28 specification (SEP-2577, removal
 * no earlier than the first release after 2027-07-28): it keeps working, on both eras.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_sampling(struct mcp_client *client,
                                  mcp_input_fn handler,
                                  void *userdata,
                                  mcp_userdata_free_fn userdata_free,
                                  struct mcp_error **err_out);

/**
 * Registers the `roots/list` handler and declares `roots`. As `mcp_client_on_elicitation`.
 * Deprecated by the 2026-07-28 specification (SEP-2577, removal no earlier than the first
 * release after 2027-07-28): it keeps working, on both eras.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_roots(struct mcp_client *client,
                               mcp_input_fn handler,
                               void *userdata,
                               mcp_userdata_free_fn userdata_free,
                               struct mcp_error **err_out);

/**
 * Sets (NULL: removes) the notification listener. `userdata_free` runs exactly once.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_notification_handler(struct mcp_client *client,
                                               mcp_notification_fn listener,
                                               void *userdata,
                                               mcp_userdata_free_fn userdata_free,
                                               struct mcp_error **err_out);

/**
 * Sets (NULL: removes) the log listener. `userdata_free` runs exactly once.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_log_handler(struct mcp_client *client,
                                      mcp_log_fn listener,
                                      void *userdata,
                                      mcp_userdata_free_fn userdata_free,
                                      struct mcp_error **err_out);

/**
 * Creates an empty hub. `options_json` (may be NULL) is `{"separator"?: string (default
 * "__"), "prefix"?: bool (default true), "defaults"?: object}`: tool and prompt names are
 * exported as `<member><separator><name>` (or unprefixed), and `defaults` holds configuration
 * keys every member gets unless its own configuration sets them. Add members with
 * `mcp_hub_add_member`, then `mcp_hub_start`. Free with `mcp_hub_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_new(const char *options_json,
                       struct mcp_hub **hub_out,
                       struct mcp_error **err_out);

/**
 * Adds member `name` with `client_config_json`, the flat configuration `mcp_config_new` takes
 * (`{"command": …}` or `{"url": …}` and the other keys). It starts with `mcp_hub_start`. A
 * configuration the library refuses makes the member `failed` (see `mcp_hub_members_json`),
 * not this call; a name the hub already has is `MCP_INVALID_ARG`. Any thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_add_member(struct mcp_hub *hub,
                              const char *name,
                              const char *client_config_json,
                              struct mcp_error **err_out);

/**
 * Connects every member not yet started, all at once, and returns when each has connected or
 * failed (each bounded by its `connect_timeout_ms`). A member that fails does not fail this
 * call: read the states with `mcp_hub_members_json`. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_start(struct mcp_hub *hub,
                         struct mcp_error **err_out);

/**
 * The members' states as a JSON array, in the order they were added: `{"name", "state",
 * "error"?, "era"?, "protocolVersion"?, "serverInfo"?}` with `state` one of `idle`,
 * `connecting`, `connected`, `reconnecting`, `failed`, `disabled`, `closed`. Free the string
 * with `mcp_string_free`. Any thread, callbacks included (it does not block).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_members_json(const struct mcp_hub *hub,
                                char **members_json_out,
                                struct mcp_error **err_out);

/**
 * The merged list of `kind` (`MCP_LIST_*`) over the connected members: `{"tools": [...]}` (or
 * prompts, resources, resourceTemplates). Tool and prompt names are exported names
 * (`<member>__<name>`, rewritten to `^[a-zA-Z0-9_-]{1,64}$` when needed); each item's
 * `_meta` has `"mcp-client/server"` (its member) and, for tools and prompts,
 * `"mcp-client/name"` (its own name). Without prefixes, a name two members offer is
 * `MCP_INVALID_ARG`. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_list(struct mcp_hub *hub,
                        int32_t kind,
                        char **result_json_out,
                        struct mcp_error **err_out);

/**
 * Started `mcp_hub_list`, with per-call options: completes with the merged list JSON, as
 * `mcp_hub_call_tool_start` completes. The members' list requests it sends carry the trace
 * context of `opts.meta_json` (`traceparent`, `tracestate`, `baggage`), else the hub's trace
 * context callback's, asked inside this call unless the list needs no request (the members'
 * lists are held); a list built from held lists sends nothing. The other options do not
 * apply to a merged list (each member's own timeouts bound its request). Any thread,
 * callbacks included.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_list_start(struct mcp_hub *hub,
                              int32_t kind,
                              const struct mcp_call_opts *opts,
                              mcp_call_done_fn done,
                              void *userdata,
                              struct mcp_call **call_out,
                              struct mcp_error **err_out);

/**
 * Calls the tool the merged list names `name` on its member. `arguments_json` (a JSON object)
 * may be NULL; `opts` (may be NULL) as for `mcp_client_call_tool`. A name the hub does not
 * have is `MCP_INVALID_ARG`, its message listing the nearest names. A tool error
 * (`isError: true`) is `MCP_OK` with the `CallToolResult` JSON. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_call_tool(struct mcp_hub *hub,
                             const char *name,
                             const char *arguments_json,
                             const struct mcp_call_opts *opts,
                             char **result_json_out,
                             struct mcp_error **err_out);

/**
 * Gets the prompt the merged list names `name` from its member; `arguments_json` is an object
 * of strings (may be NULL). Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_get_prompt(struct mcp_hub *hub,
                              const char *name,
                              const char *arguments_json,
                              const struct mcp_call_opts *opts,
                              char **result_json_out,
                              struct mcp_error **err_out);

/**
 * Reads resource `uri` from member `server`. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_read_resource(struct mcp_hub *hub,
                                 const char *server,
                                 const char *uri,
                                 const struct mcp_call_opts *opts,
                                 char **result_json_out,
                                 struct mcp_error **err_out);

/**
 * Starts the tool call `mcp_hub_call_tool` makes (same arguments, copied now) and returns at
 * once; `done` runs exactly once with its outcome, on the shared dispatcher thread, as for
 * `mcp_client_call_tool_start` (`call_out`, may be NULL, receives the call: cancel it with
 * `mcp_call_cancel`, free it with `mcp_call_free`). A failure returned here means `done`
 * never runs. Any thread, callbacks included.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_call_tool_start(struct mcp_hub *hub,
                                   const char *name,
                                   const char *arguments_json,
                                   const struct mcp_call_opts *opts,
                                   mcp_call_done_fn done,
                                   void *userdata,
                                   struct mcp_call **call_out,
                                   struct mcp_error **err_out);

/**
 * Started `mcp_hub_get_prompt`, as `mcp_hub_call_tool_start`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_get_prompt_start(struct mcp_hub *hub,
                                    const char *name,
                                    const char *arguments_json,
                                    const struct mcp_call_opts *opts,
                                    mcp_call_done_fn done,
                                    void *userdata,
                                    struct mcp_call **call_out,
                                    struct mcp_error **err_out);

/**
 * Started `mcp_hub_read_resource`, as `mcp_hub_call_tool_start`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_read_resource_start(struct mcp_hub *hub,
                                       const char *server,
                                       const char *uri,
                                       const struct mcp_call_opts *opts,
                                       mcp_call_done_fn done,
                                       void *userdata,
                                       struct mcp_call **call_out,
                                       struct mcp_error **err_out);

/**
 * Applies a changed configuration to one member, as a reload does: a new `name` is added and
 * started, an existing one whose `client_config_json` differs is closed and started again
 * from it (a `failed` one is started again even when it is equal), and an equal one keeps
 * its connection. Returns once the member has connected or failed. Any thread; not from a
 * callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_set_member(struct mcp_hub *hub,
                              const char *name,
                              const char *client_config_json,
                              struct mcp_error **err_out);

/**
 * Removes member `name` and closes it (its server is shut down); an unknown name is
 * `MCP_INVALID_ARG`. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_remove_member(struct mcp_hub *hub,
                                 const char *name,
                                 struct mcp_error **err_out);

/**
 * Sets (NULL: removes) the hub's listener: every member's state changes, list changes (the
 * merged lists already reflect them), resource updates, stderr lines and notifications.
 * `userdata_free` runs exactly once. Any thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_on_event(struct mcp_hub *hub,
                            mcp_hub_event_fn listener,
                            void *userdata,
                            mcp_userdata_free_fn userdata_free,
                            struct mcp_error **err_out);

/**
 * Closes every member: their servers are shut down and no process is left. Started calls not
 * yet completed complete with `MCP_CLOSED`; later calls fail with `MCP_CLOSED`. Idempotent. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_close(struct mcp_hub *hub,
                         struct mcp_error **err_out);

/**
 * Closes the hub (as `mcp_hub_close`) and frees it; queued events are dropped and the
 * listener's `userdata_free` runs. NULL is a no-op. Not from a callback; no other call on
 * this hub may run or start.
 */
MCP_API void mcp_hub_free(struct mcp_hub *hub);

/**
 * Fills `opts` with defaults for layout `version` (pass `MCP_HUB_READ_OPTS_VERSION`).
 * `MCP_INVALID_ARG` for a version this library does not know: `opts` is left unchanged.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_read_opts_init(struct mcp_hub_read_opts *opts,
                                  uint32_t version);

/**
 * Answers the input an input callback was asked for (copied; may be empty). Only valid inside
 * the callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_input_slot_set(struct mcp_hub_input_slot *slot,
                                  const char *answer,
                                  struct mcp_error **err_out);

/**
 * The options of the input an input callback was asked for, as a JSON array of strings: a
 * `pickString`'s choices (answer with one of them), empty (`[]`) for a `promptString`, which
 * takes free text. Free with `mcp_string_free`. Only valid inside the callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_input_slot_options_json(const struct mcp_hub_input_slot *slot,
                                           char **options_json_out,
                                           struct mcp_error **err_out);

/**
 * Creates a hub of the servers of a host's configuration file at `path`: `mcpServers`
 * (`claude_desktop_config.json`, `.mcp.json`, Cursor's `mcp.json`) or `servers` and `inputs`
 * (VS Code's `.vscode/mcp.json`), comments and trailing commas allowed. `options_json` as for
 * `mcp_hub_new`; `read` (may be NULL) supplies the workspace folder, the user's home and the
 * input callback, which runs on this thread before this call returns. Entries that cannot be
 * built (an unset variable, a declined input, a refused setting) are members in state
 * `failed` with an error naming the server and the key; other hosts' keys are listed by
 * `mcp_hub_warnings_json`. Only a file that cannot be read as a whole fails this call
 * (`MCP_IO`, or `MCP_INVALID_ARG`: not JSON, no server object, a name given twice). Nothing
 * starts until `mcp_hub_start`. Free with `mcp_hub_free`. Any thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_new_from_file(const char *path,
                                 const char *options_json,
                                 const struct mcp_hub_read_opts *read,
                                 struct mcp_hub **hub_out,
                                 struct mcp_error **err_out);

/**
 * `mcp_hub_new_from_file` for the file's `text` (a relative `envFile` starts at the
 * workspace folder, else at the working directory). Any thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_new_from_text(const char *text,
                                 const char *options_json,
                                 const struct mcp_hub_read_opts *read,
                                 struct mcp_hub **hub_out,
                                 struct mcp_error **err_out);

/**
 * Reads the configuration file at `path` again (as `mcp_hub_new_from_file`, `read` may be
 * NULL) and applies it: members new in the file are added and started, members no longer in
 * it are closed, members whose entry changed (or that had failed) are closed and started
 * again, and the others keep their connections and caches. The warnings become the file's.
 * Inputs answered by earlier reads of this hub, declared the same way, are not asked again.
 * Returns once every started member has connected or failed. `report_json_out` (may be NULL)
 * receives `{"added", "removed", "restarted", "unchanged"}`, arrays of member names; free it
 * with `mcp_string_free`. A file that cannot be read as a whole fails this call and changes
 * nothing. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_reload_from_file(struct mcp_hub *hub,
                                    const char *path,
                                    const struct mcp_hub_read_opts *read,
                                    char **report_json_out,
                                    struct mcp_error **err_out);

/**
 * `mcp_hub_reload_from_file` for the file's `text`. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_reload_from_text(struct mcp_hub *hub,
                                    const char *text,
                                    const struct mcp_hub_read_opts *read,
                                    char **report_json_out,
                                    struct mcp_error **err_out);

/**
 * The configuration's warnings as a JSON array of strings: keys other hosts define that this
 * library ignores (`autoApprove`, `alwaysAllow`, …), each once with the servers it is on.
 * Empty for a hub made with `mcp_hub_new`. Free with `mcp_string_free`. Any thread, callbacks
 * included.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_warnings_json(const struct mcp_hub *hub,
                                 char **warnings_json_out,
                                 struct mcp_error **err_out);

/**
 * The value at `pointer` (RFC 6901; "" is the whole document) in `json`, as JSON text.
 * `MCP_INVALID_ARG` when there is no such value. Free the output with `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_json_pointer(const char *json,
                            const char *pointer,
                            char **value_json_out,
                            struct mcp_error **err_out);

/**
 * The string at `pointer` in `json`, unquoted. `MCP_INVALID_ARG` when there is no such value
 * or it is not a string. Free the output with `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_json_string(const char *json,
                           const char *pointer,
                           char **value_out,
                           struct mcp_error **err_out);

/**
 * Sets (NULL: removes) the client's span listener, called once for each MCP operation the
 * client sends (each `tools/call`, `prompts/get`, list page, … with its MRTR rounds, task
 * polls and reconnect retries as events), synchronously: on the thread that completes the call,
 * before its result reaches the host — a blocking call's own thread just before it returns, a
 * started call's delivery thread (the dispatcher, or the host's loop) just before its
 * completion callback. (The operation of a started call completed early by `mcp_call_cancel`
 * or a close reports on the dispatcher when it ends.) A slow listener delays only that call's
 * return; it may call this library's non-blocking functions only. Session records come on
 * the dispatcher thread (or the host's loop), a close's before `mcp_client_close` returns
 * (except in host-loop mode). With no listener nothing is built. `userdata_free` runs exactly
 * once, even when this call fails.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_span(struct mcp_client *client,
                              mcp_span_fn listener,
                              void *userdata,
                              mcp_userdata_free_fn userdata_free,
                              struct mcp_error **err_out);

/**
 * Sets (NULL: removes) the hub's span listener: the records of every member's operations
 * and sessions, present members and those added later (`mcp_hub_add_member`,
 * `mcp_hub_set_member`, a configuration reload), in the format `mcp_span_fn` describes, each
 * with the attribute `"mcp.server.name"`: the member's name (its key in the configuration
 * file).
 *
 * Which operations: a routed call (`mcp_hub_call_tool`, `mcp_hub_get_prompt`,
 * `mcp_hub_read_resource`, their `*_start` forms) is its member's operation, with the
 * handshake of a connect it starts and the member's `tools/list` it may need first; a merged
 * list (`mcp_hub_list`) is one list operation (`tools/list`, …) per member whose list is not held (a list
 * the hub holds sends nothing). The hub's own background requests (a modern member's
 * `subscriptions/listen`, a connect by `mcp_hub_start` or a reload) have records too.
 *
 * Threads, as for a client: a record of a blocking hub call arrives on the calling thread
 * just before the call returns; one of a started call on the dispatcher thread just before
 * its completion callback; the others (session records, the records of `mcp_hub_start`'s and
 * a reload's connects, of background requests) on the shared dispatcher thread or a runtime
 * thread. The listener may run on several threads at once, must return quickly, and may call
 * this library's non-blocking functions only (not a blocking `mcp_hub_*` or `mcp_client_*`
 * call). With no listener nothing is built.
 *
 * Ownership: `userdata` belongs to the hub from this call on; `userdata_free` (may be NULL)
 * runs exactly once — when the listener is replaced or removed and no member can still call
 * it, when the hub is freed, or at once if this call fails — and the listener is never called
 * after it. Any thread; not from a callback of this hub's.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_on_span(struct mcp_hub *hub,
                           mcp_span_fn listener,
                           void *userdata,
                           mcp_userdata_free_fn userdata_free,
                           struct mcp_error **err_out);

/**
 * Fills `opts` with defaults for layout `version` (pass `MCP_CALL_OPTS_VERSION`). Call before
 * setting fields. `MCP_INVALID_ARG` for a version this library does not know (a header newer
 * than the library): `opts` is then left unchanged and must not be used.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_call_opts_init(struct mcp_call_opts *opts,
                              uint32_t version);

/**
 * Sets (NULL: removes) the tool pin hook. `userdata_free` runs exactly once. A client whose
 * configuration has no `tool_pinning` (or policy `off`) keeps no hook and returns
 * `MCP_UNSUPPORTED`. Any thread.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_tool_pin(struct mcp_client *client,
                                  mcp_tool_pin_fn hook,
                                  void *userdata,
                                  mcp_userdata_free_fn userdata_free,
                                  struct mcp_error **err_out);

/**
 * The pins of the client's server: `{"server", "policy", "tools": [{"name", "digest",
 * "definition", "state", "pending"?}]}` with `state` one of `pinned`, `changed`, `withheld`,
 * `removed`, `new`; `pending` the listed definition waiting for approval. Reads the store (no
 * server request). `MCP_UNSUPPORTED` without `tool_pinning`. Caller frees `*pins_json_out` with
 * `mcp_string_free`. Not from a callback (`MCP_REENTRANT_CALL`).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_tool_pins(struct mcp_client *client,
                                char **pins_json_out,
                                struct mcp_error **err_out);

/**
 * Approves the last listed definition of `tool` (changed or new): it is pinned (in the store),
 * listed and callable again. `MCP_INVALID_ARG` when no definition of `tool` waits;
 * `MCP_UNSUPPORTED` without `tool_pinning`. Not from a callback (`MCP_REENTRANT_CALL`).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_approve_tool_pin(struct mcp_client *client,
                                       const char *tool,
                                       struct mcp_error **err_out);

/**
 * Forgets the pin of `tool` (pinned afresh when next listed), or with `tool` NULL every pin of
 * the client's server (the next listing is pinned as a first use). `MCP_UNSUPPORTED` without
 * `tool_pinning`. Not from a callback (`MCP_REENTRANT_CALL`).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_forget_tool_pin(struct mcp_client *client,
                                      const char *tool,
                                      struct mcp_error **err_out);

/**
 * Completes an input request with a result object (`ElicitResult`, `CreateMessageResult`,
 * `ListRootsResult`), copied. Always consumes `responder` (except NULL). `MCP_CANCELLED` when
 * the answer is no longer wanted; `MCP_INVALID_JSON`/`MCP_INVALID_ARG` when `result_json` is
 * unusable or `responder` is an authorization responder (the request then fails:
 * `MCP_HANDLER_FAILED` for an input, `MCP_AUTH_REQUIRED` for an authorization).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_responder_reply_json(struct mcp_responder *responder,
                                    const char *result_json,
                                    struct mcp_error **err_out);

/**
 * Completes an authorization with the full URL the browser was redirected to (copied): the
 * library checks its `state` and `iss` and exchanges its `code`. Always consumes `responder`
 * (except NULL). `MCP_CANCELLED` when the answer is no longer wanted; `MCP_INVALID_ARG` for an
 * input responder (the input then fails).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_responder_reply_url(struct mcp_responder *responder,
                                   const char *redirect_url,
                                   struct mcp_error **err_out);

/**
 * Fails the request with `message` (NULL: a generic one). For an input: JSON-RPC `code` (0:
 * `MCP_JSONRPC_INTERNAL_ERROR`; the `MCP_JSONRPC_*` constants name the usual ones); on a modern
 * connection the call ends with `MCP_HANDLER_FAILED`, on a legacy one the server receives this
 * error. For an authorization (`code` is ignored): the user cancelled or the browser could not
 * open; the waiting call fails with `MCP_AUTH_REQUIRED`. Always consumes `responder` (except
 * NULL).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_responder_reply_error(struct mcp_responder *responder,
                                     int64_t code,
                                     const char *message,
                                     struct mcp_error **err_out);

/**
 * Keeps `responder` alive after the callback returns, for a reply later from any thread.
 * Only valid inside the callback. A deferred responder must still be completed.
 */
MCP_API void mcp_responder_defer(struct mcp_responder *responder);

/**
 * True once the answer is no longer wanted (the call was cancelled or timed out, a sibling
 * input failed, the flow ended, or the client closed). True for NULL.
 */
MCP_API bool mcp_responder_is_cancelled(const struct mcp_responder *responder);

/**
 * `MCP_RUNTIME_ISOLATED` (default: the client owns a runtime thread and, once a callback runs, a dispatcher thread,
 * and a lone caller drives the runtime itself: lowest latency) or `MCP_RUNTIME_SHARED` (the
 * client uses the process-wide runtime and dispatcher threads: threads stay flat as clients
 * grow; every shared client's callbacks run on one thread, in order, so a slow callback
 * delays other shared clients' callbacks, and a blocking call from any shared client's
 * callback is `MCP_REENTRANT_CALL`). Same as the `"runtime": "isolated" | "shared"` key.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_runtime(struct mcp_config *config,
                                  int32_t runtime,
                                  struct mcp_error **err_out);

/**
 * Every page of `skills/list`, checked against the extension's structural rules:
 * `{"skills": [entry, ...], "rejected": [{"uri", "reason", "entry"}, ...]}`. An entry is
 * `{"uri", "frontmatter", "resources": [{"uri", "digest", "size"}] | "dynamic"}`; hold it to
 * read the skill's files with `mcp_client_read_skill_file`. No skill file is read here.
 * `MCP_UNSUPPORTED` when the server did not declare `io.modelcontextprotocol/skills` (nothing
 * is sent then). A skill's identity is (this server, `uri`): never key skills by `uri` alone.
 * Set `"skills": true` in the configuration to declare the extension to servers. Bounded by
 * the `max_pages` setting. Any thread; not from a callback. Free the result with
 * `mcp_string_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_list_skills(struct mcp_client *client,
                                  const struct mcp_call_opts *opts,
                                  char **result_json_out,
                                  struct mcp_error **err_out);

/**
 * `skills/get` for the `SKILL.md` URI `uri` (listed or not). Result: the checked entry JSON.
 * `MCP_SKILL_VERIFICATION_FAILED` when the entry breaks the structural rules or is another
 * skill's; `MCP_JSONRPC_ERROR` (-32602) for a URI the server does not serve; `MCP_UNSUPPORTED`
 * as for `mcp_client_list_skills`. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_get_skill(struct mcp_client *client,
                                const char *uri,
                                const struct mcp_call_opts *opts,
                                char **result_json_out,
                                struct mcp_error **err_out);

/**
 * Reads one file of a skill with `resources/read` and verifies it against `entry_json` (an
 * entry from `mcp_client_list_skills` or `mcp_client_get_skill`). `file_uri` NULL reads the
 * entry's `SKILL.md`, which is how a skill is loaded. Only files the entry lists are read (a
 * `"dynamic"` skill: files below its root, at most 16 MiB). The content's bytes (the UTF-8 of
 * `text`, or the decoded `blob`) must have the listed `size`, then the listed SHA-256 `digest`;
 * a `SKILL.md`'s YAML frontmatter must equal the entry's `frontmatter` key by key. Result: the
 * verified content item JSON `{"uri", "mimeType"?, "text" | "blob"}`. Any mismatch, or a file
 * the entry does not list, is `MCP_SKILL_VERIFICATION_FAILED` (the message says which check)
 * and nothing is returned: do not use the content; refresh the entry once with
 * `mcp_client_get_skill` and ask the user to approve again if its files changed. Nothing is
 * cached. Any thread; not from a callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_read_skill_file(struct mcp_client *client,
                                      const char *entry_json,
                                      const char *file_uri,
                                      const struct mcp_call_opts *opts,
                                      char **result_json_out,
                                      struct mcp_error **err_out);

/**
 * Started `mcp_client_resume_task`: completes as that call returns (the tool's
 * `CallToolResult` JSON, or its failure). Input requests go to the registered handlers, whose
 * callbacks run on the delivery path; `mcp_call_cancel` (or `opts`'s token) sends
 * `tasks/cancel`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_resume_task_start(struct mcp_client *client,
                                        const char *task_id,
                                        const struct mcp_call_opts *opts,
                                        mcp_call_done_fn done,
                                        void *userdata,
                                        struct mcp_call **call_out,
                                        struct mcp_error **err_out);

/**
 * Started `mcp_client_get_task`: completes with the task JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_get_task_start(struct mcp_client *client,
                                     const char *task_id,
                                     const struct mcp_call_opts *opts,
                                     mcp_call_done_fn done,
                                     void *userdata,
                                     struct mcp_call **call_out,
                                     struct mcp_error **err_out);

/**
 * Started `mcp_client_cancel_task`: completes with `{}` once the server accepted `tasks/cancel`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_cancel_task_start(struct mcp_client *client,
                                        const char *task_id,
                                        const struct mcp_call_opts *opts,
                                        mcp_call_done_fn done,
                                        void *userdata,
                                        struct mcp_call **call_out,
                                        struct mcp_error **err_out);

/**
 * Started `mcp_client_update_task`: completes with `{}` once the server accepted `tasks/update`.
 * `input_responses_json` is checked now (`MCP_NULL_ARG`, `MCP_INVALID_ARG`: `done` never runs).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_update_task_start(struct mcp_client *client,
                                        const char *task_id,
                                        const char *input_responses_json,
                                        const struct mcp_call_opts *opts,
                                        mcp_call_done_fn done,
                                        void *userdata,
                                        struct mcp_call **call_out,
                                        struct mcp_error **err_out);

/**
 * Started `mcp_client_list_skills`: completes with `{"skills": [...], "rejected": [...]}`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_list_skills_start(struct mcp_client *client,
                                        const struct mcp_call_opts *opts,
                                        mcp_call_done_fn done,
                                        void *userdata,
                                        struct mcp_call **call_out,
                                        struct mcp_error **err_out);

/**
 * Started `mcp_client_get_skill`: completes with the checked entry JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_get_skill_start(struct mcp_client *client,
                                      const char *uri,
                                      const struct mcp_call_opts *opts,
                                      mcp_call_done_fn done,
                                      void *userdata,
                                      struct mcp_call **call_out,
                                      struct mcp_error **err_out);

/**
 * Started `mcp_client_read_skill_file`: completes with the verified content item JSON, or
 * `MCP_SKILL_VERIFICATION_FAILED`. `entry_json` is checked and copied now.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_read_skill_file_start(struct mcp_client *client,
                                            const char *entry_json,
                                            const char *file_uri,
                                            const struct mcp_call_opts *opts,
                                            mcp_call_done_fn done,
                                            void *userdata,
                                            struct mcp_call **call_out,
                                            struct mcp_error **err_out);

/**
 * Started `mcp_client_subscribe_resource` (legacy): completes with `{}`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_subscribe_resource_start(struct mcp_client *client,
                                               const char *uri,
                                               const struct mcp_call_opts *opts,
                                               mcp_call_done_fn done,
                                               void *userdata,
                                               struct mcp_call **call_out,
                                               struct mcp_error **err_out);

/**
 * Started `mcp_client_unsubscribe_resource` (legacy): completes with `{}`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_unsubscribe_resource_start(struct mcp_client *client,
                                                 const char *uri,
                                                 const struct mcp_call_opts *opts,
                                                 mcp_call_done_fn done,
                                                 void *userdata,
                                                 struct mcp_call **call_out,
                                                 struct mcp_error **err_out);

/**
 * Started `mcp_client_notify_roots_changed`: completes with `{}` once the notification is sent
 * (at once on modern servers).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_notify_roots_changed_start(struct mcp_client *client,
                                                 mcp_call_done_fn done,
                                                 void *userdata,
                                                 struct mcp_call **call_out,
                                                 struct mcp_error **err_out);

/**
 * Started `mcp_client_listen`. On `MCP_OK`, `*subscription_out` is a new subscription owned by
 * the caller (free it with `mcp_subscription_free`, from any thread, before or after the
 * completion; it is written before the completion can run), and the call completes with the acknowledged filter JSON once the server
 * acknowledged, or with the listen's failure. Read events (`mcp_subscription_next_start`,
 * `mcp_subscription_next`) only after an `MCP_OK` completion: before it they fail with
 * `MCP_INVALID_ARG`, and after a failed one the subscription has nothing to read (free it).
 * Freeing or cancelling the subscription before the acknowledgement gives the listen up (its
 * completion still runs, as `mcp_call_cancel` would make it); so does freeing the call.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_listen_start(struct mcp_client *client,
                                   const char *filter_json,
                                   const struct mcp_call_opts *opts,
                                   mcp_call_done_fn done,
                                   void *userdata,
                                   struct mcp_subscription **subscription_out,
                                   struct mcp_call **call_out,
                                   struct mcp_error **err_out);

/**
 * Static, NUL-terminated English text for a status ("timed out"); "unknown status" for a value
 * that is no status. Never NULL, never freed; any thread.
 */
MCP_API const char *mcp_status_str(int32_t status);

/**
 * Static, NUL-terminated name of a status's constant ("MCP_OUTPUT_SCHEMA_INVALID" for 305);
 * "MCP_UNKNOWN" for a value that is no status (no constant has that name). Never NULL, never
 * freed; any thread.
 */
MCP_API const char *mcp_status_name(int32_t status);

/**
 * True for the transport range (100–199): the connection or the call's wait failed.
 */
MCP_API bool mcp_status_is_transport(int32_t status);

/**
 * Frees a string the library returned. NULL is a no-op.
 */
MCP_API void mcp_string_free(char *s);

/**
 * Opens `subscriptions/listen` with `filter_json` (a `SubscriptionFilter`, e.g.
 * `{"toolsListChanged":true,"resourceSubscriptions":["file:///x"]}`) and waits for the
 * server's acknowledgement. With the tasks extension on (`mcp_config_set_tasks`),
 * `{"taskIds":["<id>"]}` follows those tasks: each status change is a `notifications/tasks`
 * event whose params are the whole task. Free with `mcp_subscription_free`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_listen(struct mcp_client *client,
                             const char *filter_json,
                             const struct mcp_call_opts *opts,
                             struct mcp_subscription **subscription_out,
                             struct mcp_error **err_out);

/**
 * The filter the server acknowledged (the subset it honours), as JSON.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_subscription_acknowledged(const struct mcp_subscription *subscription,
                                         char **filter_json_out,
                                         struct mcp_error **err_out);

/**
 * Waits up to `timeout_ms` (`MCP_TIMEOUT_NONE`: no limit; 0, the default: no wait) for the next
 * notification and writes it as
 * `{"method": ..., "params": ...}`. `MCP_TIMEOUT` when none arrived in time; `MCP_CLOSED`
 * once the subscription ended gracefully; another status when it ended with an error
 * (`MCP_IO` when 1024 events waited untaken and more came).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_subscription_next(struct mcp_subscription *subscription,
                                 int64_t timeout_ms,
                                 char **event_json_out,
                                 struct mcp_error **err_out);

/**
 * Ends the subscription (the server is told); pending and later `next` calls return
 * `MCP_CANCELLED`/`MCP_CLOSED`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_subscription_cancel(struct mcp_subscription *subscription,
                                   struct mcp_error **err_out);

/**
 * Cancels (if still open) and frees. NULL is a no-op.
 */
MCP_API void mcp_subscription_free(struct mcp_subscription *subscription);

/**
 * Declares the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on every modern
 * request (default false; JSON key `tasks`). Servers may then answer `mcp_client_call_tool`
 * with a task, which the call follows to its end: it polls `tasks/get` at the task's
 * `pollIntervalMs`, answers `input_required` states with the registered handlers (each input
 * key once, through `tasks/update`), returns the `completed` task's result, and sends
 * `tasks/cancel` when the call's cancel token fires. The call's timeout (`timeout_ms` in its
 * options, else `request_timeout_ms`) bounds the wait for the task: when it passes the call
 * fails with `MCP_TIMEOUT` and `tasks/cancel` is sent; a task expected to run longer needs a
 * longer timeout (or `MCP_TIMEOUT_NONE` with `max_total_ms`), or `reset_timeout_on_progress`.
 * A call ended by its `max_total_ms` leaves the task running: resume it with
 * `mcp_client_resume_task`. Either way nothing polls after the call returns.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_config_set_tasks(struct mcp_config *config,
                                bool enabled,
                                struct mcp_error **err_out);

/**
 * Sets (NULL: removes) the client's task status listener, called on the dispatcher thread for
 * every task any call follows. `userdata_free` runs exactly once.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_on_task_status(struct mcp_client *client,
                                     mcp_task_status_fn listener,
                                     void *userdata,
                                     mcp_userdata_free_fn userdata_free,
                                     struct mcp_error **err_out);

/**
 * Follows the task `task_id` (from a status listener, possibly of another process) to its end
 * as a blocking `mcp_client_call_tool` would: input requests go to the registered handlers,
 * cancelling `opts`'s token sends `tasks/cancel`, and the timeout bounds the wait from this
 * call's start as it bounds a task call's (`MCP_TIMEOUT`, `tasks/cancel` sent). Result: the
 * tool's `CallToolResult` JSON.
 * A `failed` task is `MCP_JSONRPC_ERROR` with its error; a `cancelled` one `MCP_CANCELLED`;
 * an unknown or expired id `MCP_JSONRPC_ERROR` -32602. `MCP_INVALID_ARG` without `"tasks":
 * true` in the configuration, `MCP_UNSUPPORTED` on a legacy connection.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_resume_task(struct mcp_client *client,
                                  const char *task_id,
                                  const struct mcp_call_opts *opts,
                                  char **result_json_out,
                                  struct mcp_error **err_out);

/**
 * One `tasks/get`: the task as the server has it now (JSON). Errors as `mcp_client_resume_task`.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_get_task(struct mcp_client *client,
                               const char *task_id,
                               const struct mcp_call_opts *opts,
                               char **result_json_out,
                               struct mcp_error **err_out);

/**
 * `tasks/cancel` (cooperative: the task ends as `cancelled` when the server gets to it).
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_cancel_task(struct mcp_client *client,
                                  const char *task_id,
                                  const struct mcp_call_opts *opts,
                                  struct mcp_error **err_out);

/**
 * `tasks/update` with `input_responses_json` (an object, key → answer) the host gathered
 * itself after `MCP_INPUT_REQUIRED` from a followed task; then resume the task.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_update_task(struct mcp_client *client,
                                  const char *task_id,
                                  const char *input_responses_json,
                                  const struct mcp_call_opts *opts,
                                  struct mcp_error **err_out);

/**
 * Sets (NULL `callback`: removes) the callback that gives the host's current W3C trace
 * context (SEP-414). It runs on the thread that calls a request function of this client
 * (blocking or `*_start`), for a call whose `mcp_call_opts.meta_json` has no `traceparent` or
 * `baggage`: once for each operation the call sends (a request that goes out, with its MRTR
 * retries, task polls and retry after a reconnect), before it is sent, and never for an answer
 * from the response cache or for a connect — so each context it gives has its span record
 * (`mcp_client_on_span`). A blocking all-pages list asks per page, a started one once for all
 * its pages. A started call that may be answered from the cache asks only when it will not be
 * (should the entry expire before the call runs, it is asked on the client's runtime thread).
 * What it sets goes on every request of that operation. It must not call this library except
 * `mcp_trace_slot_set`. An invalid value fails the call with `MCP_INVALID_ARG`, nothing sent.
 * `userdata_free` runs exactly once, even when this call fails; the callback is never called
 * after it.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_client_set_trace_context_fn(struct mcp_client *client,
                                           mcp_trace_context_fn callback,
                                           void *userdata,
                                           mcp_userdata_free_fn userdata_free,
                                           struct mcp_error **err_out);

/**
 * Sets the current context inside a trace context callback: `traceparent`, `tracestate` and
 * `baggage` in their W3C formats (each borrowed, copied; NULL or "" for none). `MCP_INVALID_ARG`
 * for an invalid value (the call then fails the same way). Only valid inside the callback.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_trace_slot_set(struct mcp_trace_slot *slot,
                              const char *traceparent,
                              const char *tracestate,
                              const char *baggage,
                              struct mcp_error **err_out);

/**
 * Sets (NULL `callback`: removes) the hub's trace context callback: the host's current W3C
 * trace context (SEP-414) for the hub's calls, as `mcp_client_set_trace_context_fn` gives it
 * to a client's. A hub call whose `mcp_call_opts.meta_json` has no `traceparent` or `baggage`
 * asks it, and what it gives goes in the `_meta` of the member requests the call sends:
 *
 * - a blocking call (`mcp_hub_call_tool`, `mcp_hub_get_prompt`, `mcp_hub_read_resource`,
 *   `mcp_hub_list`) asks it on the calling thread once for each member operation it sends (the
 *   routed request with its MRTR retries, task polls and retry after a reconnect; each
 *   member's list request (`tools/list`, …) fetched for a merged list or for routing), before that operation is sent,
 *   never for an answer from a cache or for a connect: each context it gives has its span
 *   record (`mcp_hub_on_span`), whose `parent` it is;
 * - a started call (`*_start`) asks it at most once, on the calling thread, inside the
 *   `*_start` call, and every member operation of that call then carries that one context. It
 *   does not ask when it can tell up front that the call sends no member request: a read the
 *   member's response cache answers, a member the hub does not have, a name the merged list
 *   (held, or built from the members' held lists) does not have. A context it gives then has
 *   at least one record, unless the call fails before its request (its member cannot connect).
 *
 * Requests the hub sends on its own (`mcp_hub_start`'s connects, a modern member's
 * `subscriptions/listen`) ask nothing. The callback must not call this library except
 * `mcp_trace_slot_set`; it may run on several threads at once. An invalid value fails the
 * call with `MCP_INVALID_ARG`, nothing sent. Ownership: `userdata_free` (may be NULL) runs
 * exactly once — when the callback is replaced or removed and no call can still ask it, when
 * the hub is freed, or at once if this call fails — and the callback is never called after
 * it. Any thread; not from a callback of this hub's.
 */
MCP_API
MCP_WARN_UNUSED_RESULT
mcp_status mcp_hub_set_trace_context_fn(struct mcp_hub *hub,
                                        mcp_trace_context_fn callback,
                                        void *userdata,
                                        mcp_userdata_free_fn userdata_free,
                                        struct mcp_error **err_out);

/**
 * `"mcp_client/<semver>"`: static, never freed.
 */
MCP_API const char *mcp_version(void);

/**
 * The ABI version this library implements (compare with the header's `MCP_ABI_VERSION`).
 */
MCP_API uint32_t mcp_abi_version(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* MCP_CLIENT_H */
