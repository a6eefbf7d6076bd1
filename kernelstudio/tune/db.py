"""The design database: tuning results and saved designs in one SQLite file.

Default file: `$KS_DESIGN_DB`, else `$XDG_CACHE_HOME/kernelstudio/designs.sqlite` (`~/.cache/...`).
A `ks_schema` table holds the schema version; a file of another version, a file that is not SQLite,
a corrupted one, or a SQLite file of another program raises `DesignDBError` naming the file, and the
file is left exactly as it was.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.config import ENV_DESIGN_DB, cache_home, design_db_env
from .errors import DesignDBError

__all__ = ["SCHEMA_VERSION", "DesignDB", "DesignRecord", "default_db_path", "open_db"]

SCHEMA_VERSION = 1
ENV_VAR = ENV_DESIGN_DB
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE ks_schema (version INTEGER NOT NULL);
CREATE TABLE results (
    key TEXT PRIMARY KEY,      -- hash(model, profile, graph, schedule at defaults, config)
    kernel_key TEXT NOT NULL,  -- hash(model, profile, graph, schedule at defaults)
    target TEXT NOT NULL,
    config TEXT NOT NULL,      -- canonical JSON
    time_us REAL,              -- NULL when the configuration is illegal
    error_kind TEXT,
    error TEXT,
    info TEXT,                 -- JSON numbers of a capacity overflow
    created TEXT NOT NULL
);
CREATE INDEX results_kernel ON results (kernel_key);
CREATE TABLE designs (
    name TEXT NOT NULL,
    target TEXT NOT NULL,
    config TEXT NOT NULL,
    time_us REAL NOT NULL,
    created TEXT NOT NULL,
    graph TEXT NOT NULL,       -- ks.format_graph of the outputs
    schedule TEXT NOT NULL,    -- Schedule.to_json(): replay it on the same graph
    PRIMARY KEY (name, target)
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kernel_key TEXT NOT NULL,
    name TEXT NOT NULL,
    target TEXT NOT NULL,
    strategy TEXT NOT NULL,
    budget INTEGER NOT NULL,
    seed INTEGER,
    evaluated INTEGER NOT NULL,
    cache_hits INTEGER NOT NULL,
    best_config TEXT,
    best_time_us REAL,
    default_time_us REAL,
    created TEXT NOT NULL
);
"""


def default_db_path() -> Path:
    """`$KS_DESIGN_DB`, else the user's cache directory."""
    env = design_db_env()
    if env:
        return Path(env).expanduser()
    return cache_home() / "designs.sqlite"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class DesignRecord:
    """A saved design: `name`, `target`, knob `config`, predicted `time_us`, `date`, and the graph and
    schedule text to rebuild it."""

    name: str
    target: str
    config: dict[str, Any]
    time_us: float
    date: str
    graph: str
    schedule: str

    def __str__(self) -> str:
        cfg = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{self.name:24} {self.target:12} {self.time_us:10.2f} us  {self.date}  {cfg}"


class DesignDB:
    """One open design database (use as a context manager, or call `close()`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._con = _open_checked(self.path)

    # --- results ----------------------------------------------------------------------------------
    def get_results(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(keys)
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = self._q(f"SELECT key, time_us, error_kind, error, info FROM results WHERE key IN "
                           f"({','.join('?' * len(chunk))})", chunk)
            for key, t, kind, err, info in rows:
                out[key] = {"time_us": t, "kind": kind, "error": err, "info": json.loads(info) if info else {}}
        return out

    def put_result(self, key: str, kernel_key: str, target: str, config_json: str, time_us: float | None,
                   kind: str | None, error: str | None, info: Mapping[str, Any] | None) -> None:
        """Store one result and commit at once: a sweep that dies later loses none of its finished results."""
        self._x("INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?,?,?)",
                (key, kernel_key, target, config_json, time_us, kind, error,
                 json.dumps(dict(info or {})) or None, _now()))

    def count_results(self, kernel_key: str | None = None) -> int:
        if kernel_key is None:
            return int(self._q("SELECT COUNT(*) FROM results")[0][0])
        return int(self._q("SELECT COUNT(*) FROM results WHERE kernel_key = ?", (kernel_key,))[0][0])

    def record_run(self, **row: Any) -> None:
        cols = ("kernel_key", "name", "target", "strategy", "budget", "seed", "evaluated", "cache_hits",
                "best_config", "best_time_us", "default_time_us")
        self._x(f"INSERT INTO runs ({', '.join(cols)}, created) VALUES ({', '.join('?' * (len(cols) + 1))})",
                (*(row.get(c) for c in cols), _now()))

    def runs(self) -> list[dict[str, Any]]:
        cur = self._con.execute("SELECT * FROM runs ORDER BY id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    # --- designs ----------------------------------------------------------------------------------
    def save_design(self, name: str, target: str, config: Mapping[str, Any], time_us: float, graph: str,
                    schedule: str) -> DesignRecord:
        """Store a design under (name, target), replacing an earlier one of the same name and target."""
        from .space import config_json

        rec = DesignRecord(name, target, json.loads(config_json(config)), float(time_us), _now(), graph, schedule)
        self._x("INSERT OR REPLACE INTO designs VALUES (?,?,?,?,?,?,?)",
                (rec.name, rec.target, config_json(config), rec.time_us, rec.date, graph, schedule))
        return rec

    def designs(self) -> list[DesignRecord]:
        rows = self._q("SELECT name, target, config, time_us, created, graph, schedule FROM designs "
                       "ORDER BY rowid")
        return [DesignRecord(n, t, json.loads(c), tu, d, g, s) for n, t, c, tu, d, g, s in rows]

    # --- plumbing ---------------------------------------------------------------------------------
    def _q(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
        try:
            return self._con.execute(sql, tuple(args)).fetchall()
        except sqlite3.DatabaseError as e:
            raise _corrupt(self.path, e) from e

    def _x(self, sql: str, args: Iterable[Any]) -> None:
        try:
            with self._con:
                self._con.execute(sql, tuple(args))
        except sqlite3.OperationalError as e:
            raise DesignDBError(f"design database {self.path}: cannot write ({e}); check the file's permissions "
                                f"and free space, or pass db=False to tune without storing") from e
        except sqlite3.DatabaseError as e:
            raise _corrupt(self.path, e) from e

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> DesignDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _corrupt(path: Path, e: Exception) -> DesignDBError:
    return DesignDBError(f"design database {path} is corrupted ({e}); it was left untouched: move it away (or "
                         f"restore a backup) and a new one is created, or point ${ENV_VAR} / db= at another file")


def _open_checked(path: Path) -> sqlite3.Connection:
    """Open (creating if absent or empty) and check the file; never writes to a file it refuses."""
    if path.is_dir():
        raise DesignDBError(f"design database {path} is a directory; give a file path such as "
                            f"{path / 'designs.sqlite'}")
    exists = path.exists() and path.stat().st_size > 0
    if exists:
        with open(path, "rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
        if head != _SQLITE_MAGIC:
            raise DesignDBError(f"design database {path} is not an SQLite file (it starts with {head[:8]!r}); it was "
                                f"left untouched: move it away, or point ${ENV_VAR} / db= at another file")
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DesignDBError(f"design database {path}: cannot create its folder ({e}); point ${ENV_VAR} / db= "
                                "at a writable file, or pass db=False") from e
    uri = f"file:{path}?mode={'rw' if exists else 'rwc'}"
    try:
        con = sqlite3.connect(uri, uri=True, timeout=30)
    except sqlite3.Error as e:
        raise DesignDBError(f"design database {path}: cannot open ({e}); point ${ENV_VAR} / db= at a writable "
                            "file, or pass db=False") from e
    try:
        check = con.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(str(check))
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            with con:
                con.executescript(_SCHEMA)
                con.execute("INSERT INTO ks_schema VALUES (?)", (SCHEMA_VERSION,))
            return con
        if "ks_schema" not in tables:
            con.close()
            raise DesignDBError(f"design database {path} is an SQLite file of another program (tables: "
                                f"{', '.join(sorted(tables))}; no ks_schema table); it was left untouched: point "
                                f"${ENV_VAR} / db= at another file")
        rows = con.execute("SELECT version FROM ks_schema").fetchall()
    except sqlite3.DatabaseError as e:
        con.close()
        raise _corrupt(path, e) from e
    version = rows[0][0] if len(rows) == 1 else None
    if version != SCHEMA_VERSION:
        con.close()
        if not isinstance(version, int):
            raise DesignDBError(f"design database {path}: its ks_schema table holds {rows!r}, not one version "
                                "number; it was left untouched: move it away or point "
                                f"${ENV_VAR} / db= at another file")
        side = "a newer" if version > SCHEMA_VERSION else "an older"
        raise DesignDBError(f"design database {path} has schema version {version}, written by {side} kernelstudio; "
                            f"this one reads version {SCHEMA_VERSION}; it was left untouched: use the kernelstudio "
                            f"that wrote it, or move the file away (or point ${ENV_VAR} / db= at another file) to "
                            "start a new one")
    return con


def open_db(db: Any) -> DesignDB | None:
    """`db=None`: the default file; a path: that file; `False`: no database."""
    if db is False:
        return None
    if isinstance(db, DesignDB):
        return db
    if db is None or db is True:
        return DesignDB(default_db_path())
    if isinstance(db, (str, os.PathLike)):
        return DesignDB(db)
    raise DesignDBError(f"db must be a file path, None (the default {default_db_path()}) or False (no database), "
                        f"got {type(db).__name__}")
