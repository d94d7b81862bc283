/* CStrataStart: what libstrata.so defines for the statically linked Swift runtime in place of
   its own (CommandLine.c). Nothing here is part of the C API (include/strata.h). */
#ifndef CSTRATASTART_H
#define CSTRATASTART_H

/* The process's arguments, as the Swift standard library's CommandLine asks for them. */
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);
/* Replaces the arguments CommandLine reports (the standard library's entry point for it). */
void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

#endif
