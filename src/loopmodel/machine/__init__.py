"""The machine model: pure data with explicit units, and its field conversions."""
