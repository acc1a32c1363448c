"""Keep freed memory in the process during a discovery (glibc's ``mallopt``).

A training step allocates and frees the same few-megabyte tensors hundreds of times a
second. With glibc's defaults a block that size comes from ``mmap`` and goes back to the
kernel when freed, so every step pays for fresh pages the kernel must zero: on the 1-D
benchmark run (Burgers, 10 % of the grid as point columns) 2.5–4.5 s of system time against
1.1–1.6 s with freed blocks kept (`symweak bench speed --user-data`). PyTorch has no caching
allocator on the CPU; this is what preloading jemalloc or tcmalloc does for it, without
asking the user to.

:func:`keep_freed_memory` raises glibc's mmap threshold to 32 MiB (its ceiling; larger
blocks still come from ``mmap`` and go back at once) and its trim threshold to 512 MiB (the
most freed memory kept at the top of the heap). It changes nothing elsewhere (macOS,
Windows, musl) or when ``SYMWEAK_MALLOC=default`` is set, and runs once per process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import sys

__all__ = ["keep_freed_memory"]

log = logging.getLogger("symweak")

#: glibc's ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 512 * 1024 * 1024


@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc's thresholds once per process; True when they were set (now or before)."""
    if not sys.platform.startswith("linux") or os.environ.get("SYMWEAK_MALLOC", "") == "default":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
    log.debug("symweak: glibc mallopt thresholds set: %s", ok)
    return ok
