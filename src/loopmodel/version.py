"""The loopmodel release number (its own module, so that every layer can import it)."""

__version__ = "0.1.0"
