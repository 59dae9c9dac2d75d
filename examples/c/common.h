/* Shared by the examples: connect to the server given on the command line, print failures. */
#ifndef MCP_EXAMPLE_COMMON_H
#define MCP_EXAMPLE_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include "mcp_client.h"

/* Prints a failed call's status and message, frees the error, and returns the status. */
static inline mcp_status report_failure(const char *what, mcp_status st, mcp_error *err) {
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, mcp_status_str(st), st,
            err ? mcp_error_message(err) : "");
    mcp_error_free(err);
    return st;
}

/* Creates a client for the server command in argv[1..] (stdio) and connects it. */
/* As connect_from_args, declaring `manual_kinds` (MCP_ELICITATION_FORM, MCP_INPUT_SAMPLING, ...)
 * as input the host answers by hand (0: none). */
static inline mcp_client *connect_from_args_manual(int argc, char **argv, uint32_t manual_kinds) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <server command> [args...]\n", argv[0]);
        return NULL;
    }
    if (mcp_abi_version() != MCP_ABI_VERSION) {
        fprintf(stderr, "header ABI %d does not match library ABI %u\n", MCP_ABI_VERSION, mcp_abi_version());
        return NULL;
    }
    mcp_config *cfg = NULL;
    mcp_error *err = NULL;
    mcp_status st = mcp_config_new(NULL, &cfg, &err);
    if (st == MCP_OK) st = mcp_config_set_command(cfg, argv[1], &err);
    for (int i = 2; st == MCP_OK && i < argc; i++) st = mcp_config_add_arg(cfg, argv[i], &err);
    if (st == MCP_OK && manual_kinds != 0) st = mcp_config_set_manual_input(cfg, manual_kinds, &err);
    mcp_client *client = NULL;
    if (st == MCP_OK) st = mcp_client_new(cfg, &client, &err);
    mcp_config_free(cfg);
    if (st != MCP_OK) {
        report_failure("creating the client", st, err);
        return NULL;
    }
    char *info = NULL;
    st = mcp_client_connect(client, NULL, &info, &err);
    if (st != MCP_OK) {
        report_failure("connect", st, err);
        mcp_client_free(client);
        return NULL;
    }
    printf("connected: %s\n\n", info);
    mcp_string_free(info);
    return client;
}

static inline mcp_client *connect_from_args(int argc, char **argv) {
    return connect_from_args_manual(argc, argv, 0);
}

#endif
