"""Dask for ``loopmodel sweep``: the client (a local cluster or a scheduler's address) and the
pool of tasks in flight on its workers.

Every wait on Dask is bounded by :data:`TIMEOUT_ENV` seconds (default
:data:`DEFAULT_TIMEOUT_S`): connecting to ``--dask ADDRESS`` (something else than a Dask
scheduler there is a one-line error, not a hang or a traceback), and a sweep whose scheduler
has had no worker that long stops with one line. The worker processes of a local cluster
do not see SIGINT and SIGHUP, so a Ctrl-C or a hangup reaches this process only: it stops the
cluster and says so in one line (so does SIGTERM, which the command line makes a
KeyboardInterrupt as well). dask and distributed are imported here only, when a sweep needs
them (:func:`dask_modules`).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import queue
import signal
import socket
import threading
import time
import warnings

from ..errors import DefineError, LoopmodelError
from ..fileio.result_file import RowBatch
from ..measure.topology import allowed_cpus

#: environment variable: seconds to wait for the scheduler's answer, and for a worker while none is left
TIMEOUT_ENV = "LOOPMODEL_DASK_TIMEOUT"
#: its default (seconds)
DEFAULT_TIMEOUT_S = 15.0
#: seconds between looks at the scheduler's workers while no task finishes
POLL_S = 1.0
#: tasks in flight per worker thread (computing, queued, or done and held until the tasks before
#: them are done: a long task does not leave the other workers idle at once)
TASKS_PER_THREAD = 16


class SweepStopped(LoopmodelError):
    """A sweep that could not finish: no worker left, or the scheduler lost (one line that
    says how many points were done)."""


def dask_modules() -> tuple:
    """``(dask, distributed)``, with the parts of distributed used here imported, imported
    here only, when a sweep runs on Dask: they are optional dependencies and take a second
    to import, which no other command should pay for."""
    import dask
    import distributed
    import distributed.comm
    import distributed.comm.addressing
    import distributed.security

    return dask, distributed


def dask_timeout() -> float:
    """The Dask wait bound in seconds: :data:`TIMEOUT_ENV`, else :data:`DEFAULT_TIMEOUT_S`.

    Raises:
        DefineError: the variable is set to something else than a positive number of seconds.
    """
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise DefineError(f"{TIMEOUT_ENV}={text}: expected a number of seconds above 0")
    return value


@contextlib.contextmanager
def dask_client(address: str | None = None, workers: int | None = None):
    """A ``distributed.Client`` (context manager): connected to the scheduler at ``address``,
    else on a new ``LocalCluster`` of ``workers`` processes (default: the CPUs this process may
    use), one thread each, that ignore SIGINT; client and cluster are closed on exit.

    Raises:
        LoopmodelError: nothing answers at ``address``, or what answers is not a Dask
            scheduler (within :func:`dask_timeout` seconds), or the local cluster cannot
            start (one line).
    """
    client_class = dask_modules()[1].Client
    timeout = dask_timeout()
    with _quiet():
        if address:
            check_scheduler(address, timeout)
            try:
                client = client_class(address, timeout=f"{timeout}s")
            except Exception as exc:  # noqa: BLE001 - whatever the connection raises is one line
                raise LoopmodelError(f"--dask {address}: cannot connect to the scheduler: {_text(exc)}") from None
            with client:
                yield client
            return
        with _local_cluster(workers) as cluster, client_class(cluster) as client:
            yield client


@contextlib.contextmanager
def _quiet():
    """Dask's own log lines off in this process while it runs a sweep (a worker that died, a
    result fetched again, a closing connection): the sweep says what matters in one line."""
    roots = ("distributed", "tornado", "asyncio")
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in roots]  # some set their own level
    loggers = [logging.getLogger(name) for name in dict.fromkeys((*roots, *names))]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _text(exc: BaseException) -> str:
    first = str(exc).splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


@contextlib.contextmanager
def _local_cluster(workers: int | None):
    """A ``LocalCluster`` (context manager: closed on exit) whose worker processes do not
    profile themselves and do not see SIGINT and SIGHUP (they inherit SIGINT ignored and
    SIGHUP blocked, which both stay so across exec), so a Ctrl-C or a hangup sent to the
    process group stops this process only, which closes the cluster; a signal that comes
    while the cluster starts stops the sweep once it has started (:func:`_signals_held`).

    Raises:
        LoopmodelError: a worker process cannot start (one line).
    """
    dask, distributed = dask_modules()
    n = workers or len(allowed_cpus())
    release = _signals_held()
    try:
        # a worker's profiler keeps a sample of its stacks per second, 1000 of them (some 100 MB):
        # off, a worker's memory stays flat over a sweep of hours
        with warnings.catch_warnings(), dask.config.set({"distributed.worker.profile.enabled": False}):
            # its HTTP port taken (another cluster): it takes another, say nothing
            warnings.filterwarnings("ignore", message="Port .* is already in use")
            cluster = distributed.LocalCluster(n_workers=n, processes=True, threads_per_worker=1,
                                               dashboard_address=None, silence_logs=logging.CRITICAL)
    except BaseException as exc:
        release()
        if isinstance(exc, RuntimeError):  # e.g. a worker process that cannot start
            raise LoopmodelError(f"cannot start a local Dask cluster of {n} worker(s): {exc}") from None
        raise
    with cluster:
        release()  # a signal that came while it started stops the sweep here, and the cluster closes
        yield cluster


#: signals a terminal sends to its whole foreground process group: the workers do not see them
GROUP_SIGNALS = ("SIGINT", "SIGHUP")
#: of those, the ones the workers ignore (multiprocessing's resource tracker unblocks SIGINT in
#: the thread that starts it, and that thread may start the workers)
IGNORED_SIGNALS = ("SIGINT",)
#: a signal that asks this process to end: held while the cluster starts, the workers keep its default
HELD_SIGNALS = ("SIGTERM",)


def _signals_held():
    """Hold the signals that stop a sweep while a local cluster starts; returns the function
    that lets them go: the handlers before put back, and a signal that came meanwhile
    delivered then (so it does not stop the start half-way).

    :data:`GROUP_SIGNALS` are blocked in this thread, so the threads the cluster starts and
    the processes they start (its workers, multiprocessing's resource tracker) keep them
    blocked, and :data:`IGNORED_SIGNALS` are also ignored (an ignored signal stays ignored
    across exec): a Ctrl-C or a hangup sent to the process group reaches this process only.
    :data:`HELD_SIGNALS` are not blocked (Dask ends a worker with SIGTERM). Meanwhile a
    handler of their own notes the signals not ignored; an ignored one waits while this
    thread blocks it, and is lost if another thread takes it (so is SIGINT without
    ``pthread_sigmask``, on Windows). Outside the main thread nothing is held (signal
    handlers: main thread only).
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    group, ignored, held = ([getattr(signal, n) for n in names if hasattr(signal, n)]
                            for names in (GROUP_SIGNALS, IGNORED_SIGNALS, HELD_SIGNALS))
    came = []

    def note(signum, _frame):
        came.append(signum)

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, group) if hasattr(signal, "pthread_sigmask") else None
    previous = {s: signal.signal(s, signal.SIG_IGN if s in ignored else note) for s in group + held}

    def release():
        for signum, handler in previous.items():
            if handler is None:  # not set from Python: the interpreter's own
                handler = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, handler)
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # one still pending is delivered now
        for signum in dict.fromkeys(came):
            signal.raise_signal(signum)
    return release


# ---------------------------------------------------------------- is it a scheduler?


def check_scheduler(address: str, timeout: float) -> None:
    """Make sure a Dask scheduler answers at ``address`` before a ``Client`` connects to it:
    a TCP connection (for ``tcp://`` and ``tls://``), then Dask's handshake and an
    ``identity`` request, all within ``timeout`` seconds. (A ``Client`` itself waits without
    end for a handshake that never comes, and what it reads from another server, e.g. an
    HTTP one, can raise anything, down to a MemoryError for a frame of 3 EiB.)

    Raises:
        LoopmodelError: nothing listens there ("cannot connect"), or what answers is not a
            Dask scheduler: no Dask answer in time, an answer Dask cannot read, or another
            Dask server (one line naming the address).
    """
    host_port = _host_port(address)
    if host_port:
        try:
            socket.create_connection(host_port, timeout=timeout).close()
        except OSError as exc:
            raise LoopmodelError(f"--dask {address}: cannot connect to the scheduler: "
                                 f"{exc.strerror or _text(exc)}") from None
    try:
        reply = _ask_identity(address, timeout)
    except TimeoutError:
        raise LoopmodelError(f"--dask {address}: not a Dask scheduler (no Dask answer within {timeout:g} s; "
                             f"{TIMEOUT_ENV} sets the wait)") from None
    except Exception as exc:  # noqa: BLE001 - anything a foreign server's bytes make Dask raise
        raise LoopmodelError(f"--dask {address}: not a Dask scheduler (its answer is not Dask's: "
                             f"{_text(exc)})") from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise LoopmodelError(f"--dask {address}: not a Dask scheduler"
                             + (f" (it is a Dask {kind})" if isinstance(kind, str) else ""))


def _host_port(address: str):
    """``(host, port)`` of a ``tcp://`` or ``tls://`` address (no scheme: tcp), else None."""
    addressing = dask_modules()[1].comm.addressing
    try:
        scheme, loc = addressing.parse_address(address)
        return addressing.parse_host_port(loc) if scheme in ("tcp", "tls") else None
    except ValueError:
        return None


def _ask_identity(address: str, timeout: float):
    """The scheduler's answer to ``identity``, asked in a thread of its own (with an event loop
    of its own, whatever the caller runs).

    Raises:
        TimeoutError: no answer within ``timeout`` seconds; anything the exchange raises.
    """
    box = {}

    def ask():
        try:
            box["reply"] = asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout))
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=ask, name="loopmodel-dask-check", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if thread.is_alive():
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box["reply"]


async def _identity(address: str, timeout: float):
    distributed = dask_modules()[1]
    security = distributed.security.Security().get_connection_args("client")
    comm = await distributed.comm.connect(address, timeout=timeout, **security)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


# ---------------------------------------------------------------- tasks in flight


class Pool:
    """A sweep's tasks on a ``distributed.Client``'s workers (context manager: the tasks
    still in flight are cancelled on exit).

    Tasks are submitted one at a time (:meth:`submit`) and collected as they finish
    (:meth:`collect`); the caller keeps at most :meth:`capacity` in flight. A thread fetches
    each finished task's result (without a time limit: a result whose worker died is
    computed again, and Dask leaves a fetch given up on pending), while :meth:`collect`
    waits for them and watches the workers. A task's points that fail with a loopmodel error
    are error rows of its result (:func:`loopmodel.workflows.sweep.run_chunk`); a task that raises (a
    bug) or that killed its workers (Dask's KilledWorker) ends the sweep (:meth:`collect`).

    Args:
        client: the ``distributed.Client``.
        compute: what a worker calls with a task (a picklable function of the task that
            returns its :class:`~loopmodel.fileio.result_file.RowBatch`).
        timeout: seconds the scheduler may have no worker before :meth:`collect` gives up
            (default :func:`dask_timeout`).
    """

    def __init__(self, client, compute, timeout: float | None = None):
        self.client, self.compute = client, compute
        self.timeout = dask_timeout() if timeout is None else timeout
        self.pending = {}  # future key -> (future, chunk)
        self.finished = queue.Queue()  # futures, put by their done callbacks; None: stop
        self.fetched = queue.Queue()  # (future, its result or exception), put by the fetching thread
        self.alone_since = None
        self.threads = self._threads()
        threading.Thread(target=self._fetch, name="loopmodel-sweep-results", daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        futures = [f for f, _ in self.pending.values()]
        self.pending.clear()
        if futures:
            with contextlib.suppress(Exception):  # a client already closed or cut off
                self.client.cancel(futures)
        self.finished.put(None)
        return False

    @property
    def busy(self) -> int:
        """Tasks submitted and not yet collected."""
        return len(self.pending)

    def capacity(self) -> int:
        """How many tasks to keep in flight: :data:`TASKS_PER_THREAD` per worker thread (at
        least one thread counted), as last seen."""
        return TASKS_PER_THREAD * max(1, self.threads)

    def submit(self, chunk) -> None:
        """Send ``chunk`` (:class:`loopmodel.workflows.sweep.Chunk`) to the workers."""
        future = self.client.submit(self.compute, chunk, pure=False)
        self.pending[future.key] = (future, chunk)
        future.add_done_callback(self.finished.put)

    def _fetch(self) -> None:
        """The fetching thread: each finished future's result (or exception), in turn."""
        while (future := self.finished.get()) is not None:
            try:
                value = future.result()
            except BaseException as exc:  # noqa: BLE001 - the task's failure, or its cancellation
                value = exc
            self.fetched.put((future, value))

    def collect(self) -> list:
        """``[(chunk, RowBatch), ...]`` of the tasks that finished (at least one; waits).

        Raises:
            SweepStopped: the scheduler has had no worker for ``timeout``
                seconds, cannot be reached, dropped a task (cancelled it), or a task killed
                the workers that ran it (KilledWorker: it crashed the process or took all
                its memory).
            Exception: what a task raised (a bug in loopmodel, with the worker's traceback).
        """
        got = [self._next()]
        with contextlib.suppress(queue.Empty):
            while True:
                got.append(self.fetched.get_nowait())
        out = []
        for future, value in got:
            _, chunk = self.pending.pop(future.key, (None, None))
            if chunk is None:
                continue
            if future.cancelled():
                raise SweepStopped("the Dask scheduler dropped a task (cancelled): the connection was lost")
            future.release()
            if not isinstance(value, RowBatch):
                _raise_failure(chunk, value)
            out.append((chunk, value))
        return out

    def _next(self) -> tuple:
        """The next fetched result; while none comes, looks at the workers every :data:`POLL_S`."""
        while True:
            with contextlib.suppress(queue.Empty):
                return self.fetched.get(timeout=POLL_S)
            self.threads = self._threads()
            if self.threads:
                self.alone_since = None
                continue
            self.alone_since = self.alone_since or time.monotonic()
            if time.monotonic() - self.alone_since > self.timeout:
                raise SweepStopped(f"no Dask worker left for {self.timeout:g} s (they died or left; "
                                   f"{TIMEOUT_ENV} sets the wait)")

    def _threads(self) -> int:
        """Worker threads the scheduler has now.

        Raises:
            SweepStopped: no answer within ``timeout`` seconds.
        """
        try:
            return sum(self.client.nthreads(callback_timeout=self.timeout).values())
        except Exception as exc:  # noqa: BLE001 - whatever a lost connection raises
            raise SweepStopped(f"lost the Dask scheduler: {_text(exc)}") from None


def _raise_failure(chunk, exc: BaseException):
    """A task that gave no result: its worker died running it (one line), or it raised.

    Raises:
        SweepStopped: Dask's KilledWorker (names the task's kernel and machine).
        BaseException: ``exc`` itself, anything else (what run_chunk raises is a bug, not data).
    """
    if isinstance(exc, dask_modules()[1].KilledWorker):
        raise SweepStopped(f"a task of {chunk.kernel} on {chunk.machine.given} killed the Dask workers that ran "
                           f"it (it crashed them or took their memory): {_text(exc)}") from None
    raise exc
