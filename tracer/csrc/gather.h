/* tracer.native.gather (tracer/csrc/gather.c): a list's numbers into an array, checked. */
#ifndef TRACER_GATHER_H
#define TRACER_GATHER_H
#include <Python.h>

int gather_module_init(PyObject *module);

#endif
