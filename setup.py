"""Only for the compiled cache-simulator core; all metadata is in pyproject.toml."""
from setuptools import setup

setup(cffi_modules=["src/loopmodel/cachesim/_build.py:ffibuilder"])
