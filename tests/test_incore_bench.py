"""In-core instruction benchmarks: form enumeration from feature flags, the generated assembly
per ISA, the cycle arithmetic with a fake runner, the machine-file section against the schema,
and one small real run on this host."""
from __future__ import annotations

import dataclasses
import json
import platform
import shutil
from importlib import resources

import pytest

from loopmodel.errors import ToolError
from loopmodel.fileio.machine_files import read_yaml
from loopmodel.fileio.machine_schema import validate_mapping
from loopmodel.measure import incore_bench as ib

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")
on_x86 = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 host needed")

SKX = ("sse2", "sse4_2", "avx", "fma", "avx2", "avx512f", "avx512vl")
HSW = ("sse2", "sse4_2", "avx", "fma", "avx2")


def names(forms):
    return {f.name for f in forms}


def by_name(forms, name):
    return next(f for f in forms if f.name == name)


def test_forms_follow_the_feature_flags():
    skx = names(ib.instruction_forms("x86", SKX))
    assert {"add_8_lat", "add_64_tp", "fma_16_lat", "fma_64_tp", "div_64_lat", "load_64_tp", "store_16_tp",
            "load_split_64_tp", "store_split_64_tp", "load_unaligned_32_tp"} <= skx
    assert "fma_8_lat" not in skx  # scalar only for ADD, MUL, DIV
    assert not any("load" in n and "lat" in n for n in skx)
    hsw = names(ib.instruction_forms("x86_64", HSW))
    assert not any("_64_" in n for n in hsw) and "load_split_32_tp" in hsw and "fma_32_tp" in hsw
    avx_no_fma = names(ib.instruction_forms("x86", ("sse2", "avx")))
    assert not any(n.startswith("fma") for n in avx_no_fma) and "add_32_lat" in avx_no_fma
    sse = ib.instruction_forms("x86", ("sse2",))
    assert {f.width for f in sse} == {8, 16} and not any(f.op == "FMA" for f in sse)
    assert by_name(sse, "load_split_16_tp").op == "LOAD_SPLIT"
    arm = ib.instruction_forms("aarch64", ("asimd", "sve"))
    assert {f.width for f in arm} == {8, 16} and "fma_16_tp" in names(arm)
    assert ib.instruction_forms("ppc64le", ("vsx",)) == [] and ib.instruction_forms("x86", ()) == []


def test_x86_avx512_source_has_the_intended_asm():
    forms = ib.instruction_forms("x86", SKX)
    src = ib.incore_source(forms)
    lat, tp = by_name(forms, "add_64_lat"), by_name(forms, "add_64_tp")
    assert lat.form == tp.form == "vaddpd zmm, zmm, zmm"
    # latency: one chain, every instruction reads the previous result
    assert set(lat.body) == {"vaddpd %%zmm15, %%zmm0, %%zmm0"} and len(lat.body) == ib.UNROLL
    # throughput: 12 accumulators in turn, sources never written in the loop
    dests = [line.rsplit("%%", 1)[1] for line in tp.body]
    assert dests[:12] == [f"zmm{i}" for i in range(12)] and len(set(dests)) == 12
    assert all("%%zmm15, %%zmm14," in line for line in tp.body)
    fma = by_name(forms, "fma_64_lat")
    assert set(fma.body) == {"vfmadd231pd %%zmm15, %%zmm14, %%zmm0"}
    assert by_name(forms, "div_8_lat").body[0] == "vdivsd %%xmm15, %%xmm0, %%xmm0"
    load = by_name(forms, "load_64_tp").body
    assert load[:2] == ("vmovapd 0(%[buf]), %%zmm0", "vmovapd 64(%[buf]), %%zmm1")
    split = by_name(forms, "load_split_64_tp").body
    offsets = [int(line.split()[1].split("(")[0]) for line in split]
    assert all(o % 64 + 64 > 64 and o % 64 == 56 for o in offsets) and len(set(offsets)) == ib.UNROLL
    assert max(offsets) + 64 <= ib.BUFFER_BYTES
    unal = by_name(forms, "load_unaligned_32_tp").body
    assert all(int(line.split()[1].split("(")[0]) % 64 == 8 for line in unal)
    assert by_name(forms, "store_split_64_tp").body[0] == "vmovupd %%zmm14, 56(%[buf])"
    line = by_name(forms, "load_line_32_tp")
    assert line.body[:2] == ("vmovapd 0(%[buf]), %%ymm0", "vmovapd 64(%[buf]), %%ymm1")
    assert {"load_line_64_tp", "store_line_64_tp", "store_line_32_tp"} <= names(forms)
    # the C text: one function per form, registers from 1.0 in memory, clobbers, the loop, the table
    assert "static long bench_add_64_lat(long n)" in src and '"vmovupd (%[ones]), %%zmm15\\n\\t"' in src
    assert '"sub $1, %[n]\\n\\t"' in src and '"jnz 1b\\n\\t"' in src and '"vzeroupper\\n\\t"' in src
    assert '"xmm15", "cc", "memory"' in src and '{"div_64_tp", bench_div_64_tp, 48},' in src
    assert "sched_setaffinity" in src and "CLOCK_MONOTONIC" in src


def test_x86_without_avx512_and_without_avx():
    src = ib.incore_source(ib.instruction_forms("x86", HSW))
    assert "zmm" not in src and "%%ymm0" in src
    sse = ib.instruction_forms("x86", ("sse2",))
    assert by_name(sse, "add_16_tp").body[1] == "addpd %%xmm15, %%xmm1"
    assert by_name(sse, "add_8_lat").form == "addsd xmm, xmm"
    assert "vzeroupper" not in ib.incore_source(sse) and "movupd (%[ones]), %%xmm0" in ib.incore_source(sse)


def test_aarch64_source_text():
    forms = ib.instruction_forms("aarch64", ("asimd",))
    src = ib.incore_source(forms)
    assert set(by_name(forms, "add_16_lat").body) == {"fadd v0.2d, v0.2d, v15.2d"}
    assert by_name(forms, "add_16_tp").body[3] == "fadd v3.2d, v14.2d, v15.2d"
    assert set(by_name(forms, "fma_16_lat").body) == {"fmla v0.2d, v14.2d, v15.2d"}
    assert by_name(forms, "div_8_lat").body[0] == "fdiv d0, d0, d15"
    assert by_name(forms, "load_16_tp").body[1] == "ldr q1, [%[buf], #16]"
    assert by_name(forms, "store_16_tp").form == "str q, [mem]"
    split = by_name(forms, "load_split_16_tp").body
    assert split[0] == "ldur q0, [%[buf], #56]"
    assert by_name(forms, "load_line_16_tp").body[1] == "ldr q1, [%[buf], #64]"
    assert all(int(line.split("#")[1].rstrip("]")) <= 255 for line in split)  # ldur's reach
    assert '"ld1r {v15.2d}, [%[ones]]\\n\\t"' in src and '"subs %[n], %[n], #1\\n\\t"' in src
    assert '"b.ne 1b\\n\\t"' in src and '"v15", "cc", "memory"' in src and "%%" not in src.split("int main")[0]
    assert ib.compile_flags("aarch64") == ("-O1", "-mcpu=native")
    assert ib.compile_flags("x86") == ("-O1", "-march=native")


def fake_runner(seconds=1e-5, iterations=1000, per_it=48, pinned=1, fail=()):
    calls = []

    def run(cmd):
        calls.append(cmd)
        name = cmd[4]
        if name in fail:
            raise ToolError("the in-core benchmark was killed by signal 4")
        reps = int(cmd[2])
        secs = [seconds * (1 + 0.1 * r) for r in range(reps)]
        return json.dumps({"form": name, "pinned": pinned, "iterations": iterations,
                           "instructions_per_iteration": per_it, "seconds": secs}) + "\n"
    return run, calls


def test_cycles_from_seconds_with_a_fake_runner():
    run, calls = fake_runner()
    seen = []
    r = ib.run_incore("x86", SKX, 2.4e9, repetitions=3, min_time_s=0.002, cpu=1, runner=run,
                      progress=lambda d, t: seen.append((d, t)))
    n = len(ib.instruction_forms("x86", SKX))
    assert len(r.points) == n and seen[-1] == (n, n) and r.notes == ()
    assert calls[0] == ["incore", "1", "3", "0.002", "add_8_lat"]
    # 1e-5 s * 2.4e9 Hz / (1000 it * 48 instr) = 0.5 cy per instruction
    p = r.point("ADD", 64, "throughput")
    assert p.cycles_min == pytest.approx(0.5) and p.cycles_median == pytest.approx(0.55)
    assert p.cycles_max == pytest.approx(0.6) and p.spread == pytest.approx(0.2)
    assert r.throughput("ADD", 64) == pytest.approx(2.0) and r.latency("ADD", 64) == pytest.approx(0.5)
    assert r.latency("LOAD", 64) is None and r.throughput("ADD", 128) is None
    d = r.to_dict()
    json.dumps(d)
    pd = next(x for x in d["points"] if x["op"] == "ADD" and x["width_bytes"] == 64 and x["kind"] == "throughput")
    assert pd["cy_per_instruction_min"] == pytest.approx(0.5) and pd["instructions_per_cy"] == pytest.approx(2.0)
    assert d["clock_Hz"] == 2.4e9 and d["isa"] == "x86"


def test_cycles_counted_against_the_reference_chain():
    """With the reference chain's timings the clock is the chain's own (48 000 adds in 1.6e-5 s:
    3 GHz), whatever clock the caller measured; a preempted reference run (5x slower) does not
    lower the cycles; at_clock keeps such cycles."""
    def run(cmd):
        reps = int(cmd[2])
        return json.dumps({"form": cmd[4], "pinned": 1, "iterations": 1000, "instructions_per_iteration": 48,
                           "seconds": [1e-5, 1.2e-5, 1e-5][:reps], "reference_instructions": 48000,
                           "reference_seconds": [1.6e-5, 8e-5, 1.6e-5][:reps]}) + "\n"
    forms = ib.instruction_forms("x86", SKX)[:2]
    r = ib.run_incore("x86", SKX, 3.1e9, repetitions=3, runner=run, forms=forms)
    p = r.points[0]
    # 1e-5 s x (48000 / 1.6e-5 s) / 48000 instructions = 0.625 cy; 1.2e-5 s: 0.75 cy
    assert r.calibrated and p.cycles_min == pytest.approx(0.625) and p.cycles_max == pytest.approx(0.75)
    assert p.cycles_median == pytest.approx(0.625) and r.notes == ()
    off = ib.run_incore("x86", SKX, 2.4e9, repetitions=3, runner=run, forms=forms)
    assert off.points == r.points and len(off.notes) == 1
    assert "20%" in off.notes[0] and "2.40 GHz" in off.notes[0] and f"{forms[1].name} (3.00 GHz)" in off.notes[0]
    assert r.at_clock(4e9).points == r.points and r.at_clock(4e9).clock_hz == 4e9
    uncal = ib.run_incore("x86", SKX, 2.4e9, repetitions=3, runner=fake_runner()[0], forms=forms)
    assert not uncal.calibrated and uncal.at_clock(4.8e9).points[0].cycles_min == pytest.approx(1.0)
    bad = ib.run_incore("x86", SKX, 2.4e9, repetitions=2, forms=forms[:1], runner=lambda cmd: json.dumps(
        {"form": cmd[4], "iterations": 1, "instructions_per_iteration": 48, "seconds": [1e-5, 1e-5],
         "reference_instructions": 48, "reference_seconds": [0.0, 1.0]}))
    assert bad.points == () and "unreadable reference" in bad.notes[0]


def test_failing_forms_and_unpinned_runs_become_notes():
    run, _ = fake_runner(pinned=0, fail=("div_64_tp",))
    r = ib.run_incore("x86", SKX, 2e9, repetitions=2, runner=run)
    assert r.point("DIV", 64, "throughput") is None and r.point("DIV", 64, "latency") is not None
    assert any("div_64_tp" in n and "signal 4" in n for n in r.notes)
    assert any("could not pin" in n for n in r.notes)
    bad = ib.run_incore("x86", SKX, 2e9, runner=lambda cmd: "garbage\n", forms=ib.instruction_forms("x86", SKX)[:1])
    assert bad.points == () and "unreadable" in bad.notes[0]
    none = ib.run_incore("riscv64", ("rvv",), 2e9, runner=run)
    assert none.points == () and "riscv64" in none.notes[0]
    with pytest.raises(ToolError):
        ib.run_incore("x86", SKX, 0.0, runner=run)


def test_missing_compiler_is_a_tool_error():
    with pytest.raises(ToolError, match="not found"):
        ib.run_incore("x86", SKX, 2e9, compiler="no-such-cc-xyz")


@needs_gcc
@on_x86
def test_a_form_the_assembler_rejects_is_dropped():
    good = ib.instruction_forms("x86", ("sse2",))[0]
    bogus = dataclasses.replace(good, name="bogus_16_tp", op="BOGUS", body=("notaninstruction %%xmm0",) * ib.UNROLL)
    r = ib.run_incore("x86", ("sse2",), 2e9, repetitions=1, min_time_s=0.0005, forms=[good, bogus])
    assert [p.op for p in r.points] == [good.op]
    assert any(n.startswith("bogus_16_tp") for n in r.notes)


def section_result(clock=2e9):
    # per-instruction cycles chosen so that the figures are known: ADD 0.5 cy (2/cy), DIV 16 cy
    cy = {"ADD": 0.5, "MUL": 0.5, "FMA": 0.5, "DIV": 16.0, "LOAD": 0.5, "STORE": 1.0,
          "LOAD_SPLIT": 1.0, "STORE_SPLIT": 2.0, "LOAD_UNALIGNED": 0.5, "STORE_UNALIGNED": 1.0,
          "LOAD_LINE": 0.25, "STORE_LINE": 0.75, "SQRT": 18.0, "BRANCH": 1.0, "ISSUE": 0.2, "LOOP_BRANCH": 1.25,
          # the mixed pattern: 2 of 3 loads split at 64 B, each 1 aligned load's time more (extra 1.0);
          # the 2-stream pattern: every load split, extra 1.0; the single stream: extra 3.0
          "LOAD_SPLIT_MIXED": 0.25 * (1 + 2 / 3), "LOAD_SPLIT_2STREAMS": 0.5}
    lat = {"ADD": 4.0, "MUL": 4.0, "FMA": 4.0, "DIV": 23.3333, "SQRT": 20.0, "STORE_FORWARD": 6.5,
           "STORE_FORWARD_GPR": 1.25}
    pts = []
    for f in ib.instruction_forms("x86", SKX):
        c = lat[f.op] if f.kind == "latency" else cy[f.op]
        pts.append(ib.InstructionPoint(f.op, f.width, f.kind, f.form, c, c, c * 1.01))
    return ib.InCoreBenchResult("x86", clock, tuple(pts), ())


def test_in_core_section_validates_in_a_machine_file():
    sec = ib.in_core_section(section_result(), 64)
    assert sec["simd_width"] == "64 B"
    assert sec["throughput"] == {"ADD": 2.0, "MUL": 2.0, "FMA": 2.0, "DIV": 0.0625, "SQRT": 0.0556}
    assert sec["latency"] == {"ADD": "4 cy", "MUL": "4 cy", "FMA": "4 cy", "DIV": "23.3 cy", "SQRT": "20 cy"}
    # every width measured, and the pipeline figures
    assert sec["latency_by_width"]["ADD"] == {8: 4.0, 16: 4.0, 32: 4.0, 64: 4.0}
    assert sec["throughput_by_width"]["SQRT"][8] == pytest.approx(1 / 18.0, rel=1e-2)
    # 49 taken branches (48 jumps and the loop's) per 48 jumps at 1 cy each
    assert sec["store_forward_latency"] == 6.5 and sec["taken_branches_per_cycle"] == 1.02
    assert sec["instructions_per_cycle"] == 5.0
    assert sec["load"] == {"instructions_per_cycle": 2.0, "bytes_per_cycle": "128 B/cy"}
    assert sec["store"] == {"instructions_per_cycle": 1.0, "bytes_per_cycle": "64 B/cy"}
    assert sec["flops_per_cycle"]["DP"] == {"total": 32.0, "ADD": 16.0, "MUL": 16.0, "FMA": 32.0}
    assert sec["flops_per_cycle"]["SP"]["total"] == 64.0
    path = resources.files("loopmodel.machines").joinpath("SkylakeSP_Gold-6148.yml")
    data = read_yaml(str(path))
    keep = {k: data["in_core"][k] for k in ("analyzer_ports", "llvm_mca_cpu") if k in data["in_core"]}
    data["in_core"] = {**sec, **keep}
    model = validate_mapping(data, "probed.yml")
    assert model.in_core.throughput["DIV"] == 0.0625 and model.in_core.load.bytes_per_cycle == 128
    assert model.in_core.latency_by_width["FMA"][64] == 4.0 and model.in_core.store_forward_latency == 6.5
    assert model.in_core.latency["DIV"] == pytest.approx(23.3)
    # an AVX2 host: the section speaks of 32 B registers
    avx2 = ib.InCoreBenchResult("x86", 2e9, tuple(p for p in section_result().points if p.width <= 32), ())
    sec32 = ib.in_core_section(avx2, 32)
    assert sec32["load"]["bytes_per_cycle"] == "64 B/cy" and sec32["flops_per_cycle"]["DP"]["FMA"] == 16.0
    with pytest.raises(ToolError, match="LOAD"):
        ib.in_core_section(ib.InCoreBenchResult("x86", 2e9, (), ()), 64)


def test_three_significant_digits_and_access_costs():
    assert ib._sig3(1.8634) == 1.86 and ib._sig3(0.057912) == 0.0579 and ib._sig3(128.7) == 129.0
    costs = ib.access_costs(section_result())
    assert costs["load_split_cy"] == 1.0 and costs["load_aligned_cy"] == 0.5
    assert costs["store_split_cy"] == 2.0 and costs["load_unaligned_width_bytes"] == 32
    assert costs["load_split_reference_cy"] == 0.25 and costs["store_aligned_cy"] == 1.0
    assert costs["store_unaligned_reference_cy"] == 0.75 and costs["load_split_width_bytes"] == 64


@needs_gcc
@on_x86
def test_real_add_and_load_on_this_host():
    from loopmodel.measure.clock import measure_clock_hz
    from loopmodel.measure.topology import read_topology

    isa = read_topology().isa
    forms = [f for f in ib.instruction_forms("x86", isa) if f.op in ("ADD", "LOAD") and f.width == 16]
    assert len(forms) == 3
    hz = measure_clock_hz(passes=20_000, runs=3)
    r = ib.run_incore("x86", isa, hz, repetitions=3, min_time_s=0.001, forms=forms)
    assert all("pin" in n or "reference chain" in n for n in r.notes)
    assert 2.0 * 0.9 <= r.latency("ADD", 16) <= 8.0  # a chain of FP adds: 2 cy or more on every core
    # no core issues more than 4 of either per cycle (Zen 5: 4 loads); the margin is measurement noise
    assert 0.5 <= r.throughput("ADD", 16) <= 5.0
    assert 0.5 <= r.throughput("LOAD", 16) <= 5.0
    assert r.calibrated  # counted against the reference chain run beside each repetition


# ------------------------------------------------------------------ pipeline and split-stream forms
def offsets_of(body, family="x86"):
    if family == "x86":
        return [int(line.split()[1].split("(")[0]) for line in body]
    return [int(line.split("#")[1].rstrip("]")) for line in body]


def test_pipeline_forms_x86():
    forms = ib.instruction_forms("x86", SKX)
    src = ib.incore_source(forms)
    fwd, gpr = by_name(forms, "store_forward_8_lat"), by_name(forms, "store_forward_gpr_8_lat")
    assert set(fwd.body) == {"vmovsd %%xmm0, 64(%[buf]); vmovsd 64(%[buf]), %%xmm0"} and fwd.kind == "latency"
    # the GPR chain: store, load of the same address, one dependent 1-cy add (subtracted later)
    assert set(gpr.body) == {"mov %%rax, 64(%[buf]); mov 64(%[buf]), %%rax; add %%rcx, %%rax"}
    assert {"rax", "rcx"} <= set(gpr.clobbers) and gpr.init == ()
    # taken jumps, each to the next one on a 32 B boundary; the loop's own branch is one more
    branch = by_name(forms, "branch_8_tp")
    assert set(branch.body) == {"jmp 2f; .p2align 5; 2:"} and len(branch.body) == ib.UNROLL
    assert by_name(forms, "loop_branch_8_tp").body == ("nop; nop",)
    # issue: moves of an immediate to 9 registers in turn, 4-byte nops between them
    issue = by_name(forms, "issue_8_tp")
    assert issue.body[:4] == ("mov $1, %%eax", "nopl 0(%%rax)", "mov $1, %%ecx", "nopl 0(%%rax)")
    movs = [line for line in issue.body if line.startswith("mov")]
    assert len(movs) == ib.UNROLL // 2 and len(set(movs)) == 9
    assert all(line == "nopl 0(%%rax)" for line in issue.body[1::2])
    # the clobbers name every general-purpose register these forms write, and only there
    fn = src.split("static long bench_issue_8_tp")[1].split("static long")[0]
    assert '"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"' in fn
    assert '"rax"' not in src.split("static long bench_add_64_lat")[1].split("static long")[0]
    sse = ib.instruction_forms("x86", ("sse2",))
    assert by_name(sse, "store_forward_8_lat").body[0] == "movsd %%xmm0, 64(%[buf]); movsd 64(%[buf]), %%xmm0"
    assert by_name(sse, "issue_8_tp").body == issue.body


def test_pipeline_forms_aarch64():
    forms = ib.instruction_forms("aarch64", ("asimd",))
    assert by_name(forms, "store_forward_gpr_8_lat").body[0] == \
        "str x9, [%[buf], #64]; ldr x9, [%[buf], #64]; add x9, x9, x10"
    assert by_name(forms, "branch_8_tp").body[0] == "b 2f; .p2align 5; 2:"
    assert by_name(forms, "issue_8_tp").body[:3] == ("mov w9, #1", "nop", "mov w10, #1")
    src = ib.incore_source(forms)
    assert '"x9", "x10"' in src and "%%" not in src.split("int main")[0]


def test_split_stream_forms_follow_the_stencil_pattern():
    forms = ib.instruction_forms("x86", SKX)
    mixed = by_name(forms, "load_split_mixed_64_tp")
    offs = offsets_of(mixed.body)
    # three streams in turn: at the line start, 8 B below the line end, 8 B into the line
    assert [o % 64 for o in offs[:6]] == [0, 56, 8, 0, 56, 8]
    assert all(line.startswith("vmovupd") for line in mixed.body) and len(set(offs)) == ib.UNROLL
    # each stream moves through its own lines, one line per group
    assert [o // 64 for o in offs[0::3][:3]] == [0, 1, 2] and offs[1] // 64 == 16 and offs[2] // 64 == 32
    assert max(offs) + 64 <= ib.BUFFER_BYTES
    assert ib.split_share("LOAD_SPLIT_MIXED", 64) == pytest.approx(2 / 3)  # 8 B into the line splits a zmm too
    assert ib.split_share("LOAD_SPLIT_MIXED", 32) == pytest.approx(1 / 3)
    assert ib.split_share("LOAD_SPLIT_MIXED", 16) == pytest.approx(1 / 3)
    two = offsets_of(by_name(forms, "load_split_2streams_64_tp").body)
    assert all(o % 64 == 56 for o in two) and two[1] // 64 == 24 and len(set(two)) == ib.UNROLL
    assert ib.split_share("LOAD_SPLIT_2STREAMS", 64) == 1.0 == ib.split_share("LOAD_SPLIT", 64)
    assert ib.split_share("LOAD_LINE", 64) == 0.0 and "3 streams at 0, 56, 8 B" in mixed.form
    # AVX2 and SSE hosts: at their widest width; AArch64 within ldur's reach
    hsw = ib.instruction_forms("x86", HSW)
    assert by_name(hsw, "load_split_mixed_32_tp").body[0] == "vmovupd 0(%[buf]), %%ymm0"
    arm = by_name(ib.instruction_forms("aarch64", ("asimd",)), "load_split_mixed_16_tp")
    arm_offs = offsets_of(arm.body, "aarch64")
    assert arm.body[0].startswith("ldur q0") and max(arm_offs) <= 255
    assert [o % 64 for o in arm_offs[:3]] == [0, 56, 8]


# ------------------------------------------------------------------ figures derived from the points
def test_split_extra_from_the_mixed_pattern_and_its_fallback():
    r = section_result()
    extras = ib.split_extras(r, "load")
    assert extras["LOAD_SPLIT"] == pytest.approx(3.0)
    assert extras["LOAD_SPLIT_MIXED"] == pytest.approx(1.0)
    assert extras["LOAD_SPLIT_2STREAMS"] == pytest.approx(1.0)
    assert ib.split_extra(r, "load") == (pytest.approx(1.0), "LOAD_SPLIT_MIXED")
    assert ib.split_extra(r, "store") == (pytest.approx(2.0 / 0.75 - 1), "STORE_SPLIT")
    # an older probe without the mixed form: the single stream; without the reference: nothing
    old = dataclasses.replace(r, points=tuple(p for p in r.points if p.op not in ib.SPLIT_STREAMS))
    assert ib.split_extra(old, "load") == (pytest.approx(3.0), "LOAD_SPLIT")
    bare = dataclasses.replace(r, points=tuple(p for p in r.points if p.op != "LOAD_LINE"))
    assert ib.split_extra(bare, "load") == (None, None)
    # a split load faster than the aligned reference (noise) costs nothing extra, not less than nothing
    fast = dataclasses.replace(r, points=tuple(dataclasses.replace(p, cycles_min=0.2) if p.op == "LOAD_SPLIT_MIXED"
                                               else p for p in r.points))
    assert ib.split_extras(fast)["LOAD_SPLIT_MIXED"] == 0.0


def test_pipeline_figures_and_provenance():
    r = section_result()
    assert ib.gpr_forward_cy(r) == pytest.approx(0.25)  # 1.25 cy per pass less the add's 1 cy
    # the higher of the two rates: jumps 49/48 per cy, the tight loop 0.8
    assert ib.taken_branches_per_cycle(r) == pytest.approx(49 / 48)
    loop_only = dataclasses.replace(r, points=tuple(p for p in r.points if p.op != "BRANCH"))
    assert ib.taken_branches_per_cycle(loop_only) == pytest.approx(0.8)
    slow_jumps = dataclasses.replace(r, points=tuple(dataclasses.replace(p, cycles_min=1.5) if p.op == "BRANCH"
                                                     else p for p in r.points))
    assert ib.taken_branches_per_cycle(slow_jumps) == pytest.approx(0.8)  # the jumps: 49/48/1.5 = 0.68
    fast_loop = dataclasses.replace(r, points=tuple(dataclasses.replace(p, cycles_min=0.9) if p.op == "LOOP_BRANCH"
                                                    else p for p in r.points))
    assert ib.taken_branches_per_cycle(fast_loop) == pytest.approx(1 / 0.9)
    bare = dataclasses.replace(r, points=tuple(p for p in r.points if "BRANCH" not in p.op))
    assert ib.taken_branches_per_cycle(bare) is None
    derived = r.to_dict()["derived"]
    assert derived["load_split_extra"] == {"LOAD_SPLIT": 3.0, "LOAD_SPLIT_MIXED": 1.0, "LOAD_SPLIT_2STREAMS": 1.0}
    assert derived["store_split_extra"] == {"STORE_SPLIT": pytest.approx(1.6667)}
    assert derived["store_forward_gpr_cy"] == 0.25 and derived["loop_branches_per_cycle"] == 0.8
    assert derived["taken_jumps_per_cycle"] == pytest.approx(1.0208)
    assert derived["load_split_mixed_cy"] == pytest.approx(0.4167, abs=1e-4)
    # a renamed memory operand: the chain reads the add alone, and the figure is 0, not negative
    renamed = dataclasses.replace(r, points=tuple(dataclasses.replace(p, cycles_min=0.9)
                                                  if p.op == "STORE_FORWARD_GPR" else p for p in r.points))
    assert ib.gpr_forward_cy(renamed) == 0.0
    # figures out of their physical range are left out of the section, not written
    wild_cy = {"STORE_FORWARD": 2000.0, "ISSUE": 0.01}  # 1000 instructions per cy: a clock misread
    wild = dataclasses.replace(r, points=tuple(dataclasses.replace(p, cycles_min=wild_cy.get(p.op, p.cycles_min))
                                               for p in r.points))
    sec = ib.in_core_section(wild, 64)
    assert "store_forward_latency" not in sec and "instructions_per_cycle" not in sec
    assert "taken_branches_per_cycle" in sec


@needs_gcc
@on_x86
def test_pipeline_and_split_stream_forms_build_and_run_on_this_host():
    from loopmodel.measure.topology import read_topology

    isa = read_topology().isa
    ops = (*ib.PIPELINE_OPS, *ib.SPLIT_STREAMS, "LOAD_LINE")
    forms = [f for f in ib.instruction_forms("x86", isa) if f.op in ops]
    r = ib.run_incore("x86", isa, 2e9, repetitions=1, min_time_s=0.0005, forms=forms)
    assert not any("left out" in n for n in r.notes), r.notes  # the assembler took every form
    assert {p.op for p in r.points} == set(ops)
    # measured figures, not plausible ones: runs of 0.5 ms on a shared 2-vCPU Zen 4 guest gave
    # 0.86 to 46 cy per store-forward pair and 1.0 to 10.5 taken branches per cy within one hour
    # (a preempted reference chain misreads the clock). Keeping implausible figures out of a
    # machine model is the probe's filter's job (its wild figures: test_pipeline_figures_and_provenance).
    assert 0 < r.latency("STORE_FORWARD", 8) < float("inf")
    assert 0 < ib.taken_branches_per_cycle(r) < float("inf")
