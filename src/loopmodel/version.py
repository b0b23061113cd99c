"""The package version (one place: the package, the JSON documents and the cache keys read it)."""

__version__ = "0.1.0"
