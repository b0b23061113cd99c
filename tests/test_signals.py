"""SIGTERM and SIGHUP stop a command as a Ctrl-C (SIGINT) does: the work stops through the
same exception path (``finally`` blocks run, a Dask cluster closes, temporary files go), one
line on stderr, exit status 128 + the signal's number, and no output file half-written."""
from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from helpers import KERNELS
from loopmodel.cli import main
from loopmodel.errors import Stopped, stop_reason
from loopmodel.workflows import sweep_dask

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")

DAXPY = str(KERNELS / "daxpy.c")
SKX = "SkylakeSP_Gold-6148"


def test_the_exit_status_is_128_plus_the_signal_number():
    assert stop_reason(KeyboardInterrupt()) == ("interrupted", 130)
    assert stop_reason(Stopped(signal.SIGTERM, "SIGTERM")) == ("stopped by SIGTERM", 143)
    assert stop_reason(Stopped(signal.SIGHUP, "SIGHUP")) == ("stopped by SIGHUP", 129)
    assert isinstance(Stopped(signal.SIGTERM, "SIGTERM"), KeyboardInterrupt)


@pytest.fixture
def analyze_run(monkeypatch):
    """``analyze``'s run replaced by ``body(args)`` (main parses a real command line)."""
    module = importlib.import_module("loopmodel.cli.analyze")

    def use(body):
        monkeypatch.setattr(module, "run", body)
        return ["analyze", DAXPY, "-m", SKX]
    return use


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_stops_the_command_through_its_finally_blocks(analyze_run, capsys, signum):
    before = signal.getsignal(signum)
    cleaned = []

    def run(_args):
        try:
            os.kill(os.getpid(), signum)
            time.sleep(10)  # the handler raises here
            return 0
        finally:
            cleaned.append(True)
            os.kill(os.getpid(), signum)  # a second one while cleaning up is ignored
            time.sleep(0.1)

    assert main(analyze_run(run)) == 128 + signum
    name = signal.Signals(signum).name
    assert capsys.readouterr().err == f"loopmodel: stopped by {name}\n" and cleaned == [True]
    assert signal.getsignal(signum) is before  # the handlers before are put back


def test_an_ignored_hangup_stays_ignored(analyze_run, capsys):
    """``nohup loopmodel ...``: SIGHUP ignored before, ignored while the command runs."""
    def run(_args):
        os.kill(os.getpid(), signal.SIGHUP)
        time.sleep(0.2)
        return 0

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert main(analyze_run(run)) == 0 and capsys.readouterr().err == ""
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_signals_while_the_local_cluster_starts_wait_until_it_has_started():
    """A SIGTERM or SIGHUP sent while the local cluster starts does not stop the start half
    way (a cluster left for interpreter exit): it is delivered once the cluster can be closed.
    Meanwhile SIGINT is ignored and SIGHUP blocked, which the worker processes inherit."""
    def stop(signum, _frame):
        raise Stopped(signum, signal.Signals(signum).name)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    interrupt = signal.getsignal(signal.SIGINT)
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            release = sweep_dask._signals_held()
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.SIGHUP in signal.pthread_sigmask(signal.SIG_BLOCK, [])
            os.kill(os.getpid(), signum)
            time.sleep(0.1)  # held: nothing raised
            with pytest.raises(Stopped) as got:
                release()
            assert got.value.signum == signum
            assert signal.getsignal(signal.SIGINT) is interrupt
            assert signal.getsignal(signum) is stop
            assert signal.SIGHUP not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# ---------------------------------------------------------------- the real command line


def _start(args, cwd, group: bool = False) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "loopmodel.cli", *map(str, args)], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=group)


def _stop(p: subprocess.Popen, signum: int, group: bool = False) -> tuple:
    """Send ``signum`` (to the process group with ``group``), then ``(stdout, stderr)``."""
    try:
        (os.killpg if group else os.kill)(p.pid, signum)
        return p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL) if group else p.kill()
            p.wait()


def _one_line(err: str, start: str) -> str:
    assert "Traceback" not in err and "leaked" not in err and err.count("\n") == 1, err
    assert err.startswith(start), err
    return err


@pytest.mark.parametrize("signum, args", [(signal.SIGTERM, ["--json", "out.json"]),
                                          (signal.SIGHUP, ["--json", "out.json"]),
                                          (signal.SIGTERM, [])],
                         ids=["SIGTERM-json-file", "SIGHUP-json-file", "SIGTERM-text"])
def test_analyze_sweep_stopped_by_a_signal(tmp_path, signum, args):
    """A long ``-D`` sweep: stopped once its first row is out, one line, 128 + signum, and no
    ``--json`` file (it is written at the end, whole or not at all)."""
    p = _start(["analyze", DAXPY, "-m", SKX, "-D", "N=1:100000000:1", "--incore", "analytic", *args], tmp_path)
    assert p.stdout.readline()  # started: its first row
    time.sleep(0.5)
    _, err = _stop(p, signum)
    assert p.returncode == 128 + signum
    assert _one_line(err, "loopmodel: ") == f"loopmodel: stopped by {signal.Signals(signum).name}\n"
    assert os.listdir(tmp_path) == []


STUDY = """\
    kernels: [KERNELS/daxpy.c]
    machines: [SkylakeSP_Gold-6148]
    defines: {N: '1:1000000:1'}
    options: {incore: [analytic], cache_predictor: [lc]}
"""


@pytest.mark.parametrize("signum, group", [(signal.SIGTERM, False), (signal.SIGHUP, True)],
                         ids=["SIGTERM-to-the-process", "SIGHUP-to-the-group"])
def test_sweep_stopped_by_a_signal_closes_its_cluster_and_writes_nothing(tmp_path, signum, group):
    """``loopmodel sweep`` on a local cluster: SIGTERM (a service manager, ``kill``), or SIGHUP
    to the whole process group (a terminal closed; the workers do not see it): the cluster is
    closed (no leaked semaphores), one line says how far it got, nothing is written."""
    import psutil

    (tmp_path / "study.yml").write_text(textwrap.dedent(STUDY).replace("KERNELS", str(KERNELS.resolve())))
    out = tmp_path / "r.csv"
    p = _start(["sweep", "study.yml", "--workers", "1", "--no-cache", "--no-progress", "-o", out], tmp_path, group)
    try:
        end = time.monotonic() + 60
        while not any("spawn_main" in " ".join(c.cmdline()) for c in psutil.Process(p.pid).children()):
            assert time.monotonic() < end and p.poll() is None, "no worker process within 60 s"
            time.sleep(0.1)
        time.sleep(2)
    finally:
        _, err = _stop(p, signum, group)
    assert p.returncode == 128 + signum, err
    _one_line(err, f"loopmodel: stopped by {signal.Signals(signum).name}; ")
    assert err.endswith(f" of 1000000 points done, nothing written to {out}\n"), err
    assert os.listdir(tmp_path) == ["study.yml"]
