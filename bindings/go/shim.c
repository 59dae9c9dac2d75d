#include <signal.h>
#include <stddef.h>
#include "shim.h"
#include "_cgo_export.h"

static void input_trampoline(void *ud, const char *method, const char *params, size_t len, mcp_responder *r) {
    goMcpInput((uintptr_t)ud, (char *)method, (char *)params, len, r);
}

static void notification_trampoline(void *ud, const char *method, const char *params, size_t len) {
    goMcpNotification((uintptr_t)ud, (char *)method, (char *)params, len);
}

static void log_trampoline(void *ud, const char *level, const char *source, const char *message) {
    goMcpLog((uintptr_t)ud, (char *)level, (char *)source, (char *)message);
}

static void task_status_trampoline(void *ud, const char *task, size_t len) {
    goMcpTaskStatus((uintptr_t)ud, (char *)task, len);
}

static void span_trampoline(void *ud, const char *span, size_t len) {
    goMcpSpan((uintptr_t)ud, (char *)span, len);
}

static void progress_trampoline(void *ud, double progress, double total, const char *message) {
    goMcpProgress((uintptr_t)ud, progress, total, (char *)message);
}

static void authorization_trampoline(void *ud, const char *url, const char *redirect_uri,
                                     mcp_responder *r) {
    goMcpAuthorization((uintptr_t)ud, (char *)url, (char *)redirect_uri, r);
}

static void token_load_trampoline(void *ud, const char *issuer, mcp_token_slot *slot) {
    goMcpTokenLoad((uintptr_t)ud, (char *)issuer, slot);
}

static void token_save_trampoline(void *ud, const char *issuer, const char *record) {
    goMcpTokenSave((uintptr_t)ud, (char *)issuer, (char *)record);
}

static void assertion_trampoline(void *ud, const char *kind, const char *audience, mcp_assertion_slot *slot) {
    goMcpAssertion((uintptr_t)ud, (char *)kind, (char *)audience, slot);
}

static void state_trampoline(void *ud, int32_t state, uint32_t attempt, const char *detail) {
    goMcpConnectionState((uintptr_t)ud, state, attempt, (char *)detail);
}

static void hub_event_trampoline(void *ud, const char *event_json) {
    goMcpHubEvent((uintptr_t)ud, (char *)event_json);
}

static void hub_input_trampoline(void *ud, const char *id, const char *description, bool password,
                                 const char *default_value, mcp_hub_input_slot *slot) {
    goMcpHubInput((uintptr_t)ud, (char *)id, (char *)description, password, (char *)default_value, slot);
}

static void free_trampoline(void *ud) {
    goMcpFreeHandle((uintptr_t)ud);
}

static void responder_cancel_trampoline(void *ud) {
    goMcpResponderCancelled((uintptr_t)ud);
}

/* Pushed cancellation: the handler's context is cancelled from the delivery path. */
mcp_status mcpgo_responder_on_cancel(mcp_responder *r, uintptr_t handle, mcp_error **err_out) {
    return mcp_responder_on_cancel(r, responder_cancel_trampoline, (void *)handle, free_trampoline, err_out);
}

/* Every started call's completion (mcp_call_done_fn): userdata is the call's cgo.Handle. */
void mcpgo_call_done(void *ud, mcp_status st, const char *result, size_t len, const mcp_error *err) {
    goMcpCallDone((uintptr_t)ud, st, (char *)result, len, (mcp_error *)err);
}

/* A handle as a started call's userdata (converted here, never typed as a pointer in Go). */
void *mcpgo_userdata(uintptr_t handle) {
    return (void *)handle;
}

mcp_status mcpgo_register_input(mcp_client *client, int kind, uintptr_t handle, mcp_error **err_out) {
    mcp_input_fn fn = handle ? input_trampoline : NULL;
    mcp_userdata_free_fn fr = handle ? free_trampoline : NULL;
    void *ud = (void *)handle;
    switch (kind) {
    case MCPGO_ELICITATION: return mcp_client_on_elicitation(client, fn, ud, fr, err_out);
    case MCPGO_SAMPLING: return mcp_client_on_sampling(client, fn, ud, fr, err_out);
    default: return mcp_client_on_roots(client, fn, ud, fr, err_out);
    }
}

/* The elicitation handler for `modes` (MCP_ELICITATION_FORM | MCP_ELICITATION_URL). */
mcp_status mcpgo_register_elicitation_modes(mcp_client *client, uint32_t modes, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_on_elicitation_modes(client, modes, handle ? input_trampoline : NULL, (void *)handle,
                                           handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_set_notification_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_set_notification_handler(client, handle ? notification_trampoline : NULL, (void *)handle,
                                               handle ? free_trampoline : NULL, err_out);
}

static bool tool_pin_trampoline(void *ud, const char *event_json) {
    return goMcpToolPin((uintptr_t)ud, (char *)event_json);
}

mcp_status mcpgo_set_tool_pin_hook(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_on_tool_pin(client, handle ? tool_pin_trampoline : NULL, (void *)handle,
                                  handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_set_state_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_on_connection_state(client, handle ? state_trampoline : NULL, (void *)handle,
                                          handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_set_log_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_set_log_handler(client, handle ? log_trampoline : NULL, (void *)handle,
                                      handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_set_task_status_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_on_task_status(client, handle ? task_status_trampoline : NULL, (void *)handle,
                                     handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_set_span_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_on_span(client, handle ? span_trampoline : NULL, (void *)handle,
                              handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_set_authorization(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_on_authorization(client, handle ? authorization_trampoline : NULL, (void *)handle,
                                       handle ? free_trampoline : NULL, err_out);
}

/* Both callbacks or neither (0: back to the library's in-memory store). */
mcp_status mcpgo_set_token_store(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_set_token_store(client, handle ? token_load_trampoline : NULL,
                                      handle ? token_save_trampoline : NULL, (void *)handle,
                                      handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_set_assertion_provider(mcp_client *client, uintptr_t handle, mcp_error **err_out) {
    return mcp_client_set_assertion_provider(client, handle ? assertion_trampoline : NULL, (void *)handle,
                                             handle ? free_trampoline : NULL, err_out);
}

void mcpgo_opts_set_progress(mcp_call_opts *opts, uintptr_t handle) {
    opts->on_progress = progress_trampoline;
    opts->progress_userdata = (void *)handle;
}

/* Reads a signal's current disposition: whether a handler function is installed and its flags. */
int mcpgo_sigaction_flags(int sig, int *flags_out, int *installed_out) {
#ifdef _WIN32
    (void)sig;
    (void)flags_out;
    (void)installed_out;
    return -1; /* no sigaction on Windows */
#else
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0) return -1;
    *flags_out = sa.sa_flags;
    *installed_out = (sa.sa_flags & SA_SIGINFO) ? (sa.sa_sigaction != NULL)
                                                : (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
    return 0;
#endif
}

/* The hub's listener: handle 0 removes it. */
mcp_status mcpgo_hub_set_span_listener(mcp_hub *hub, uintptr_t handle, mcp_error **err_out) {
    return mcp_hub_on_span(hub, handle ? span_trampoline : NULL, (void *)handle,
                           handle ? free_trampoline : NULL, err_out);
}

mcp_status mcpgo_hub_on_event(mcp_hub *hub, uintptr_t handle, mcp_error **err_out) {
    return mcp_hub_on_event(hub, handle ? hub_event_trampoline : NULL, (void *)handle,
                            handle ? free_trampoline : NULL, err_out);
}

/* A configuration file's ${input:id} answered by the Go callback behind handle. */
void mcpgo_hub_read_opts_on_input(mcp_hub_read_opts *opts, uintptr_t handle) {
    opts->on_input = hub_input_trampoline;
    opts->input_userdata = (void *)handle;
}
