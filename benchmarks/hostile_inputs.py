"""Hostile inputs: data files and arguments a stranger could hand to loopmodel.

Each case runs the real command (``python -m loopmodel ...``) in a scratch folder with a
wall-clock limit and an address-space limit, and is classed by what happened:

* ``RAN CODE``: a marker file that only the injected command writes appeared;
* ``TRACEBACK``: Python's traceback reached the user;
* ``TIMEOUT`` / ``KILLED``: no answer within the time limit / killed (out of memory);
* ``ACCEPTED``: exit status 0 where the input is wrong (the case says it must be refused);
* ``ok``: the expected outcome: a one-line error and a non-zero exit, or a result where
  the case expects one; ``ok (runs)``: a long job that is still running, within the memory
  limit, when the time limit ends it (a study of 10^8 points).

Usage: ``python benchmarks/hostile_inputs.py [--timeout 20] [--memory-mb 3000] [--src DIR] [CASE ...]``;
prints one row per case (case, outcome, the last line of output). ``--src``: the ``src`` folder
of the loopmodel to run (another checkout's, for a before/after table); default this one's.
Besides those outcomes, a case may check what it left: ``LEAKED`` (a file's content in the
output), ``STALE`` (a result served from the cache for another compiler), ``WROTE OUTSIDE``
(the cache wrote through another user's link).
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNELS = os.path.join(ROOT, "examples", "kernels")
MARK = "MARKER"

SKL = "SkylakeSP_Gold-6148"


def _machine_with(tmp: str, name: str, replace: dict) -> str:
    """A copy of the bundled SkylakeSP machine file with top-level keys replaced."""
    import yaml

    with open(os.path.join(ROOT, "src", "loopmodel", "machines", SKL + ".yml"), encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    for path, value in replace.items():
        node = data
        keys = path.split("/")
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = keys[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    out = os.path.join(tmp, name)
    with open(out, "w", encoding="utf-8") as fh:
        yaml.safe_dump(data, fh, sort_keys=False)
    return out


def _coherence_machine(tmp: str) -> str:
    """A bundled model with a made-up coherence table (for ``loopmodel omp``)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from json_samples import coherence_machine

    return coherence_machine(tmp)


def _http_server() -> int:
    """Port of an HTTP server on the loopback interface, serving from a daemon thread."""
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


def _write(tmp: str, name: str, text: str) -> str:
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(textwrap.dedent(text))
    return path


def cases(tmp: str) -> list:
    """(name, argv, expect) with expect 'error' (one-line refusal) or 'result'; the cases of the
    generated programs (:func:`program_cases`) add a fourth element: environment and checks."""
    mark = os.path.join(tmp, MARK)
    inject = f'-Dmain=main(int c,char**v){{system("touch {mark}");return 0;}}int orig_main'
    evil_machine = _machine_with(tmp, "evil-D.yml", {"compiler": {"gcc": f"-O2 '{inject}'"}})
    wrapper_machine = _machine_with(tmp, "evil-wrapper.yml", {"compiler": {"gcc": f"-O2 -wrapper /bin/sh,-c,touch\\ {mark}"}})
    script = _write(tmp, "cc.sh", f"#!/bin/sh\ntouch {mark}\nexec gcc \"$@\"\n")
    os.chmod(script, 0o755)
    daxpy = os.path.join(KERNELS, "daxpy.c")
    def study(name, options, machine=SKL):
        return _write(tmp, name, f"kernels: [{daxpy}]\nmachines: [{machine}]\ndefines: {{N: 1000}}\n"
                      f"options: {{{options}}}\n")
    s_wrap = study("s-wrap.yml", f"compiler_flags: ['-O2 -wrapper /bin/sh,-c,touch\\ {mark}'], incore: [llvm-mca]")
    s_cc = study("s-cc.yml", f"compiler: ['{script}'], incore: [llvm-mca]")
    s_trust = study("s-trust.yml", "trust_machine_flags: [true], incore: [llvm-mca]", wrapper_machine)
    big = _write(tmp, "big.c", "double a[N];\ndouble b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = "
                 + " + ".join(f"b[i]*{k}.0" for k in range(400000)) + ";\n")
    s_huge = _write(tmp, "s-huge.yml", f"kernels: [{daxpy}]\nmachines: [{SKL}]\ndefines: {{N: '1:100000000:1'}}\n"
                    "options: {incore: [analytic], cache_predictor: [lc]}\n")
    s_dup = _write(tmp, "s-dup.yml", f"kernels: [{daxpy}]\nmachines: [{SKL}]\nmachines: [HaswellEP_E5-2695v3]\n"
                   "defines: {N: 1000}\n")
    _write(tmp, "s-ok.yml", f"kernels: [{daxpy}]\nmachines: [{SKL}]\ndefines: {{N: 1000}}\n")
    s_str = _write(tmp, "s-str.yml", f"kernels: {daxpy}\nmachines: [{SKL}]\ndefines: {{N: 1000}}\n")
    s_fail = study("s-fail.yml", "compiler: [gcc-0], incore: [llvm-mca]")
    app = _write(tmp, "app.yml", f"""\
        name: big repeat
        defines: {{N: 1000}}
        kernels:
        - {{name: daxpy, file: {daxpy}, count: 1000000000000}}
        """)
    app_neg = _write(tmp, "app-neg.yml", f"""\
        name: negative size
        defines: {{M: 100, N: 250}}
        kernels:
        - {{name: daxpy, file: {daxpy}, count: 1, defines: {{N: M-N-N}}}}
        """)
    omp_rep = _write(tmp, "omp-rep.yml", """\
        arrays: {x: {length: N, type: double}}
        phases:
          - repeat: 1000000000000
            var: rep
            phases:
              - name: r
                kind: parallel
                loops: [{var: i, lo: 0, hi: N}]
                accesses: [{array: x, kind: read, index: "i"}]
        defines: {N: 100000}
        """)
    omp_xor = _write(tmp, "omp-xor.c", """\
        double a[N];
        double s;
        #pragma omp parallel for reduction(^:s)
        for (int i = 0; i < N; ++i)
            s = s + a[i];
        """)
    inc = _write(tmp, "inc.c", '#include "/etc/passwd"\ndouble a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 1.0;\n')
    clock_hi = _machine_with(tmp, "clock-hi.yml", {"clock": "1e300 GHz"})
    clock_lo = _machine_with(tmp, "clock-lo.yml", {"clock": "1e-30 GHz"})
    sets = _machine_with(tmp, "sets.yml", {"memory_hierarchy/0/sets": 10**25, "memory_hierarchy/0/size": f"{10**25 * 8 * 64} B"})
    add0 = _machine_with(tmp, "add0.yml", {"in_core/throughput/ADD": 0})
    bw = _machine_with(tmp, "bw.yml", {"links/1/bandwidth": "1e-300 B/cy"})
    coh = _coherence_machine(tmp)
    folder = os.path.join(tmp, "folder.yml")
    os.makedirs(folder, exist_ok=True)
    splice = _write(tmp, "splice.c", 'double a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 1.0; /* *\\\n'
                    f'/ system("touch {mark}"); /* */\n')
    poison = _write(tmp, "poison.c", '#pragma GCC dependency "/etc/shadow"\ndouble a[N];\n'
                    'for (int i = 0; i < N; ++i)\n  a[i] = 1.0;\n')
    fifo = os.path.join(tmp, "fifo.c")
    os.mkfifo(fifo)
    bomb = _write(tmp, "bomb.yml", "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)))
    lm = [sys.executable, "-m", "loopmodel"]
    an = lambda *a: lm + ["analyze", *a]
    return [
        ("1  machine -D redefines main (bench)", lm + ["bench", daxpy, "-m", evil_machine, "-D", "N=1000", "--repeat", "1"], "error"),
        ("1b machine -D redefines main (validate)", lm + ["validate", daxpy, "-m", evil_machine, "-D", "N=1000", "--repeat", "1"], "error"),
        ("1c machine -D redefines main (roofline)", lm + ["roofline", daxpy, "-m", evil_machine, "-D", "N=1000"], "error"),
        ("2  study compiler_flags -wrapper", lm + ["sweep", s_wrap, "--workers", "1", "--no-cache", "--no-progress", "-o", os.path.join(tmp, "o2.csv")], "error"),
        ("3  study compiler = script", lm + ["sweep", s_cc, "--workers", "1", "--no-cache", "--no-progress", "-o", os.path.join(tmp, "o3.csv")], "error"),
        ("4  study trust_machine_flags", lm + ["sweep", s_trust, "--workers", "1", "--no-cache", "--no-progress", "-o", os.path.join(tmp, "o4.csv")], "error"),
        ("5  /dev/zero kernel (analyze)", an("/dev/zero", "-m", SKL, "-D", "N=1000"), "error"),
        ("5b /dev/zero kernel (bench)", lm + ["bench", "/dev/zero", "-D", "N=1000"], "error"),
        ("5c /dev/zero study", lm + ["sweep", "/dev/zero", "--workers", "1"], "error"),
        ("6  10 MB kernel expression", an(big, "-m", SKL, "-D", "N=1000", "--incore", "analytic"), "error"),
        ("7  -D N=1-100:99999999999999999", an(daxpy, "-m", SKL, "-D", "N=1-100:99999999999999999", "-p", "LC"), "result"),
        ("7b -D N=1-100:1000000000", an(daxpy, "-m", SKL, "-D", "N=1-100:1000000000", "-p", "LC"), "result"),
        ("8  study of 10^8 points", lm + ["sweep", s_huge, "--workers", "1", "--no-cache", "--no-progress", "-o", os.path.join(tmp, "o8.csv")], "runs"),
        ("9  app repeat 10^12", lm + ["app", app, "-m", SKL], "result"),
        ("9b omp YAML repeat 10^12", lm + ["omp", omp_rep, "-m", coh], "error"),
        ("10 -D N=<400 digits>", an(daxpy, "-m", SKL, "-D", "N=" + "9" * 400), "error"),
        ("10b -D N=full-width digits", an(daxpy, "-m", SKL, "-D", "N=\uff11\uff10\uff10"), "error"),
        ("11 clock 1e300 GHz", an(daxpy, "-m", clock_hi, "-D", "N=1000", "--incore", "analytic"), "error"),
        ("11b sets 10^25 (sim)", an(daxpy, "-m", sets, "-D", "N=1000", "-P", "sim", "--incore", "analytic"), "error"),
        ("11c throughput ADD 0", an(daxpy, "-m", add0, "-D", "N=1000", "--incore", "analytic"), "error"),
        ("11d clock 1e-30 GHz", an(daxpy, "-m", clock_lo, "-D", "N=1000", "--incore", "analytic"), "error"),
        ("11e bandwidth 1e-300 B/cy", an(daxpy, "-m", bw, "-D", "N=100000000", "--incore", "analytic"), "error"),
        ("12 #include /etc/passwd", an(inc, "-m", SKL, "-D", "N=1000", "--incore", "analytic"), "error"),
        ("13 empty iteration space", an(os.path.join(KERNELS, "2d-5pt.c"), "-m", SKL, "-D", "N=1", "-D", "M=1", "--incore", "analytic"), "error"),
        ("14 app defines M-N-N < 0", lm + ["app", app_neg, "-m", SKL], "error"),
        ("14b reduction(^:s) on double", lm + ["omp", omp_xor, "-m", coh, "-D", "N=1000"], "error"),
        ("15 study duplicate keys", lm + ["sweep", s_dup, "--workers", "1", "--no-progress"], "error"),
        ("15b study kernels: a string", lm + ["sweep", s_str, "--workers", "1", "--no-progress"], "error"),
        ("16 --dask to an HTTP server", lm + ["sweep", s_dup.replace("s-dup", "s-ok"), "--dask", f"tcp://127.0.0.1:{_http_server()}"], "error"),
        ("17 every point fails", lm + ["sweep", s_fail, "--workers", "1", "--no-cache", "--no-progress"], "error"),
        ("18 folder as a machine file", an(daxpy, "-m", folder, "-D", "N=1000"), "error"),
        ("19 kernel line splice into a comment", lm + ["bench", splice, "-D", "N=1000", "--repeat", "1"], "error"),
        ("20 kernel #pragma GCC dependency", an(poison, "-m", SKL, "-D", "N=1000"), "any"),  # left out, noted
        ("21 FIFO as a kernel", an(fifo, "-m", SKL, "-D", "N=1000"), "error"),
        ("22 YAML alias bomb as machine file", an(daxpy, "-m", bomb, "-D", "N=1000"), "error"),
    ] + program_cases(tmp, lm)


_PAYLOAD = '{ int system(const char *); system("touch %s"); }'


def _kernel_bytes(tmp: str, name: str, text: str) -> str:
    """A kernel file written byte for byte (carriage returns, form feeds kept)."""
    path = os.path.join(tmp, name)
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-8"))
    return path


def program_cases(tmp: str, lm: list) -> list:
    """The programs loopmodel compiles: kernel bytes the parser and gcc read differently, OpenMP
    clauses, machine-file flags, the cache root, the bench cache key, pragmas, signals, and
    kernels using the names of the harness."""
    mark = os.path.join(tmp, MARK)
    pay = _PAYLOAD % mark
    head = "double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] * 2.0; // x"
    cr = _kernel_bytes(tmp, "cr.c", f"{head}\r{pay}\n")
    ff = _kernel_bytes(tmp, "ff.c", f"{head}\\\f\n{pay}\n")
    vt = _kernel_bytes(tmp, "vt.c", f"{head}\\\v\n{pay}\n")
    crlf = _kernel_bytes(tmp, "crlf.c", f"{head}\\\r\n{pay}\n")
    fn = _kernel_bytes(tmp, "fn.c", "void k(double *a, double *b, int n) {\n  for (int i = 0; i < n; ++i)\n"
                       f"    a[i] = b[i]; // x\r{pay}\n}}\n")
    host = os.path.join(ROOT, "tests", "fixtures", "host-probe-xeon-kvm.yml")  # --incore measured needs a host model
    study = _write(tmp, "s-cr.yml", f"kernels: [{cr}]\nmachines: [{host}]\ndefines: {{N: 1000}}\n"
                   "options: {incore: [measured]}\n")
    passwd = _kernel_bytes(tmp, "passwd.c", f'{head}\r#include "/etc/passwd"\n')
    zero = _kernel_bytes(tmp, "zero.c", f'{head}\r#include "/dev/zero"\n')
    omp = {c: _kernel_bytes(tmp, f"omp-{i}.c", f"double a[N], b[N];\n#pragma omp parallel for {c}\n"
                            "for (int i = 0; i < N; ++i)\n  a[i] = b[i];\n")
           for i, c in enumerate((f'num_threads(system("touch {mark}"))', f'if(system("touch {mark}"))',
                                  f'schedule(dynamic, system("touch {mark}"))'))}
    flags = {f: _machine_with(tmp, f"flag-{i}.yml", {"compiler": {"gcc": f"-O2 {f}"}})
             for i, f in enumerate(("-finput-charset=ISO-2022-JP", "-fexec-charset=EBCDIC-US", "-fsanitize=address",
                                    "-finstrument-functions", "-fself-test=/tmp", "-lcrypt"))}
    daxpy = os.path.join(KERNELS, "daxpy.c")
    victim = os.path.join(tmp, "victim")
    shared = os.path.join(tmp, "shared-cache")
    os.makedirs(victim, mode=0o755, exist_ok=True)
    os.makedirs(shared, exist_ok=True)
    os.chmod(shared, 0o777)
    os.symlink(victim, os.path.join(shared, "machines"))
    wrapdir = os.path.join(tmp, "wrap")
    os.makedirs(wrapdir, exist_ok=True)
    wrapper = os.path.join(wrapdir, "gcc")
    with open(wrapper, "w", encoding="utf-8") as fh:
        fh.write('#!/bin/sh\nexec /usr/bin/gcc "$@" -O0\n')
    os.chmod(wrapper, 0o755)
    bench = " ".join(lm + ["bench", daxpy, "-D", "N=2000", "--repeat", "3"])
    stale = ["sh", "-c", f"{bench} > /dev/null && PATH={wrapdir}:$PATH {bench}"]
    pragma = _kernel_bytes(tmp, "pragma.c", "double a[N];\nfor (int i = 0; i < N; ++i) {\n  _Pragma(\"omp simd\")\n"
                           "  for (int j = 0; j < N; ++j)\n    a[j] = a[j] * 2.0;\n}\n")
    unroll = _kernel_bytes(tmp, "unroll.c", "double a[N];\n#pragma GCC unroll 65534\nfor (int i = 0; i < N; ++i)\n"
                           "  a[i] = a[i] * 2.0;\n")
    big = _write(tmp, "s-big.yml", f"kernels: [{daxpy}]\nmachines: [{SKL}]\ndefines: {{N: '1000:100000000:1'}}\n"
                 "options: {incore: [analytic]}\n")
    sweep = " ".join(lm + ["sweep", big, "--workers", "1", "--no-cache", "--no-progress", "-o",
                           os.path.join(tmp, "term.csv")])
    term = ["sh", "-c", f"{sweep} & sleep 8; kill -TERM $!; wait $!"]
    stream = _kernel_bytes(tmp, "q.c", "double a[N], b[N], c[N];\ndouble q;\nfor (int j = 0; j < N; ++j)\n"
                           "  a[j] = b[j] + q * c[j];\n")
    bk = lambda path, *a: lm + ["bench", path, "-D", "N=1000", "--repeat", "1", *a]
    return [
        ("23 CR in // comment (bench)", bk(cr), "any"),
        ("23b backslash form feed (bench)", bk(ff), "any"),
        ("23c backslash vertical tab (bench)", bk(vt), "any"),
        ("23d backslash CR LF (bench)", bk(crlf), "any"),
        ("23e CR in a kernel function (bench)", lm + ["bench", fn, "-D", "n=1000", "--repeat", "1"], "any"),
        ("23f CR through a study file (sweep)", lm + ["sweep", study, "--workers", "1", "--no-cache", "--no-progress",
                                                      "-o", os.path.join(tmp, "o23.csv")], "any"),
        ("23g CR #include /etc/passwd (bench)", bk(passwd), "any",
         {"leak": "/etc/passwd:"}),
        ("23h CR #include /dev/zero (bench)", bk(zero), "any"),
        ("24 omp num_threads(system()) --threads", bk(omp[next(iter(omp))], "--threads", "2"), "error"),
        ("24b omp if(system()) --threads", bk(list(omp.values())[1], "--threads", "2"), "error"),
        ("24c omp schedule(dynamic, system())", bk(list(omp.values())[2], "--threads", "2"), "error"),
    ] + [(f"25{'abcdef'[i]} machine flag {f}", bk(daxpy, "-m", m),
          "error") for i, (f, m) in enumerate(flags.items())] + [
        ("26 cache root with another's symlink", lm + ["analyze", daxpy, "-m", SKL, "-D", "N=1000", "--incore",
                                                      "analytic"], "result",
         {"env": {"LOOPMODEL_CACHE_DIR": shared}, "outside": victim}),
        ("27 another gcc first on PATH (bench)", stale, "result", {"stale": "from the per-user cache"}),
        ("28 _Pragma(\"omp simd\") (analyze)", lm + ["analyze", pragma, "-m", SKL, "-D", "N=100", "--incore",
                                                     "analytic"], "result"),
        ("29 #pragma GCC unroll 65534 (bench)", bk(unroll), "error"),
        ("30 SIGTERM during sweep", term, "signal"),
        ("31 scalar 'q' (analyze --incore llvm-mca)", lm + ["analyze", stream, "-m", SKL, "-D", "N=1000",
                                                            "--incore", "llvm-mca"], "result"),
    ]


def _limits(memory_mb: int):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    return apply


def run_case(argv: list, tmp: str, timeout: float, memory_mb: int, src: str, extra_env=None) -> tuple:
    """(exit status or 'TIMEOUT', stdout+stderr)."""
    env = dict(os.environ, LOOPMODEL_CACHE_DIR=os.path.join(tmp, "cache"), PYTHONPATH=src)
    env.update(extra_env or {})
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=tmp, env=env,
                           preexec_fn=_limits(memory_mb), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return "TIMEOUT", out
    return p.returncode, p.stdout + p.stderr


def classify(rc, output: str, expect: str, marker: bool, extra=None, tmp: str = "") -> str:
    extra = extra or {}
    if marker:
        return "RAN CODE"
    if extra.get("leak") and extra["leak"] in output:
        return "LEAKED"
    if extra.get("stale") and extra["stale"] in output:
        return "STALE"
    if extra.get("outside") and os.listdir(extra["outside"]):
        return "WROTE OUTSIDE"
    if expect == "signal":  # one line and exit 143 (128 + SIGTERM), no warning or traceback
        if "Traceback" in output or "leaked" in output:
            return "TRACEBACK" if "Traceback" in output else "LEAK WARNING"
        return "ok" if rc == 143 and len([ln for ln in output.splitlines() if ln.strip()]) <= 2 else f"exit {rc}"
    if "Traceback (most recent call last)" in output:
        return "TRACEBACK"
    if rc == "TIMEOUT":
        return "ok (runs)" if expect == "runs" else "TIMEOUT"
    if isinstance(rc, int) and rc < 0:
        return "KILLED"
    if expect == "any":  # a refusal in one line, or a result: either is safe
        return "ok" if rc == 0 or len([ln for ln in output.splitlines() if ln.strip()]) <= 2 else "ok (long)"
    if expect == "error":
        lines = [ln for ln in output.splitlines() if ln.strip()]
        if rc == 0:
            return "ACCEPTED"
        return "ok" if len(lines) <= 2 else "ok (long)"
    return "ok" if rc == 0 else f"exit {rc}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="run only cases whose name starts with one of these")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--memory-mb", type=int, default=3000)
    ap.add_argument("--src", default=os.path.join(ROOT, "src"), help="the src folder of the loopmodel to run")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        for name, cmd, expect, *more in cases(tmp):
            if args.names and not any(name.startswith(n) for n in args.names):
                continue
            extra = more[0] if more else {}
            marker = os.path.join(tmp, MARK)
            if os.path.exists(marker):
                os.remove(marker)
            rc, out = run_case(cmd, tmp, args.timeout, args.memory_mb, os.path.abspath(args.src), extra.get("env"))
            verdict = classify(rc, out, expect, os.path.exists(marker), extra, tmp)
            last = next((ln.strip() for ln in reversed(out.splitlines()) if ln.strip()), "")
            print(f"{name:40s} | {verdict:10s} | {str(rc):7s} | {last.replace(tmp, '<tmp>')[:150]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
