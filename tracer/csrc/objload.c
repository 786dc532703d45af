/* tracer.native.load_object: load a relocatable ELF object into this process (see objload.h).
 *
 * Layout: one anonymous mapping in three page-aligned parts, each section at its alignment:
 *     R+X   the SHF_EXECINSTR sections, then the stubs (`jmp *0(%rip)` and the 8-byte address)
 *           for calls (PLT32) to external functions too far for a rel32
 *     R     the other read-only sections, then the GOT: one slot per symbol that GOTPCREL*
 *           relocations use, holding its address (the loads are not relaxed)
 *     R+W   the writable sections (SHT_NOBITS ones zero-filled)
 * The mapping is under 1 GB, so every PC-relative reference inside it fits in 32 bits.  Not
 * loaded: the sections that are not SHF_ALLOC, .eh_frame and notes (nor their relocations).
 * The image is untrusted: every offset, size, index and string is checked before use
 * (ValueError "malformed object: ..."); what is well formed but not supported (a relocation
 * type, TLS, constructors, common symbols, a symbol not found) is an ImportError.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1           /* RTLD_DEFAULT, MAP_ANONYMOUS */
#endif
#include "objload.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    unsigned char *base;
    Py_ssize_t size;
} LoadedObject;

static PyTypeObject LoadedObject_Type;

#if defined(__linux__) && defined(__x86_64__)
#define OBJLOAD_SUPPORTED 1
#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef R_X86_64_GOTPCRELX
#define R_X86_64_GOTPCRELX 41
#define R_X86_64_REX_GOTPCRELX 42
#endif
#ifndef SHT_X86_64_UNWIND
#define SHT_X86_64_UNWIND 0x70000001
#endif

#define MAX_ALIGN ((uint64_t)1 << 20)
#define MAX_SIZE ((uint64_t)1 << 30)    /* of the mapping: a rel32 inside it always fits */
#define STUB_SIZE 16
enum { TEXT, RODATA, DATA, PARTS };

typedef struct {
    uint64_t value;             /* its address (its offset in `section` until the mapping exists) */
    int64_t got, stub;          /* its GOT slot and its stub, or -1 */
    unsigned section;           /* its loaded section, or 0: `value` is an address */
    char needed, external, function;
} Symbol;

typedef struct {
    const unsigned char *data;
    uint64_t len;
    PyObject *symbols;          /* name -> address */
    Elf64_Ehdr eh;
    unsigned shnum;
    Elf64_Shdr *sh;             /* copies of the section headers */
    int *part;                  /* per section: TEXT, RODATA, DATA, or -1: not loaded */
    uint64_t *at;               /* per section: its offset in the mapping */
    const char *shstr;          /* the section names */
    uint64_t shstr_size;
    unsigned symtab;            /* the symbol table's section, 0: none */
    uint64_t nsyms;
    const char *str;            /* the symbol names */
    uint64_t str_size;
    Symbol *syms;               /* nsyms + 1 */
    uint64_t got_count, stub_count, got_at, stub_at;
    uint64_t part_at[PARTS], part_end[PARTS], size, align, page;
    unsigned char *base;
} Loader;

/* Raises `type` with a formatted message; -1. */
static int
fail(PyObject *type, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    PyErr_FormatV(type, format, args);
    va_end(args);
    return -1;
}

static int
malformed(const char *what)
{
    return fail(PyExc_ValueError, "malformed object: %s", what);
}

static int
in_image(const Loader *L, uint64_t offset, uint64_t size)
{
    return offset <= L->len && size <= L->len - offset;
}

/* The NUL-terminated string at `offset` of a string table, or NULL. */
static const char *
string_at(const char *table, uint64_t size, uint64_t offset)
{
    return offset < size && memchr(table + offset, 0, size - offset) != NULL ? table + offset : NULL;
}

static uint64_t
align_up(uint64_t x, uint64_t alignment)
{
    return (x + alignment - 1) & ~(alignment - 1);
}

static int
read_header(Loader *L)
{
    const Elf64_Ehdr *e = &L->eh;
    if (L->len < sizeof L->eh)
        return malformed("shorter than an ELF header");
    memcpy(&L->eh, L->data, sizeof L->eh);
    L->shnum = e->e_shnum;
    if (memcmp(e->e_ident, ELFMAG, SELFMAG) != 0 || e->e_ident[EI_CLASS] != ELFCLASS64
            || e->e_ident[EI_DATA] != ELFDATA2LSB) {
        return malformed("not a 64-bit little-endian ELF file");
    }
    if (e->e_type != ET_REL || e->e_machine != EM_X86_64)
        return malformed("not a relocatable x86-64 object");
    if (e->e_shentsize != sizeof(Elf64_Shdr) || L->shnum == 0
            || !in_image(L, e->e_shoff, (uint64_t)L->shnum * sizeof(Elf64_Shdr))) {
        return malformed("bad section header table");
    }
    if (e->e_shstrndx == SHN_UNDEF || e->e_shstrndx >= L->shnum)
        return malformed("bad section name table index");
    return 0;
}

/* The section headers: their bytes inside the image, their alignments, their names. */
static int
read_sections(Loader *L)
{
    L->sh = PyMem_Calloc(L->shnum, sizeof *L->sh);
    L->part = PyMem_Calloc(L->shnum, sizeof *L->part);
    L->at = PyMem_Calloc(L->shnum, sizeof *L->at);
    if (L->sh == NULL || L->part == NULL || L->at == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(L->sh, L->data + L->eh.e_shoff, L->shnum * sizeof *L->sh);
    for (unsigned i = 0; i < L->shnum; i++) {
        const Elf64_Shdr *s = &L->sh[i];
        if (s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL && !in_image(L, s->sh_offset, s->sh_size))
            return malformed("a section outside the image");
        if ((s->sh_addralign & (s->sh_addralign - 1)) != 0 || s->sh_addralign > MAX_ALIGN)
            return malformed("bad section alignment");
    }
    const Elf64_Shdr *names = &L->sh[L->eh.e_shstrndx];
    if (names->sh_type != SHT_STRTAB)
        return malformed("section names not in a string table");
    L->shstr = (const char *)L->data + names->sh_offset;
    L->shstr_size = names->sh_size;
    for (unsigned i = 0; i < L->shnum; i++) {
        if (string_at(L->shstr, L->shstr_size, L->sh[i].sh_name) == NULL)
            return malformed("bad section name");
    }
    return 0;
}

static int
is_constructors(const Elf64_Shdr *s, const char *name)
{
    static const char *const prefixes[] = {".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors"};
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
        if (strncmp(name, prefixes[k], strlen(prefixes[k])) == 0)
            return 1;
    }
    return s->sh_type == SHT_INIT_ARRAY || s->sh_type == SHT_FINI_ARRAY || s->sh_type == SHT_PREINIT_ARRAY;
}

/* Which part of the mapping each section goes to, or -1: not loaded. */
static int
classify(Loader *L)
{
    for (unsigned i = 0; i < L->shnum; i++) {
        const Elf64_Shdr *s = &L->sh[i];
        const char *name = L->shstr + s->sh_name;
        L->part[i] = -1;
        if (is_constructors(s, name))
            return fail(PyExc_ImportError, "constructors are not supported (section %s)", name);
        if (!(s->sh_flags & SHF_ALLOC) || s->sh_type == SHT_X86_64_UNWIND || s->sh_type == SHT_NOTE
                || strcmp(name, ".eh_frame") == 0) {
            continue;
        }
        if (s->sh_flags & SHF_TLS)
            return fail(PyExc_ImportError, "thread-local storage is not supported (section %s)", name);
        if (s->sh_type != SHT_PROGBITS && s->sh_type != SHT_NOBITS)
            return fail(PyExc_ImportError, "section %s of type %u is not supported", name, (unsigned)s->sh_type);
        if (s->sh_size > MAX_SIZE)
            return fail(PyExc_ImportError, "section %s is too large to load", name);
        L->part[i] = (s->sh_flags & SHF_EXECINSTR) ? TEXT : (s->sh_flags & SHF_WRITE) ? DATA : RODATA;
    }
    return 0;
}

static int
read_symtab(Loader *L)
{
    for (unsigned i = L->shnum - 1; i > 0; i--)      /* the first (the relocations name theirs) */
        L->symtab = L->sh[i].sh_type == SHT_SYMTAB ? i : L->symtab;
    if (L->symtab == 0)
        return 0;
    const Elf64_Shdr *s = &L->sh[L->symtab];
    if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_size % sizeof(Elf64_Sym) != 0 || s->sh_link == 0
            || s->sh_link >= L->shnum || L->sh[s->sh_link].sh_type != SHT_STRTAB) {
        return malformed("bad symbol table");
    }
    L->nsyms = s->sh_size / sizeof(Elf64_Sym);
    L->str = (const char *)L->data + L->sh[s->sh_link].sh_offset;
    L->str_size = L->sh[s->sh_link].sh_size;
    L->syms = PyMem_Calloc(L->nsyms + 1, sizeof *L->syms);
    if (L->syms == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint64_t i = 0; i <= L->nsyms; i++)
        L->syms[i].got = L->syms[i].stub = -1;
    return 0;
}

/* Symbol i (0 < i < nsyms). */
static Elf64_Sym
symbol(const Loader *L, uint64_t i)
{
    Elf64_Sym sym;
    memcpy(&sym, L->data + L->sh[L->symtab].sh_offset + i * sizeof sym, sizeof sym);
    return sym;
}

static const char *
symbol_name(const Loader *L, const Elf64_Sym *sym)
{
    return string_at(L->str, L->str_size, sym->st_name);
}

/* An undefined symbol's address: from `symbols`, else from the process (0: a weak one missing). */
static int
lookup(Loader *L, const Elf64_Sym *sym, uint64_t *value)
{
    const char *name = symbol_name(L, sym);
    if (name == NULL || name[0] == '\0')
        return malformed("bad symbol name");
    PyObject *key = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "surrogateescape");
    PyObject *found = key != NULL ? PyDict_GetItemWithError(L->symbols, key) : NULL;   /* borrowed */
    Py_XDECREF(key);
    if (found != NULL) {
        void *address = PyLong_AsVoidPtr(found);
        *value = (uintptr_t)address;
        return address == NULL && PyErr_Occurred() ? -1 : 0;
    }
    if (PyErr_Occurred())
        return -1;
    *value = (uintptr_t)dlsym(RTLD_DEFAULT, name);
    if (*value == 0 && ELF64_ST_BIND(sym->st_info) != STB_WEAK)
        return fail(PyExc_ImportError, "undefined symbol: %s", name);
    return 0;
}

/* Checks a defined symbol: in a loaded section, inside it. */
static int
defined_in(const Loader *L, const Elf64_Sym *sym)
{
    if (sym->st_shndx == SHN_COMMON)
        return fail(PyExc_ImportError, "common symbols are not supported");
    if (sym->st_shndx >= L->shnum)
        return malformed("bad section index of a symbol");
    if (L->part[sym->st_shndx] < 0) {
        return fail(PyExc_ImportError, "a symbol in section %s, which is not loaded",
                    L->shstr + L->sh[sym->st_shndx].sh_name);
    }
    if (sym->st_value > L->sh[sym->st_shndx].sh_size)
        return malformed("a symbol outside its section");
    return 0;
}

/* Symbol i, which a relocation uses: its address, or its section and offset there. */
static int
resolve(Loader *L, uint64_t i)
{
    Symbol *y = &L->syms[i];
    y->needed = y->external = 1;
    if (i == 0)
        return 0;                           /* no symbol: 0 */
    Elf64_Sym sym = symbol(L, i);
    y->function = ELF64_ST_TYPE(sym.st_info) == STT_FUNC;
    y->value = sym.st_value;
    if (sym.st_shndx == SHN_UNDEF)
        return lookup(L, &sym, &y->value);
    if (sym.st_shndx == SHN_ABS)
        return 0;
    y->external = 0;
    y->section = sym.st_shndx;
    return defined_in(L, &sym);
}

/* The bytes a relocation type patches, or -1: not supported. */
static int
width_of(uint32_t type)
{
    switch (type) {
    case R_X86_64_NONE:
        return 0;
    case R_X86_64_64: case R_X86_64_PC64:
        return 8;
    case R_X86_64_PC32: case R_X86_64_PLT32: case R_X86_64_32: case R_X86_64_32S:
    case R_X86_64_GOTPCREL: case R_X86_64_GOTPCRELX: case R_X86_64_REX_GOTPCRELX:
        return 4;
    default:
        return -1;
    }
}

typedef int (*rela_fn)(Loader *L, const Elf64_Rela *r, unsigned target);

/* Calls fn on every relocation of a loaded section. */
static int
each_rela(Loader *L, rela_fn fn)
{
    for (unsigned i = 0; i < L->shnum; i++) {
        const Elf64_Shdr *s = &L->sh[i];
        if (s->sh_type != SHT_RELA && s->sh_type != SHT_REL)
            continue;
        if (s->sh_info >= L->shnum)
            return malformed("relocations of no section");
        if (L->part[s->sh_info] < 0)
            continue;
        if (s->sh_type == SHT_REL)
            return fail(PyExc_ImportError, "REL relocations are not supported");
        if (L->symtab == 0 || s->sh_link != L->symtab || s->sh_entsize != sizeof(Elf64_Rela)
                || s->sh_size % sizeof(Elf64_Rela) != 0) {
            return malformed("bad relocation section");
        }
        for (uint64_t k = 0; k < s->sh_size / sizeof(Elf64_Rela); k++) {
            Elf64_Rela r;
            memcpy(&r, L->data + s->sh_offset + k * sizeof r, sizeof r);
            if (fn(L, &r, s->sh_info) < 0)
                return -1;
        }
    }
    return 0;
}

/* Checks a relocation, resolves its symbol, counts the GOT's slots and the stubs. */
static int
scan_one(Loader *L, const Elf64_Rela *r, unsigned target)
{
    uint32_t type = ELF64_R_TYPE(r->r_info);
    uint64_t i = ELF64_R_SYM(r->r_info);
    const Elf64_Shdr *t = &L->sh[target];
    int width = width_of(type);
    if (width < 0)
        return fail(PyExc_ImportError, "relocation type %u is not supported", (unsigned)type);
    if ((t->sh_type == SHT_NOBITS && width > 0) || r->r_offset > t->sh_size
            || (uint64_t)width > t->sh_size - r->r_offset) {
        return malformed("a relocation outside its section");
    }
    if (i != 0 && i >= L->nsyms)
        return malformed("bad symbol index");
    Symbol *y = &L->syms[i];
    if (!y->needed && resolve(L, i) < 0)
        return -1;
    if ((type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX) && y->got < 0)
        y->got = (int64_t)L->got_count++;
    if ((type == R_X86_64_PLT32 || (type == R_X86_64_PC32 && y->function)) && y->external && y->stub < 0)
        y->stub = (int64_t)L->stub_count++;
    return 0;
}

/* Each loaded section's offset, the stubs' and the GOT's; the mapping's size and alignment. */
static int
layout(Loader *L)
{
    uint64_t at = 0;
    L->page = (uint64_t)sysconf(_SC_PAGESIZE);
    L->align = L->page;
    for (int p = 0; p < PARTS; p++) {
        L->part_at[p] = at = align_up(at, L->page);
        for (unsigned i = 0; i < L->shnum; i++) {
            uint64_t alignment = L->sh[i].sh_addralign > 1 ? L->sh[i].sh_addralign : 1;
            if (L->part[i] == p) {
                L->align = alignment > L->align ? alignment : L->align;
                L->at[i] = at = align_up(at, alignment);
                at += L->sh[i].sh_size;
            }
        }
        if (p == TEXT && L->stub_count > 0) {
            L->stub_at = at = align_up(at, STUB_SIZE);
            at += STUB_SIZE * L->stub_count;
        }
        if (p == RODATA && L->got_count > 0) {
            L->got_at = at = align_up(at, 8);
            at += 8 * L->got_count;
        }
        L->part_end[p] = at;
        if (at > MAX_SIZE)
            return fail(PyExc_ImportError, "the object is too large to load");
    }
    L->size = at > 0 ? align_up(at, L->page) : L->page;
    return 0;
}

/* The mapping, aligned for every section, with the sections' bytes. */
static int
map_image(Loader *L)
{
    size_t length = L->size + (L->align - L->page);
    unsigned char *raw = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    L->base = (unsigned char *)(uintptr_t)align_up((uintptr_t)raw, L->align);
    if (L->base > raw)
        munmap(raw, (size_t)(L->base - raw));
    if (raw + length > L->base + L->size)
        munmap(L->base + L->size, (size_t)(raw + length - (L->base + L->size)));
    for (unsigned i = 0; i < L->shnum; i++) {
        if (L->part[i] >= 0 && L->sh[i].sh_type == SHT_PROGBITS)
            memcpy(L->base + L->at[i], L->data + L->sh[i].sh_offset, L->sh[i].sh_size);
    }
    return 0;
}

/* The symbols' addresses, then the GOT's slots and the stubs. */
static void
place_symbols(Loader *L)
{
    static const unsigned char jmp[6] = {0xff, 0x25, 0, 0, 0, 0};     /* jmp *0(%rip) */
    static const unsigned char int3[2] = {0xcc, 0xcc};
    for (uint64_t i = 0; L->syms != NULL && i <= L->nsyms; i++) {
        Symbol *y = &L->syms[i];
        if (y->needed && y->section != 0)
            y->value += (uintptr_t)L->base + L->at[y->section];
        if (y->needed && y->got >= 0)
            memcpy(L->base + L->got_at + 8 * (uint64_t)y->got, &y->value, 8);
        if (y->needed && y->stub >= 0) {
            unsigned char *stub = L->base + L->stub_at + STUB_SIZE * (uint64_t)y->stub;
            memcpy(stub, jmp, 6);
            memcpy(stub + 6, &y->value, 8);
            memcpy(stub + 14, int3, 2);
        }
    }
}

static int
too_far(const Loader *L, const Elf64_Rela *r, unsigned target)
{
    uint64_t i = ELF64_R_SYM(r->r_info);
    Elf64_Sym sym = {0};
    if (i != 0)
        sym = symbol(L, i);                 /* (i < nsyms: scan_one checked it) */
    const char *name = i != 0 ? symbol_name(L, &sym) : NULL;
    return fail(PyExc_ImportError, "relocation type %u at %s+%llu: %s is out of its range",
                (unsigned)ELF64_R_TYPE(r->r_info), L->shstr + L->sh[target].sh_name,
                (unsigned long long)r->r_offset, name != NULL && name[0] != '\0' ? name : "the symbol");
}

/* Patches one relocation (checked by scan_one). */
static int
apply_one(Loader *L, const Elf64_Rela *r, unsigned target)
{
    uint32_t type = ELF64_R_TYPE(r->r_info);
    const Symbol *y = &L->syms[ELF64_R_SYM(r->r_info)];
    unsigned char *place = L->base + L->at[target] + r->r_offset;
    uint64_t p = (uintptr_t)place, s = y->value, a = (uint64_t)r->r_addend, v;
    int64_t relative;
    switch (type) {
    case R_X86_64_NONE:
        return 0;
    case R_X86_64_64: case R_X86_64_PC64:
        v = type == R_X86_64_64 ? s + a : s + a - p;
        memcpy(place, &v, 8);
        return 0;
    case R_X86_64_32: case R_X86_64_32S:
        v = s + a;
        if (type == R_X86_64_32 ? v > UINT32_MAX : (int64_t)v != (int32_t)v)
            return too_far(L, r, target);
        memcpy(place, &(uint32_t){(uint32_t)v}, 4);
        return 0;
    case R_X86_64_PC32: case R_X86_64_PLT32:
        relative = (int64_t)(s + a - p);
        if (relative != (int32_t)relative && y->stub >= 0)
            s = (uintptr_t)L->base + L->stub_at + STUB_SIZE * (uint64_t)y->stub;
        break;
    default:                                /* GOTPCREL* */
        s = (uintptr_t)L->base + L->got_at + 8 * (uint64_t)y->got;
        break;
    }
    relative = (int64_t)(s + a - p);
    if (relative != (int32_t)relative)
        return too_far(L, r, target);
    memcpy(place, &(uint32_t){(uint32_t)relative}, 4);
    return 0;
}

static int
protect(Loader *L)
{
    static const int prot[PARTS] = {PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE};
    for (int p = 0; p < PARTS; p++) {
        uint64_t end = align_up(L->part_end[p], L->page);
        if (end > L->part_at[p] && mprotect(L->base + L->part_at[p], end - L->part_at[p], prot[p]) != 0) {
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
    }
    return 0;
}

/* The address of the global symbol `name` the object defines. */
static int
export_address(const Loader *L, const char *name, uint64_t *address)
{
    for (uint64_t i = 1; i < L->nsyms; i++) {
        Elf64_Sym sym = symbol(L, i);
        int bind = ELF64_ST_BIND(sym.st_info);
        if ((bind != STB_GLOBAL && bind != STB_WEAK) || sym.st_shndx == SHN_UNDEF)
            continue;
        const char *found = symbol_name(L, &sym);
        if (found == NULL)
            return malformed("bad symbol name");
        if (strcmp(found, name) != 0)
            continue;
        if (sym.st_shndx != SHN_ABS && defined_in(L, &sym) < 0)
            return -1;
        *address = sym.st_value + (sym.st_shndx == SHN_ABS ? 0 : (uintptr_t)L->base + L->at[sym.st_shndx]);
        return 0;
    }
    return fail(PyExc_ImportError, "the object does not define %s", name);
}

static PyObject *
export_addresses(const Loader *L, PyObject *exports)
{
    PyObject *addresses = PyTuple_New(PyTuple_GET_SIZE(exports));
    for (Py_ssize_t k = 0; addresses != NULL && k < PyTuple_GET_SIZE(exports); k++) {
        PyObject *item = PyTuple_GET_ITEM(exports, k), *value = NULL;
        Py_ssize_t length;
        uint64_t address = 0;
        const char *name = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &length) : NULL;
        if (name == NULL && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "load_object: exports must be strings");
        } else if (name != NULL && (size_t)length != strlen(name)) {
            PyErr_Format(PyExc_ImportError, "the object does not define %R", item);
        } else if (name != NULL && export_address(L, name, &address) == 0) {
            value = PyLong_FromUnsignedLongLong(address);
        }
        if (value == NULL) {
            Py_CLEAR(addresses);
            break;
        }
        PyTuple_SET_ITEM(addresses, k, value);
    }
    return addresses;
}

/* (LoadedObject, addresses): the LoadedObject owns the mapping from here on. */
static PyObject *
finish(Loader *L, PyObject *exports)
{
    PyObject *addresses = export_addresses(L, exports);
    LoadedObject *loaded = addresses != NULL ? PyObject_New(LoadedObject, &LoadedObject_Type) : NULL;
    if (loaded == NULL) {
        Py_XDECREF(addresses);
        return NULL;
    }
    loaded->base = L->base;
    loaded->size = (Py_ssize_t)L->size;
    L->base = NULL;
    PyObject *result = PyTuple_Pack(2, (PyObject *)loaded, addresses);
    Py_DECREF(loaded);
    Py_DECREF(addresses);
    return result;
}

static PyObject *
objload_load_object(PyObject *module, PyObject *args)
{
    PyObject *image, *symbols, *exports, *result = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!:load_object", &PyBytes_Type, &image, &PyDict_Type, &symbols,
                          &PyTuple_Type, &exports)) {
        return NULL;
    }
    Loader L = {.data = (const unsigned char *)PyBytes_AS_STRING(image),
                .len = (uint64_t)PyBytes_GET_SIZE(image), .symbols = symbols};
    if (read_header(&L) == 0 && read_sections(&L) == 0 && classify(&L) == 0 && read_symtab(&L) == 0
            && each_rela(&L, scan_one) == 0 && layout(&L) == 0 && map_image(&L) == 0) {
        place_symbols(&L);
        if (each_rela(&L, apply_one) == 0 && protect(&L) == 0)
            result = finish(&L, exports);
    }
    if (L.base != NULL)
        munmap(L.base, L.size);
    PyMem_Free(L.sh);
    PyMem_Free(L.part);
    PyMem_Free(L.at);
    PyMem_Free(L.syms);
    return result;
}

#else

static PyObject *
objload_load_object(PyObject *module, PyObject *args)
{
    PyErr_SetString(PyExc_NotImplementedError, "load_object: only on Linux x86-64");
    return NULL;
}

#endif

static void
loaded_dealloc(LoadedObject *self)
{
#ifdef OBJLOAD_SUPPORTED
    if (self->base != NULL)
        munmap(self->base, (size_t)self->size);
#endif
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
loaded_size(LoadedObject *self, void *unused)
{
    return PyLong_FromSsize_t(self->size);
}

static PyObject *
loaded_address(LoadedObject *self, void *unused)
{
    return PyLong_FromVoidPtr(self->base);
}

static PyGetSetDef loaded_getset[] = {
    {"size", (getter)loaded_size, NULL, "The bytes mapped.", NULL},
    {"address", (getter)loaded_address, NULL, "Where they are mapped.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LoadedObject_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tracer.native.LoadedObject",
    .tp_basicsize = sizeof(LoadedObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_doc = "The memory of an object load_object loaded: unmapped when this is dropped.",
    .tp_dealloc = (destructor)loaded_dealloc,
    .tp_getset = loaded_getset,
};

static PyMethodDef objload_methods[] = {
    {"load_object", objload_load_object, METH_VARARGS,
     "load_object(image, symbols, exports, /)\n--\n\n"
     "Load a relocatable x86-64 ELF object (bytes) into memory, its undefined symbols from the\n"
     "dict `symbols` (name -> address), else from the process.  Returns (LoadedObject, the\n"
     "addresses of the global symbols named in the tuple `exports`); keep the LoadedObject while\n"
     "the code may run.  ValueError: a malformed image; ImportError: what is not supported, or\n"
     "a symbol missing."},
    {NULL, NULL, 0, NULL},
};

int
objload_module_init(PyObject *module)
{
    if (PyType_Ready(&LoadedObject_Type) < 0 || PyModule_AddFunctions(module, objload_methods) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "LoadedObject", (PyObject *)&LoadedObject_Type);
}
