"""`ks.ascendc.load`: compile a user's own Ascend C kernel with the twin, run it on the CPU, check its outputs
against a NumPy reference, and keep the call log for the sync checker."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import hw
from ..codegen.bundle import CodeBundle, TensorSpec
from ..core.checks import as_int, as_number, fmt_shape
from ..core.config import DEFAULT_TARGET
from ..core.dtypes import DTYPES, is_float, round_to, storage_dtype
from ..core.errors import CompileError, InputError, KernelStudioError, TwinError
from ..sim import SimResult
from ..tileir.program import GmTensor
from ..twin import runner
from ..twin.calllog import CallLog
from . import sources as src
from .sync import Finding, check_sync, format_findings

__all__ = ["AscendCKernel", "MismatchError", "Out", "In", "out", "inp", "load", "MAX_BLOCK_DIM", "TOLERANCES"]

MAX_BLOCK_DIM = 65535  # CANN's limit on a launch's blockDim
MAX_TILING_BYTES = 64 * 1024  # the tiling blob a launch gets (CANN caps tiling data at 64 KiB)
MAX_TIMEOUT_S = 86400
MAX_GM_BYTES = 1 << 34  # one argument or workspace buffer (16 GiB): more than a device holds is a mistake
DEFAULT_WORKSPACE_BYTES = 1 << 20
# (rtol, atol) per output dtype when the caller gives none: one rounding step of the type, integers exact.
TOLERANCES: dict[str, tuple[float, float]] = {"float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3),
                                              "float32": (1e-5, 1e-6), "int8": (0.0, 0.0), "int32": (0.0, 0.0),
                                              "int64": (0.0, 0.0)}
_MODES = {"aiv": "AIV_MODE", "aic": "AIC_MODE", "mix": "MIX_MODE"}
_TASK_TYPE = re.compile(r"KERNEL_TASK_TYPE_DEFAULT\s*\(\s*(?P<t>\w+)\s*\)")
_TASK_MODE = {"KERNEL_TYPE_AIV_ONLY": "AIV_MODE", "KERNEL_TYPE_AIC_ONLY": "AIC_MODE",
              "KERNEL_TYPE_MIX_AIC_1_2": "MIX_MODE"}
_CUBE_HINTS = ("matmul_intf.h", "Mmad(", "ASCEND_IS_AIC", "REGIST_MATMUL_OBJ")


class MismatchError(KernelStudioError, AssertionError):
    """A loaded kernel's output differs from the reference; `.kernel` holds the run (outputs, log)."""


@dataclass(frozen=True)
class Out:
    """An output argument of `load`: the shape and dtype of the GM buffer the kernel writes."""

    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class In:
    """An input argument with an explicit dtype (for bfloat16, which NumPy lacks: values are rounded)."""

    value: np.ndarray
    dtype: str


def out(shape: int | Sequence[int], dtype: str) -> Out:
    """An output of `load(args=[...])`: a GM buffer of `shape` and `dtype` the kernel writes."""
    spec = TensorSpec("out", shape if not isinstance(shape, int) else (shape,), dtype)  # checks shape and dtype
    if any(d == 0 for d in spec.shape):
        raise InputError(f"ks.ascendc.out: shape {fmt_shape(spec.shape)} has no elements; give every dimension >= 1")
    if _nbytes(spec) > MAX_GM_BYTES:
        raise InputError(f"ks.ascendc.out: shape {fmt_shape(spec.shape)} {spec.dtype} needs {_nbytes(spec)} bytes, "
                         f"more than {MAX_GM_BYTES}")
    return Out(spec.shape, spec.dtype)


def inp(value: Any, dtype: str) -> In:
    """An input of `load(args=[...])` with its dtype given (e.g. "bfloat16"); values are rounded to it."""
    spec = TensorSpec("inp", np.shape(value), dtype)
    return In(np.asarray(value), spec.dtype)


@dataclass(frozen=True)
class AscendCKernel:
    """One run of a user's kernel on the twin: its outputs by parameter name, the call log, the bundle that
    was built, and where each bundle file came from."""

    name: str
    outputs: Mapping[str, np.ndarray]
    log: CallLog
    code: CodeBundle
    block_dim: int
    target: str
    files: Mapping[str, str]  # bundle path -> the user's path (or name)
    params: tuple[str | None, ...] = ()  # the entry's parameters: tensor name, "workspace", or None (tiling)

    @property
    def output(self) -> np.ndarray:
        """The only output (an InputError when there are several: use `.outputs[name]`)."""
        if len(self.outputs) != 1:
            raise InputError(f"kernel {self.name!r} has outputs {list(self.outputs)}; use .outputs[name]")
        return next(iter(self.outputs.values()))

    @property
    def sim(self) -> SimResult:
        """The simulated timeline of this run on its target (`simulate()`), computed once."""
        cached = self.__dict__.get("_sim")
        if cached is None:
            cached = self.simulate()
            object.__setattr__(self, "_sim", cached)
        return cached

    def simulate(self, target: str | None = None, *, l2: str = "cold") -> SimResult:
        """The twin's call log of this run, simulated call by call on `target` (default: the chip the kernel ran
        for) with the engine, costs and L2 model of ks.simulate: time_us, events per core and pipe, metrics,
        idle causes. A target whose chip differs from the one the twin compiled for is a TraceError."""
        from .timeline import simulate_log, twin_target

        return simulate_log(self.log, {self.name: self._param_tensors()}, target=twin_target(self.target, target),
                            name=self.name, l2=l2, files=self.files)

    def _param_tensors(self) -> list[GmTensor | None]:
        specs = {s.name: (s, "input") for s in self.code.inputs} | {s.name: (s, "output") for s in self.code.outputs}
        out: list[GmTensor | None] = []
        for p in self.params:
            if p in specs:
                spec, role = specs[p]
                out.append(GmTensor(p, spec.shape, spec.dtype, role))
            elif p == "workspace":
                out.append(GmTensor("workspace", (max(self.code.workspace_bytes, 1),), "int8", "workspace"))
            else:
                out.append(None)
        return out

    def check_sync(self) -> list[Finding]:
        """The sync checker's findings on this run's calls, with the user's file names."""
        return _localize(check_sync(self.log, kernel=self.name), self.files)

    def __repr__(self) -> str:
        outs = ", ".join(f"{n}{fmt_shape(a.shape)}" for n, a in self.outputs.items())
        return (f"AscendCKernel({self.name!r}, block_dim={self.block_dim}, target={self.target!r}, outputs: {outs}, "
                f"{len(self.log)} calls)")


def load(
    sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str, str],
    *,
    kernel: str | None = None,
    args: Sequence[Any] = (),
    tiling: Mapping[str, Any] | bytes | np.ndarray | None = None,
    tiling_key: int = 0,
    block_dim: int = 1,
    target: str | None = None,
    mode: str | None = None,
    workspace_bytes: int = DEFAULT_WORKSPACE_BYTES,
    reference: Callable[..., Any] | np.ndarray | Sequence[np.ndarray] | Mapping[str, np.ndarray] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout_s: float = 60.0,
) -> AscendCKernel:
    """Compile `sources` (a kernel file, its folder, a list of files or {name: text}) with the CPU twin,
    launch the entry `kernel` on `block_dim` cores with `args` (input arrays and `out(shape, dtype)`s, in the
    entry's parameter order; load() supplies the trailing workspace and tiling parameters), and return its
    outputs and call log. `tiling` is a dict of the tiling struct's fields (set through its set_ accessors,
    nested dicts for struct fields such as TCubeTiling) or the raw blob. With `reference` (a function of the
    inputs, or the expected arrays) every output is compared within rtol/atol (defaults per dtype in
    TOLERANCES) and a MismatchError names the first element off. A twin check that stops the run raises a
    TwinError carrying `.calls` and the sync checker's `.findings` on them."""
    profile = hw.get(target if target is not None else DEFAULT_TARGET)
    files, named = src.collect(sources)
    entry = _entry(files, kernel)
    block_dim = _block_dim(block_dim)
    tiling_key = _whole(tiling_key, "tiling_key", lo=0, hi=(1 << 64) - 1)
    workspace_bytes = _whole(workspace_bytes, "workspace_bytes", lo=0, hi=MAX_GM_BYTES)
    timeout_s = as_number(timeout_s, "ks.ascendc.load: timeout_s (seconds the kernel may run)", positive=True)
    if timeout_s > MAX_TIMEOUT_S:
        raise InputError(f"ks.ascendc.load: timeout_s {timeout_s:g} is more than a day ({MAX_TIMEOUT_S} s); a "
                         "kernel on the twin runs in seconds")
    user, takes_ws, takes_tiling = _split_params(entry)
    inputs, outputs, buffers = _arguments(entry, user, args)
    tiling_lines, include, files = _tiling(files, entry, tiling, takes_tiling)
    launch = src.Launch(entry, tuple(buffers), workspace_bytes if takes_ws else None, tiling_lines, include,
                        tiling_key, _mode(files[entry.file], mode), block_dim)
    code = CodeBundle(name=entry.name, files={**files, "main.cpp": src.main_cpp(launch)},
                      inputs=tuple(s for s, _ in inputs), outputs=tuple(outputs), target=profile.name,
                      workspace_bytes=workspace_bytes if takes_ws else 0)
    try:
        got, log = runner.run(code, {s.name: a for s, a in inputs}, by_name=True, log_calls=True,
                              cache_dir=cache_dir, timeout_s=timeout_s)
    except CompileError as e:
        raise CompileError(_rename(str(e), named)) from None
    except TwinError as e:
        raise _with_findings(e, named) from None
    params = (*user, *(["workspace"] if takes_ws else []), *([None] if takes_tiling else []))
    k = AscendCKernel(entry.name, MappingProxyType(dict(got)), log, code, block_dim, profile.name,
                      MappingProxyType(named), params)
    if reference is not None:
        _compare(k, reference, [a for _, a in inputs], rtol, atol)
    return k


# ---- arguments ------------------------------------------------------------------------------------
def _entry(files: Mapping[str, str], kernel: str | None) -> src.Entry:
    found = src.entries(files)
    if not found:
        raise InputError(f"ks.ascendc.load: no kernel entry in {sorted(files)}; a kernel is defined as "
                         '`extern "C" __global__ __aicore__ void name(GM_ADDR x, ...)`')
    if kernel is None:
        if len(found) > 1:
            raise InputError(f"ks.ascendc.load: the sources define kernels {sorted(found)}; pass kernel=<name>")
        return next(iter(found.values()))
    if not isinstance(kernel, str) or kernel not in found:
        raise InputError(f"ks.ascendc.load: no kernel {_short(kernel)} in the sources; they define "
                         + ", ".join(f"{e.name} ({e.file}:{e.line})" for e in found.values()))
    return found[kernel]


def _block_dim(value: object) -> int:
    n = as_int(value)
    if n is None or not 1 <= n <= MAX_BLOCK_DIM:
        raise InputError(f"ks.ascendc.load: block_dim {_short(value)} must be a whole number from 1 to {MAX_BLOCK_DIM} "
                         "(the cores the launch spreads its blocks over, as ICPU_RUN_KF's blockDim)")
    return n


def _whole(value: object, what: str, *, lo: int, hi: int) -> int:
    n = as_int(value)
    if n is None or not lo <= n <= hi:
        raise InputError(f"ks.ascendc.load: {what} {_short(value)} must be a whole number from {lo} to {hi}")
    return n


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _split_params(entry: src.Entry) -> tuple[list[str], bool, bool]:
    """The parameters the caller passes, and whether the entry ends with workspace and tiling (CANN's
    convention: `..., GM_ADDR workspace, GM_ADDR tiling`), which load() supplies."""
    names = [n for _, n in entry.params]
    takes_tiling = bool(names) and "tiling" in names[-1].lower()
    rest = names[:-1] if takes_tiling else names
    takes_ws = bool(rest) and "workspace" in rest[-1].lower()
    return (rest[:-1] if takes_ws else rest), takes_ws, takes_tiling


def _arguments(entry: src.Entry, user: list[str], args: Sequence[Any]
               ) -> tuple[list[tuple[TensorSpec, np.ndarray]], list[TensorSpec], list[tuple[str, int, bool]]]:
    if isinstance(args, (str, bytes, np.ndarray)) or not isinstance(args, Sequence):
        raise InputError(f"ks.ascendc.load: args must be a list (one per parameter {user} of {entry.name}), "
                         f"got {type(args).__name__}")
    if len(args) != len(user):
        supplied = [n for _, n in entry.params][len(user):]
        raise InputError(f"ks.ascendc.load: kernel {entry.name!r} ({entry.file}:{entry.line}) takes {len(user)} "
                         f"argument(s) {user} but args has {len(args)}"
                         + (f"; load() supplies {supplied} itself" if supplied else "")
                         + "; pass an input array or ks.ascendc.out(shape, dtype) for each")
    inputs, outputs, buffers = [], [], []
    for name, arg in zip(user, args, strict=True):
        if isinstance(arg, Out):
            spec = TensorSpec(name, arg.shape, arg.dtype)
            outputs.append(spec)
            buffers.append((name, _nbytes(spec), True))
            continue
        value, dtype = (arg.value, arg.dtype) if isinstance(arg, In) else (arg, None)
        arr = _array(entry, name, value, dtype)
        spec = TensorSpec(name, arr.shape, dtype or arr.dtype.name)
        inputs.append((spec, np.asarray(round_to(spec.dtype, arr))))
        buffers.append((name, _nbytes(spec), False))
    if not outputs:
        raise InputError(f"ks.ascendc.load: kernel {entry.name!r}: no argument is an output; pass "
                         "ks.ascendc.out(shape, dtype) for the buffer(s) the kernel writes")
    return inputs, outputs, buffers


def _array(entry: src.Entry, name: str, value: Any, dtype: str | None) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = np.asarray(None)
    if not (arr.dtype.kind in "iu" or is_float(arr.dtype)):  # ml_dtypes.bfloat16 is kind 'V'
        raise InputError(f"ks.ascendc.load: argument {name!r} of {entry.name} is {type(value).__name__}; pass a "
                         "NumPy array of numbers, or ks.ascendc.out(shape, dtype) for an output")
    if arr.size == 0:
        raise InputError(f"ks.ascendc.load: argument {name!r} has shape {fmt_shape(arr.shape)}, no elements")
    if dtype is None and arr.dtype.name not in DTYPES:
        raise InputError(f"ks.ascendc.load: argument {name!r} has dtype {arr.dtype.name}, which Ascend C GM "
                         f"buffers here do not hold; use one of {', '.join(DTYPES)} (e.g. x.astype(np.float16)), "
                         "or ks.ascendc.inp(x, 'bfloat16')")
    return arr


def _nbytes(spec: TensorSpec) -> int:
    n = 1
    for d in spec.shape:
        n *= d
    return n * storage_dtype(spec.dtype).itemsize


def _mode(kernel_text: str, mode: str | None) -> str:
    m = _TASK_TYPE.search(kernel_text)
    if mode is not None:
        if not isinstance(mode, str) or mode not in _MODES:
            raise InputError(f"ks.ascendc.load: mode {_short(mode)} is not one of {sorted(_MODES)}")
        return _MODES[mode]
    if m is not None and m["t"] in _TASK_MODE:
        return _TASK_MODE[m["t"]]
    return "MIX_MODE" if any(h in kernel_text for h in _CUBE_HINTS) else "AIV_MODE"


def _tiling(files: dict[str, str], entry: src.Entry, tiling: object, takes: bool
            ) -> tuple[tuple[str, ...] | None, str | None, dict[str, str]]:
    """C++ lines that set `ks_tiling`, the header main.cpp includes for the struct, and the files (with a
    forwarding op_host/<kernel>_tiling.h when the struct lives elsewhere, so the twin's kernel unit sees it)."""
    if not takes:
        if tiling is not None:
            raise InputError(f"ks.ascendc.load: kernel {entry.name!r} takes no tiling parameter, but tiling= was "
                             "given; drop it")
        return None, None, files
    if isinstance(tiling, (bytes, bytearray, np.ndarray)):
        if isinstance(tiling, np.ndarray) and tiling.dtype.kind not in "biuf":
            raise InputError(f"ks.ascendc.load: a tiling array must hold numbers, got dtype {tiling.dtype}")
        blob = bytes(np.ascontiguousarray(tiling).tobytes() if isinstance(tiling, np.ndarray) else tiling)
        if not blob:
            raise InputError("ks.ascendc.load: the tiling blob is empty")
        if len(blob) > MAX_TILING_BYTES:
            raise InputError(f"ks.ascendc.load: the tiling blob has {len(blob)} bytes; CANN's tiling data is "
                             f"at most {MAX_TILING_BYTES}")
        lines = [f"static const uint8_t ks_blob[] = {{{', '.join(str(b) for b in blob)}}};",
                 f"uint8_t* ks_tiling = (uint8_t*)AscendC::GmAlloc({MAX_TILING_BYTES});",
                 "std::memcpy(ks_tiling, ks_blob, sizeof ks_blob);"]
        try:
            struct = src.tiling_struct(files, entry)
        except InputError:
            struct = None
        include = None
        if struct is not None:  # a blob of another size is another struct: stop before the kernel reads it
            ns = "::optiling::" if "namespace optiling" in files[struct.header] else "::"
            include = struct.header
            lines.append(f"if (sizeof ks_blob != sizeof({ns}{struct.name})) {{ std::fprintf(stderr, \"KS_TWIN_ERROR "
                         f"tiling: the tiling blob has %zu bytes but {struct.name} ({struct.header}) has %zu; pass "
                         f"the struct's bytes, or its fields as a dict\\n\", sizeof ks_blob, "
                         f"sizeof({ns}{struct.name})); return 3; }}")
            files = _forward_tiling_header(files, entry, struct)
        return tuple(lines), include, files
    if tiling is not None and not isinstance(tiling, Mapping):
        raise InputError(f"ks.ascendc.load: tiling must be a dict of the tiling struct's fields or its bytes, got "
                         f"{type(tiling).__name__}")
    struct = src.tiling_struct(files, entry)
    if struct is None:
        if tiling:
            raise InputError(f"ks.ascendc.load: tiling fields {sorted(tiling)} given, but the sources define no "
                             "BEGIN_TILING_DATA_DEF struct; add its header to sources or pass the blob as bytes")
        return ("uint8_t* ks_tiling = (uint8_t*)AscendC::GmAlloc(1024);",), None, files
    ns = "::optiling::" if "namespace optiling" in files[struct.header] else "::"
    lines = [f"auto* ks_tiling_data = ({ns}{struct.name}*)AscendC::GmAlloc(sizeof({ns}{struct.name}));",
             *src.tiling_setters(struct, tiling or {}, "ks_tiling_data"),
             "uint8_t* ks_tiling = (uint8_t*)ks_tiling_data;"]
    return tuple(lines), struct.header, _forward_tiling_header(files, entry, struct)


def _forward_tiling_header(files: dict[str, str], entry: src.Entry, struct: src.TilingStruct) -> dict[str, str]:
    """`files` plus op_host/<kernel>_tiling.h forwarding to the struct's header when that lives elsewhere: the
    twin compiles a kernel unit with that header first, as CANN generates the struct for the kernel."""
    stem = os.path.splitext(os.path.basename(entry.file))[0]
    own = f"op_host/{stem}_tiling.h"
    return files if own in files else {**files, own: f'#include "../{struct.header}"\n'}


# ---- results --------------------------------------------------------------------------------------
def _compare(k: AscendCKernel, reference: Any, inputs: list[np.ndarray], rtol: float | None,
             atol: float | None) -> None:
    specs = k.code.outputs
    want = reference(*inputs) if callable(reference) else reference
    if isinstance(want, Mapping):
        missing = [s.name for s in specs if s.name not in want]
        if missing:
            raise InputError(f"kernel {k.name!r}: the reference has no {missing}; give one array per output "
                             f"{[s.name for s in specs]}")
        arrays = [want[s.name] for s in specs]
    elif isinstance(want, (list, tuple)):
        arrays = list(want)
    else:
        arrays = [want]
    if len(arrays) != len(specs):
        raise InputError(f"kernel {k.name!r}: the reference gives {len(arrays)} array(s) for outputs "
                         f"{[s.name for s in specs]}; give one per output, in parameter order")
    for spec, expected in zip(specs, arrays, strict=True):
        try:
            exp = np.asarray(expected)
            if not (exp.dtype.kind in "biu" or is_float(exp.dtype)):
                raise TypeError(exp.dtype)
            exp = exp.astype(np.float64)
        except (TypeError, ValueError):
            raise InputError(f"kernel {k.name!r}: the reference for output {spec.name!r} is {_short(expected)}, not "
                             "an array of real numbers") from None
        if exp.shape != spec.shape:
            raise InputError(f"kernel {k.name!r}: the reference for output {spec.name!r} has shape "
                             f"{fmt_shape(exp.shape)}, the output is {fmt_shape(spec.shape)} {spec.dtype}")
        r, a = TOLERANCES[spec.dtype]
        r = r if rtol is None else _tolerance(rtol, "rtol")
        a = a if atol is None else _tolerance(atol, "atol")
        _close(k, spec, np.asarray(k.outputs[spec.name], dtype=np.float64), exp, r, a)


def _tolerance(value: object, what: str) -> float:
    v = as_number(value, f"ks.ascendc.load: {what}")
    if v < 0:
        raise InputError(f"ks.ascendc.load: {what} {value!r} must be >= 0")
    return v


def _close(k: AscendCKernel, spec: TensorSpec, got: np.ndarray, exp: np.ndarray, rtol: float, atol: float) -> None:
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - exp)
        bad = ~((diff <= atol + rtol * np.abs(exp)) | (np.isnan(got) & np.isnan(exp)) | (got == exp))
    if not bad.any():
        return
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    worst = np.unravel_index(int(np.nanargmax(np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0))), diff.shape)
    err = MismatchError(
        f"kernel {k.name!r}: output {spec.name!r} {fmt_shape(spec.shape)} {spec.dtype} differs from the reference "
        f"at {int(bad.sum())} of {bad.size} elements (rtol={rtol:g}, atol={atol:g}); first at index {list(first)}: "
        f"got {got[first]!r}, expected {exp[first]!r}; largest difference {diff[worst]:.4g} at index "
        f"{[int(i) for i in worst]}; check the kernel's offsets and tails, or loosen rtol/atol if this is rounding")
    err.kernel = k  # type: ignore[attr-defined]
    raise err


def _rename(text: str, named: Mapping[str, str]) -> str:
    """`text` with each bundle path replaced by the name the user gave the file."""
    for rel in sorted(named, key=len, reverse=True):
        if named[rel] != rel:
            text = text.replace(rel, named[rel])
    return text


def _localize(findings: list[Finding], named: Mapping[str, str]) -> list[Finding]:
    """Findings whose call sites name the user's files (the twin logs paths inside the bundle)."""
    import dataclasses
    import posixpath

    def site(s: str | None) -> str | None:
        if s is None:
            return None
        file, _, line = s.rpartition(":")
        file = posixpath.normpath(file)
        return f"{named.get(file, file)}:{line}"

    return [dataclasses.replace(f, calls=tuple(dataclasses.replace(c, site=site(c.site)) for c in f.calls))
            for f in findings]


def _with_findings(err: TwinError, named: Mapping[str, str]) -> TwinError:
    """The twin's error, with the sync checker's findings on the calls up to the failure added."""
    calls = getattr(err, "calls", None)
    findings = _localize(check_sync(calls), named) if calls is not None else []
    msg = _rename(str(err), named)
    if findings:
        msg += "\n" + format_findings(findings)
    new = TwinError(msg)
    for attr in ("kind", "calls"):
        if hasattr(err, attr):
            setattr(new, attr, getattr(err, attr))
    new.findings = findings  # type: ignore[attr-defined]
    return new
