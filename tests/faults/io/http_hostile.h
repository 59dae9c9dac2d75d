/* A hostile MCP server over HTTP on threads of the test process (http_hostile.c). */
#ifndef HTTP_HOSTILE_H
#define HTTP_HOSTILE_H

/* Starts serving `mode` on 127.0.0.1 (an ephemeral port); returns the port, or -1. */
int http_hostile_start(const char *mode, long count);

#endif
