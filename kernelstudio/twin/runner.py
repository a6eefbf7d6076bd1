"""Compile a CodeBundle against the twin headers with g++, run it on the CPU, read its outputs."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import hw
from ..codegen.bundle import CodeBundle, TensorSpec
from ..codegen.launcher import RUNTIME_DIMS_FILE
from ..core.config import ENV_TWIN_LOG, cache_home
from ..core.dtypes import BFLOAT16, is_float, round_to, storage_dtype
from ..core.errors import CompileError, InputError, TwinError
from ..core.files import os_error, write_text
from ..core.formats import to_nz
from ..core.names import inside
from ..hw.defines import chip_defines
from .calllog import CallLog

__all__ = [
    "CompileResult",
    "Outputs",
    "LOG_FILE",
    "run",
    "compile",
    "compile_bundle",
    "is_cached",
    "include_dir",
    "default_cache_dir",
    "capacity_macros",
    "chip_flags",
    "compile_flags",
    "sources",
    "compile_command",
]

CXX = "g++"
BASE_FLAGS: tuple[str, ...] = ("-std=c++17", "-O1", "-pthread")
COMPILE_TIMEOUT_S = 300.0
_TWIN_ERROR = re.compile(r"^KS_TWIN_ERROR (?P<kind>\w+): (?P<msg>.*)$", re.M)
_DIAG = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>(?:fatal )?error): (?P<msg>.*)$", re.M)
_LOC = re.compile(r"^(?P<file>[^:\n\s]+):(?P<line>\d+):(?P<col>\d+):", re.M)
# ld: "<obj or file>:(<section>+0x..): multiple definition of `sym'; <obj>:(...): first defined here"
_MULTIDEF = re.compile(r"multiple definition of [`'](?P<sym>[^'`]+)'")
_UNDEF = re.compile(r"undefined reference to [`'](?P<sym>[^'`]+)'")
_INCLUDE_CPP = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"(?P<path>[^"]+\.cpp)"', re.M)
# Kernel sources: each is its own translation unit, as in a CANN project (op_kernel/*.cpp); so is each
# host source (op_host/*.cpp: TilingFunc and OpDef, which main.cpp runs before a launch).
KERNEL_DIR = "op_kernel/"
HOST_DIR = "op_host/"
# The call log's file in the run directory (kept with keep_dir); the binary writes it when KS_TWIN_LOG is set.
LOG_FILE = "calls.log"

# What `run` returns: one array for one output, a tuple in output order for several, a dict with by_name.
Outputs = np.ndarray | tuple[np.ndarray, ...] | dict[str, np.ndarray]


@dataclass(frozen=True)
class CompileResult:
    """A compiled twin binary and whether it came from the cache."""

    binary: Path
    cache_hit: bool
    seconds: float


def include_dir() -> Path:
    """The twin's header directory (kernel_operator.h, lib/matmul_intf.h, tikicpulib.h, ...)."""
    return Path(__file__).resolve().parent / "include"


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/kernelstudio/twin`, else `~/.cache/kernelstudio/twin`."""
    return cache_home() / "twin"


def capacity_macros(target: str | hw.HardwareProfile) -> dict[str, int | str]:
    """The chip of `target` (a profile name or a HardwareProfile) as the -D defines the twin headers read:
    on-chip memory sizes, L2 and HBM sizes, core counts, and KS_SOC (the profile name)."""
    return chip_defines(hw.get(target) if isinstance(target, str) else target)


def chip_flags(target: str | hw.HardwareProfile) -> list[str]:
    """The -D flags of `capacity_macros(target)`: what any g++ command that includes the twin headers needs
    (a CMake build of an exported project, a probe compiled by hand)."""
    return [f"-D{k}={v}" for k, v in sorted(capacity_macros(target).items())]


def compile_flags(code: CodeBundle) -> list[str]:
    """Every g++ flag used for `code`, include dir excluded."""
    macros = capacity_macros(code.profile if code.profile is not None else code.target)
    macros["KS_WORKSPACE_BYTES"] = code.workspace_bytes
    return [*BASE_FLAGS, *(f"-D{k}={v}" for k, v in sorted(macros.items()))]


def sources(code: CodeBundle) -> list[str]:
    """The translation units of `code`, in the order g++ gets them: main.cpp, every `op_kernel/**/*.cpp`
    and every `op_host/**/*.cpp` (each compiled on its own and linked together, as a CANN project builds)."""
    kernels = sorted(p for p in code.files if p.startswith(KERNEL_DIR) and p.endswith(".cpp"))
    hosts = sorted(p for p in code.files if p.startswith(HOST_DIR) and p.endswith(".cpp"))
    return ["main.cpp", *kernels, *hosts]


def kernel_tiling_header(code: CodeBundle, kernel: str) -> str | None:
    """The host tiling header whose struct the kernel `op_kernel/<op>.cpp` reads (`op_host/<op>_tiling.h`),
    if the bundle has one."""
    header = HOST_DIR + Path(kernel).stem + "_tiling.h"
    return header if header in code.files else None


def _units(code: CodeBundle) -> dict[str, str | None]:
    """Every file g++ compiles, with the text of the ones the build writes itself. Each kernel source is
    compiled as a kernel unit (KS_TWIN_KERNEL_UNIT), in which the host-only headers (tiling/tiling_api.h,
    register/..., tiling/platform/platform_ascendc.h) do not compile, as on CANN. A CANN build generates
    each kernel's tiling struct from its op_host/<op>_tiling.h, so the kernel needs no #include of it; the
    twin's unit includes the header first, with KS_TWIN_TILING_STRUCTS set so that the host headers it
    includes give it only the tiling structs, then the kernel source."""
    out: dict[str, str | None] = {}
    for path in sources(code):
        if not path.startswith(KERNEL_DIR):
            out[path] = None
            continue
        header = kernel_tiling_header(code, path)
        lines = [f"// {path} as a CANN build compiles it: a kernel translation unit"
                 + (", with its tiling struct" if header is not None else ""),
                 "#define KS_TWIN_KERNEL_UNIT 1"]
        if header is not None:
            lines += ["#define KS_TWIN_TILING_STRUCTS 1", f'#include "{header}"', "#undef KS_TWIN_TILING_STRUCTS"]
        out[f"ks_unit_{Path(path).stem}.cpp"] = "\n".join([*lines, f'#include "{path}"', ""])
    return out


def compile_command(code: CodeBundle, out: str | os.PathLike[str]) -> list[str]:
    """The g++ command that builds `code` into `out` (run in a directory holding the bundle's files and the
    kernel units the build writes, see `_units`)."""
    return [CXX, *compile_flags(code), f"-I{include_dir()}", *_units(code), "-o", str(out)]


def _check_sources(code: CodeBundle) -> None:
    """main.cpp must declare the kernels it launches, not #include their source: every op_kernel .cpp is
    compiled as its own translation unit, so an included one would be defined twice."""
    units = set(sources(code)[1:])
    for m in _INCLUDE_CPP.finditer(code.files["main.cpp"]):
        path = m["path"].removeprefix("./")
        if path in units:
            raise CompileError(
                f"kernel {code.name!r}: main.cpp #includes {path}, which the twin compiles as its own translation "
                f"unit (as a CANN project builds op_kernel/*.cpp); remove the #include and declare the kernel "
                f"entry instead, e.g. `extern \"C\" __global__ __aicore__ void <kernel>(GM_ADDR ...);`, plus "
                f"#include its op_host/<op>_tiling.h if main.cpp fills the tiling struct")


def _header_digest() -> str:
    h = hashlib.sha256()
    root = include_dir()
    for p in sorted(root.rglob("*.h")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _cache_key(code: CodeBundle, flags: list[str]) -> str:
    h = hashlib.sha256()
    h.update(CXX.encode())
    h.update("\0".join(flags).encode())
    h.update(_header_digest().encode())
    h.update(("\0units\0" + "\0".join(sources(code))).encode())  # how the files are built, not just what they hold
    for path in sorted(code.files):
        h.update(f"\0{path}\0{len(code.files[path])}\0".encode())
        h.update(code.files[path].encode())
    return h.hexdigest()[:24]


def _binary_path(code: CodeBundle, cache_dir: str | os.PathLike[str] | None) -> Path:
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / _cache_key(code, compile_flags(code)) / code.name


def is_cached(code: CodeBundle, *, cache_dir: str | os.PathLike[str] | None = None) -> bool:
    """Whether a compiled binary for exactly these sources, flags and headers is in the cache."""
    return _binary_path(code, cache_dir).is_file()


def compile_bundle(code: CodeBundle, *, cache_dir: str | os.PathLike[str] | None = None) -> CompileResult:
    """Compile `code` (or take it from the cache) and say which happened and how long it took."""
    start = time.perf_counter()
    _check_sources(code)
    binary = _binary_path(code, cache_dir)
    if binary.is_file():
        return CompileResult(binary, True, time.perf_counter() - start)
    try:
        binary.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="build-", dir=binary.parent))
    except OSError as e:
        raise os_error(e, binary.parent, "create the twin's cache directory") from None
    try:
        for rel, text in code.files.items():
            write_text(inside(build, rel), text)
        for rel, unit in _units(code).items():
            if unit is not None:
                write_text(inside(build, rel), unit)
        out = build / code.name
        _build(code, build, out)
        os.replace(out, binary)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return CompileResult(binary, False, time.perf_counter() - start)


def _gxx(code: CodeBundle, cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LC_ALL": "C"}  # plain ASCII quotes in diagnostics
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, env=env)
    except FileNotFoundError as e:
        raise CompileError(f"kernel {code.name!r}: C++ compiler {CXX!r} not found; install g++ >= 12") from e
    except subprocess.TimeoutExpired as e:
        raise CompileError(f"kernel {code.name!r}: g++ did not finish within {COMPILE_TIMEOUT_S:g} s") from e


def _build(code: CodeBundle, build: Path, out: Path) -> None:
    """What `compile_command` does, one translation unit per g++ process (as many at once as there are
    CPUs), then one link; the first unit that fails (in `compile_command`'s order) is the error."""
    from concurrent.futures import ThreadPoolExecutor

    flags = [*compile_flags(code), f"-I{include_dir()}"]
    units = list(_units(code))
    objs = [f"ks_obj_{i}.o" for i in range(len(units))]
    with ThreadPoolExecutor(max(1, min(len(units), os.cpu_count() or 1))) as pool:
        procs = list(pool.map(lambda uo: _gxx(code, [CXX, *flags, "-c", uo[0], "-o", uo[1]], build),
                              zip(units, objs, strict=True)))
    for proc in procs:
        if proc.returncode != 0:
            raise CompileError(_describe_compile_error(code, proc.stderr))
    link = _gxx(code, [CXX, *BASE_FLAGS, *objs, "-o", str(out)], build)
    if link.returncode != 0:
        raise CompileError(_describe_compile_error(code, link.stderr))


def compile(code: CodeBundle, *, cache_dir: str | os.PathLike[str] | None = None) -> Path:  # noqa: A001
    """Path of the compiled twin binary for `code`, compiling it unless it is cached."""
    return compile_bundle(code, cache_dir=cache_dir).binary


def _source_line(code: CodeBundle, file: str, line: int) -> str | None:
    text = code.files.get(file.removeprefix("./"))
    if text is None:
        return None
    lines = text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else None


def _describe_compile_error(code: CodeBundle, stderr: str) -> str:
    """The first g++ error, with the generated file, line and source line it points at; for a link error,
    the symbol and what to do about it."""
    first = _DIAG.search(stderr)
    if first is None:
        link = _describe_link_error(code, stderr)
        if link is not None:
            return link
        tail = "\n".join(stderr.strip().splitlines()[-5:])
        return f"kernel {code.name!r} does not compile:\n{tail}"
    file, line = first["file"].removeprefix("./"), int(first["line"])
    src = _source_line(code, file, line)
    msg = f"kernel {code.name!r} does not compile: {file}:{line}:{first['col']}: {first['sev']}: {first['msg']}"
    if src is not None:
        return f"{msg}\n    {line} | {src}"
    # The error sits in a twin header: point at the generated line that led there.
    for loc in _LOC.finditer(stderr):
        lfile, lline = loc["file"].removeprefix("./"), int(loc["line"])
        lsrc = _source_line(code, lfile, lline)
        if lsrc is not None:
            return f"{msg}\n    reached from {lfile}:{lline}: {lsrc}"
    return msg


def _describe_link_error(code: CodeBundle, stderr: str) -> str | None:
    units = ", ".join(sources(code))
    dup = _MULTIDEF.search(stderr)
    if dup is not None:
        return (f"kernel {code.name!r} does not link: multiple definition of `{dup['sym']}` across its translation "
                f"units ({units}); a function or variable defined in a header that several of them include must "
                f"be `inline` (or `static`/`constexpr` for a per-unit copy), and each kernel entry defined once")
    undef = _UNDEF.search(stderr)
    if undef is not None:
        return (f"kernel {code.name!r} does not link: undefined reference to `{undef['sym']}` (translation units: "
                f"{units}); a kernel main.cpp declares must be defined, with the same name and extern \"C\", in "
                f"an op_kernel/*.cpp")
    return None


def _to_storage(spec: TensorSpec, arr: np.ndarray) -> np.ndarray:
    """`arr` rounded to the tensor's dtype, as the array whose bytes the twin reads (bfloat16: its uint16
    bit patterns, the upper half of each float32); a FRACTAL_NZ tensor's logical matrix packed by `to_nz`."""
    with np.errstate(all="ignore"):
        stored = np.asarray(round_to(spec.dtype, arr), dtype=storage_dtype(spec.dtype))
    if spec.format == "NZ":
        stored = to_nz(stored)
    return stored.view(np.uint16) if spec.dtype == "bfloat16" else stored


def _check_inputs(code: CodeBundle, inputs: Mapping[str, np.ndarray]
                  ) -> tuple[dict[str, np.ndarray], tuple[int, ...] | None]:
    """The inputs in storage form, and the row dimensions of this run when the code takes them at run time
    (None when it does not)."""
    from ..core.checks import check_inputs

    lead = _runtime_lead(code, inputs)
    specs = [_at(t, lead) for t in code.inputs]
    arrays = check_inputs(f"kernel {code.name!r}", [(t.name, t.shape, t.dtype) for t in specs], inputs)
    return {t.name: _to_storage(t, arrays[t.name]) for t in specs}, lead


def _at(spec: TensorSpec, lead: tuple[int, ...] | None) -> TensorSpec:
    """`spec` with this run's row dimensions."""
    if lead is None or not spec.runtime_dims:
        return spec
    return TensorSpec(spec.name, (*lead, *spec.shape[spec.runtime_dims:]), spec.dtype, spec.runtime_dims,
                      spec.format)


def _runtime_lead(code: CodeBundle, inputs: Mapping[str, np.ndarray]) -> tuple[int, ...] | None:
    """The row dimensions the inputs give a kernel that takes them at run time: the leading dims of its
    first such input (the others are checked against them by check_inputs)."""
    from ..core.checks import fmt_shape, input_array

    lead = None
    for t in code.inputs:
        if not t.runtime_dims or not isinstance(inputs, Mapping) or t.name not in inputs:
            continue
        try:
            value = input_array(f"kernel {code.name!r}", t.name, t.shape, t.dtype, inputs[t.name])
        except InputError:
            return None  # not an array of numbers: check_inputs says so
        if value.dtype.kind not in "biuf" and not is_float(value.dtype):
            return None  # check_inputs names the dtype
        shape = value.shape
        n = t.runtime_dims
        takes = "[" + ", ".join(["rows"] * n + [str(d) for d in t.shape[n:]]) + "]"
        if len(shape) != len(t.shape) or shape[n:] != t.shape[n:]:
            raise InputError(f"kernel {code.name!r}: input {t.name!r} has shape {fmt_shape(shape)} but placeholder "
                             f"{t.name} is {fmt_shape(t.shape)} {t.dtype}, its first {n} dimension(s) taken at run "
                             f"time: the kernel takes {takes}; reshape the array or rebuild for other fixed "
                             "dimensions")
        if any(d < 1 for d in shape[:n]):
            raise InputError(f"kernel {code.name!r}: input {t.name!r} has shape {list(shape)}; its row "
                             f"dimensions {list(shape[:n])} must each be at least 1")
        if lead is None:
            lead, first = shape[:n], t.name
        elif shape[:n] != lead:
            raise InputError(f"kernel {code.name!r}: input {t.name!r} has shape {list(shape)} but input {first!r} "
                             f"gives the run {list(lead)} as its row dimension(s); pass {t.name} with shape "
                             f"{[*lead, *t.shape[n:]]}")
    return None if lead is None else tuple(int(d) for d in lead)


def _read_output(spec: TensorSpec, path: Path, kernel: str) -> np.ndarray:
    bf16 = spec.dtype == "bfloat16"
    dt = (np.dtype(np.uint16) if bf16 else storage_dtype(spec.dtype)).newbyteorder("<")
    count = int(np.prod(spec.shape, dtype=np.int64))
    want = count * dt.itemsize
    if not path.is_file():
        raise TwinError(f"kernel {kernel!r}: main.cpp did not write output {spec.name!r} to {path.name}")
    got = path.stat().st_size
    if got != want:
        raise TwinError(
            f"kernel {kernel!r}: {path.name} holds {got} bytes but output {spec.name!r} {spec.shape} "
            f"{spec.dtype} needs {want}; check the size main.cpp writes"
        )
    raw = np.fromfile(path, dtype=dt).reshape(spec.shape)
    if bf16:
        return raw.astype(np.uint16, copy=False).view(BFLOAT16)
    return raw.astype(storage_dtype(spec.dtype))


def _describe_failure(code: CodeBundle, proc: subprocess.CompletedProcess[str]) -> TwinError:
    found = _TWIN_ERROR.search(proc.stderr)
    if found is not None:
        err = TwinError(f"kernel {code.name!r}: {found['kind']}: {found['msg']}")
        err.kind = found["kind"]  # type: ignore[attr-defined]
        return err
    tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
    if proc.returncode < 0:
        sig = signal.Signals(-proc.returncode).name
        what = f"crashed with {sig} (an access outside the buffers the twin checks, or a host-side bug in main.cpp)"
    else:
        what = f"exited with code {proc.returncode}"
    return TwinError(f"kernel {code.name!r} {what}" + (f":\n{tail}" if tail else ""))


def run(
    code: CodeBundle,
    inputs: Mapping[str, np.ndarray],
    *,
    by_name: bool = False,
    log_calls: bool = False,
    keep_dir: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout_s: float = 120.0,
) -> Outputs | tuple[Outputs, CallLog]:
    """Run `code` on the CPU twin with `inputs` (name -> array) and return its outputs.

    As `ks.evaluate` and `ks.run_tiled`: one array for one output, a tuple in `code.outputs` order for
    several; `by_name=True` returns a dict name -> array instead. bfloat16 tensors come back as
    `ml_dtypes.bfloat16` arrays (inputs may be those, or float32 arrays, rounded to nearest even). With
    `log_calls=True` the twin records every API call it executes and `run` returns `(outputs, log)`, `log`
    a `CallLog` (a failing run's TwinError carries the calls up to the failure as `.calls`). `keep_dir` keeps
    the run's .bin files (and calls.log) there; `cache_dir` overrides where compiled binaries are kept.
    """
    from ..core.checks import as_number, need

    code = need(code, CodeBundle, "twin.run")
    devices = getattr(code, "devices", 1)
    if devices != 1:
        raise InputError(f"kernel {code.name!r} runs on {devices} devices, one process per rank with its files in "
                         "rank<r>/; run it with ks.multi.run_twin(design, inputs), or kernelstudio.twin.ranks."
                         "run_ranks(code, [inputs of rank 0, ...])")
    timeout_s = as_number(timeout_s, "twin.run: timeout_s (seconds the kernel may run)", positive=True)
    storage, lead = _check_inputs(code, inputs)
    binary = compile(code, cache_dir=cache_dir)
    env = {k: v for k, v in os.environ.items() if k != ENV_TWIN_LOG}  # logging only when asked for
    with tempfile.TemporaryDirectory(prefix="ks-twin-run-") as tmp:
        work = Path(keep_dir) if keep_dir is not None else Path(tmp)
        log_path = inside(work, LOG_FILE)
        try:
            work.mkdir(parents=True, exist_ok=True)
            for name, arr in storage.items():
                arr.astype(arr.dtype.newbyteorder("<"), copy=False).tofile(inside(work, f"{name}.bin"))
            inside(work, RUNTIME_DIMS_FILE).unlink(missing_ok=True)
            if lead is not None:
                inside(work, RUNTIME_DIMS_FILE).write_text(" ".join(map(str, lead)) + "\n")
            for spec in code.outputs:
                if spec.name not in storage:  # not an input the kernel updates in place
                    inside(work, f"{spec.name}.bin").unlink(missing_ok=True)
            log_path.unlink(missing_ok=True)
        except OSError as e:
            raise os_error(e, work, "write the run's files in") from None
        if log_calls:
            env[ENV_TWIN_LOG] = str(log_path.resolve())
        try:
            proc = subprocess.run([str(binary)], cwd=work, capture_output=True, text=True, timeout=timeout_s,
                                  env=env)
        except subprocess.TimeoutExpired as e:
            raise TwinError(
                f"kernel {code.name!r} did not finish within {timeout_s:g} s: an endless loop, or a wait the twin "
                f"could not see through; pass a larger timeout_s if the kernel is just slow"
            ) from e
        if proc.returncode != 0:
            err = _describe_failure(code, proc)
            if log_calls and log_path.is_file():
                err.calls = CallLog.read(log_path)  # type: ignore[attr-defined]
            raise err
        by = {spec.name: _read_output(_at(spec, lead), work / f"{spec.name}.bin", code.name)
              for spec in code.outputs}
        outs: Outputs = by if by_name else _positional(code, by)
        if not log_calls:
            return outs
        if not log_path.is_file():
            raise TwinError(f"kernel {code.name!r}: the twin wrote no call log to {log_path}; its headers write "
                            f"one when KS_TWIN_LOG is set, so check that main.cpp includes tikicpulib.h")
        return outs, CallLog.read(log_path)


def _positional(code: CodeBundle, by: dict[str, np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...]:
    """One array for one output, else a tuple in output order (as evaluate and run_tiled return)."""
    values = tuple(by[spec.name] for spec in code.outputs)
    return values[0] if len(values) == 1 else values
