"""Analytic in-core model without a compiler (cross-architecture-machine-models.txt §3.4.1).

Eq. (1):  T_nOL = max(n_LD / f_LD, n_ST / f_ST, (n_LD + n_ST) / f_LDST)
Eq. (2):  T_OL  = max(n_op / f_op ..., sum over shared ports and units, n_instr / f_instr, T_dep)

On a machine whose stores overlap (``in_core.stores_in: T_OL``, Intel's ECM model,
kerncraft-tool-paper.txt §2.3: "T_OL is the overlapping time for computations and stores,
T_nOL is the time for the loads from registers into L1") T_nOL is n_LD / f_LD alone and
n_ST / f_ST, (n_LD + n_ST) / f_LDST join T_OL; the rule is the machine model's
(:meth:`loopmodel.machine.model.MachineModel.stores_overlap`), the same for the compiled
analyzers (:mod:`loopmodel.compiled.incore`).

Operation throughputs per element are instruction throughputs times SIMD lanes
(eq. 6). Additions fed by a multiplication are fused into FMAs on machines that
have them. A loop-carried dependency that cannot be reassociated forbids SIMD
and bounds T_OL by its critical-path latency. Whether a reduction (``s += ...``)
may be split into partial sums depends on the compiler and its flags (gcc and clang
only with -ffast-math or equivalent, Intel compilers by default); the caller decides
(:func:`loopmodel.compiled.compile.fp_reassociation`) and passes the reason, which the
result reports. Results are per unit of work (cy/CL). The compiled-code analyzers
(llvm-mca, OSACA) provide the same :class:`InCoreResult`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import ModelError
from ..ir.kernel import coefficient
from .split_access import SplitAccesses, simd_split_accesses
from ..machine.latency import documented_latency, op_latency

_PROXY = {"FABS": "ADD", "FMIN": "ADD", "FMAX": "ADD"}


#: latency of an x86 integer vector or scalar addition (``add``, ``vpaddq``), cy: 1 on every core from
#: Sandy Bridge and Zen 1 on (A. Fog, Instruction tables; Intel Optimization Reference Manual)
INTEGER_ADD_LATENCY = 1.0

#: how the analytic model's notes name what would time the compiled code instead; the analysis
#: adds which ``--incore`` runs here (:meth:`loopmodel.workflows.analysis.Analyzer.run`)
COMPILED_ANALYSIS = "a compiled in-core analysis"


@dataclass(frozen=True)
class InCoreMeasurement:
    """The benchmark behind a measured in-core time (``--incore measured``): the kernel run on
    its host with its data in L1 (benchmark mode, kerncraft-tool-paper.txt §2.3).

    Attributes:
        defines: the sizes it ran at (scaled down from the requested ones to fit in L1).
        data_set_B: the kernel's arrays at those sizes, B; l1_B: the L1 capacity, B.
        cy_per_cl: ``(min, median, max)`` over the runs, cy/CL at ``clock_hz``.
        runs: runs taken (min-of-K, K = runs); spread: max / min - 1 (no unit).
        clock_hz: the core clock measured around the runs, Hz.
        inner_trips: inner-loop iterations per pass at ``defines`` (None: not a constant).
        compiler, flags: how the benchmark was built. cached: read from the per-user cache.
        model_t_nol: the in-core model's T_nOL that splits the measured time, cy/CL (before
            the cap that keeps the ECM time in L1 the measured time; None: no split).
    """

    defines: dict
    data_set_B: float
    l1_B: float
    cy_per_cl: tuple
    runs: int
    spread: float
    clock_hz: float
    inner_trips: int | None = None
    compiler: str = ""
    flags: tuple = ()
    cached: bool = False
    model_t_nol: float | None = None


@dataclass(frozen=True)
class InCoreResult:
    """In-core execution time per unit of work.

    Attributes:
        source: ``"analytic"``, ``"llvm-mca"``, ``"osaca"`` or ``"measured"`` (the kernel
            benchmarked on its host, :attr:`measurement`).
        T_OL: cycles per CL that overlap with data transfers: arithmetic (and, where the
            machine's stores overlap, :meth:`~loopmodel.machine.model.MachineModel.stores_overlap`,
            stores and address generation).
        T_nOL: cycles per CL that do not: those with a load (and, by default, a store).
        components: contribution name -> cy/CL (``LD``, ``ST``, ``LDST``, op
            types, port groups, ``issue``, ``dependency``).
        lanes: SIMD lanes used (1 = scalar).
        operations: operation counts per iteration after FMA fusion.
        dependency: critical-path latency per iteration (cy/it), 0 if none.
        notes: remarks for the report.
        reassociation: ``{"assumed": bool, "source": str}``: whether reductions were taken
            as split into partial sums and why (analytic model only; None otherwise).
        origin: ``{"T_OL": str, "T_nOL": str}``: what sets each (the port, the loop-carried
            chain or the L1 data path; compiled analyzers and the measured in-core time only,
            None otherwise).
        measurement: :class:`InCoreMeasurement` (source ``"measured"`` only, None otherwise).
        split: :class:`~loopmodel.models.split_access.SplitAccesses` of the SIMD code the times are
            for (charged where the machine gives ``split_extra``); None for scalar code or where
            the loop bounds cannot be evaluated.
    """

    source: str
    T_OL: float
    T_nOL: float
    components: dict
    lanes: int
    operations: dict
    dependency: float = 0.0
    notes: tuple = field(default=())
    reassociation: dict | None = None
    origin: dict | None = None
    measurement: InCoreMeasurement | None = None
    split: SplitAccesses | None = None

    @property
    def core_time(self) -> float:
        """In-core time with all data in L1, max(T_OL, T_nOL) in cy/CL (ECM eq. 4 with no
        transfers, kerncraft-tool-paper.txt §2.3: T_ECM^L1 = max(T_OL, T_nOL); the CPU roof of
        RooflineASM). Raises TypeError when T_OL is None (unknown)."""
        return max(self.T_OL, self.T_nOL)


def analytic_incore(kernel, machine, iterations_per_unit: float, vectorize: bool = True,
                    reassociate: bool = True, reassociation_source: str = "",
                    defines: dict | None = None, fold_left: bool = False) -> InCoreResult:
    """In-core time of ``kernel`` on ``machine`` from operation counts.

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel`.
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        iterations_per_unit: innermost iterations per CL of work.
        vectorize: use the SIMD width (False: scalar code).
        reassociate: allow splitting reductions into partial sums (as with
            ``-ffast-math``); if False a reduction is latency bound.
        reassociation_source: why ``reassociate`` holds (compiler and flags, or the
            command-line option), for the notes and the result's ``reassociation``.
        defines: size constants, for inner-loop strides that depend on a size (``a[i*N]``);
            without them such an access counts as not contiguous (:func:`strided_accesses`).
        fold_left: the compiler vectorised the loop around a floating-point reduction it keeps
            in source order (gcc's fold-left reduction, its optimisation report): loads and
            arithmetic at the SIMD width, the reduction's chain one element per iteration.

    Returns:
        :class:`InCoreResult` in cy/CL.

    Raises:
        ModelError: the machine lacks a throughput/latency the kernel needs.
    """
    ic = machine.in_core
    why = f": {reassociation_source}" if reassociation_source else ""
    lanes, notes = _simd_lanes(kernel, machine, vectorize, defines)
    dep, lanes, dep_notes = _dependency_bound(kernel, machine, lanes, reassociate, why, fold_left)
    notes += dep_notes
    ops = fused_operations(kernel, machine)

    comp = _arithmetic_times(ops, machine, lanes)
    notes += _narrow_divide_note(kernel, machine, ops, lanes)
    n_ld = kernel.loads_per_iteration()
    n_st = kernel.stores_per_iteration()
    split = simd_split_accesses(kernel, defines, lanes, int(machine.cacheline_size)) if lanes > 1 and defines \
        else None
    n_ld, n_st, split_note = _split_charge(split, machine, lanes, n_ld, n_st)
    notes += split_note
    t_ld = max(n_ld / lanes / ic.load.instructions_per_cycle,
               kernel.bytes_loaded_per_iteration() / ic.load.bytes_per_cycle)
    t_st = max(n_st / lanes / ic.store.instructions_per_cycle,
               kernel.bytes_stored_per_iteration() / ic.store.bytes_per_cycle)
    t_ldst = (n_ld + n_st) / lanes / ic.load_store_per_cycle if ic.load_store_per_cycle else 0.0
    if ic.instructions_per_cycle:
        comp["issue"] = (sum(ops.values()) + n_ld + n_st) / lanes / ic.instructions_per_cycle
    if ic.taken_branches_per_cycle:  # one pass of ``lanes`` iterations ends in the loop branch (measured)
        comp["branch"] = 1.0 / lanes / ic.taken_branches_per_cycle
    if dep:
        comp["dependency"] = dep
    if machine.stores_overlap():  # Intel's ECM: only the loads' L1 cycles are T_nOL
        t_ol, t_nol = max([t_st, t_ldst] + list(comp.values())), t_ld
    else:  # eq. (1): every cycle with a load or store
        t_ol, t_nol = max(comp.values(), default=0.0), max(t_ld, t_st, t_ldst)
    comp.update({"LD": t_ld, "ST": t_st})
    if ic.load_store_per_cycle:
        comp["LDST"] = t_ldst
    scale = iterations_per_unit
    return InCoreResult("analytic", t_ol * scale, t_nol * scale,
                        {k: v * scale for k, v in comp.items()}, lanes, ops, dep, tuple(notes),
                        {"assumed": bool(reassociate), "source": reassociation_source or "default"}, split=split)


def full_simd_lanes(kernel, machine) -> int:
    """SIMD lanes of the machine model's ``in_core.simd_width`` over the kernel's widest element (eq. 6
    of cross-architecture-machine-models.txt), at least 1. An analysis's machine model carries the
    width its compiler's flags give (:func:`loopmodel.workflows.analysis.compiler_machine`)."""
    return max(1, int(machine.in_core.simd_width // kernel.largest_element_size))


def _simd_lanes(kernel, machine, vectorize: bool, defines: dict | None) -> tuple:
    """``(SIMD lanes, notes)``: the SIMD width over the largest element size (eq. 6 of
    cross-architecture-machine-models.txt: per-element throughput = instruction throughput x
    lanes), or 1 without ``vectorize`` or where an access is not contiguous in the inner loop
    (:func:`strided_accesses`): a packed SIMD load or store moves contiguous elements, and such
    an access has one per instruction, so the loop is taken as scalar code (a compiler's
    gather or shuffles would cost at least as many load-port cycles as the scalar loads)."""
    lanes = full_simd_lanes(kernel, machine) if vectorize else 1
    strided = strided_accesses(kernel, defines) if lanes > 1 else []
    if not strided:
        return lanes, []
    by_stride: dict = {}
    for a, stride in strided:
        by_stride.setdefault(stride, dict.fromkeys([]))[a.array] = None
    what = "; ".join(f"{', '.join(names)} move{'s' if len(names) == 1 else ''} {stride} elements per iteration"
                     for stride, names in by_stride.items())
    return 1, [f"accesses not contiguous in the inner loop '{kernel.inner_loop.index}' ({what}): "
               f"one element per load/store instruction, so scalar code assumed instead of {lanes} SIMD lanes"]


def strided_accesses(kernel, defines: dict | None = None) -> list:
    """``(access, stride)`` of the accesses that move by other than one element per inner-loop
    iteration (coefficient of the inner index x loop step, sizes from ``defines`` put in;
    ``stride`` as text: ``2``, ``N``, a size-dependent one without its value counting as not
    contiguous); accesses invariant in the inner loop (registers) are contiguous enough."""
    idx, step = kernel.inner_loop.index, kernel.inner_loop.step
    out = []
    for a in list(kernel.streamed_writes()) + list(kernel.streamed_reads()):
        c = coefficient(a.offset, idx)
        c = c.subs(defines) if defines else c
        if c.is_constant() and abs(Fraction(c.constant_value()) * step) == 1:
            continue
        out.append((a, str(c * step) if not c.is_constant() else f"{Fraction(c.constant_value()) * step}"))
    return out


def _split_charge(split: SplitAccesses | None, machine, lanes: int, n_ld: float, n_st: float) -> tuple:
    """``(loads, stores per iteration, notes)`` with each cache-line-split vector access of ``split``
    (:func:`loopmodel.models.split_access.split_accesses`: the loop bounds and offsets at the
    point's sizes, no peeling, line-aligned arrays) charged ``split_extra`` more aligned accesses
    (machine model, measured by the probe); unchanged without splits or ``split_extra``."""
    ic = machine.in_core
    if split is None or not (split.loads or split.stores) or not (ic.load.split_extra or ic.store.split_extra):
        return n_ld, n_st, []
    n_ld += split.loads * lanes * ic.load.split_extra
    n_st += split.stores * lanes * ic.store.split_extra
    return n_ld, n_st, [f"{split.describe()}, each charged {ic.load.split_extra:.2g} (load) / "
                        f"{ic.store.split_extra:.2g} (store) extra slot(s) (machine model)"]


def _dependency_bound(kernel, machine, lanes: int, reassociate: bool, why: str, fold_left: bool = False) -> tuple:
    """Loop-carried dependencies: ``(cy per iteration, SIMD lanes, notes)``.

    A reduction that may be reassociated (partial sums) is no bound, and one into an integer
    always may (integer addition is associative; gcc 12 -O3 vectorizes ``long s += a[i]`` with
    ``vpaddq`` whatever the floating-point flags, and keeps a float sum in source order); any other recurrence
    bounds an iteration by its longest latency chain over its distance in iterations
    (kerncraft-tool-paper.txt §2.3; the chain is the longest path over the dependency graph,
    MUL -> ADD contracted to FMA where the machine has FMA), and one shorter than the SIMD
    width forces scalar code. Each operation's latency is the probe's at the width the chain
    runs (:func:`chain_latency_table`), else the machine model's ``in_core.latency``, else the
    micro-architecture's documented one (with a note). With ``fold_left`` (the compiler's
    report says it vectorised such a loop, adding one element at a time in source order) a
    chain that only reductions form leaves the SIMD width as it is, and runs at scalar width.

    Raises:
        ModelError: the machine gives no latency for an operation on a chain.
    """
    dep, kept, split, notes = 0.0, [], [], []
    for rec in kernel.recurrences:
        if rec.reassociable and kernel.integer_valued(rec.variable):
            notes.append(f"integer reduction into '{rec.variable}' vectorized (integer addition is associative: "
                         "compilers reassociate it at -O3 whatever the floating-point flags)")
            split.append(rec)
            continue
        if rec.reassociable and reassociate:
            notes.append(f"reduction into '{rec.variable}' assumed reassociated (partial sums){why}; "
                         "--no-reassociation for the source order")
            split.append(rec)
            continue
        if rec.reassociable:
            notes.append(f"reduction into '{rec.variable}' kept in source order (latency-bound){why}; "
                         "--reassociation to assume partial sums")
        kept.append(rec)
    blocking = [rec for rec in kept if rec.distance < lanes]
    fold_left = fold_left and all(rec.reassociable for rec in blocking)
    if blocking and lanes > 1 and not fold_left:
        notes.append(f"loop-carried dependency on {', '.join(r.variable for r in blocking)} prevents SIMD: "
                     "scalar code assumed")
        lanes = 1
    fma = machine.in_core.throughput.get("FMA", 0) > 0  # MUL -> ADD contracted as compilers do
    for rec in kept:
        width = _element_size(kernel, rec.variable) * (1 if fold_left else lanes)
        table, sources = chain_latency_table(machine, rec.graph.operations(fma), width, rec.variable)
        lat, _ = rec.graph.longest_chain(table, fma)  # longest path over the dependency graph
        dep = max(dep, lat / rec.distance)
        notes += _latency_notes(rec.variable, width, table, sources)
    for rec in split:  # one (vector) accumulator: its chain per ``lanes`` iterations
        width = _element_size(kernel, rec.variable) * lanes
        ops = rec.graph.operations(fma)
        table, sources = chain_latency_table(machine, ops, width, rec.variable, kernel.integer_valued(rec.variable))
        lat, _ = rec.graph.longest_chain(table, fma)
        dep = max(dep, lat / rec.distance / lanes)
        notes.append(f"reduction into '{rec.variable}' with one {'vector ' if lanes > 1 else ''}accumulator, as gcc "
                     f"compiles it: its chain, {lat:.3g} cy, per {lanes} iteration(s) (compilers that keep several "
                     "accumulators run faster)")
        notes += _latency_notes(rec.variable, width, table, sources)
    return dep, lanes, notes


def _latency_notes(variable: str, width: int, table: dict, sources: dict) -> list:
    """Notes naming the chain latencies that are not the machine model's ``in_core.latency``: the
    probe's (by width) and the documented ones (:func:`loopmodel.machine.latency.documented_latency`)."""
    notes = []
    probe = {op: src for op, src in sources.items() if src.startswith("probe")}
    doc = {op: src for op, src in sources.items() if src.startswith("documented")}
    if probe:
        notes.append(f"loop-carried dependency on '{variable}' at {width} B: " + ", ".join(
            f"{op} {table[op]:.3g} cy ({src})" for op, src in probe.items()) + " (measured by the probe, "
            "in place of the machine model's in_core.latency at the widest SIMD width)")
    if doc:
        notes.append(f"loop-carried dependency on '{variable}': the machine model gives no in_core.latency for "
                     + ", ".join(doc) + "; taken as " + ", ".join(f"{op} {table[op]:.3g} cy ({src})" for op, src
                                                             in doc.items())
                     + " (loopmodel.machine.latency.DOCUMENTED_LATENCY: vendor manuals, Fog's instruction tables)")
    proxied = {op: src for op, src in sources.items() if op in _PROXY and src.startswith(f"{_PROXY[op]}'s latency")}
    if proxied:
        notes.append(f"loop-carried dependency on '{variable}': " + ", ".join(
            f"{op} taken as {table[op]:.3g} cy, {src}" for op, src in proxied.items()))
    return notes


def _has_latency(machine, op: str) -> bool:
    """Whether the machine model, its probe or the documented table gives ``op`` a latency."""
    return op in machine.in_core.latency or op_latency(machine, op, 8) is not None or \
        documented_latency(machine, op) is not None


def chain_latency_table(machine, ops, width: int, variable: str = "", integer: bool = False) -> tuple:
    """``(op -> cy, op -> source)`` for the operations ``ops`` of a dependency chain running on
    registers of ``width`` bytes: the probe's latency at that width
    (:func:`loopmodel.machine.latency.op_latency`: a scalar double chain takes the 8 B figure, a
    float chain the 8 B one where 4 B is not measured), else ``in_core.latency`` (measured at the
    widest SIMD width, or the machine file's figure), else the micro-architecture's documented
    latency (:func:`loopmodel.machine.latency.documented_latency`); ``source`` for the probe's and
    the documented figures. An ``integer`` chain's ADD on x86 is :data:`INTEGER_ADD_LATENCY`.

    Raises:
        ModelError: neither gives a latency for an operation (naming ``variable``).
    """
    table, sources = {}, {}
    for op in ops:
        if integer and op == "ADD" and (machine.isa or "x86").lower().startswith("x86"):
            table[op], sources[op] = INTEGER_ADD_LATENCY, "integer addition"
            continue
        got = op_latency(machine, op, width)
        if got is not None:
            table[op], sources[op] = got.cy, got.source
        elif op in machine.in_core.latency:
            table[op] = machine.in_core.latency[op]
        elif (doc := documented_latency(machine, op)) is not None:
            table[op], sources[op] = doc.cy, doc.source
        elif op in _PROXY and _PROXY[op] not in ops:
            proxy, proxy_sources = chain_latency_table(machine, (_PROXY[op],), width, variable, integer)
            table[op] = proxy[_PROXY[op]]
            sources[op] = (f"{_PROXY[op]}'s latency ({proxy_sources.get(_PROXY[op], 'machine model')}): none for {op} "
                           "in the machine model; a compare or select takes at most an addition's latency on the "
                           "x86 and Arm cores modelled")
        else:
            raise ModelError(f"machine model '{machine.name}' gives no latency for {op} "
                             f"(needed for the loop-carried dependency on '{variable}')")
    return table, sources


def _element_size(kernel, variable: str) -> int:
    """Bytes per element of the array or scalar ``variable`` (the kernel's widest element if unknown)."""
    decl = kernel.arrays.get(variable) or kernel.scalars.get(variable)
    return decl.element_size if decl is not None else kernel.largest_element_size()


def _narrow_divide_note(kernel, machine, ops: dict, lanes: int) -> list:
    """A note where divisions or square roots run on fewer SIMD lanes than the machine's width: the
    machine model gives one throughput per DIV/SQRT instruction, measured on full-width vectors
    (eq. 6 of cross-architecture-machine-models.txt), and charges a narrower (scalar) instruction
    the same, while the dividers of x86 cores finish scalar and narrow divisions several times
    faster; those times are an upper bound."""
    full = full_simd_lanes(kernel, machine)
    slow = [op for op in ("DIV", "SQRT") if ops.get(op)]
    if lanes >= full or not slow:
        return []
    return [f"{' and '.join(slow)} at {lanes} lane(s) instead of {full}: the machine model's "
            f"{'/'.join(slow)} throughput is per full-width instruction and is charged to each narrower one, "
            "so these times are an upper bound (scalar divisions are several times faster on x86 cores; "
            f"{COMPILED_ANALYSIS} models the instructions the compiler emits)"]


def _arithmetic_times(ops: dict, machine, lanes: int) -> dict:
    """Cycles per iteration of each fused operation type (count / lanes / throughput) and of
    each port group and shared unit (the sum of its members, :meth:`MachineModel.summed_groups`),
    cross-architecture-machine-models.txt §3.4.1 eq. (2).

    Raises:
        ModelError: the machine gives no throughput for an operation.
    """
    ic = machine.in_core
    comp: dict = {}
    for op, n in ops.items():
        tp = ic.throughput.get(op) or ic.throughput.get(_PROXY.get(op, ""), 0)
        if not tp:
            raise ModelError(f"machine model '{machine.name}' gives no throughput for {op} "
                             f"(in_core.throughput.{op})")
        comp[op] = n / lanes / tp
    for g in machine.summed_groups():
        members = [op for op in g if op in comp]
        if len(members) > 1:
            comp["+".join(members)] = sum(comp[op] for op in members)
    return comp


def port_pressure_times(pressure: dict, load_pressure: dict, overlapping, non_overlapping) -> tuple:
    """``(T_OL, T_nOL)`` from the port pressure of a compiled loop block: the one definition.

    kerncraft-tool-paper.txt §2.3: "T_OL is the overlapping time for computations and
    stores, T_nOL is the time for the loads from registers into L1", both from the
    analyzer's port pressure (the tool's IACA/OSACA/llvm-mca path):

    * T_nOL = the largest pressure of the *load instructions* on a non-overlapping (load
      data) port, or of all instructions where the port lists decide alone (Kerncraft's
      machine files, ``load_pressure`` is then the whole pressure);
    * T_OL = the largest pressure, all instructions, on an overlapping port (arithmetic and
      store data; a port in both lists, such as llvm-mca's combined address+data
      ``SBPort23``, is a T_OL candidate with its whole pressure, store addresses included).

    Both analyzers' paths (llvm-mca, OSACA) use it (:func:`loopmodel.compiled.incore.port_table`).

    Args:
        pressure: port name -> cycles (per pass or per CL; the result is in the same unit).
        load_pressure: port name -> cycles counted on the non-overlapping ports (the load
            instructions alone, or every instruction: the caller's rule).
        overlapping: port names whose pressure is T_OL (shared ports included).
        non_overlapping: port names whose load pressure is T_nOL.

    Returns:
        ``(T_OL, T_nOL)`` in the unit of the pressures; 0.0 where no port is listed.
    """
    t_ol = max((v for k, v in pressure.items() if k in overlapping), default=0.0)
    t_nol = max((v for k, v in load_pressure.items() if k in non_overlapping), default=0.0)
    return t_ol, t_nol


def fused_operations(kernel, machine) -> dict:
    """Operations per innermost iteration after FMA fusion: ``{type: count}`` (zero counts left out).

    Additions fed directly by a multiplication (``kernel.fma_candidates``) become FMAs where
    the machine has them (an ``FMA`` throughput in ``in_core.throughput``); the others keep
    their kernel-IR counts (kerncraft-tool-paper.txt §2.3, eq. 1: operation counts of the
    loop body). Shared by the analytic in-core model and the Roofline CPU roof, so both count
    the same FLOPs whichever in-core analysis (analytic, llvm-mca, OSACA) was used.
    """
    ops = dict(kernel.operations)
    if machine.in_core.throughput.get("FMA", 0) > 0 and kernel.fma_candidates:
        n = min(kernel.fma_candidates, ops.get("ADD", 0), ops.get("MUL", 0))
        if n:
            ops["ADD"] -= n
            ops["MUL"] -= n
            ops["FMA"] = n
    return {k: v for k, v in ops.items() if v}


def missing_data(kernel, machine) -> list:
    """What :func:`analytic_incore` needs and the machine model lacks, as
    ``[("throughput" | "latency", op), ...]``: throughputs of the operations after FMA
    fusion (:func:`fused_operations`; FABS/FMIN/FMAX may use the ADD figure), latencies
    of the operations on loop-carried dependency chains, reassociated reductions' too (MUL -> ADD
    contracted to FMA where the machine has FMA, as in :func:`analytic_incore`) that neither
    ``in_core.latency`` nor the probe (scalar, 8 B: :func:`loopmodel.machine.latency.op_latency`) gives."""
    ic = machine.in_core
    out = [("throughput", op) for op in fused_operations(kernel, machine)
           if not (ic.throughput.get(op) or ic.throughput.get(_PROXY.get(op, "")))]
    fma = ic.throughput.get("FMA", 0) > 0
    chain_ops = []
    for rec in kernel.recurrences:  # a reassociated reduction's chain bounds its vector accumulator
        integer_add = kernel.integer_valued(rec.variable) and (machine.isa or "x86").lower().startswith("x86")
        chain_ops += [op for op in rec.graph.operations(fma) if not (integer_add and op == "ADD")]
    out += [("latency", op) for op in dict.fromkeys(chain_ops)
            if not _has_latency(machine, op) and not (op in _PROXY and _has_latency(machine, _PROXY[op]))]
    return out

