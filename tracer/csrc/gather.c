/* tracer.native.gather: copy a Python list's numbers into an array, checking every item.
 *
 * A loop over a long Python list compiles to a loop over an array (tracer/frontend/gathered.py).
 * The loader fills that array on every call, so this copy is on the call path: done here it
 * costs a few nanoseconds per item instead of a Python-level check and conversion.
 *
 *     gather(out, items, attr, row_length) -> bool
 *
 * `items` is a list of n objects and `out` a C-contiguous float64 or int64 buffer of n (or
 * n x row_length) elements. The value of item i is `items[i]` (attr None) or
 * `vars(items[i])[attr]` (an instance attribute). With row_length 0 the value must be exactly
 * a float (an int in int64 range for an int64 buffer) and is stored at out[i]; with
 * row_length m > 0 it must be exactly a list of m floats, stored in row i. Returns False at
 * the first value that is not so (the loader then rejects the call: a new trace follows),
 * True when `out` is filled. `same_values` checks an attribute that is one constant on every item.
 *
 *     scatter(array, items, attr, row_length)
 *
 * is gather's inverse, after a call that wrote into the array (an item assignment into the
 * list in traced code): the numbers go back where gather read them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gather.h"
#include "tools.h"

/* The value of one item: a new reference, or NULL with no error set when it is missing. */
static PyObject *
item_value(PyObject *item, PyObject *attr)
{
    if (attr == Py_None) {
        Py_INCREF(item);
        return item;
    }
    PyObject *dict = PyObject_GenericGetDict(item, NULL);
    if (dict == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *value = PyDict_GetItemWithError(dict, attr);   /* borrowed */
    Py_XINCREF(value);
    Py_DECREF(dict);
    PyErr_Clear();
    return value;
}

/* Store number `v` at out[k]: exactly a float (a float64 buffer) or an int64 int. */
static int
store_number(PyObject *v, int is_float, char *out, Py_ssize_t k)
{
    if (is_float) {
        if (!PyFloat_CheckExact(v))
            return 0;
        ((double *)out)[k] = PyFloat_AS_DOUBLE(v);
        return 1;
    }
    if (!PyLong_CheckExact(v))
        return 0;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    ((long long *)out)[k] = x;
    return 1;
}

/* The arguments of gather and scatter, (array, items, attr, row_length), checked: `view` gets
 * the array's buffer (released by the caller), `m` the row length and `is_float` its kind.
 * 0, or -1 with an exception set. */
static int
parse_arguments(const char *name, PyObject *const *args, Py_ssize_t nargs, int flags,
                Py_buffer *view, Py_ssize_t *m, int *is_float)
{
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "%s(array, items, attr, row_length)", name);
        return -1;
    }
    PyObject *items = args[1], *attr = args[2];
    *m = PyLong_AsSsize_t(args[3]);
    if (*m == -1 && PyErr_Occurred())
        return -1;
    if (!PyList_CheckExact(items) || (attr != Py_None && !PyUnicode_CheckExact(attr)) || *m < 0) {
        PyErr_Format(PyExc_TypeError, "%s: items must be a list, attr None or a str", name);
        return -1;
    }
    if (PyObject_GetBuffer(args[0], view, flags | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *format = view->format;
    *is_float = format != NULL && strcmp(format, "d") == 0;
    int is_int = format != NULL && view->itemsize == 8 && (strcmp(format, "q") == 0 || strcmp(format, "l") == 0);
    if ((!*is_float && !is_int) || view->len != PyList_GET_SIZE(items) * (*m ? *m : 1) * 8) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "%s: the array must be float64 or int64, one element per number of the list",
                     name);
        return -1;
    }
    return 0;
}

/* Fill `out` with the numbers of list `items` (see gather): 1, or 0 at the first value of another kind. */
static int
fill(PyObject *items, PyObject *attr, char *out, Py_ssize_t m, int is_float)
{
    Py_ssize_t n = PyList_GET_SIZE(items);
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        PyObject *v = item_value(PyList_GET_ITEM(items, i), attr);
        if (v == NULL) {
            return 0;
        }
        if (m == 0) {
            ok = store_number(v, is_float, out, i);
        }
        else if (!PyList_CheckExact(v) || PyList_GET_SIZE(v) != m) {
            ok = 0;
        }
        else {
            for (Py_ssize_t j = 0; ok && j < m; j++)
                ok = store_number(PyList_GET_ITEM(v, j), is_float, out, i * m + j);
        }
        Py_DECREF(v);
    }
    return ok;
}

static PyObject *
gather(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t m;
    int is_float;
    if (parse_arguments("gather", args, nargs, PyBUF_WRITABLE, &view, &m, &is_float) < 0)
        return NULL;
    int ok = fill(args[1], args[2], view.buf, m, is_float);
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

/* same_values(items, attr, value) -> bool: every item's `vars(item)[attr]` is `value`: the
 * same object, or (a float, int or bool `value`) of exactly its type and equal to it. */
static PyObject *
same_values(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_CheckExact(args[0]) || !PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "same_values(items: list, attr: str, value)");
        return NULL;
    }
    PyObject *items = args[0], *attr = args[1], *value = args[2];
    int by_value = PyFloat_CheckExact(value) || PyLong_CheckExact(value) || PyBool_Check(value);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *v = item_value(PyList_GET_ITEM(items, i), attr);
        int same = v == value;
        if (!same && v != NULL && by_value && Py_TYPE(v) == Py_TYPE(value)) {
            same = PyObject_RichCompareBool(v, value, Py_EQ);
            if (same < 0) {
                Py_DECREF(v);
                return NULL;
            }
        }
        Py_XDECREF(v);
        if (!same)
            Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

/* Put number k of `in` into slot k of list `list`, where it was read from: the item is left
 * alone when it already has that value (same type, same bits), and a float owned by the list
 * alone (reference count 1, so no one else can see it) gets the new value in place; otherwise
 * a new float or int replaces it. */
static int
put_number(PyObject *list, Py_ssize_t slot, int is_float, const char *in, Py_ssize_t k)
{
    PyObject *old = PyList_GET_ITEM(list, slot), *made;
    if (is_float) {
        double x = ((const double *)in)[k];
        if (PyFloat_CheckExact(old)) {
            double was = PyFloat_AS_DOUBLE(old);
            if (memcmp(&was, &x, sizeof x) == 0)
                return 0;
            if (Py_REFCNT(old) == 1) {
                ((PyFloatObject *)old)->ob_fval = x;
                return 0;
            }
        }
        made = PyFloat_FromDouble(x);
    }
    else {
        long long x = ((const long long *)in)[k];
        if (PyLong_CheckExact(old)) {
            int overflow = 0;
            long long was = PyLong_AsLongLongAndOverflow(old, &overflow);
            if (!overflow && was == x)
                return 0;
            PyErr_Clear();
        }
        made = PyLong_FromLongLong(x);
    }
    if (made == NULL)
        return -1;
    PyList_SET_ITEM(list, slot, made);
    Py_DECREF(old);
    return 0;
}

/* scatter(array, items, attr, row_length): gather's inverse, after a call that wrote into
 * the array: its numbers back into the list (or into the rows list `vars(item)[attr]` of each
 * item). The lists must still have the shape gather read. */
/* Put the numbers of `in` back into list `items` (see scatter): 0, or -1 with an exception set. */
static int
put_back(PyObject *items, PyObject *attr, const char *in, Py_ssize_t m, int is_float)
{
    Py_ssize_t n = PyList_GET_SIZE(items);
    if (attr != Py_None && m == 0) {
        PyErr_SetString(PyExc_TypeError, "scatter: an attribute is scattered as rows only");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (m == 0) {
            if (put_number(items, i, is_float, in, i) < 0)
                return -1;
            continue;
        }
        PyObject *row = item_value(PyList_GET_ITEM(items, i), attr);
        if (row == NULL || !PyList_CheckExact(row) || PyList_GET_SIZE(row) != m) {
            Py_XDECREF(row);
            PyErr_SetString(PyExc_RuntimeError, "scatter: a row changed during the call");
            return -1;
        }
        int failed = 0;
        for (Py_ssize_t j = 0; !failed && j < m; j++)
            failed = put_number(row, j, is_float, in, i * m + j) < 0;
        Py_DECREF(row);
        if (failed)
            return -1;
    }
    return 0;
}

static PyObject *
scatter(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t m;
    int is_float;
    if (parse_arguments("scatter", args, nargs, 0, &view, &m, &is_float) < 0)
        return NULL;
    int failed = put_back(args[1], args[2], view.buf, m, is_float) < 0;
    PyBuffer_Release(&view);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

/* What a compiled entry (codegen.entry_lists) calls for a list argument it reads itself, `n`
 * numbers long (n rows of m, m > 0): gather_list -> 1 (`out` filled) or 0 (a value of another
 * kind, or not n of them: the entry's guard miss, no exception); scatter_list -> 0, or -1 with
 * an exception set (the list no longer n long: code the kernel called into changed it). */
static int32_t
gather_list(PyObject *items, char *out, int64_t n, int64_t m, int32_t is_float)
{
    return PyList_GET_SIZE(items) == n && fill(items, Py_None, out, m, is_float);
}

static int
compare_pointers(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(PyObject *const *)a, y = (uintptr_t)*(PyObject *const *)b;
    return (x > y) - (x < y);
}

/* Append the objects of one part to `out`: the list itself, or (rows) each of its items. */
static Py_ssize_t
part_objects(PyObject *list, int64_t rows, PyObject **out, Py_ssize_t k)
{
    if (!rows) {
        out[k++] = list;
        return k;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        out[k++] = PyList_GET_ITEM(list, i);
    }
    return k;
}

static Py_ssize_t
parts_size(PyObject *const *lists, const int64_t *rows, int64_t count)
{
    Py_ssize_t n = 0;
    for (int64_t i = 0; i < count; i++) {
        n += rows[i] ? PyList_GET_SIZE(lists[i]) : 1;
    }
    return n;
}

/* lists_aliased(written, written_rows, n_written, others, others_rows, n_others): whether the
 * lists a call writes back are not one object each, or are also read by another path (the
 * loaded path's check, tracer.frontend.loader.scatter_targets): each part is a list itself, or
 * with its `rows` flag the lists that are its items.  The written objects must all differ, and
 * differ from every other object read.  Then CPython runs the call, where every write is seen
 * through each name.  (Unsure, when out of memory: 1.) */
static int32_t
lists_aliased(PyObject *const *written, const int64_t *written_rows, int64_t n_written,
              PyObject *const *others, const int64_t *others_rows, int64_t n_others)
{
    Py_ssize_t n = parts_size(written, written_rows, n_written);
    Py_ssize_t m = parts_size(others, others_rows, n_others);
    PyObject **objects = PyMem_Malloc((n + m > 0 ? n + m : 1) * sizeof(PyObject *));
    if (objects == NULL) {
        return 1;
    }
    Py_ssize_t k = 0;
    for (int64_t i = 0; i < n_written; i++) {
        k = part_objects(written[i], written_rows[i], objects, k);
    }
    for (int64_t i = 0; i < n_others; i++) {
        k = part_objects(others[i], others_rows[i], objects, k);
    }
    qsort(objects, n, sizeof(PyObject *), compare_pointers);
    int32_t aliased = 0;
    for (Py_ssize_t i = 1; !aliased && i < n; i++) {
        aliased = objects[i] == objects[i - 1];
    }
    for (Py_ssize_t j = n; !aliased && j < n + m; j++) {
        aliased = bsearch(&objects[j], objects, n, sizeof(PyObject *), compare_pointers) != NULL;
    }
    PyMem_Free(objects);
    return aliased;
}

/* list_of_numbers(data, n, kind): a new list of the n numbers at `data` (kind 0: float64 as
 * floats, 1: int64 as ints, 2: bools), the list of run-time length a compiled function returns;
 * NULL with an exception set if that fails. */
static PyObject *
list_of_numbers(const char *data, int64_t n, int32_t kind)
{
    PyObject *list = PyList_New(n);
    for (int64_t i = 0; list != NULL && i < n; i++) {
        PyObject *item;
        if (kind == 0) {
            item = PyFloat_FromDouble(((const double *)data)[i]);
        } else if (kind == 1) {
            item = PyLong_FromLongLong(((const long long *)data)[i]);
        } else {
            item = PyBool_FromLong(((const unsigned char *)data)[i]);
        }
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static int32_t
scatter_list(PyObject *items, const char *in, int64_t n, int64_t m, int32_t is_float)
{
    if (PyList_GET_SIZE(items) != n) {
        PyErr_SetString(PyExc_RuntimeError, "a list argument changed size during the call");
        return -1;
    }
    return put_back(items, Py_None, in, m, is_float);
}

/* ---------------------------------------------------------------- array.array arguments
 * What a compiled entry calls for an `array.array` argument it reads itself (codegen.entry_lists):
 *
 *     data = array_acquire(obj, view, typecode, n)   exactly an array.array of `typecode` and n items
 *     array_items(data, typecode, n, out)            its n items as float64 ('d', 'f') or int64
 *     array_scatter(obj, typecode, in, n)            after a call that wrote: the n numbers back
 *
 * array_acquire exports the array's buffer into `view` (the entry's own storage for a Py_buffer):
 * until the entry releases it (PyBuffer_Release), nothing can resize the array, so a kernel may
 * read its memory in place, with or without the GIL.  A miss (another type, typecode or length)
 * returns NULL with nothing exported and no exception set. */
static PyTypeObject *array_type;         /* array.array, found when the module loads */

static char *
array_acquire(PyObject *obj, Py_buffer *view, int32_t typecode, int64_t n)
{
    view->obj = NULL;
    if (Py_TYPE(obj) != array_type)
        return NULL;
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        view->obj = NULL;
        return NULL;
    }
    if (view->format == NULL || view->format[0] != (char)typecode || view->format[1] != '\0'
            || view->len != n * view->itemsize) {
        PyBuffer_Release(view);
        return NULL;
    }
    return view->buf;
}

#define CONVERT(from_type, to_type, from, to) \
    for (int64_t i = 0; i < n; i++) ((to_type *)(to))[i] = (to_type)((const from_type *)(from))[i]

/* The numbers at `in` (float64 for 'd' and 'f', else int64) as items of an array of `typecode`
 * at `out` (to_items), or the other way (from_items); n of them. */
static void
convert_items(const char *in, char *out, int32_t typecode, int64_t n, int to_items)
{
#define BOTH_WAYS(item_type, number_type) \
    if (to_items) { CONVERT(number_type, item_type, in, out); } else { CONVERT(item_type, number_type, in, out); }
    switch (typecode) {
    case 'd': memcpy(out, in, (size_t)n * sizeof(double)); break;
    case 'f': BOTH_WAYS(float, double); break;
    case 'b': BOTH_WAYS(signed char, long long); break;
    case 'B': BOTH_WAYS(unsigned char, long long); break;
    case 'h': BOTH_WAYS(short, long long); break;
    case 'H': BOTH_WAYS(unsigned short, long long); break;
    case 'i': BOTH_WAYS(int, long long); break;
    case 'I': BOTH_WAYS(unsigned int, long long); break;
    case 'l': BOTH_WAYS(long, long long); break;
    case 'q': BOTH_WAYS(long long, long long); break;
    default: break;           /* (the entry takes only these typecodes) */
    }
#undef BOTH_WAYS
}
#undef CONVERT

static void
array_items(const char *data, int32_t typecode, int64_t n, char *out)
{
    convert_items(data, out, typecode, n, 0);
}

/* 0, or -1 with an exception set where the array no longer has n items (code the kernel called
 * into resized it).  Each number fits its item: the traced stores checked it. */
static int32_t
array_scatter(PyObject *obj, int32_t typecode, const char *in, int64_t n)
{
    Py_buffer view;
    char *data = array_acquire(obj, &view, typecode, n);
    if (data == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "an array.array argument changed size during the call");
        return -1;
    }
    convert_items(in, data, typecode, n, 1);
    PyBuffer_Release(&view);
    return 0;
}

static PyMethodDef gather_methods[] = {
    {"scatter", (PyCFunction)(void (*)(void))scatter, METH_FASTCALL,
     "scatter(array, items, attr, row_length)\n--\n\n"
     "Write the numbers of `array` back into list `items` (or into the rows list\n"
     "attribute `attr` of each item), as gather read them: gather's inverse."},
    {"same_values", (PyCFunction)(void (*)(void))same_values, METH_FASTCALL,
     "same_values(items, attr, value)\n--\n\n"
     "Whether attribute `attr` of every item of list `items` is `value` (the same\n"
     "object, or a number of exactly its type equal to it)."},
    {"gather", (PyCFunction)(void (*)(void))gather, METH_FASTCALL,
     "gather(out, items, attr, row_length)\n--\n\n"
     "Copy the numbers of list `items` (or of attribute `attr` of each item; rows of\n"
     "row_length floats when > 0) into buffer `out`, checking each type exactly.\n"
     "False when a value has another type (out is then partly written)."},
    {NULL, NULL, 0, NULL},
};

int
gather_module_init(PyObject *module)
{
    PyObject *array_module = PyImport_ImportModule("array");
    if (array_module == NULL) {
        return -1;
    }
    array_type = (PyTypeObject *)PyObject_GetAttrString(array_module, "array");     /* (kept for good) */
    Py_DECREF(array_module);
    if (array_type != NULL && !PyType_Check(array_type)) {
        Py_CLEAR(array_type);
        PyErr_SetString(PyExc_ImportError, "array.array is not a type");
    }
    if (array_type == NULL) {
        return -1;
    }
    if (PyModule_AddFunctions(module, gather_methods) < 0
            || tools_add_address(module, "gather_list_address", (void *)(uintptr_t)&gather_list) < 0
            || tools_add_address(module, "scatter_list_address", (void *)(uintptr_t)&scatter_list) < 0
            || tools_add_address(module, "lists_aliased_address", (void *)(uintptr_t)&lists_aliased) < 0
            || tools_add_address(module, "list_of_numbers_address", (void *)(uintptr_t)&list_of_numbers) < 0
            || tools_add_address(module, "array_acquire_address", (void *)(uintptr_t)&array_acquire) < 0
            || tools_add_address(module, "array_items_address", (void *)(uintptr_t)&array_items) < 0
            || tools_add_address(module, "array_scatter_address", (void *)(uintptr_t)&array_scatter) < 0) {
        return -1;
    }
    return 0;
}
