"""cffi (API mode) build of the C kernels in ``native/src`` into ``native._native``.

Run by setuptools at install time (``cffi_modules`` in setup.py). Every ``*.c`` file in
``native/src`` is compiled; ``native.h`` declares the whole C API seen from Python.
Extra compiler flags (e.g. ``-march=native`` for a machine-specific build) can be given
with the environment variable ``DEEPSTACK_NATIVE_CFLAGS``.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from cffi import FFI

SRC = Path(__file__).resolve().parent / "src"


def _cdef_text() -> str:
    """The declarations between the CDEF markers of native.h (no preprocessor lines)."""
    header = (SRC / "native.h").read_text()
    match = re.search(r"/\* CDEF BEGIN \*/(.*)/\* CDEF END \*/", header, re.S)
    if not match:
        raise RuntimeError("native/src/native.h has no CDEF BEGIN/END block")
    return match.group(1)


ffibuilder = FFI()
ffibuilder.cdef(_cdef_text())
ffibuilder.set_source(
    "native._native",
    '#include "native.h"',
    sources=[str(p.relative_to(SRC.parent.parent)) for p in sorted(SRC.glob("*.c"))],
    include_dirs=[str(SRC.relative_to(SRC.parent.parent))],
    extra_compile_args=["-O3", "-std=c11", "-fno-strict-aliasing", "-Wall"]
    + shlex.split(os.environ.get("DEEPSTACK_NATIVE_CFLAGS", "")),
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
