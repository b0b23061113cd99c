"""loopmodel: analytic performance modeling (layer conditions, ECM, Roofline) of loop kernels."""

__version__ = "0.1.0"
