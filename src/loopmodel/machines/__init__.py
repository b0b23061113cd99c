"""The built-in machine files (YAML data, no code)."""
