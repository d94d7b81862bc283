/*
 * CommandLine.c — the process's arguments for the Swift runtime inside libstrata.so, taken
 * from the loader instead of from /proc/self/maps.
 *
 * libstrata.so links the Swift standard library statically. The standard library's own
 * definition of these two functions (CommandLine.cpp in libswiftCore.a) comes with a static
 * initializer that opens /proc/self/maps, scans it for the stack and walks the stack for
 * argv, in every process that loads the library: about 0.15M instructions and the kernel's
 * formatting of every mapping, before the host program's main, for arguments Strata never
 * reads. The linker takes an archive member only for a symbol nothing else defines, so with
 * both defined here that member (and its initializer) is left out of the library. If a
 * later Swift puts another symbol the library needs into that member, the link fails with
 * a duplicate definition instead of silently loading both.
 *
 * glibc calls each DT_INIT_ARRAY function of a shared object with (argc, argv, envp), which
 * is where the arguments come from here: `CommandLine.arguments` stays what it was.
 */
#include "CStrataStart.h"

static char **captured_argv;
static int captured_argc;
static char **override_argv;
static int override_argc;

static void strata_capture_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    captured_argc = argc;
    captured_argv = argv;
}

__attribute__((section(".init_array"), used)) static void (*const strata_capture_arguments_entry)(int, char **, char **) =
    strata_capture_arguments;

char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    static char *empty[1] = {0};
    if (override_argv) {
        *outArgLen = override_argc;
        return override_argv;
    }
    if (captured_argv) {
        *outArgLen = captured_argc;
        return captured_argv;
    }
    *outArgLen = 0;
    return empty;
}

void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    override_argv = argv;
    override_argc = argc;
}
