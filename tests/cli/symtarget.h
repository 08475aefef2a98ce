/* SPDX-License-Identifier: MIT */
#ifndef GPUSPY_TEST_SYMTARGET_H
#define GPUSPY_TEST_SYMTARGET_H

#ifdef __cplusplus
extern "C" {
#endif

/* The return address of its call: the caller's. */
void *symtarget_capture(void);
/* A return address inside symtarget_caller, at line symtarget_line of
 * symtarget.c. */
void *symtarget_caller(void);
extern int symtarget_line;

/* symtarget_cpp.cc, when a C++ compiler was found: the same inside
 * gstest::cpp_caller(int), whose symbol is mangled. */
void *symtarget_cpp_entry(int *line);

#ifdef __cplusplus
}
#endif

#endif
