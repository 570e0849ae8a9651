"""Only here to hand the cffi build of ``native/`` to setuptools (metadata lives in pyproject.toml)."""

from setuptools import setup

setup(cffi_modules=["native/build_ffi.py:ffibuilder"])
