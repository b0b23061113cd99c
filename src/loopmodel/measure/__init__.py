"""Measurements on the host, to validate model predictions and to write a machine model of it.

* :func:`~loopmodel.measure.stream.run_stream` -- daxpby/triad bandwidth per OpenMP thread count;
* :func:`~loopmodel.measure.clock.measure_clock_hz` -- core clock estimate;
* :func:`~loopmodel.measure.kernel_bench.measure_kernel` -- single-thread runtime of a C kernel
  at given sizes (s/it, cy/CL), to check ECM predictions;
* :mod:`loopmodel.measure.probe` -- the measurements behind ``loopmodel machine probe``.

The package imports none of its modules: import the one you need.
"""
