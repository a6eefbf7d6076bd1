"""Writing generated files safely: every path proven inside its directory, OS errors reported with
the path, and a directory's existing files left alone unless kernelstudio wrote them.

A directory written by `write_tree` holds a manifest (`.kernelstudio-files.json`: relative path ->
SHA-256 of the text written). With `overwrite=True` a later export replaces exactly those files,
and only while they still hold what was written; any other file in the way is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from .errors import InputError
from .names import inside

__all__ = ["MANIFEST", "write_tree", "write_text", "os_error"]

MANIFEST = ".kernelstudio-files.json"


def os_error(e: OSError, path: str | os.PathLike[str], action: str) -> InputError:
    """An InputError for an OSError while `action` (e.g. "write") `path`."""
    why = e.strerror or type(e).__name__
    return InputError(f"cannot {action} {os.fspath(path)}: {why}; choose a path you can write to")


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` to `path` (parent directories created); OS errors become InputError with the path."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(f"cannot write {p}: it is a directory; pass a file path")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise os_error(e, p, "write") from None
    return p


def _digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def _manifest(out: Path) -> dict[str, str]:
    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}


def _ours(path: Path, rel: str, manifest: Mapping[str, str]) -> bool:
    if rel not in manifest or not path.is_file():
        return False
    try:
        return _digest(path.read_bytes()) == manifest[rel]
    except OSError:
        return False


def write_tree(out: str | os.PathLike[str], files: Mapping[str, str], *, overwrite: bool = False,
               what: str = "export_project") -> Path:
    """Write `files` (relative path -> text) under `out`; returns `out` as a Path.

    Refuses a non-empty `out` unless `overwrite`; even then refuses to replace a file kernelstudio
    did not write there (or one changed since)."""
    if not isinstance(overwrite, bool):
        raise InputError(f"{what}: overwrite must be True or False, got {overwrite!r}")
    try:
        root = Path(out)
    except TypeError:
        raise InputError(f"{what}: the output directory must be a path, got {type(out).__name__}") from None
    if root.exists() and not root.is_dir():
        raise InputError(f"{what}: {root} exists and is not a directory; pick another path")
    try:
        root.mkdir(parents=True, exist_ok=True)
        present = sorted(p.name for p in root.iterdir())
    except OSError as e:
        raise os_error(e, root, "create the directory") from None
    targets = {rel: inside(root, rel) for rel in files}
    manifest = _manifest(root)
    if present and not overwrite:
        shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
        raise InputError(f"{what}: directory {root} is not empty (it holds {shown}); choose an empty or new "
                         "directory, or pass overwrite=True to replace the files kernelstudio wrote there")
    clash = [rel for rel, p in targets.items() if (p.exists() or p.is_symlink()) and not _ours(p, rel, manifest)]
    if clash:
        shown = ", ".join(sorted(clash)[:5]) + (", ..." if len(clash) > 5 else "")
        raise InputError(f"{what}: {root} already holds {shown}, which kernelstudio did not write (or which "
                         "changed since); move them away or choose another directory; nothing was written")
    for rel, text in files.items():
        write_text(targets[rel], text)
        manifest[rel] = _digest(text)
    manifest = {rel: h for rel, h in manifest.items() if (root / rel).is_file()}
    write_text(root / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return root
