"""Data-traffic predictors: layer conditions and cache simulation (kerncraft-tool-paper.txt §2.4)."""
