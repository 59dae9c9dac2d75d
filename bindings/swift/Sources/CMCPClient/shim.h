/* Umbrella header of the CMCPClient module: the repository's generated C header. */
#include "../../../../include/mcp_client.h"
