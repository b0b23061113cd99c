"""In-core time of the compiled kernel (ECM T_OL / T_nOL from an analyzer).

Pipeline: generate the program (:mod:`.codegen`), compile it with the machine
model's compiler (:mod:`.compile`), find the kernel's loop block (:mod:`.asm`), analyze
it (:mod:`.llvm_mca`), and map per-port cycles to the ECM's contributions with the
machine model's ``in_core.analyzer_ports`` (kerncraft-tool-paper.txt §2.3: "T_OL is the
overlapping time for computations and stores, T_nOL is the time for the loads from
registers into L1"; cross-architecture paper §3.4.1):

* T_nOL = the largest pressure of *load instructions* on a ``non_overlapping`` (load
  data) port. OSACA's Intel models list load data (2D/3D) apart from address generation
  (2/3); llvm-mca's do not (SBPort23 = address + data), so its pressure is attributed per
  instruction (:mod:`.ports`).
* T_OL = the largest pressure on an ``overlapping`` port: arithmetic and store data. Our
  machine files leave the address-generation ports out of this list (Kerncraft's include
  them): their pressure is mostly the loads' own address uops, already in T_nOL. A port
  listed in both (Kerncraft's llvm-mca lists: ``SBPort23``) counts with its load
  pressure in T_nOL and with its whole pressure, store addresses included, in T_OL
  (:func:`shared_ports`); llvm-mca's indexed store addresses on Haswell-Skylake port 7
  are moved to ports 2/3, where the hardware and OSACA put them (:mod:`.ports`).
* Where the port lists decide (``in_core.stores_in: ports``, Kerncraft's machine files:
  :meth:`loopmodel.machine.model.MachineModel.ports_decide`), T_nOL is the whole pressure on a
  ``non_overlapping`` port and T_OL the largest on an ``overlapping`` one, a port in both
  lists a candidate for both: the peer's ECM (its T_RegL1 and T_comp).
* Where the machine model counts stores in T_nOL (``in_core.stores_in``, the default;
  :meth:`loopmodel.machine.model.MachineModel.stores_overlap`, the rule the analytic model
  follows too), the memory ports (the ``non_overlapping`` ones and the ports only the store
  instructions use) leave T_OL and their whole pressure, loads, store data and addresses,
  is T_nOL: cross-architecture-machine-models.txt §3.4.1 eq. (1) in port terms.
* Both come from :func:`loopmodel.models.incore.port_pressure_times`, the one definition of
  "port pressure -> (T_OL, T_nOL)", through :func:`port_table`, which computes the balanced
  port table once; it is kept in :attr:`CompiledInCore.port_table` for the reports. The
  balancing itself (:func:`effective_ports`, the slow part) is cached per user with the
  compiled analysis (:func:`balanced_ports`).
* Both are bounded from below by the L1 data paths of the machine model
  (:func:`data_path_bound`: 16 B per load port and cycle on Sandy/Ivy Bridge), and an
  analyzer result that leaves instructions unaccounted for is refused
  (:func:`unaccounted`, SIMD levels in :mod:`.isa`).

llvm-mca pressures are balanced over the ports each instruction used and x86
compare-and-branch pairs are macro-fused (:mod:`.ports`), so both analyzers report an
optimal schedule. A
simulated time per pass more than 10 % above the block's throughput bound means a
loop-carried dependency limits the loop: it then becomes T_OL.

Units: analyzers report cycles per pass of the assembly loop; one pass performs
``u`` iterations of the kernel's inner loop, one unit of work (a cache line of the
written array) ``it_per_cl`` iterations, so cy/CL = (cy/pass) / u * it_per_cl and
cy/it = (cy/pass) / u.

All artefacts are cached per user (:mod:`loopmodel.cache`), keyed by everything that
affects them.
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import os

from .. import cache
from ..ir.kernel import coefficient
from . import available, checked, isa, llvm_mca, osaca_backend, ports as P
from ..errors import ModelError, OptionError, ToolError
from ..machine.latency import has_op_latencies
from ..models.incore import InCoreResult, port_pressure_times
from ..models.split_access import split_accesses
from ..models.short_loops import block_iterations, inner_shape, inner_trips
from .asm import KernelShape, calls, find_kernel_block, implausible
from .codegen import generate_c
from .codegen import MARK_END, MARK_START
from .compile import assembly_and_report, choose_compiler, fp_reassociation, is_aarch64, single_core_source
from .loop_report import CompiledNest, fold_left_reductions, read_report
from .chain_latency import analyzer_latencies, chain_latencies
from .instructions import access_kind, packed_bytes


@dataclass(frozen=True)
class PortRow:
    """One port of :class:`PortTable` (cycles per pass of the loop block). A port listed both as
    overlapping and as non-overlapping (:func:`shared_ports`) has its role followed by
    ``" + T_OL (all)"``: its loads' pressure is a T_nOL candidate (``counted``), its
    ``balanced`` pressure a T_OL one.

    Attributes:
        port: the analyzer's port name.
        reported: pressure as the analyzer printed it.
        balanced: after balancing (:func:`effective_ports`), all instructions.
        loads: after balancing, the load instructions alone.
        counted: what the ECM takes from this port: ``loads`` on a non-overlapping port where
            the machine's stores overlap and its port lists do not decide alone, ``balanced``
            otherwise.
        counted_cy_per_cl: ``counted`` in cy/CL.
        role: ``"T_nOL (loads)"`` (a load port where the machine's stores overlap),
            ``"T_nOL (loads, stores)"`` (a load or store port where stores count in T_nOL),
            ``"T_nOL (all instructions)"`` (a non-overlapping port where the lists decide,
            ``stores_in: ports``), ``"T_OL"`` or ``"-"`` (in neither list).
    """

    port: str
    reported: float
    balanced: float
    loads: float
    counted: float
    counted_cy_per_cl: float
    role: str


@dataclass(frozen=True)
class PortTable:
    """The port pressure of a compiled loop block as the ECM uses it, computed once by
    :func:`port_table` (the reports render it and compute nothing).

    Attributes:
        rows: :class:`PortRow` per port, sorted by name.
        balanced, loads: port name -> cy per pass (:func:`effective_ports`), rounded to 1e-4.
        T_OL, T_nOL: cy per pass from :func:`loopmodel.models.incore.port_pressure_times`,
            before the dependency and L1 data-path bounds of :func:`to_incore_result`.
        cy_per_cl_per_pass: factor from cy per pass to cy/CL (iterations per CL / per pass).
        T_OL_from, T_nOL_from: what gives them: the port(s) with that pressure
            (``"SKXPort2, SKXPort3 (all instructions)"``, ``"... (loads)"``), or the block
            throughput bound without port lists; '' where no port has any pressure.
    """

    rows: tuple
    balanced: dict
    loads: dict
    T_OL: float
    T_nOL: float
    cy_per_cl_per_pass: float
    T_OL_from: str = ""
    T_nOL_from: str = ""


@dataclass(frozen=True)
class CompiledInCore:
    """What the compiled analysis used and found (for the report); ``port_table`` is the
    port pressure as the ECM counts it (:class:`PortTable`, None until computed);
    ``whole_inner_loops``: the inner loops one pass runs where the compiler unrolled the inner
    loop into the block (0: the block is the inner loop; :func:`whole_inner_loops`);
    ``timings``: the analyzer's latency and reciprocal throughput per instruction
    (:class:`~.llvm_mca.InstrTiming`); ``check``: those figures against the probe's
    (:class:`~.checked.BackendCheck`, None without probe figures); ``loops``: what the compiler
    did to each loop of the nest, from its optimisation report (:class:`.loop_report.CompiledNest`,
    None where the compiler gives no report)."""

    analyzer: str
    analyzer_version: str
    compiler: str
    compiler_version: str
    flags: tuple
    block_label: str
    block: str
    iterations_per_pass: float
    bytes_per_pass: float
    ports_cy_per_pass: dict
    block_throughput: float
    cycles_per_pass: float
    c_source: str
    instructions: tuple = ()
    aarch64: bool = False
    unknown: tuple = ()
    store_ports: tuple = ()
    target: str = ""
    port_table: PortTable | None = None
    whole_inner_loops: float = 0.0
    timings: tuple = ()
    check: checked.BackendCheck | None = None
    loops: CompiledNest | None = None


def whole_inner_loops(info: CompiledInCore, kernel, defines: dict) -> tuple:
    """``(info, notes)`` with the iterations per pass counted by what the block does where the
    compiler unrolled a short inner loop into the next outer loop: the block's pointer then
    advances by a row, halo included, which read as iterations per pass overstates them by
    row / n and makes T_OL and T_nOL too small by as much
    (:func:`~loopmodel.models.short_loops.block_iterations`); unchanged otherwise."""
    n, row = inner_shape(kernel, defines)
    if not n:
        return info, []
    real = block_iterations(info.iterations_per_pass, n, row)
    if real == info.iterations_per_pass:
        return info, []
    note = (f"inner loop of {n} iterations unrolled into the compiled block {info.block_label}: a pass runs "
            f"{real / n:g} whole inner loop(s), {real:g} iterations (not {info.iterations_per_pass:g}, the row its "
            "pointer advances by), entry and remainder included")
    return dataclasses.replace(info, iterations_per_pass=real, whole_inner_loops=real / n), [note]


def _stride_bytes(kernel, defines: dict | None = None):
    """B per inner-loop iteration of the work access (a written one where one moves), a
    size-dependent stride (a row of a multi-dimensional array) evaluated at ``defines``
    (:meth:`loopmodel.ir.kernel.Kernel.address_step_bytes`).

    Raises:
        ToolError: no access moves with the inner loop, or its stride depends on a size
            not in ``defines``.
    """
    cands = kernel.work_accesses()
    if not cands:
        raise ToolError("no array moves with the inner loop: nothing to measure the pointer increment against")
    try:
        return float(kernel.address_step_bytes(cands[0], defines))
    except ModelError:
        raise ToolError(f"'{cands[0]}' has a size-dependent stride; give --pointer-increment") from None


def _moving_accesses(kernel, defines: dict) -> list:
    """``(access, stride in B per inner-loop iteration)`` of the accesses that move with the inner loop
    (strides with sizes evaluated at ``defines``; accesses whose stride cannot be evaluated left out)."""
    idx = kernel.inner_loop.index
    out = []
    for a in list(kernel.writes) + list(kernel.reads):
        c = coefficient(a.offset, idx)
        if c.is_zero():
            continue
        try:
            elems = float(c.evaluate(defines))
        except KeyError:  # a size not given: that access's stride is unknown
            continue
        out.append((a, abs(elems * kernel.inner_loop.step) * kernel.arrays[a.array].element_size))
    return out


def kernel_shape(kernel, machine, defines: dict, work_stride: float | None):
    """What one pass of the kernel's loop block may do (:class:`.asm.KernelShape`).

    Args:
        kernel: the kernel IR.
        machine: machine model (``in_core.simd_width`` in B).
        defines: size constants (strides of multi-dimensional arrays depend on them).
        work_stride: B per iteration of the work access (:func:`_stride_bytes`), listed first;
            None where no array moves with the inner loop.

    Returns:
        :class:`.asm.KernelShape`: strides (B/it), element sizes (B), SIMD register bytes and
        the widest contiguous run (B) one iteration touches in a strided array.
    """
    moving = _moving_accesses(kernel, defines)
    sizes = [kernel.arrays[a.array].element_size for a, _ in moving] or [8]
    contiguous = 0
    for name in sorted({a.array for a, st in moving if st > kernel.arrays[a.array].element_size}):
        offsets = {a.offset for a in list(kernel.writes) + list(kernel.reads) if a.array == name}
        contiguous = max(contiguous, _longest_run(offsets) * kernel.arrays[name].element_size)
    strides = tuple(dict.fromkeys(([work_stride] if work_stride else []) + [st for _, st in moving]))
    return KernelShape(strides, min(sizes), max(sizes), int(machine.in_core.simd_width or 0), contiguous)


def _longest_run(offsets) -> int:
    """Most offsets (elements) that form a run of neighbours (constant differences of 1)."""
    best = 1
    for o in offsets:
        n = 1
        while any((p - o).is_constant() and (p - o).constant_value() == n for p in offsets):
            n += 1
        best = max(best, n)
    return best


def _check_block(info, shape, pointer_increment) -> None:
    """Refuse a loop block that cannot be the kernel's inner loop (:func:`.asm.implausible`).

    Raises:
        OptionError: ``--pointer-increment`` gave an implausible iteration count.
        ToolError: otherwise (under ``--incore auto`` the next analyzer or the analytic model
            is used, with this message as the note).
    """
    lines = info.block.split("\n")
    why = implausible(lines, info.iterations_per_pass, shape, info.aarch64)
    if why is None:
        return
    explicit = pointer_increment is not None and not calls(lines, info.aarch64)
    raise (OptionError if explicit else ToolError)(
        f"{info.analyzer}: loop block {info.block_label} refused: {why}"
        + (f" (--pointer-increment {pointer_increment:g})" if explicit else ""))


def _analyzer_tool(machine, analyzer: str, suggest: bool) -> tuple:
    """``(tool, tool version, target CPU or architecture, note on the target)`` of ``analyzer`` for
    ``machine``.

    Raises:
        ToolError: the analyzer is missing or cannot model the machine's CPU; with ``suggest``
            the message ends in an alternative that can run here (:func:`.available.instead`).
    """
    def refused(why: str) -> ToolError:  # the alternative is looked up only for a refusal
        return ToolError(why + (f"; or use --incore {available.instead(machine, (analyzer,))}" if suggest else ""))
    if analyzer == "llvm-mca":
        if not machine.in_core.llvm_mca_cpu:
            raise refused(f"machine model '{machine.name}' names no llvm_mca_cpu (in_core.llvm_mca_cpu)")
        tool = llvm_mca.find_llvm_mca()
        if tool is None:
            raise refused("llvm-mca not found (Debian: apt-get install llvm)")
        tool_version = llvm_mca.version(tool)
        return (tool, tool_version, *llvm_mca.cpu_for(machine, tool, tool_version))
    if analyzer == "osaca":
        if not osaca_backend.available():
            raise refused("OSACA is not installed (pip install 'loopmodel[osaca]')")
        return ("osaca", osaca_backend.version(), *osaca_backend.arch_for(machine))
    raise ToolError(f"unknown analyzer '{analyzer}' (llvm-mca, osaca)")


def compiled_incore(kernel, machine, defines: dict, iterations_per_unit: float,
                    analyzer: str = "llvm-mca", compiler: str | None = None, flags: str | None = None,
                    asm_block: str | None = None, pointer_increment: float | None = None,
                    use_cache: bool = True, assume_aligned: int | None = None, trust_machine: bool = False,
                    machine_file: str | None = None, suggest: bool = True):
    """T_OL and T_nOL of the compiled kernel.

    ``assume_aligned`` (bytes or None) goes to :func:`.codegen.generate_c`; ``trust_machine``
    and ``machine_file`` to :func:`.compile.choose_compiler` (the machine file's flags and
    compiler name are checked against an allow-list unless trusted). A note names the
    options given (compiler, flags, block, pointer increment, alignment). With ``suggest`` a
    missing analyzer's message ends in an alternative that can run here
    (:func:`.available.instead`: the other analyzer where it is usable, else the analytic model);
    ``--incore auto`` passes False (it goes on to the next analyzer itself).

    The kernel is compiled without its OpenMP work-sharing pragmas
    (:func:`.compile.single_core_source`): the in-core analysis is of one core's loop.

    Returns:
        ``(InCoreResult, CompiledInCore)`` with T_OL/T_nOL in cy/CL; the second with its
        :class:`PortTable`.

    Raises:
        UnknownInstructions: the analyzer leaves instructions of the block unaccounted for
            (:func:`unaccounted`); the message names the analyzer and the instructions.
        ToolError: compiler or analyzer missing or failing, loop not found, or a loop block
            that cannot be the kernel's inner loop (:func:`.asm.implausible`: a function call,
            too many iterations per pass, vectorization across an outer loop); one line.
        OptionError: ``--pointer-increment`` gives an implausible iteration count.
        MachineError: a compiler flag or name from the machine file is not allowed.
    """
    # the compiler and flags first: what the user named (or a machine file's untrusted flags) is
    # checked even where no analyzer is installed
    choice = choose_compiler(machine, compiler, flags, trust_machine, machine_file)
    tool, tool_version, target, target_note = _analyzer_tool(machine, analyzer, suggest)
    # the SIMD level the analyzer models: the CPU it runs as (a probed host's llvm_mca_cpu upgraded
    # to the generation it is: llvm_mca.cpu_for, osaca_backend.arch_for), else the machine file's name
    cpu = target if analyzer == "llvm-mca" else (osaca_backend.cpu_of(target) or machine.in_core.llvm_mca_cpu)
    src = single_core_source(generate_c(kernel, defines, assume_aligned=assume_aligned))
    work_stride = _stride_bytes(kernel, defines) if kernel.work_accesses() else None
    shape = kernel_shape(kernel, machine, defines, work_stride)
    aarch64 = is_aarch64(machine)
    key = cache.make_key("compiled-incore-v6", analyzer, src, choice.command, choice.version, choice.flags, tool,
                         tool_version, target, asm_block, pointer_increment, aarch64, assume_aligned)
    hit = cache.load("incore", key) if use_cache else None
    if isinstance(hit, CompiledInCore):
        info = hit
    else:
        asm, loops = _assembly_and_nest(src, choice, kernel, use_cache)
        try:
            block = find_kernel_block(asm, work_stride, aarch64, asm_block,
                                      pointer_increment, shape.strides, inner_trips(kernel, defines))
        except ToolError as exc:  # say why there is no loop where the report does
            if loops is None or not loops.library_calls:
                raise
            raise ToolError(f"{exc}; {_loops_note(loops, kernel, choice)}") from None
        info = _analyse_block(block, analyzer, tool, tool_version, target, choice, src, aarch64)
        info = dataclasses.replace(info, loops=loops)
        if use_cache:
            cache.store("incore", key, info)
    _check_block(info, shape, pointer_increment)
    info = dataclasses.replace(info, check=checked.check_block(info, machine))
    info, unrolled = whole_inner_loops(info, kernel, defines)
    mismatch, beyond = _isa_mismatch(info, choice, cpu, aarch64)
    bad = unaccounted(info, machine, isa.cpu_isa(cpu))
    if bad:
        raise llvm_mca.UnknownInstructions(_unknown_message(info, bad, mismatch if beyond else ""), tuple(bad))
    notes = unrolled + ([mismatch + (f"; the loop block has no instruction beyond {isa.cpu_isa(cpu)}" if beyond
                                    else "")] if mismatch else [])
    if info.loops is not None:
        notes.append(_loops_note(info.loops, kernel, choice))
    info = dataclasses.replace(info, port_table=port_table(info, machine, iterations_per_unit, use_cache))
    bytes_per_cl = (kernel.bytes_loaded_per_iteration() * iterations_per_unit,
                    kernel.bytes_stored_per_iteration() * iterations_per_unit)
    res = to_incore_result(info, machine, iterations_per_unit, bytes_per_cl)
    res = with_split_accesses(res, info, kernel, machine, defines, iterations_per_unit)
    res = front_end_bound(res, info, machine, iterations_per_unit)
    notes += _given(compiler, flags, asm_block, pointer_increment, assume_aligned)
    notes += ([target_note] if target_note else []) + (info.check.notes() if info.check else [])
    return dataclasses.replace(res, notes=tuple(notes) + res.notes), info


def loop_structure(kernel, machine, defines: dict, compiler: str | None = None, flags: str | None = None,
                   use_cache: bool = True, trust_machine: bool = False,
                   machine_file: str | None = None) -> CompiledNest | None:
    """What the compiler does to ``kernel``'s nest at the sizes ``defines``, from its optimisation
    report (:func:`.loop_report.read_report`), compiled as :func:`compiled_incore` compiles it;
    None where the compiler gives no report (not gcc). Cached per user (:mod:`loopmodel.cache`).

    Raises:
        ToolError: the compiler is missing or fails (one line).
        MachineError: a compiler flag or name from the machine file is not allowed.
    """
    choice = choose_compiler(machine, compiler, flags, trust_machine, machine_file)
    return _assembly_and_nest(single_core_source(generate_c(kernel, defines)), choice, kernel, use_cache)[1]


def _assembly_and_nest(src: str, choice, kernel, use_cache: bool) -> tuple:
    """``(assembly, CompiledNest or None)`` of the generated program ``src`` of ``kernel``: one
    compilation with the compiler's optimisation report (:func:`.compile.assembly_and_report`),
    cached per user, so that :func:`loop_structure` and :func:`compiled_incore` of the same
    program compile it once."""
    key = cache.make_key("assembly-and-nest-v1", src, choice.command, choice.version, choice.flags)
    hit = cache.load("loops", key) if use_cache else None
    if isinstance(hit, tuple) and len(hit) == 2:
        return hit
    asm, report = assembly_and_report(src, choice)
    nest = None if report is None else read_report(report, os.path.basename(choice.command), src,
                                                   kernel.loop_indices, (MARK_START, MARK_END))
    if use_cache:
        cache.store("loops", key, (asm, nest))
    return asm, nest


def _loops_note(nest: CompiledNest, kernel, choice) -> str:
    """The compiled nest in one line (:meth:`.loop_report.CompiledNest.describe`); where gcc
    "vectorised" the inner loop of a floating-point reduction it may not reassociate
    (:func:`.compile.fp_reassociation`, :func:`.loop_report.fold_left_reductions`), it says that
    only the loads are vector: gcc's fold-left reduction adds one element at a time, in source order."""
    text = nest.describe(max((a.element_size for a in kernel.arrays.values()), default=8))
    kept = fold_left_reductions(nest, kernel, fp_reassociation(choice.command, choice.flags)[0])
    if not kept:
        return text
    return (text + f"; the reduction into {', '.join(repr(v) for v in kept)} stays in source order (gcc's fold-left "
            "reduction: vector loads, one element added at a time)")


def issued_instructions(block: str, aarch64: bool = False) -> int:
    """Instructions the front end issues per pass: the block's instruction lines, an x86 compare
    (or ALU instruction) directly followed by a conditional jump counted once (macro-fusion,
    :func:`.ports.macro_fused`)."""
    lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
    mnems = [ln.split(None, 1)[0].lower() for ln in lines]
    fused = 0 if aarch64 else sum(1 for a, b in zip(mnems, mnems[1:]) if P.macro_fused(a, b))
    return len(lines) - fused


def front_end_bound(res: InCoreResult, info: CompiledInCore, machine, iterations_per_unit: float) -> InCoreResult:
    """T_OL bounded from below by the front end and the loop branch, as measured on the host.

    One pass issues :func:`issued_instructions` instructions at most
    ``in_core.instructions_per_cycle`` per cycle, and ends in one taken branch, at most
    ``in_core.taken_branches_per_cycle`` per cycle (both measured by ``machine probe``; the
    analyzers' CPU models may assume other widths). Either bound, in cy/CL (x iterations per CL /
    iterations per pass), raises T_OL where it exceeds it, with a note naming it. A machine model
    without the figures leaves ``res`` unchanged.
    """
    ic = machine.in_core
    per_cl = iterations_per_unit / info.iterations_per_pass
    bounds = {}
    if ic.instructions_per_cycle:
        n = issued_instructions(info.block, info.aarch64)
        bounds[f"front end: {n} instructions per pass at {ic.instructions_per_cycle:.3g} per cy"] = \
            n / ic.instructions_per_cycle * per_cl
    taken = ic.taken_branches_per_cycle
    if taken:
        bounds[f"loop branch: one taken branch per pass at {taken:.3g} per cy"] = per_cl / taken
    if not bounds:
        return res
    what, t = max(bounds.items(), key=lambda kv: kv[1])
    comps = {**res.components, "front end": t}
    if t <= res.T_OL + 1e-9:
        return dataclasses.replace(res, components=comps)
    origin = {**(res.origin or {}), "T_OL": f"the {what} (measured on this host)"}
    return dataclasses.replace(res, T_OL=t, components=comps, origin=origin, notes=res.notes + (
        f"T_OL set by the {what} (measured): {t:.3g} cy/CL, above the {res.T_OL:.3g} cy/CL of the ports",))


def with_split_accesses(res: InCoreResult, info: CompiledInCore, kernel, machine, defines: dict,
                        iterations_per_unit: float) -> InCoreResult:
    """``res`` with the extra port time of cache-line-split vector loads and stores.

    The analyzers time an unaligned vector access like an aligned one; where it crosses a cache
    line the core accesses both lines (:mod:`loopmodel.models.split_access`: which of the
    kernel's streams split, for the widest packed access of the block). Each split load costs
    ``in_core.load.split_extra`` aligned loads' time more, ``split_extra /
    load.instructions_per_cycle`` cy, added to T_nOL (load-port cycles,
    cross-architecture-machine-models.txt §3.4.1); each split store likewise with
    ``in_core.store.split_extra``, in the store time that bounds T_OL where the machine's stores
    overlap (T_nOL otherwise: :meth:`~loopmodel.machine.model.MachineModel.stores_overlap`).
    Both factors are measured by ``machine probe``; a machine model without them is unchanged.

    Returns:
        the result (cy/CL) with components ``split loads`` / ``split stores`` and a note, and its
        ``split`` (the figures, charged or not); ``res`` unchanged for scalar blocks or where the
        offsets cannot be evaluated.
    """
    ic = machine.in_core
    width = max([packed_bytes(ln, info.aarch64) for ln in info.block.split("\n") if ln.strip()] + [0])
    if width < 16:
        return res
    split = split_accesses(kernel, defines, int(width), int(machine.cacheline_size))
    if split is None:
        return res
    res = dataclasses.replace(res, split=split)
    if not (split.loads or split.stores) or not (ic.load.split_extra or ic.store.split_extra):
        return res
    t_ol, t_nol, comps = res.T_OL, res.T_nOL, dict(res.components)
    extra_ld = split.loads * iterations_per_unit * ic.load.split_extra / ic.load.instructions_per_cycle
    t_nol += extra_ld
    comps["split loads"] = extra_ld
    if split.stores and ic.store.split_extra:
        vectors = kernel.bytes_stored_per_iteration() / width
        t_st = (vectors + split.stores * ic.store.split_extra) * iterations_per_unit / ic.store.instructions_per_cycle
        comps["split stores"] = t_st
        if machine.stores_overlap():
            t_ol = max(t_ol, t_st)
        else:
            t_nol = max(t_nol, t_st + extra_ld)
    note = (f"{split.describe()}: +{extra_ld:.3g} cy/CL of load-port time ({ic.load.split_extra:.3g} x an aligned "
            f"load per split load, measured)" + (f"; store time with split stores {comps['split stores']:.3g} cy/CL "
                                                 f"({ic.store.split_extra:.3g} extra per split store)"
                                                 if "split stores" in comps else ""))
    return dataclasses.replace(res, T_OL=t_ol, T_nOL=t_nol, components=comps, notes=res.notes + (note,))


def _given(compiler, flags, asm_block, pointer_increment, assume_aligned) -> list:
    """One note naming the in-core options given (not None) that the compiled analysis applied."""
    given = [f"{name} {value}" for name, value in (
        ("--compiler", compiler), ("--compiler-flags", flags and repr(flags)), ("--asm-block", asm_block),
        ("--pointer-increment", pointer_increment and f"{pointer_increment:g} B"),
        ("--assume-aligned", assume_aligned and f"{assume_aligned} B")) if value]
    return [f"applied to the compiled kernel: {', '.join(given)}"] if given else []


def _analyse_block(block, analyzer: str, tool: str, tool_version: str, target: str, choice, src: str,
                   aarch64: bool) -> CompiledInCore:
    """Run ``analyzer`` on the loop block; instructions it has no model for are kept in ``unknown``."""
    try:
        if analyzer == "llvm-mca":
            rep = llvm_mca.run(block.text, target, tool, aarch64)
        else:
            rep = osaca_backend.run(block.text, target, aarch64)
    except llvm_mca.UnknownInstructions as exc:
        rep = llvm_mca.PortReport({}, 0.0, 0.0, exc.message, unknown=exc.instructions)
    return CompiledInCore(analyzer, tool_version, choice.command, choice.version, choice.flags, block.label,
                          block.text, block.iterations_per_pass, block.bytes_per_pass, rep.ports,
                          rep.block_throughput, rep.cycles_per_pass, src, rep.instructions, aarch64,
                          rep.unknown, rep.store_ports or _store_ports(rep.instructions, aarch64), target,
                          timings=rep.timings)


def _store_ports(instrs, aarch64: bool) -> tuple:
    """Port groups on which the store instructions of a per-instruction table put pressure."""
    units = P.port_totals(list(instrs), lambda t: access_kind(t, aarch64)[1])
    return tuple(sorted(P.group_max({k: v for k, v in units.items() if v > 0})))


def _isa_mismatch(info: CompiledInCore, choice, cpu: str | None, aarch64: bool) -> tuple:
    """``(text, beyond)``: why the compiler flags and the analyzer CPU are of different SIMD
    levels ('' when they agree or either is unknown), and whether the flags go beyond the CPU."""
    produced = isa.flags_isa(choice.command, choice.flags, choice.version, aarch64)
    supported = isa.cpu_isa(cpu)
    if produced is None or supported is None or produced == supported:
        return "", False
    flags = " ".join(choice.flags)
    if isa.rank(produced) > isa.rank(supported):
        return (f"compiler flags '{flags}' produce {produced} code, but the {info.analyzer} CPU model "
                f"({info.target}, from llvm_mca_cpu '{cpu}') has {supported} at most"), True
    return (f"compiler flags '{flags}' produce {produced} code, below the {supported} of the {info.analyzer} CPU "
            f"model ({info.target}): the analysis is of that {produced} code, not of the machine's widest SIMD"), False


def unaccounted(info: CompiledInCore, machine, cpu_level: str | None = None) -> list:
    """Instructions of the block the analyzer's result leaves unaccounted for.

    A result missing instructions underestimates both T_OL and T_nOL (an unknown load
    leaves T_nOL at 0), so it must not be used. Unaccounted are:

    * instructions the analyzer flags as unknown (llvm-mca's unsupported instructions,
      OSACA's instruction forms without throughput);
    * instructions beyond the SIMD level ``cpu_level`` of the analyzer's CPU
      (:func:`.instructions.isa_level`): llvm-mca times some of them as if they were the
      CPU's own (AVX-512 for ``znver3``, FMA for ``sandybridge``);
    * with a per-instruction table (llvm-mca): loads or stores with no port pressure;
    * all loads, when the block has loads but every ``non_overlapping`` (load) port of the
      machine model for this analyzer shows zero pressure.

    Args:
        info: the analysis (ports in cy per pass).
        machine: the machine model (``in_core.analyzer_ports``).
        cpu_level: SIMD level of the analyzer's CPU (:data:`.isa.CPU_ISA`), None: unchecked.

    Returns:
        Instruction lines (whitespace normalised), in block order, without repeats.
    """
    lines = [" ".join(ln.split()) for ln in info.block.split("\n") if ln.strip()]
    bad = [" ".join(u.split()) for u in info.unknown]
    bad += isa.beyond(lines, cpu_level, info.aarch64)
    for ins in info.instructions:
        if any(access_kind(ins.text, info.aarch64)) and not any(v > 0 for v in ins.pressure.values()):
            bad.append(" ".join(ins.text.split()))
    _, non = port_sets(machine, info.analyzer)
    loads = [ln for ln in lines if access_kind(ln, info.aarch64)[0]]
    if non and loads and info.ports_cy_per_pass and not any(info.ports_cy_per_pass.get(p, 0.0) > 0 for p in non):
        bad += loads
    order = {ln: i for i, ln in reversed(list(enumerate(lines)))}
    return sorted(dict.fromkeys(bad), key=lambda ln: order.get(ln, len(lines)))


def _unknown_message(info: CompiledInCore, bad: list, mismatch: str) -> str:
    shown = "; ".join(bad[:4]) + (f"; and {len(bad) - 4} more" if len(bad) > 4 else "")
    why = f" ({mismatch})" if mismatch else ""
    return (f"{info.analyzer} {info.analyzer_version} ({info.target}) has no model for {len(bad)} instruction(s) of "
            f"the loop block {info.block_label}: {shown}{why}")


def to_incore_result(info: CompiledInCore, machine, iterations_per_unit: float,
                     bytes_per_cl: tuple | None = None) -> InCoreResult:
    """Map per-port cycles per pass to T_OL / T_nOL in cy/CL (see module docstring).

    Args:
        info: the analysis (cy per pass).
        machine: machine model (port lists, L1 data paths).
        iterations_per_unit: inner-loop iterations per CL of work.
        bytes_per_cl: ``(loaded, stored)`` bytes per CL between registers and L1; when
            given, T_nOL and the store share are bounded by the L1 data paths
            (:func:`data_path_bound`).
    """
    notes = []
    if not machine.in_core.analyzer_ports.get(info.analyzer, {}):
        notes.append(f"machine model has no analyzer_ports for {info.analyzer}: all ports counted as overlapping"
                     + ("" if machine.stores_overlap() else ", but the store instructions' (T_nOL, in_core.stores_in)"))
    table = info.port_table or port_table(info, machine, iterations_per_unit)
    per_cl = table.cy_per_cl_per_pass
    t_ol, t_nol = table.T_OL * per_cl, table.T_nOL * per_cl
    comps = {k: v * per_cl for k, v in sorted(table.balanced.items())}
    ol_from, nol_from = (f"{src}: {v:.2f} cy per pass x {per_cl:g} passes per CL" if src else ""
                         for src, v in ((table.T_OL_from, table.T_OL), (table.T_nOL_from, table.T_nOL)))
    t_ol, more, floor = checked.throughput_floor(info, t_ol, per_cl)
    notes += more
    ol_from = floor or ol_from
    t_ol, dependency, more, chain = latency_bound(info, t_ol, per_cl, machine)
    notes += more
    ol_from = chain or ol_from
    comps["block throughput"] = info.block_throughput * per_cl
    comps["simulated"] = info.cycles_per_pass * per_cl
    before = t_ol, t_nol
    if bytes_per_cl is not None:
        t_ol, t_nol, more, bound = data_path_bound(t_ol, t_nol, bytes_per_cl, machine, machine.stores_overlap())
        notes += more
        comps.update(bound)
        ol_from, nol_from = _bound_source((ol_from, nol_from), before, (t_ol, t_nol), bound)
    notes.append(f"in-core from {info.analyzer} {info.analyzer_version} on block {info.block_label} "
                 f"({info.iterations_per_pass:g} it per pass, {_advance(info)}), compiled with {info.compiler} "
                 f"{' '.join(info.flags)}")
    origin = {"T_OL": ol_from or "no port listed", "T_nOL": nol_from or "no port listed"}
    return InCoreResult(info.analyzer, t_ol, t_nol, comps, int(round(info.iterations_per_pass)), {}, dependency,
                        tuple(notes), origin=origin)


def _advance(info: CompiledInCore) -> str:
    """How the iterations per pass were read: the pointer increment, or the loop counter."""
    if info.bytes_per_pass:
        return f"{info.bytes_per_pass:g} B pointer increment"
    return "from the loop counter: no pointer advances"


def latency_bound(info: CompiledInCore, t_ol: float, per_cl: float, machine) -> tuple:
    """T_OL raised to the latency per pass of the loop-carried dependency chains that limit the loop.

    The ECM's T_OL is the throughput bound of the loop body (kerncraft-tool-paper.txt §2.3); a
    loop-carried dependency chain (:func:`.deps.loop_carried_chains`: an accumulator, a
    recurrence through memory) bounds a pass by the latency of its critical cycle. Independent
    chains (the partial sums of a reassociated reduction, one per vector accumulator) run in
    parallel: the bound is the longest single chain, not their sum.

    * Where the probe measured the latency of every FP arithmetic instruction on the chains
      (:mod:`.chain_latency`: the probe's latency at the instruction's width, the analyzer's
      for moves and integer instructions, the store-to-load forwarding latency through
      memory), T_OL = max(throughput T_OL, longest chain in cy per pass x cy/CL per cy/pass);
      a note names the chain, each latency with its source, and the total.
    * Otherwise the analyzer's simulated time per pass sets it, as its latencies are all there
      is: only where it is more than 10 % above the block's throughput bound and the block has
      a chain (without one the excess is the analyzer's scheduling of independent iterations,
      llvm-mca's finite out-of-order window over long chains within one iteration, not a bound
      of the steady state: T_OL stays the throughput bound, with a note). llvm-mca assumes
      loads and stores do not alias, so a chain through memory is missing from its simulated
      time: it is added from :mod:`.chain_latency` (forwarding latency assumed where not
      measured), or where its latency is unknown, a note says T_OL may be too low.

    Args:
        info: the analysis (cy per pass; ``block`` the instruction lines).
        t_ol: T_OL from the port pressure (cy/CL).
        per_cl: cy/CL per cy per pass.
        machine: the machine model (the probe's latencies).

    Returns:
        ``(T_OL in cy/CL, dependency in cy/it (0 without a chain), notes, source)``; ``source``
        names the chain when it sets T_OL, else ''.
    """
    lines = [" ".join(ln.split()) for ln in info.block.split("\n") if ln.strip()]
    chains = chain_latencies(lines, info.aarch64, machine, lambda: analyzer_latencies(info), info.analyzer)
    if chains and all(c.measured for c in chains):
        return _measured_bound(info, t_ol, per_cl, chains)
    return _simulated_bound(info, t_ol, per_cl, chains, has_op_latencies(machine))


def _alias_note(info: CompiledInCore, chain, counted: bool) -> str:
    return (f"{info.analyzer} assumes that loads and stores do not alias, so its simulated time leaves out the "
            f"{chain.describe()}: " + ("counted here with the store-to-load forwarding latency" if counted
                                       else "T_OL may be too low"))


def _measured_bound(info: CompiledInCore, t_ol: float, per_cl: float, chains: list) -> tuple:
    """:func:`latency_bound` from the chains' latencies (the probe's for their arithmetic)."""
    worst = max(chains, key=lambda c: c.cy_per_pass)
    cy = worst.cy_per_pass
    notes = [_alias_note(info, c.chain, True) for c in chains if c.chain.memory and info.analyzer == "llvm-mca"]
    if cy * per_cl <= t_ol:
        return t_ol, cy / info.iterations_per_pass, notes, ""
    more = f" (the longest of {len(chains)} independent chains)" if len(chains) > 1 else ""
    notes.append(f"latency-bound: {worst.chain.describe()}{more}: {worst.describe()} ({info.analyzer} simulates "
                 f"{info.cycles_per_pass:.2f} cy per pass with its own latencies); T_OL = {cy:.3g} cy per pass x "
                 f"{per_cl:g} passes per CL")
    return (cy * per_cl, cy / info.iterations_per_pass, notes,
            f"the loop-carried dependency chain through {worst.chain.through()} ({cy:.2f} cy per pass from the "
            "probe's latencies)")


def _simulated_bound(info: CompiledInCore, t_ol: float, per_cl: float, chains: list, probed: bool) -> tuple:
    """:func:`latency_bound` from the analyzer's simulated time, with the chains through memory it misses."""
    mem = [c for c in chains if c.chain.memory]
    notes = [_alias_note(info, c.chain, c.cy_per_pass is not None) for c in mem if info.analyzer == "llvm-mca"]
    notes += [f"no latency measured by the probe for {'; '.join(c.unmeasured[:3])} on the {c.chain.describe()}: "
              f"the chain is taken at {info.analyzer}'s latencies" for c in chains if c.unmeasured and probed]
    bounds = [(c.cy_per_pass, c) for c in mem if c.cy_per_pass is not None and info.analyzer == "llvm-mca"]
    sim = (f"{info.cycles_per_pass:.2f} cy per pass simulated vs {info.block_throughput:.2f} cy throughput "
           "bound")
    if info.cycles_per_pass > 1.1 * info.block_throughput:
        if not chains:
            notes.append(f"{info.analyzer}: {sim}, but the loop block has no loop-carried dependency chain (only "
                         "pointer and counter increments carry values into the next pass): T_OL is the throughput "
                         "bound")
        else:
            bounds.append((info.cycles_per_pass, None))
    if not bounds:
        return t_ol, 0.0, notes, ""
    cy, worst = max(bounds, key=lambda b: b[0])
    if cy * per_cl <= t_ol:
        return t_ol, cy / info.iterations_per_pass, notes, ""
    if worst is None:
        named = chains[0].chain.describe() + (f" (and {len(chains) - 1} more chain(s))" if len(chains) > 1 else "")
        notes.append(f"latency-bound: {named}; {sim}; T_OL is the simulated time")
        return (cy * per_cl, cy / info.iterations_per_pass, notes,
                f"the loop-carried dependency chain through {chains[0].chain.through()} ({cy:.2f} cy per pass "
                "simulated)")
    notes.append(f"latency-bound: {worst.chain.describe()}: {worst.describe()}; T_OL = {cy:.3g} cy per pass x "
                 f"{per_cl:g} passes per CL")
    return (cy * per_cl, cy / info.iterations_per_pass, notes,
            f"the loop-carried dependency chain through {worst.chain.through()} ({cy:.2f} cy per pass)")


def _bound_source(sources: tuple, before: tuple, after: tuple, bound: dict) -> tuple:
    """``(T_OL source, T_nOL source)`` after :func:`data_path_bound`: a value it raised comes from
    the L1 load or store data path (``bound``: their cy/CL), the others keep ``sources``."""
    out = []
    for src, old, new in zip(sources, before, after):
        if new > old + 1e-9:
            path = "load" if abs(new - bound.get("LD data path", -1.0)) <= 1e-9 else "store"
            src = f"the L1 {path} data path"
        out.append(src)
    return tuple(out)


def port_table(info: CompiledInCore, machine, iterations_per_unit: float, use_cache: bool = False) -> PortTable:
    """The port pressure of ``info``'s block as the ECM counts it, and T_OL/T_nOL per pass.

    Balances the analyzer's pressure once (:func:`effective_ports`), classifies the ports
    with the machine model's ``in_core.analyzer_ports`` (:func:`port_sets`,
    :func:`shared_ports`) and takes T_OL/T_nOL from
    :func:`loopmodel.models.incore.port_pressure_times` (kerncraft-tool-paper.txt §2.3). With
    no lists for the analyzer every port is overlapping and nothing is balanced (which units
    are alternatives for one uop is unknown): T_OL is the analyzer's block throughput bound
    (llvm-mca's "Block RThroughput", OSACA's largest port pressure) and T_nOL 0 (the L1 data
    paths of :func:`data_path_bound` then bound it); where the machine's stores count in
    T_nOL, the ports only stores use are T_nOL and T_OL is the largest pressure on the
    others as the analyzer scheduled them (its bound would count the stores), at most that
    bound.

    Args:
        info: the analysis (cy per pass).
        machine: machine model.
        iterations_per_unit: inner-loop iterations per CL of work.
        use_cache: take the balanced pressure from the per-user cache (:func:`balanced_ports`).

    Returns:
        :class:`PortTable` (cy per pass; ``cy_per_cl_per_pass`` converts to cy/CL).
    """
    over, non = port_sets(machine, info.analyzer)
    counted_over = over | shared_ports(machine, info.analyzer)
    listed = bool(machine.in_core.analyzer_ports.get(info.analyzer, {}))
    if not listed:
        counted_over = set(info.ports_cy_per_pass)  # no lists: all overlapping (role '-' in the table)
    per_cl = iterations_per_unit / info.iterations_per_pass
    bal, loads = balanced_ports(info, machine, use_cache)
    if machine.ports_decide():  # Kerncraft's files: each list's whole pressure, as the peer's ECM takes it
        memory, nol, what = bal, non, "all instructions"
    elif machine.stores_overlap():  # Intel's ECM: the loads' pressure on the load ports is T_nOL
        memory, nol, what = loads, non, "loads"
    else:  # eq. (1): every uop of a load or store on the memory ports (store ports too) is T_nOL
        memory, nol, what = bal, non | _store_ports_only(info), "loads, stores"
        counted_over = counted_over - nol
    t_ol, t_nol = port_pressure_times(bal, memory, counted_over, nol)
    rows = []
    for name, v in sorted(info.ports_cy_per_pass.items()):
        role = f"T_nOL ({what})" if name in nol else ("T_OL" if name in over else "-")
        counted = memory.get(name, 0.0) if name in nol else bal.get(name, v)
        rows.append(PortRow(name, v, bal.get(name, v), loads.get(name, 0.0), counted, counted * per_cl, role))
    rows = [dataclasses.replace(r, role=r.role + " + T_OL (all)")
            if r.port in non & counted_over and r.role.startswith("T_nOL") else r for r in rows]
    ol_from, nol_from = _origins(rows, t_ol, t_nol)
    if not listed and machine.stores_overlap():  # the reported pressure is not balanced: the analyzer's bound
        t_ol = info.block_throughput
        ol_from = f"the block throughput bound of {info.analyzer} (the machine model lists no ports for it)"
    elif not listed:  # the bound counts the stores' ports, T_nOL here: the other ports as scheduled, capped by it
        ol_from = _named([(r.port, r.balanced, f"all instructions, as {info.analyzer} scheduled them; the machine "
                           "model lists no ports") for r in rows if r.port in counted_over], t_ol)
        if t_ol > info.block_throughput:
            t_ol = info.block_throughput
            ol_from = (f"the block throughput bound of {info.analyzer}, below its schedule's largest pressure on a "
                       "port that is not a store's (the machine model lists no ports for it)")
    return PortTable(tuple(rows), bal, loads, t_ol, t_nol, per_cl, ol_from, nol_from)


def _origins(rows, t_ol: float, t_nol: float) -> tuple:
    """``("P2, P3 (all instructions)", "P2, P3 (loads)")``: the rows whose T_OL candidate (balanced
    pressure of a ``T_OL`` role) and T_nOL candidate (``counted`` of a ``T_nOL`` role) give
    ``t_ol`` and ``t_nol``; '' where the value is 0 or no row gives it."""
    ol = [(r.port, r.balanced, "all instructions") for r in rows
          if r.role == "T_OL" or r.role.endswith("+ T_OL (all)")]
    nol = [(r.port, r.counted, r.role.split("(", 1)[1].split(")", 1)[0]) for r in rows
           if r.role.startswith("T_nOL")]
    return _named(ol, t_ol), _named(nol, t_nol)


def _named(candidates, value: float) -> str:
    hits = [(port, kind) for port, v, kind in candidates if value > 0 and abs(v - value) <= 1e-9]
    if not hits:
        return ""
    return f"{', '.join(p for p, _ in hits)} ({'/'.join(dict.fromkeys(k for _, k in hits))})"


def _store_ports_only(info: CompiledInCore) -> set:
    """The ports of the block's store instructions that no instruction without a memory access
    uses (store data and address ports; not an ALU port that updates a base register)."""
    if not info.instructions:  # OSACA: its store ports as it reports them
        return set(info.store_ports)
    other = P.group_max(P.port_totals(list(info.instructions), lambda t: not any(access_kind(t, info.aarch64))))
    return {p for p in info.store_ports if other.get(p, 0.0) <= 0.0}


def data_path_bound(t_ol: float, t_nol: float, bytes_per_cl: tuple, machine, stores_overlap: bool) -> tuple:
    """Bound the in-core times from below by the L1 data paths of the machine model.

    Sandy Bridge and Ivy Bridge move 16 B per cycle per load port, so a 32 B AVX load
    occupies its port for two cycles (ecm-model-slides.txt, IVB 2D 5-pt example: T_nOL =
    8 cy for 256 B loaded per CL; cross-architecture-machine-models.txt §3.2 and §3.4.1
    eq. (1), n_LD/f_LD with f in B/cy); OSACA 0.7.1 and llvm-mca 14 count one cycle. So

    * T_nOL >= (bytes loaded per CL) / ``in_core.load.bytes_per_cycle``, and
    * the store share >= (bytes stored per CL) / ``in_core.store.bytes_per_cycle``, in
      T_OL where the machine's stores overlap (Intel: "T_OL is the overlapping time for
      computations and stores", kerncraft-tool-paper.txt §2.3; the ECM slides' store port 4
      in T_OL), in T_nOL otherwise (eq. (1) of the cross-architecture paper); the rule is
      :meth:`loopmodel.machine.model.MachineModel.stores_overlap`.

    Args:
        t_ol, t_nol: the analyzer's times (cy/CL).
        bytes_per_cl: ``(loaded, stored)`` B per CL.
        machine: machine model (``in_core.load`` / ``in_core.store``, B/cy).
        stores_overlap: the store share belongs to T_OL.

    Returns:
        ``(T_OL, T_nOL, notes, components)``: cy/CL; a note for each bound that sets its
        value; components ``LD data path`` and ``ST data path`` in cy/CL.
    """
    ic = machine.in_core
    loaded, stored = bytes_per_cl
    t_ld = loaded / ic.load.bytes_per_cycle if ic.load.bytes_per_cycle else 0.0
    t_st = stored / ic.store.bytes_per_cycle if ic.store.bytes_per_cycle else 0.0
    notes = []
    if t_ld > t_nol + 1e-9:
        notes.append(f"T_nOL set by the L1 load data paths: {loaded:g} B per CL / {ic.load.bytes_per_cycle:g} B/cy = "
                     f"{t_ld:.2f} cy/CL (the analyzer's ports give {t_nol:.2f})")
        t_nol = t_ld
    which = "T_OL" if stores_overlap else "T_nOL"
    current = t_ol if stores_overlap else t_nol
    if t_st > current + 1e-9:
        notes.append(f"{which} set by the L1 store data path: {stored:g} B per CL / {ic.store.bytes_per_cycle:g} B/cy "
                     f"= {t_st:.2f} cy/CL (the analyzer's ports give {current:.2f})")
        if stores_overlap:
            t_ol = t_st
        else:
            t_nol = t_st
    return t_ol, t_nol, notes, {"LD data path": t_ld, "ST data path": t_st}


def port_sets(machine, analyzer: str) -> tuple:
    """``(overlapping, non_overlapping)`` port names of ``machine`` for ``analyzer``.

    A port listed in both (Kerncraft files list the load ports of ThunderX2 in both) is
    non-overlapping only.
    """
    ports = machine.in_core.analyzer_ports.get(analyzer, {})
    non = set(ports.get("non_overlapping", []))
    return set(ports.get("overlapping", [])) - non, non


def shared_ports(machine, analyzer: str) -> set:
    """Ports listed as both overlapping and non-overlapping for ``analyzer``.

    Kerncraft's files list llvm-mca's combined address+data ports so (Sandy Bridge
    ``SBPort23``, Skylake ``SKXPort2``/``SKXPort3``, ThunderX2's load ports): their load
    pressure is T_nOL, and their whole pressure, the address uops of stores included, is a
    T_OL candidate, as the address ports ``2``/``3`` of the OSACA lists of the same files are
    (kerncraft-tool-paper.txt §2.3; ecm-model-slides.txt, IVB example: T_OL = 9 cy from ports
    2/3). For balancing they stay memory ports (:func:`effective_ports`).
    """
    ports = machine.in_core.analyzer_ports.get(analyzer, {})
    return set(ports.get("overlapping", [])) & set(ports.get("non_overlapping", []))


def balanced_ports(info: CompiledInCore, machine, use_cache: bool = True) -> tuple:
    """:func:`effective_ports` of ``info`` on ``machine``, from the per-user cache
    (:mod:`loopmodel.cache`) where it was computed before: the balancing takes longer than the
    rest of an analysis whose compiled block is cached. The key is everything the balancing
    reads (the analyzer, the ISA, the per-instruction and per-port pressure, the machine's port
    lists for the analyzer), so any other input is another entry; the entry is the computed
    pair itself.

    Returns:
        ``(ports, load_ports)`` as :func:`effective_ports`.
    """
    if not use_cache:
        return effective_ports(info, machine)
    ports = machine.in_core.analyzer_ports.get(info.analyzer, {})
    key = cache.make_key("balanced-ports-v1", info.analyzer, info.aarch64, info.instructions,
                         sorted(info.ports_cy_per_pass.items()), bool(ports), sorted(ports.get("overlapping", [])),
                         sorted(ports.get("non_overlapping", [])))
    hit = cache.load("ports", key)
    if isinstance(hit, tuple) and len(hit) == 2:
        return hit
    out = effective_ports(info, machine)
    cache.store("ports", key, out)
    return out


def effective_ports(info: CompiledInCore, machine) -> tuple:
    """Port pressure (cy per pass) used for T_OL, and that of load instructions for T_nOL.

    With a per-instruction table (llvm-mca): x86 compare-and-branch pairs are fused,
    indexed stores generate their address on ports 2/3, not 7 (Haswell to Skylake), and
    each instruction's pressure, made whole uops where llvm-mca's two decimals fall short
    (:func:`.ports.whole_uops`), is balanced over the ports it used, separately among the
    machine's ``overlapping`` ports and among the others (an instruction's load uop and
    its arithmetic uop cannot trade ports); dividers are never balanced
    (:mod:`.ports`); the load instructions are balanced once more by themselves for
    T_nOL. Without one (OSACA, whose schedule is already optimal and whose
    load-data ports carry loads only), or without port lists for the analyzer in the
    machine model (no classes to balance within), the printed pressure is used for both.

    Returns:
        ``(ports, load_ports)``: dicts port name -> cy per pass.
    """
    if not info.instructions or not machine.in_core.analyzer_ports.get(info.analyzer, {}):
        return dict(info.ports_cy_per_pass), dict(info.ports_cy_per_pass)
    over, _ = port_sets(machine, info.analyzer)
    instrs = list(info.instructions) if info.aarch64 else \
        P.indexed_store_addresses(P.fuse_compare_branch(list(info.instructions)))
    def cls(unit):
        return None if "div" in unit.lower() else (unit.split(".")[0] in over)

    instrs = P.whole_uops(instrs, cls)
    names = set(info.ports_cy_per_pass)
    full = P.group_max(P.port_totals(P.balance(instrs, cls)))
    # the loads balanced by themselves: on a port shared with store addresses (SBPort23) the
    # joint optimum leaves the loads' own share uneven
    loads = P.group_max(P.port_totals(P.balance([i for i in instrs if access_kind(i.text, info.aarch64)[0]], cls)))
    return ({k: round(full.get(k, 0.0), 4) for k in names}, {k: round(loads.get(k, 0.0), 4) for k in names})
