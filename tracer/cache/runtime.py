"""The runtime's object code (codegen.runtime: the allocator, the signal check, pairwise sums),
stored like a specialization and loaded once per process, before any cached entry that calls it.

In a process that compiles, codegen.jit hands over the runtime it compiled (`adopt`): loaded
here with tracer.native.load_object, and stored. A later process loads it from the cache
(`runtime_addresses`) without LLVM; codegen.jit then uses that one too, so a process has one
runtime.
"""
from __future__ import annotations

import platform
import sys
import threading

from tracer import native
from tracer.cache.keys import digest, environment
from tracer.cache.store import current_store
from tracer.logs import cache_log

_lock = threading.Lock()
_loaded: list = []                 # [(LoadedObject, {name: address})] once loaded: kept for good


def linkable() -> bool:
    """Whether object code can be linked here without LLVM (tracer.native.load_object)."""
    return sys.platform.startswith("linux") and platform.machine() == "x86_64" and hasattr(native, "load_object")


def runtime_key() -> str:
    return digest("runtime", environment())


def runtime_exports() -> dict[str, int]:
    """The loaded runtime's functions by name ({} while none is loaded here)."""
    return _loaded[0][1] if _loaded else {}


def runtime_addresses() -> dict[str, int] | None:
    """The runtime's functions, loaded from the cache if need be; None where it is not stored."""
    with _lock:
        if _loaded:
            return _loaded[0][1]
        store = current_store()
        if store is None or not linkable():
            return None
        for path in store.entries(runtime_key()):
            got = store.read(path, runtime_key())
            if got is None:
                continue
            meta, code = got
            try:
                symbols = {name: getattr(native, attr) for name, attr in meta["imports"].items()
                           if attr.endswith("_address")}
                loaded, addresses = native.load_object(code, symbols, tuple(meta["exports"]))
            except (KeyError, TypeError, ValueError, ImportError, AttributeError) as exc:
                cache_log.warning("compile cache: the runtime in %s cannot be used (%s): a miss", path, exc)
                continue
            _loaded.append((loaded, dict(zip(meta["exports"], addresses))))
            return _loaded[0][1]
    return None


def adopt(code: bytes, exports: tuple[str, ...], imports: dict[str, int]) -> dict[str, int] | None:
    """Load the runtime codegen.jit compiled (its object code) and store it; its functions'
    addresses, or None where it cannot be linked here (codegen.jit then links it itself)."""
    if not linkable():
        return None
    names = {address: name for name in dir(native) if name.endswith("_address")
             for address in [getattr(native, name)]}
    described = {symbol: names.get(address) for symbol, address in imports.items()}
    with _lock:
        if _loaded:
            return _loaded[0][1]
        try:
            loaded, addresses = native.load_object(code, imports, exports)
        except (ImportError, ValueError) as exc:     # (an object LLVM made that the loader refuses)
            cache_log.warning("compile cache: the runtime cannot be linked here (%s): the cache is not used", exc)
            return None
        _loaded.append((loaded, dict(zip(exports, addresses))))
    store = current_store()
    if store is not None and None not in described.values():
        store.write(runtime_key(), "runtime", {"exports": list(exports), "imports": described}, code)
    return _loaded[0][1]
