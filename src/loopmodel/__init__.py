"""loopmodel: analytic performance modeling (layer conditions, ECM, Roofline) of loop kernels.

The public API (imported on first use, so that ``import loopmodel`` stays cheap)::

    import loopmodel
    r = loopmodel.analyze("examples/kernels/triad.c", "SkylakeSP_Gold-6148", {"N": 10**6})
    r.prediction.location, r.prediction.single_core_cy_per_cl   # data location ('L3'), T_ECM there (cy/CL)
    df = loopmodel.sweep("examples/kernels/triad.c", "SkylakeSP_Gold-6148", {"N": range(1000, 10**6, 1000)})

See docs/api.md.
"""

import importlib

from .version import __version__

#: public name -> the module that defines it
_LAZY = {
    "analyze": "api", "sweep": "api", "scaling": "api", "bench": "api", "validate": "api", "omp_sweep": "api", "compare": "api",
    "Kernel": "api", "Machine": "api", "Result": "api", "ScalingReport": "api", "BenchReport": "api",
    "CompactSweep": "api", "FunctionResult": "api", "CompareReport": "api",
    "LoopmodelError": "errors", "KernelError": "errors", "MachineError": "errors", "DefineError": "errors",
    "ModelError": "errors", "ToolError": "errors", "OptionError": "errors", "UsageError": "errors",
    "ApiTypeError": "errors", "ApiValueError": "errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'loopmodel' has no attribute '{name}'")

    mod = importlib.import_module(f".{module}", __name__)
    value = mod if name == module else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
