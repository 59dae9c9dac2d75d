/* Reconnecting (issue 14, item 12). */
#include "harness.h"

const struct test_case reconnect_tests[] = {{NULL, NULL}};
const size_t reconnect_tests_count = 0;
