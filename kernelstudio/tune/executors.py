"""Where configurations are evaluated: this process, a local process pool, or a Dask cluster.

Every runner calls `on_done(index, outcome)` in the calling thread as each result arrives, so the
tuner records (and stores) every finished result at once: a worker that dies mid-sweep loses none.
"""

from __future__ import annotations

import ast
import atexit
import concurrent.futures as cf
import multiprocessing
import os
import signal
import sys
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core.errors import KernelStudioError
from .errors import TuneError
from .evaluate import Outcome, evaluate_config, evaluate_payload

__all__ = ["Runner", "make_runner"]

Job = tuple[int, dict[str, Any]]
OnDone = Callable[[int, Outcome], None]


def _bug(e: BaseException, config: dict[str, Any]) -> TuneError:
    return TuneError(f"tune: the build function raised {type(e).__name__}: {e} at {config}; this is not a "
                     "KernelStudioError (an illegal schedule is pruned, other errors stop the sweep): fix the "
                     "build function")


class Runner(ABC):
    """Runs jobs (index, config) and reports each outcome as it arrives."""

    name = "in-process"

    @abstractmethod
    def run(self, jobs: Sequence[Job], on_done: OnDone) -> None:
        """Evaluate every job, calling `on_done(index, outcome)` in this thread as each finishes."""

    def close(self) -> None:  # noqa: B027 - most runners hold nothing to release
        """Release what the runner holds (a pool it made); nothing by default."""


class InlineRunner(Runner):
    def __init__(self, build_fn: Callable[[], Any], target: Any) -> None:
        self.build_fn, self.target = build_fn, target

    def run(self, jobs: Sequence[Job], on_done: OnDone) -> None:
        for i, cfg in jobs:
            try:
                out = evaluate_config(self.build_fn, cfg, self.target)
            except KernelStudioError:
                raise
            except Exception as e:
                raise _bug(e, cfg) from e
            on_done(i, out)


_POOLS: dict[int, cf.ProcessPoolExecutor] = {}


def _worker_init() -> None:
    """Pool workers leave Ctrl-C (and a notebook kernel's interrupt of its process group) to the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _has_main_guard(source: str) -> bool:
    """Whether a script's top level has an `if __name__ == "__main__":` block (either operand order)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True  # not ours to judge
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.comparators) == 1:
            sides = [node.test.left, node.test.comparators[0]]
            if (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
                    and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides)):
                return True
    return False


def check_main_guard() -> None:
    """Refuse to start the spawn pool from a plain script without a main guard: every worker would re-run
    the script (and its ks.tune call) on start-up and die, so the sweep would fail with nothing learned."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if multiprocessing.parent_process() is not None or not path or getattr(main, "__spec__", None) is not None:
        return  # a worker, an interactive session or `python -m`: spawn imports no script
    try:
        source = Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return
    if not _has_main_guard(source):
        raise TuneError(f"tune: {path} calls the tuner's process pool from a script without an "
                        "`if __name__ == \"__main__\":` block; the pool's workers start by re-running the script, "
                        "so each would tune again and die. Put the script's top-level work under that block, or "
                        "pass executor='inline' (one process) to ks.tune")


def _pool(workers: int, fresh: bool = False) -> cf.ProcessPoolExecutor:
    """A process pool kept for the session (workers import kernelstudio once); `fresh` replaces it."""
    old = _POOLS.get(workers)
    if old is not None and not fresh and not getattr(old, "_broken", False):
        return old
    if old is not None:
        old.shutdown(wait=False, cancel_futures=True)
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_worker_init)
    _POOLS[workers] = pool
    return pool


@atexit.register
def _close_pools() -> None:
    for p in _POOLS.values():
        p.shutdown(wait=False, cancel_futures=True)
    _POOLS.clear()


class FuturesRunner(Runner):
    """A concurrent.futures executor: the local process pool (default) or one the caller gives."""

    def __init__(self, payload: bytes, target: Any, executor: cf.Executor | None = None,
                 workers: int | None = None) -> None:
        self.payload, self.target = payload, target
        self.own = executor is None
        if self.own:
            check_main_guard()
        self.workers = workers or max(1, min(os.cpu_count() or 1, 8))
        self.executor = executor if executor is not None else _pool(self.workers)
        self.name = (f"local process pool ({self.workers} workers)" if self.own
                     else type(executor).__name__)
        self.restarts = 0

    def run(self, jobs: Sequence[Job], on_done: OnDone) -> None:
        pending = list(jobs)
        while pending:
            futs: dict[cf.Future, Job] = {}
            done: set[int] = set()
            try:
                for i, cfg in pending:
                    futs[self.executor.submit(evaluate_payload, self.payload, cfg, self.target)] = (i, cfg)
                for f in cf.as_completed(futs):
                    i, cfg = futs[f]
                    try:
                        out = f.result()
                    except cf.process.BrokenProcessPool:
                        raise
                    except KernelStudioError:
                        raise
                    except Exception as e:
                        for g in futs:
                            g.cancel()
                        raise _bug(e, cfg) from e
                    done.add(i)
                    on_done(i, out)
                return
            except cf.process.BrokenProcessPool as e:
                pending = [(i, c) for i, c in pending if i not in done]
                if not self.own or self.restarts >= 1:
                    if self.own:
                        _POOLS.pop(self.workers, None)
                        self.executor.shutdown(wait=False, cancel_futures=True)
                    raise TuneError(f"tune: a worker process died with {len(pending)} configuration(s) unfinished "
                                    f"({len(done)} finished in this round are recorded, and stored in the design "
                                    "database: re-running ks.tune resumes from them); a configuration may crash "
                                    "its process (memory?): try executor='inline' to see which") from e
                self.restarts += 1
                self.executor = _pool(self.workers, fresh=True)


class DaskRunner(Runner):
    """A dask.distributed Client: one task per configuration, gathered as they complete."""

    def __init__(self, client: Any, payload: bytes, target: Any) -> None:
        self.client, self.payload, self.target = client, payload, target
        self.name = f"dask ({len(client.scheduler_info().get('workers', {}))} workers)"

    def run(self, jobs: Sequence[Job], on_done: OnDone) -> None:
        from distributed import as_completed

        tag = uuid.uuid4().hex[:8]
        futs = {}
        for i, cfg in jobs:
            f = self.client.submit(evaluate_payload, self.payload, cfg, self.target, pure=False,
                                   key=f"ks-tune-{tag}-{i}")
            futs[f] = (i, cfg)
        seq = as_completed(list(futs))
        for f in seq:
            i, cfg = futs[f]
            try:
                out = f.result()
            except KernelStudioError:
                self.client.cancel(list(futs))
                raise
            except Exception as e:
                self.client.cancel(list(futs))
                if type(e).__name__ == "KilledWorker":
                    raise TuneError(f"tune: dask workers died while holding configuration {cfg} (it, or another "
                                    f"configuration queued on the same worker, crashed the process: {e}); the "
                                    "results that finished are recorded and stored: re-running ks.tune resumes "
                                    "from them; executor='inline' shows which configuration fails") from e
                raise _bug(e, cfg) from e
            on_done(i, out)


def _is_dask_client(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "distributed" and hasattr(x, "submit") and hasattr(x, "gather")


def make_runner(executor: Any, build_fn: Callable[[], Any], target: Any) -> tuple[Runner, str]:
    """The runner for `executor` (None: a local process pool; "inline": this process; a
    concurrent.futures Executor; a dask.distributed Client) and a note when it had to fall back."""
    if isinstance(executor, str) and executor in ("inline", "serial"):
        return InlineRunner(build_fn, target), ""
    if not (executor is None or (isinstance(executor, str) and executor == "process")
            or isinstance(executor, cf.Executor) or _is_dask_client(executor)):
        raise TuneError(f"tune: executor must be None (a local process pool), 'process', 'inline', a "
                        f"concurrent.futures Executor or a dask.distributed Client, got {executor!r}")
    import cloudpickle

    try:
        payload = cloudpickle.dumps(build_fn)
        cloudpickle.loads(payload)
    except Exception as e:  # noqa: BLE001 - any pickling failure means: evaluate here
        why = f"{type(e).__name__}: {str(e)[:120]}"
        if executor is None or isinstance(executor, str):
            return InlineRunner(build_fn, target), (f"the build function cannot be pickled ({why}), so every "
                                                     "configuration was evaluated in this process")
        raise TuneError(f"tune: the build function cannot be pickled ({why}) to send to {executor!r}; make it a "
                        "plain function of module-level names, or pass executor='inline'") from e
    if _is_dask_client(executor):
        return DaskRunner(executor, payload, target), ""
    return FuturesRunner(payload, target, executor if isinstance(executor, cf.Executor) else None), ""
