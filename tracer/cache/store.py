"""The cache folder: files of compiled code, written atomically, read only after their header
checks out, bounded in size.

A file is

    magic "TRACERC\\0" | format (u32) | key length (u32) | meta length (u32) | payload length (u64)
    | sha256 of key + meta + payload (32 bytes) | key (ascii) | meta (JSON) | payload (object code)

and is used only when all of that holds: its magic and format, the full key the reader asked for,
lengths that add up to the file's size, and the checksum. Anything else is a miss with one
warning, and the file is removed (a later compile writes it again). Nothing in a file is parsed
(not even its JSON) before those checks.

A cache file is native code: whoever can write the folder can run code in the user's processes.
So the folder is made private (0700), and a folder or file owned by another user, or writable by
others, is refused with a warning (the cache is then off for the process, or the file a miss).

Many processes may fill the cache at once: each writes a temporary file and renames it into
place, so a reader sees a whole file or none. The folder is kept under `TRACER_CACHE_SIZE` bytes
(default 512 MB) by removing the least recently used files (a hit refreshes a file's mtime).
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import stat
import struct
import sys
import time

from tracer import native
from tracer.cache.keys import FORMAT
from tracer.logs import cache_log

MAGIC = b"TRACERC\0"
HEADER = struct.Struct("<8sIIIQ32s")
SUFFIX = ".tco"
DEFAULT_SIZE = 512 << 20
STALE_TEMP_SECONDS = 3600


def default_folder() -> str:
    """TRACER_CACHE_DIR, else the platform's user cache folder (XDG_CACHE_HOME, ~/Library/Caches,
    %LOCALAPPDATA%) + /tracer."""
    chosen = os.environ.get("TRACER_CACHE_DIR", "").strip()
    if chosen:
        return os.path.abspath(os.path.expanduser(chosen))
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    elif sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "tracer")


def enabled_by_environment() -> bool:
    return os.environ.get("TRACER_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def size_bound() -> int:
    try:
        return int(os.environ.get("TRACER_CACHE_SIZE", DEFAULT_SIZE))
    except ValueError:
        return DEFAULT_SIZE


class Store:
    """One cache folder. Every method is best effort: an OSError is a miss (or a store skipped)."""

    def __init__(self, folder: str):
        self.folder = folder
        self._usable: bool | None = None

    # ------------------------------------------------------------------ safety
    def usable(self) -> bool:
        """Whether the folder is ours and private (made so if absent); said once if not."""
        if self._usable is None:
            self._usable = self._make_private()
        return self._usable

    def _make_private(self) -> bool:
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            return _private(self.folder, "folder")
        except OSError as exc:
            cache_log.warning("the compile cache is off: %s cannot be made (%s)", self.folder, exc)
            return False

    # ------------------------------------------------------------------ reading
    def entries(self, key: str) -> list[str]:
        """The files stored under `key`, most recently used first."""
        folder = os.path.join(self.folder, key)
        if not self.usable() or not os.path.isdir(folder) or not _private(folder, "folder"):
            return []
        try:
            found = [e for e in os.scandir(folder) if e.name.endswith(SUFFIX)]
            found.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
        except OSError:
            return []
        return [e.path for e in found]

    def read(self, path: str, key: str) -> tuple[dict, bytes] | None:
        """(meta, payload) of the file at `path`, if it is whole, ours and made for `key`."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None                  # removed meanwhile (evicted): a miss
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or not _owned_and_private(st):
                cache_log.warning("compile cache: %s is not a private file of this user: ignored", path)
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read()
        except OSError:
            return None
        finally:
            os.close(fd)
        problem, parts = _check(data, key)
        if problem:
            cache_log.warning("compile cache: %s is %s: removed (a miss)", path, problem)
            _remove(path)
            return None
        meta_bytes, payload = parts
        try:
            meta = json.loads(meta_bytes)
        except ValueError:
            meta = None
        if type(meta) is not dict:
            cache_log.warning("compile cache: %s has no description: removed (a miss)", path)
            _remove(path)
            return None
        try:
            os.utime(path)               # recently used: the last to be evicted
        except OSError:
            pass
        return meta, payload

    # ------------------------------------------------------------------ writing
    def write(self, key: str, name: str, meta: dict, payload: bytes) -> str | None:
        """Store one file under `key` (atomically); returns its path, None if it could not be."""
        if not self.usable():
            return None
        folder = os.path.join(self.folder, key)
        path = os.path.join(folder, name + SUFFIX)
        temp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if not _private(folder, "folder"):
                return None
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(encode(key, meta, payload))
            os.replace(temp, path)
        except OSError as exc:
            cache_log.info("compile cache: %s not stored (%s)", path, exc)
            _remove(temp)
            return None
        self.evict(size_bound())
        return path

    # ------------------------------------------------------------------ the whole folder
    def files(self) -> list[os.DirEntry]:
        """Every cache and temporary file, by key folder."""
        found = []
        if not os.path.isdir(self.folder):
            return found
        try:
            for sub in os.scandir(self.folder):
                if sub.is_dir(follow_symlinks=False):
                    found.extend(e for e in os.scandir(sub.path) if e.is_file(follow_symlinks=False))
        except OSError:
            pass
        return found

    def evict(self, bound: int) -> int:
        """Remove the least recently used files until the folder holds at most `bound` bytes (and
        temporary files left by a process that died). Returns how many were removed."""
        now = time.time()
        files, removed = [], 0
        for e in self.files():
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if e.name.endswith(".tmp"):
                if now - st.st_mtime > STALE_TEMP_SECONDS:
                    removed += _remove(e.path)
                continue
            files.append((st.st_mtime_ns, st.st_size, e.path))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= bound:
                break
            removed += _remove(path)
            total -= size
        return removed

    def info(self) -> dict:
        files = [e for e in self.files() if e.name.endswith(SUFFIX)]
        size = 0
        for e in files:
            try:
                size += e.stat(follow_symlinks=False).st_size
            except OSError:
                pass
        keys = {os.path.basename(os.path.dirname(e.path)) for e in files}
        return {"folder": self.folder, "files": len(files), "functions": len(keys), "bytes": size,
                "bound": size_bound(), "enabled": enabled_by_environment()}

    def clear(self) -> int:
        """Remove every file (and the emptied key folders); returns how many files."""
        removed = sum(_remove(e.path) for e in self.files())
        if os.path.isdir(self.folder):
            for sub in os.scandir(self.folder):
                if sub.is_dir(follow_symlinks=False):
                    try:
                        os.rmdir(sub.path)
                    except OSError:
                        pass
        return removed


# ---------------------------------------------------------------------- the file format
def encode(key: str, meta: dict, payload: bytes) -> bytes:
    k, m = key.encode("ascii"), json.dumps(meta, separators=(",", ":")).encode()
    checksum = hashlib.sha256(k + m + payload).digest()
    return HEADER.pack(MAGIC, FORMAT, len(k), len(m), len(payload), checksum) + k + m + payload


def _check(data: bytes, key: str) -> tuple[str, tuple | None]:
    """('', (meta bytes, payload)) for a whole file made for `key`, else (what is wrong, None)."""
    if len(data) < HEADER.size:
        return "truncated", None
    magic, version, nk, nm, np_, checksum = HEADER.unpack_from(data)
    if magic != MAGIC:
        return "not a tracer cache file", None
    if version != FORMAT:
        return f"of format {version}, not {FORMAT}", None
    if HEADER.size + nk + nm + np_ != len(data):
        return "truncated or padded", None
    body = data[HEADER.size:]
    if body[:nk] != key.encode("ascii"):
        return "made for another key", None
    if hashlib.sha256(body).digest() != checksum:
        return "corrupted (its checksum differs)", None
    return "", (body[nk:nk + nm], body[nk + nm:])


def _owned_and_private(st: os.stat_result) -> bool:
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return mine and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _private(path: str, what: str) -> bool:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode) and _owned_and_private(st):
        return True
    cache_log.warning("the compile cache is not used: the %s %s is not a private folder of this user", what, path)
    return False


def _remove(path: str) -> int:
    try:
        os.remove(path)
        return 1
    except OSError:
        return 0


_stores: dict[str, Store] = {}


def linkable() -> bool:
    """Whether object code can be linked here without LLVM (tracer.native.load_object: Linux
    x86-64). Elsewhere nothing is stored or loaded."""
    return sys.platform.startswith("linux") and platform.machine() == "x86_64" and hasattr(native, "load_object")


def current_store() -> Store | None:
    """The Store of the folder the environment names now, or None while the cache is off."""
    if not enabled_by_environment():
        return None
    folder = default_folder()
    found = _stores.get(folder)
    if found is None:
        found = _stores[folder] = Store(folder)
    return found
