/* Connecting (issue 14, items 9 and 10). */
#include "harness.h"

const struct test_case connect_tests[] = {{NULL, NULL}};
const size_t connect_tests_count = 0;
