"""The tuner's evaluator: one kernel's search space on one profile, its results keyed by hash(model, profile,
graph, default schedule, configuration) and cached in memory or in the design database."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from ..core.config import TUNE_MEMO_LIMIT
from ..hw import HardwareProfile
from ..hw import get as get_profile
from .db import DesignDB
from .evaluate import Discovery, Outcome, model_fingerprint
from .space import Space, config_json

__all__ = ["Evaluator"]

_MEMO: dict[str, Outcome] = {}  # results of this process when no database is used


class Evaluator:
    """Cached evaluation of configurations of one kernel on one target (used by tune and the feasibility map)."""

    def __init__(self, build_fn: Callable[[], Any], target: Any, disc: Discovery, db: Any) -> None:
        self.build_fn, self.target, self.disc = build_fn, target, disc
        self.profile = target if isinstance(target, HardwareProfile) else get_profile(target)
        self.space = Space(disc.knobs)
        h = hashlib.sha256()
        for part in (model_fingerprint(), repr(self.profile), disc.graph_text, disc.schedule_json):
            h.update(part.encode())
            h.update(b"\x00")
        self.kernel_key = h.hexdigest()[:32]
        self.db_arg = db
        self.cache_hits = 0

    def key(self, config: dict[str, Any]) -> str:
        return hashlib.sha256(f"{self.kernel_key}\x00{config_json(config)}".encode()).hexdigest()[:32]

    def lookup(self, db: DesignDB | None, configs: Sequence[dict[str, Any]]) -> dict[int, Outcome]:
        keys = [self.key(c) for c in configs]
        if db is None:
            found = {i: _MEMO[k] for i, k in enumerate(keys) if k in _MEMO}
        else:
            rows = db.get_results(keys)
            found = {i: Outcome(r["time_us"], r["kind"], r["error"], r["info"])
                     for i, k in enumerate(keys) if (r := rows.get(k)) is not None}
        self.cache_hits += len(found)
        return found

    def store(self, db: DesignDB | None, config: dict[str, Any], out: Outcome) -> None:
        k = self.key(config)
        if db is None:
            if len(_MEMO) >= TUNE_MEMO_LIMIT:
                _MEMO.clear()
            _MEMO[k] = out
        else:
            db.put_result(k, self.kernel_key, self.profile.name, config_json(config), out.time_us, out.kind,
                          out.error, out.info)

    def evaluate(self, configs: Sequence[dict[str, Any]], runner: Any, db: DesignDB | None,
                 on_trial: Callable[[int, Outcome, bool], None]) -> None:
        """Look configurations up, run the misses, store and report each as it completes."""
        found = self.lookup(db, configs)
        for i, out in found.items():
            on_trial(i, out, True)
        jobs = [(i, dict(c)) for i, c in enumerate(configs) if i not in found]

        def done(i: int, out: Outcome) -> None:
            self.store(db, configs[i], out)
            on_trial(i, out, False)

        if jobs:
            runner.run(jobs, done)
