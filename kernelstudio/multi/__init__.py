"""Multi-device designs: MC2's fused compute-and-communication operators on a cluster of NPUs.

    c = ks.multi.Cluster(devices=8, target="ascend910b2")   # link model from multi/links.toml (sources)
    r = ks.multi.matmul_allreduce(x, w, cluster=c, tiles=4)  # also all_gather_matmul, matmul_reduce_scatter
    r.time_us, r.compute_us, r.comm_us, r.exposed_comm_us, r.serial_us, r.sim.events[device]
    code = ks.multi.codegen(r)                               # MC2 Ascend C: Hccl Prepare / Commit per tile / Wait
    y = ks.multi.run_twin(r, inputs)                         # every device a process on the twin's in-memory HCCL
    ks.multi.export_project(r, "out/mc2")                    # the CANN project: op_host, op_kernel, CMake, JSON

Each device's compute is the single-chip flow (create_schedule, lower, simulate) per tile; the
communication is HCCL's alpha-beta-gamma steps per algorithm on the link model, on a lane of its own,
joined to the compute at the MC2 kernel's SyncAll / Commit / Wait points.

Stage 10, above plan/ and twin/, below tune/. It may import core/, hw/, ir/, dsl/, schedule/, sim/ and
plan/ (twin/ when the generated multi-device code runs there); nothing above it.
"""

from __future__ import annotations

from .algorithms import COLLECTIVES, Step, collective_steps
from .cluster import DEVICE_COUNTS, Cluster
from .codegen import Mc2Code, Mc2Tiling, codegen, mc2_tiling
from .design import ENGINES, KINDS, Mc2Design, Mc2Schedule
from .errors import ClusterError, LinkError, TilingError
from .link import ALGORITHMS, LINK_FIELDS, Link, get_link, link_names
from .on_twin import run_twin
from .ops import all_gather_matmul, matmul_allreduce, matmul_reduce_scatter
from .project import export_project
from .tiling import ALIGN_ROWS, MAX_TILES, MIN_COMM_BYTES
from .timeline import Event, MultiSim

__all__ = [
    "Cluster", "Link", "get_link", "link_names", "matmul_allreduce", "all_gather_matmul", "matmul_reduce_scatter",
    "Mc2Design", "Mc2Schedule", "codegen", "run_twin", "export_project", "Mc2Code", "Mc2Tiling", "mc2_tiling",
    "MultiSim", "Event", "Step", "collective_steps",
    "ClusterError", "LinkError", "TilingError",
    "ALGORITHMS", "ENGINES", "KINDS", "COLLECTIVES", "DEVICE_COUNTS", "LINK_FIELDS", "MAX_TILES", "ALIGN_ROWS",
    "MIN_COMM_BYTES",
]
