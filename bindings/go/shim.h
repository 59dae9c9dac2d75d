/* C side of the Go binding: trampolines from the library's callbacks into Go, and helpers that
 * turn a cgo.Handle (an integer) into the library's `void *userdata` on the C side only, so no
 * handle value ever sits in Go memory typed as a pointer. */
#ifndef MCPGO_SHIM_H
#define MCPGO_SHIM_H

#include <stdint.h>
#include "mcp_client.h"

enum { MCPGO_ELICITATION = 0, MCPGO_SAMPLING = 1, MCPGO_ROOTS = 2 };

mcp_status mcpgo_register_input(mcp_client *client, int kind, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_register_elicitation_modes(mcp_client *client, uint32_t modes, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_set_notification_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_set_tool_pin_hook(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_set_state_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_set_task_status_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_set_span_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_set_log_listener(mcp_client *client, uintptr_t handle, mcp_error **err_out);
void mcpgo_opts_set_progress(mcp_call_opts *opts, uintptr_t handle);
mcp_status mcpgo_set_authorization(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_set_token_store(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_responder_on_cancel(mcp_responder *r, uintptr_t handle, mcp_error **err_out);
void mcpgo_call_done(void *ud, mcp_status st, const char *result, size_t len, const mcp_error *err);
void *mcpgo_userdata(uintptr_t handle);
mcp_status mcpgo_set_assertion_provider(mcp_client *client, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_hub_on_event(mcp_hub *hub, uintptr_t handle, mcp_error **err_out);
mcp_status mcpgo_hub_set_span_listener(mcp_hub *hub, uintptr_t handle, mcp_error **err_out);
void mcpgo_hub_read_opts_on_input(mcp_hub_read_opts *opts, uintptr_t handle);
int mcpgo_sigaction_flags(int sig, int *flags_out, int *installed_out);

#endif
