"""A user's Ascend C sources as a twin bundle: where each file goes, the kernel entries they define, the
tiling struct they register, and the CPU-debug main.cpp that launches one entry."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError

__all__ = ["Entry", "TilingStruct", "collect", "entries", "tiling_struct", "main_cpp", "SOURCE_SUFFIXES"]

SOURCE_SUFFIXES = (".cpp", ".cc", ".h", ".hpp", ".asc")
# Files a CANN sample carries that the twin supplies or load() writes itself.
_SKIPPED = frozenset({"main.cpp", "data_utils.h"})
_ENTRY = re.compile(r'extern\s+"C"\s+(?:__global__\s+__aicore__|__aicore__\s+__global__)\s+void\s+'
                    r"(?P<name>\w+)\s*\((?P<params>[^)]*)\)")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"(?P<path>[^"]+)"', re.M)
_TILING_DEF = re.compile(r"BEGIN_TILING_DATA_DEF\s*\(\s*(?P<name>\w+)\s*\)(?P<body>.*?)END_TILING_DATA_DEF", re.S)
_FIELD = re.compile(r"TILING_DATA_FIELD_DEF(?P<kind>_ARR|_STRUCT)?\s*\((?P<args>[^)]*)\)")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Entry:
    """One `extern "C" __global__ __aicore__ void name(...)` kernel entry: its file and line and its
    parameters as (declared type, name)."""

    name: str
    file: str  # bundle path
    line: int
    params: tuple[tuple[str, str], ...]

    @property
    def declaration(self) -> str:
        args = ", ".join(f"{t} {n}" for t, n in self.params)
        return f'extern "C" __global__ __aicore__ void {self.name}({args});'


@dataclass(frozen=True)
class TilingStruct:
    """A BEGIN_TILING_DATA_DEF struct: its name, the header that defines it, and its fields by kind
    (`field`, `array` or `struct`)."""

    name: str
    header: str  # bundle path
    fields: Mapping[str, str]


def collect(sources: object) -> tuple[dict[str, str], dict[str, str]]:
    """The bundle files of `sources` (a file, a directory, a list of files, or a mapping file name -> text)
    and, for each bundle path, the name the user knows it by. Files keep their layout relative to their
    common folder; kernel sources outside an op_kernel/ folder are placed under op_kernel/ (the twin builds
    every op_kernel/*.cpp as a kernel unit), with the headers beside them."""
    if isinstance(sources, Mapping):
        texts: dict[str, str] = {}
        for name, text in sources.items():
            if not isinstance(name, str) or not isinstance(text, str):
                raise InputError("ks.ascendc.load: a sources mapping takes file name -> source text (both str), "
                                 f"got {type(name).__name__} -> {type(text).__name__}")
            texts[posixpath.normpath(name.replace(os.sep, "/"))] = text
        named = dict(zip(texts, texts, strict=True))
    else:
        paths = _paths(sources)
        root = Path(os.path.commonpath([str(p.parent) for p in paths]))
        texts, named = {}, {}
        for p in paths:
            rel = p.relative_to(root).as_posix()
            try:
                texts[rel] = p.read_text()
            except (OSError, UnicodeDecodeError) as e:
                raise InputError(f"ks.ascendc.load: cannot read source {str(p)!r}: {e}") from None
            named[rel] = str(p)
    bad = [n for n in texts if n.startswith("../") or n.startswith("/")]
    if bad:
        raise InputError(f"ks.ascendc.load: source names {bad} leave their folder; name files relative to it")
    if not any(n.startswith(("op_kernel/", "op_host/")) for n in texts):
        texts = {f"op_kernel/{n}": t for n, t in texts.items()}
        named = {f"op_kernel/{n}": u for n, u in named.items()}
    return texts, named


def _paths(sources: object) -> list[Path]:
    """Every file of `sources` plus the quoted #includes they reach that exist on disk."""
    items = [sources] if isinstance(sources, (str, os.PathLike)) else sources
    if not isinstance(items, Sequence) or isinstance(items, (bytes, bytearray)) or not items:
        raise InputError(f"ks.ascendc.load: sources must be a file or folder path, a list of paths, or a mapping "
                         f"file name -> text; got {type(sources).__name__}")
    found: list[Path] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise InputError(f"ks.ascendc.load: source {str(item)[:80]!r} is not a path; pass str or pathlib.Path")
        if not str(item).strip():
            raise InputError("ks.ascendc.load: a source path is empty; pass the path of your kernel's .cpp file or "
                             "of its folder")
        try:
            p = Path(item).expanduser().resolve()
            kind = "dir" if p.is_dir() else "file" if p.is_file() else None
        except OSError as e:
            raise InputError(f"ks.ascendc.load: source {str(item)[:80]!r} is not a usable path: {e.strerror}") from None
        if kind == "dir":
            found += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in SOURCE_SUFFIXES
                            and f.name not in _SKIPPED and "build" not in f.relative_to(p).parts)
        elif kind == "file":
            found.append(p)
        else:
            raise InputError(f"ks.ascendc.load: source {str(item)!r} does not exist (looked at {p}); pass the path "
                             f"of your kernel's .cpp file or of its folder")
    out = list(dict.fromkeys(found))
    todo = list(out)
    while todo:  # headers the sources include by a path relative to themselves
        f = todo.pop()
        try:
            text = f.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        for m in _INCLUDE.finditer(text):
            inc = (f.parent / m["path"]).resolve()
            if inc.is_file() and inc not in out and inc.name not in _SKIPPED:
                out.append(inc)
                todo.append(inc)
    return out


def entries(files: Mapping[str, str]) -> dict[str, Entry]:
    """Kernel entries defined in the kernel sources (every `extern "C" __global__ __aicore__` function)."""
    out: dict[str, Entry] = {}
    for path, text in files.items():
        if not path.endswith((".cpp", ".cc", ".asc")):
            continue
        for m in _ENTRY.finditer(_strip_comments(text)):
            params = []
            for raw in (p.strip() for p in m["params"].split(",")):
                if not raw or raw == "void":
                    continue
                name = re.findall(r"\w+", raw)[-1]
                params.append((raw[: raw.rfind(name)].strip() or "GM_ADDR", name))
            out.setdefault(m["name"], Entry(m["name"], path, text.count("\n", 0, m.start()) + 1, tuple(params)))
    return out


def _strip_comments(text: str) -> str:
    """`text` with comments blanked (newlines kept, so offsets and line numbers stay)."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)


def tiling_struct(files: Mapping[str, str], entry: Entry) -> TilingStruct | None:
    """The tiling struct the kernel reads: the one in `op_host/<file>_tiling.h`, else in a header its file
    includes, else the only one in the sources (None when there is none; an InputError when it is not
    clear which)."""
    defs: list[TilingStruct] = []
    for path, text in files.items():
        if not path.endswith((".h", ".hpp")):
            continue
        for m in _TILING_DEF.finditer(_strip_comments(text)):
            fields = {}
            for f in _FIELD.finditer(m["body"]):
                args = [a.strip() for a in f["args"].split(",")]
                fields[args[-1]] = {"_ARR": "array", "_STRUCT": "struct"}.get(f["kind"] or "", "field")
            defs.append(TilingStruct(m["name"], path, fields))
    if not defs:
        return None
    stem = posixpath.splitext(posixpath.basename(entry.file))[0]
    own = [d for d in defs if d.header == f"op_host/{stem}_tiling.h"]
    included = {posixpath.normpath(posixpath.join(posixpath.dirname(entry.file), m["path"]))
                for m in _INCLUDE.finditer(files[entry.file])}
    for pick in (own, [d for d in defs if d.header in included], defs):
        if len(pick) == 1:
            return pick[0]
    names = [f"{d.name} ({d.header})" for d in defs]
    raise InputError(f"ks.ascendc.load: kernel {entry.name!r}: the sources define tiling structs {names} and "
                     f"none is op_host/{stem}_tiling.h or the only one {entry.file} includes; pass the tiling as "
                     "bytes (the struct's blob) instead of a dict")


def tiling_setters(struct: TilingStruct, values: Mapping[str, object], var: str) -> list[str]:
    """C++ statements that fill `var` (a pointer to the struct) from `values` through its set_ accessors (an
    array field through the pointer its get_ returns), as a CANN TilingFunc does; nested dicts fill a struct
    field (`TCubeTiling`) the same way."""
    lines = []
    for key, value in values.items():
        kind = struct.fields.get(key) if isinstance(key, str) else None
        if kind is None:
            raise InputError(f"ks.ascendc.load: tiling field {key!r} is not in {struct.name} ({struct.header}); "
                             f"its fields are {sorted(struct.fields)}")
        if kind == "struct":
            if not isinstance(value, Mapping):
                raise InputError(f"ks.ascendc.load: tiling field {key!r} is a struct; give it a dict of its "
                                 f"fields, e.g. {{'M': 128, 'N': 96}}")
            for sub, v in value.items():
                if not isinstance(sub, str) or not _IDENT.match(sub):
                    raise InputError(f"ks.ascendc.load: tiling field {key}.{sub!r} is not a C++ field name")
                lines.append(f"{var}->{key}.set_{sub}({_literal(f'{key}.{sub}', v)});")
        elif kind == "array":
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise InputError(f"ks.ascendc.load: tiling field {key!r} is an array; give it a list of numbers")
            for i, v in enumerate(value):
                lines.append(f"{var}->get_{key}()[{i}] = {_literal(f'{key}[{i}]', v)};")
        else:
            lines.append(f"{var}->set_{key}({_literal(key, value)});")
    return lines


def _literal(what: str, value: object) -> str:
    import math

    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)) and math.isfinite(float(value)):
        return repr(float(value))
    raise InputError(f"ks.ascendc.load: tiling field {what} = {value!r}: give a whole number, a finite float or "
                     "a bool")


@dataclass(frozen=True)
class Launch:
    """What main.cpp launches: the entry, its GM arguments (name, bytes, output?) in parameter order,
    the workspace bytes, the tiling (C++ lines that set `ks_tiling`) and the kernel mode."""

    entry: Entry
    buffers: tuple[tuple[str, int, bool], ...]  # user arguments: (param name, bytes, is output)
    workspace_bytes: int | None  # None: the kernel takes no workspace
    tiling: tuple[str, ...] | None  # None: the kernel takes no tiling
    tiling_include: str | None
    tiling_key: int
    mode: str  # AIV_MODE | AIC_MODE | MIX_MODE
    block_dim: int


def main_cpp(launch: Launch) -> str:
    """The CPU-debug launcher of CANN's samples for one entry: read inputs, GmAlloc everything, fill the
    tiling, ICPU_RUN_KF, write the outputs."""
    e = launch.entry
    lines = ["// main.cpp written by ks.ascendc.load: the CPU-debug launch of " + e.name + " (ICPU_RUN_KF)",
             "#include <cstdio>", "#include <cstring>", '#include "data_utils.h"', '#include "tikicpulib.h"']
    if launch.tiling_include is not None:
        lines.append(f'#include "{launch.tiling_include}"')
    lines += [e.declaration, "", "int32_t main()", "{", "    size_t fileSize = 0;"]
    args = []
    for name, nbytes, is_out in launch.buffers:
        lines.append(f"    uint8_t* ks_{name} = (uint8_t*)AscendC::GmAlloc({max(nbytes, 1)});")
        if not is_out:
            lines.append(f'    if (!ReadFile("{name}.bin", fileSize, ks_{name}, {nbytes})) return 1;')
        args.append(f"ks_{name}")
    if launch.workspace_bytes is not None:
        lines.append(f"    uint8_t* ks_workspace = (uint8_t*)AscendC::GmAlloc({max(launch.workspace_bytes, 1)});")
        args.append("ks_workspace")
    if launch.tiling is not None:
        lines += [f"    {t}" for t in launch.tiling]
        args.append("ks_tiling")
    casts = [f"({t})" + a for (t, _), a in zip(e.params, args, strict=True)]
    lines += [f"    ICPU_SET_TILING_KEY({launch.tiling_key});",
              f"    AscendC::SetKernelMode(KernelMode::{launch.mode});",
              f"    ICPU_RUN_KF({e.name}, {launch.block_dim}, {', '.join(casts)});"]
    for name, nbytes, is_out in launch.buffers:
        if is_out:
            lines.append(f'    WriteFile("{name}.bin", ks_{name}, {nbytes});')
    lines += [f"    AscendC::GmFree({a});" for a in args]
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)
