/* An in-memory loader for the relocatable ELF objects LLVM emits (x86-64, reloc=pic,
 * codemodel=small): compiled code stored on disk runs in a later process without LLVM.
 *
 *     load_object(image, symbols, exports) -> (LoadedObject, addresses)
 *
 * `image` is the object file's bytes; its undefined symbols come from `symbols` (name ->
 * address), else from the process (dlsym); `addresses` are those of the global symbols named in
 * `exports`, in order.  The LoadedObject owns the memory: dropping it unmaps the code.  A
 * malformed image is a ValueError, one this loader does not support (or a missing symbol) an
 * ImportError.  Linux x86-64 only; elsewhere load_object raises NotImplementedError.
 */
#ifndef TRACER_OBJLOAD_H
#define TRACER_OBJLOAD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Adds load_object and the type LoadedObject to `module`; -1 on error. */
int objload_module_init(PyObject *module);

#endif
