"""Run a multi-device bundle on the twin: one binary whose main.cpp runs every rank in a process of its own
(`ks_twin::hccl::run_ranks`), each rank reading its inputs from and writing its outputs to `rank<r>/`."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..codegen.bundle import CodeBundle
from ..core.errors import InputError, TwinError
from ..core.files import os_error
from ..core.names import inside
from .runner import _check_inputs, _describe_failure, _read_output, compile

__all__ = ["run_ranks", "RANK_DIR", "HCCL_TIMEOUT_ENV"]

RANK_DIR = "rank{rank}"  # each rank's working directory in the run directory
HCCL_TIMEOUT_ENV = "KS_TWIN_HCCL_TIMEOUT_S"  # what bounds every HCCL wait of the binary (seconds)


def run_ranks(code: CodeBundle, inputs: Sequence[Mapping[str, np.ndarray]], *, keep_dir: str | None = None,
              cache_dir: str | os.PathLike[str] | None = None, timeout_s: float = 120.0,
              hccl_timeout_s: float = 30.0) -> list[dict[str, np.ndarray]]:
    """Run `code` with one input dict per rank (`code.inputs` are one rank's tensors) and return each rank's
    outputs by name. A rank that fails (a twin check, an HCCL misuse, a wait past `hccl_timeout_s`) ends the
    run with a TwinError naming the rank; `timeout_s` bounds the whole run."""
    from ..core.checks import as_number

    devices = getattr(code, "devices", None)
    if not isinstance(inputs, Sequence) or isinstance(inputs, (str, bytes)):
        raise InputError(f"kernel {code.name!r}: inputs must be a list of one dict per rank, got "
                         f"{type(inputs).__name__}")
    if devices is not None and len(inputs) != devices:
        raise InputError(f"kernel {code.name!r}: {len(inputs)} per-rank input dict(s) for {devices} devices; pass "
                         f"one dict per rank, rank order")
    timeout_s = as_number(timeout_s, "run_ranks: timeout_s (seconds the run may take)", positive=True)
    hccl_timeout_s = as_number(hccl_timeout_s, "run_ranks: hccl_timeout_s (seconds an HCCL wait may take)",
                               positive=True)
    storage = []
    for r, rank_inputs in enumerate(inputs):
        try:
            arrays, lead = _check_inputs(code, rank_inputs)
        except InputError as e:
            raise InputError(f"rank {r}: {e}") from None
        if lead is not None:
            raise InputError(f"kernel {code.name!r} takes its rows at run time; a multi-rank run takes fixed shapes")
        storage.append(arrays)
    binary = compile(code, cache_dir=cache_dir)
    env = {k: v for k, v in os.environ.items() if k != "KS_TWIN_LOG"}
    env[HCCL_TIMEOUT_ENV] = f"{hccl_timeout_s:g}"
    with tempfile.TemporaryDirectory(prefix="ks-twin-ranks-") as tmp:
        work = Path(keep_dir) if keep_dir is not None else Path(tmp)
        try:
            for r, arrays in enumerate(storage):
                rank_dir = inside(work, RANK_DIR.format(rank=r))
                rank_dir.mkdir(parents=True, exist_ok=True)
                for name, arr in arrays.items():
                    arr.astype(arr.dtype.newbyteorder("<"), copy=False).tofile(inside(rank_dir, f"{name}.bin"))
                for spec in code.outputs:
                    inside(rank_dir, f"{spec.name}.bin").unlink(missing_ok=True)
        except OSError as e:
            raise os_error(e, work, "write the ranks' files in") from None
        try:
            proc = subprocess.run([str(binary)], cwd=work, capture_output=True, text=True, timeout=timeout_s, env=env)
        except subprocess.TimeoutExpired as e:
            raise TwinError(f"kernel {code.name!r}: the {len(storage)} ranks did not finish within {timeout_s:g} s; "
                            "a wait the twin could not bound, or pass a larger timeout_s if the ranks are slow") from e
        if proc.returncode != 0:
            raise _describe_failure(code, proc)
        return [{spec.name: _read_output(spec, work / RANK_DIR.format(rank=r) / f"{spec.name}.bin", code.name)
                 for spec in code.outputs} for r in range(len(storage))]
