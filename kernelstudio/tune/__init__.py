"""Autotuning on the simulator, and the design database.

`ks.tune(build_fn, target, budget, strategy, seed, executor)` searches the knobs a build function
declares; `ks.advise_greedy(build_fn, target, rounds, executor)` takes the advisor's best simulated move
round after round; `ks.DynamicKernel(build_fn, buckets)` tunes one configuration per shape bucket;
`ks.save_design` / `ks.designs` keep designs in the SQLite design database.

Stage 11. It may import every stage below it, up to multi/.
"""

from __future__ import annotations

from .db import DesignDB, DesignRecord, default_db_path
from .designs import designs, save_design
from .dynamic import Bucket, DynamicKernel, ShapeSweep, default_buckets, tail_efficiency
from .errors import DesignDBError, TuneError
from .feasibility import feasibility_data, feasibility_figure
from .greedy import GreedyResult, advise_greedy
from .result import Best, Trial, TuneResult
from .tuner import tune

__all__ = ["DynamicKernel", "Bucket", "ShapeSweep", "default_buckets", "tail_efficiency", "tune", "TuneResult",
           "Trial", "Best", "designs", "save_design", "DesignDB", "DesignRecord", "default_db_path", "feasibility_data",
           "feasibility_figure", "TuneError", "DesignDBError", "advise_greedy", "GreedyResult"]
