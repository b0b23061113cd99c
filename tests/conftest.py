"""Session setup: the per-user cache goes to a temporary directory, not the developer's ~/.cache."""
import os
import tempfile

_CACHE = tempfile.mkdtemp(prefix="loopmodel-test-cache-")
os.environ["LOOPMODEL_CACHE_DIR"] = _CACHE
os.environ.pop("LOOPMODEL_NO_CACHE", None)
