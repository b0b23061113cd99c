"""In-core time of the compiled kernel (ECM T_OL / T_nOL from an analyzer).

Pipeline (issue #4): generate the program (:mod:`.codegen`), compile it with the machine
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
  them): their pressure is mostly the loads' own address uops, already in T_nOL, and the
  store-address share is where the analyzers' models differ (llvm-mca sends indexed
  store addresses to Skylake's port 7, which the hardware does not).

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

from .. import cache
from ..errors import ToolError
from ..models.incore import InCoreResult


@dataclass(frozen=True)
class CompiledInCore:
    """What the compiled analysis used and found (for the report)."""

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


def _stride_bytes(kernel):
    from ..ir.kernel import coefficient

    idx = kernel.inner_loop.index
    written = set(kernel.written_arrays)
    cands = [a for a in list(kernel.writes) + list(kernel.reads) if not coefficient(a.offset, idx).is_zero()]
    cands.sort(key=lambda a: a.array not in written)
    if not cands:
        raise ToolError("no array moves with the inner loop: nothing to measure the pointer increment against")
    a = cands[0]
    c = coefficient(a.offset, idx)
    if not c.is_constant():
        raise ToolError(f"'{a}' has a size-dependent stride; give --pointer-increment")
    return abs(float(c.constant_value()) * kernel.inner_loop.step) * kernel.arrays[a.array].element_size


def compiled_incore(kernel, kernel_text: str, machine, defines: dict, iterations_per_unit: float,
                    analyzer: str = "llvm-mca", compiler: str | None = None, flags: str | None = None,
                    asm_block: str | None = None, pointer_increment: float | None = None,
                    use_cache: bool = True, assume_aligned: int | None = None, trust_machine: bool = False,
                    machine_file: str | None = None):
    """T_OL and T_nOL of the compiled kernel.

    ``assume_aligned`` (bytes or None) goes to :func:`.codegen.generate_c`; ``trust_machine``
    and ``machine_file`` to :func:`.compile.choose_compiler` (the machine file's flags and
    compiler name are checked against an allow-list unless trusted).

    Returns:
        ``(InCoreResult, CompiledInCore)`` with T_OL/T_nOL in cy/CL.

    Raises:
        ToolError: compiler or analyzer missing or failing, loop not found (one line).
        MachineError: a compiler flag or name from the machine file is not allowed.
    """
    from . import llvm_mca
    from .asm import find_kernel_block
    from .codegen import generate_c
    from .compile import choose_compiler, compile_to_assembly, is_aarch64

    from . import osaca_backend

    cpu = machine.in_core.llvm_mca_cpu
    if analyzer == "llvm-mca":
        if not cpu:
            raise ToolError(f"machine model '{machine.name}' names no llvm_mca_cpu (in_core.llvm_mca_cpu)")
        tool = llvm_mca.find_llvm_mca()
        if tool is None:
            raise ToolError("llvm-mca not found (Debian: apt-get install llvm); or use --incore analytic")
        tool_version, target = cache.tool_version(tool, llvm_mca.version), cpu
    elif analyzer == "osaca":
        if not osaca_backend.available():
            raise ToolError("OSACA is not installed (pip install 'loopmodel[osaca]'); or use --incore llvm-mca")
        tool, tool_version, target = "osaca", osaca_backend.version(), osaca_backend.arch_for(machine)
    else:
        raise ToolError(f"unknown analyzer '{analyzer}' (llvm-mca, osaca)")
    choice = choose_compiler(machine, compiler, flags, trust_machine, machine_file)
    src = generate_c(kernel, kernel_text, defines, assume_aligned=assume_aligned)
    aarch64 = is_aarch64(machine)
    key = cache.make_key("compiled-incore-v3", analyzer, src, choice.command, choice.version, choice.flags, tool,
                         tool_version, target, asm_block, pointer_increment, aarch64, assume_aligned)
    hit = cache.load("incore", key) if use_cache else None
    if isinstance(hit, CompiledInCore):
        info = hit
    else:
        asm = compile_to_assembly(src, choice)
        block = find_kernel_block(asm, _stride_bytes(kernel), aarch64, asm_block, pointer_increment)
        if analyzer == "llvm-mca":
            rep = llvm_mca.run(block.text, cpu, tool, aarch64)
        else:
            rep = osaca_backend.run(block.text, target, aarch64)
        info = CompiledInCore(analyzer, tool_version, choice.command, choice.version, choice.flags, block.label,
                              block.text, block.iterations_per_pass, block.bytes_per_pass, rep.ports,
                              rep.block_throughput, rep.cycles_per_pass, src, rep.instructions, aarch64)
        if use_cache:
            cache.store("incore", key, info)
    return to_incore_result(info, machine, iterations_per_unit), info


def to_incore_result(info: CompiledInCore, machine, iterations_per_unit: float) -> InCoreResult:
    """Map per-port cycles per pass to T_OL / T_nOL in cy/CL (see module docstring)."""
    ports = machine.in_core.analyzer_ports.get(info.analyzer, {})
    over, non = port_sets(machine, info.analyzer)
    notes = []
    if not ports:
        notes.append(f"machine model has no analyzer_ports for {info.analyzer}: all ports counted as overlapping")
        over = set(info.ports_cy_per_pass)
    per_cl = iterations_per_unit / info.iterations_per_pass
    allp, loads = effective_ports(info, machine)
    t_nol = max((v for k, v in loads.items() if k in non), default=0.0) * per_cl
    t_ol = max((v for k, v in allp.items() if k in over), default=0.0) * per_cl
    comps = {k: v * per_cl for k, v in sorted(allp.items())}
    dependency = 0.0
    if info.cycles_per_pass > 1.1 * info.block_throughput:
        dependency = info.cycles_per_pass / info.iterations_per_pass
        if info.cycles_per_pass * per_cl > t_ol:
            t_ol = info.cycles_per_pass * per_cl
            notes.append(f"latency-bound: {info.cycles_per_pass:.2f} cy per pass simulated vs "
                         f"{info.block_throughput:.2f} cy throughput bound (loop-carried or long dependency "
                         "chains); T_OL is the simulated time")
    comps["block throughput"] = info.block_throughput * per_cl
    comps["simulated"] = info.cycles_per_pass * per_cl
    notes.append(f"in-core from {info.analyzer} {info.analyzer_version} on block {info.block_label} "
                 f"({info.iterations_per_pass:g} it per pass, {info.bytes_per_pass:g} B pointer increment), "
                 f"compiled with {info.compiler} {' '.join(info.flags)}")
    return InCoreResult(info.analyzer, t_ol, t_nol, comps, int(round(info.iterations_per_pass)), {}, dependency,
                        tuple(notes))


def port_sets(machine, analyzer: str) -> tuple:
    """``(overlapping, non_overlapping)`` port names of ``machine`` for ``analyzer``.

    A port listed in both (Kerncraft files list the load ports of ThunderX2 in both) is
    non-overlapping only.
    """
    ports = machine.in_core.analyzer_ports.get(analyzer, {})
    non = set(ports.get("non_overlapping", []))
    return set(ports.get("overlapping", [])) - non, non


def effective_ports(info: CompiledInCore, machine) -> tuple:
    """Port pressure (cy per pass) used for T_OL, and that of load instructions for T_nOL.

    With a per-instruction table (llvm-mca): x86 compare-and-branch pairs are fused, and
    each instruction's pressure is balanced over the ports it used, separately among the
    machine's ``overlapping`` ports and among the others (an instruction's load uop and
    its arithmetic uop cannot trade ports); dividers are never balanced
    (:mod:`.ports`). Without one (OSACA, whose schedule is already optimal and whose
    load-data ports carry loads only), the printed pressure is used for both.

    Returns:
        ``(ports, load_ports)``: dicts port name -> cy per pass.
    """
    from . import ports as P

    if not info.instructions:
        return dict(info.ports_cy_per_pass), dict(info.ports_cy_per_pass)
    over, _ = port_sets(machine, info.analyzer)
    instrs = list(info.instructions) if info.aarch64 else P.fuse_compare_branch(list(info.instructions))
    instrs = P.balance(instrs, lambda unit: None if "div" in unit.lower() else (unit.split(".")[0] in over))
    names = set(info.ports_cy_per_pass)
    full = P.group_max(P.port_totals(instrs))
    loads = P.group_max(P.port_totals(instrs, lambda t: P.access_kind(t, info.aarch64)[0]))
    return ({k: round(full.get(k, 0.0), 4) for k in names}, {k: round(loads.get(k, 0.0), 4) for k in names})
