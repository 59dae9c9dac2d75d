/* A stand-in for the Apple SDK's TargetConditionals.h, which is not available on Linux: enough
 * for ring's C sources to compile when tests/cross/apple-check.bash type-checks the library for
 * Apple targets. Objects built with it are never linked or shipped. */
#ifndef MCP_CROSS_TARGET_CONDITIONALS_H
#define MCP_CROSS_TARGET_CONDITIONALS_H
#define TARGET_OS_MAC 1
#if defined(__ENVIRONMENT_IPHONE_OS_VERSION_MIN_REQUIRED__)
#define TARGET_OS_OSX 0
#define TARGET_OS_IPHONE 1
#define TARGET_OS_IOS 1
#else
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
#define TARGET_OS_IOS 0
#endif
#endif
