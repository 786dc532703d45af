"""The compile cache: specializations compiled once, stored on disk, loaded by later processes
without tracing or LLVM (docs/cache.md).

    keys.py      what a stored specialization depends on, as text alike in every process
    store.py     the folder: atomic files with a checked header, private, bounded in size
    entries.py   specializations to and from files: guards, imports, linking
"""
