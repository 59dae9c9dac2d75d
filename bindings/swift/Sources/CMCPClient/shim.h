/* Umbrella header of the CMCPClient module: the installed C header, found through the include
 * directory that mcp_client.pc's Cflags give. */
#include <mcp_client.h>
