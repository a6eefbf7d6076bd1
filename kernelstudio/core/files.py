"""Writing generated files safely: every path proven inside its directory, OS errors reported with
the path, and a directory's existing files left alone unless kernelstudio wrote them.

A directory written by `write_tree` holds a manifest (`.kernelstudio-files.json`: relative path ->
SHA-256 of the text written). With `overwrite=True` a later export replaces exactly those files,
and only while they still hold what was written; any other file in the way is refused.

Writes are all or nothing: `write_tree` writes every file into a staging directory first and moves
them into place only when all were written; a failure removes the staging directory and any
directory the call created (`make_dirs` / `remove_dirs` do the same for callers that create the
output directory before they know whether the build succeeds).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .errors import InputError
from .names import inside

__all__ = ["MANIFEST", "write_tree", "write_text", "os_error", "make_dirs", "remove_dirs"]

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


def make_dirs(path: str | os.PathLike[str]) -> list[Path]:
    """Create directory `path` and its missing parents (OSError as from mkdir); returns the
    directories this call created, outermost first (empty if `path` existed)."""
    p = Path(path)
    missing = []
    at = p
    while not (at.exists() or at.is_symlink()) and at != at.parent:
        missing.append(at)
        at = at.parent
    p.mkdir(parents=True, exist_ok=True)
    return missing[::-1]


def remove_dirs(created: list[Path]) -> None:
    """Undo `make_dirs`: remove the directories it created, with whatever was written into them."""
    if created:
        shutil.rmtree(created[0], ignore_errors=True)


def _prune(root: Path, d: Path) -> None:
    """Remove `d` and its parents up to `root` while they are empty."""
    while d != root and d.is_dir() and not any(d.iterdir()):
        d.rmdir()
        d = d.parent


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
    if not os.fspath(out).strip():
        raise InputError(f"{what}: the output directory is {os.fspath(out)!r}, which would mean the current "
                         "directory; name a directory of its own, e.g. 'out/my_op'")
    if root.exists() and not root.is_dir():
        raise InputError(f"{what}: {root} exists and is not a directory; pick another path")
    blocker = next((a for a in root.parents if (a.exists() or a.is_symlink()) and not a.is_dir()), None)
    if blocker is not None:
        raise InputError(f"{what}: cannot create {root}: {blocker} is a file, not a directory; pick another path")
    try:
        created = make_dirs(root)
    except OSError as e:
        raise os_error(e, root, "create the directory") from None
    try:
        _write_all(root, files, overwrite, what)
    except BaseException:
        remove_dirs(created)
        raise
    return root


def _write_all(root: Path, files: Mapping[str, str], overwrite: bool, what: str) -> None:
    try:
        present = sorted(p.name for p in root.iterdir())
    except OSError as e:
        raise os_error(e, root, "read the directory") from None
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
    try:
        staging = Path(tempfile.mkdtemp(prefix=".kernelstudio-staging-", dir=root))
    except OSError as e:
        raise os_error(e, root, "write into") from None
    try:  # every file (the manifest last) written before any is moved into place: a failure leaves `root` as it was
        for rel, text in files.items():
            write_text(staging / rel, text)
        # an earlier export's files this one does not write: removed when unchanged since (another program's
        # operators would otherwise stay beside the new ones), left to the user (and out of the list) when edited
        stale = [rel for rel in manifest if rel not in files and (root / rel).is_file()]
        gone = [rel for rel in stale if _ours(root / rel, rel, manifest)]
        manifest = {}
        manifest.update((rel, _digest(text)) for rel, text in files.items())
        write_text(staging / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        for rel in (*files, MANIFEST):
            target = targets.get(rel, root / MANIFEST)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, target)
        for rel in gone:
            (root / rel).unlink()
            _prune(root, (root / rel).parent)
    except OSError as e:
        raise os_error(e, root, "write into") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
