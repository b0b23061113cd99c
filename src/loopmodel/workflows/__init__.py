"""Workflows: one module per command; each takes typed Options and returns a result (no argparse, no printing)."""
