"""Measured curves from calibration/*.csv as piecewise-linear cycle tables through every point.

Every curve maps a size (bytes, vector repeats or cube fractals) to the CYCLES of one instruction,
start-up included. See calibration/README.md for units, the measuring clock and the cleaning.
"""

from __future__ import annotations

import bisect
import csv
import functools
import io
import statistics
import tomllib
from dataclasses import dataclass
from importlib import resources

from ..core.errors import UnsupportedError

__all__ = [
    "Curve", "move_rows", "move_curve", "mmad_rows", "mmad_curve", "vector_rows",
    "vector_curve", "vector_curve_keys", "measuring_clock_mhz", "move_cycles_at", "VECTOR_GLITCH_FRACTION",
]

VECTOR_GLITCH_FRACTION = 0.1  # a vector row slower than this x its curve's median rate is a glitch


def _text(name: str) -> str:
    path = resources.files("kernelstudio.hw").joinpath("calibration").joinpath(name)
    return path.read_text(encoding="utf-8")


def _csv(name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(_text(name))))


@dataclass(frozen=True, slots=True)
class Curve:
    """Piecewise-linear y(x) through the measured points, with both ends extended.

    The measured shape is kept: where a larger size measured faster (aligned sizes on the ND->NZ
    GM->L1 path), so does the model.

    Below the first point: the first segment continued down to a fixed start-up cost (its intercept;
    proportional scaling if the intercept would be negative). Above the last point:
    ``y_last + (x - x_last) * tail_slope``, or ``max(y_last, tail_intercept + tail_slope * x)`` when
    `tail_intercept` is set (the fractal model of Mmad).
    """

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    tail_slope: float
    tail_intercept: float | None = None

    def __call__(self, x: float) -> float:
        xs, ys = self.xs, self.ys
        if x >= xs[-1]:
            if self.tail_intercept is None:
                return ys[-1] + (x - xs[-1]) * self.tail_slope
            return max(ys[-1], self.tail_intercept + self.tail_slope * x)
        if x <= xs[0]:
            slope = (ys[1] - ys[0]) / (xs[1] - xs[0])
            start = ys[0] - xs[0] * slope
            return start + slope * x if start >= 0 else ys[0] * x / xs[0]
        i = bisect.bisect_right(xs, x)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0)

    @property
    def startup(self) -> float:
        """The fixed cost of a vanishingly small instruction (the curve at x -> 0)."""
        return max(0.0, self(1e-9))


def _build(points: list[tuple[float, float]], *, tail: str) -> Curve:
    """Curve through the (x, cycles) points (averaged where an x repeats); `tail` = "slope" (least
    squares on the upper half) or "fractal" (Mmad)."""
    by_x: dict[float, list[float]] = {}
    for x, y in points:
        by_x.setdefault(x, []).append(y)
    xs = sorted(by_x)
    ys = [statistics.fmean(by_x[x]) for x in xs]
    upper = list(zip(xs, ys, strict=True))[len(xs) // 2 :]
    slope = 0.0
    if len(upper) >= 2:
        mx = statistics.fmean(u[0] for u in upper)
        my = statistics.fmean(u[1] for u in upper)
        den = sum((u[0] - mx) ** 2 for u in upper)
        slope = sum((u[0] - mx) * (u[1] - my) for u in upper) / den
    if slope <= 0:  # flat or noisy top: keep the last point's average rate
        slope = ys[-1] / xs[-1]
    if tail == "fractal":  # Mmad: one fractal per cycle after a fitted head
        head = statistics.fmean(y - x for x, y in upper)
        return Curve(tuple(xs), tuple(ys), 1.0, head)
    return Curve(tuple(xs), tuple(ys), slope)


# --- data moves ---------------------------------------------------------------------------------
@functools.cache
def measuring_clock_mhz(chip: str) -> float:
    """Clock (MHz) at which the chip's move curves were counted (calibration/clocks.toml)."""
    table = tomllib.loads(_text("clocks.toml"))
    if chip not in table:
        raise UnsupportedError(f"no measuring clock for {chip!r}; known: {', '.join(table)}")
    return float(table[chip]["measuring_clock_mhz"])


@functools.cache
def move_rows() -> dict[str, tuple[tuple[str, int, float], ...]]:
    """source_key -> ((chip, size_bytes, bandwidth_gibps), ...) from mov_bandwidth_vs_size.csv."""
    out: dict[str, list[tuple[str, int, float]]] = {}
    for r in _csv("mov_bandwidth_vs_size.csv"):
        out.setdefault(r["source_key"], []).append(
            (r["chip"], int(r["size_bytes"]), float(r["bandwidth_gibps"]))
        )
    return {k: tuple(v) for k, v in out.items()}


def measured_move_cycles(chip: str, size_bytes: int, gibps: float) -> float:
    """Cycles of one measured move: size / (GiB/s x 2^30 / measuring clock)."""
    return size_bytes / (gibps * 2**30 / (measuring_clock_mhz(chip) * 1e6))


def move_cycles_at(size_bytes: int, gibps: float, clock_mhz: float) -> float:
    """Cycles of a clock_mhz core that a move of size_bytes at gibps GiB/s lasts."""
    return size_bytes / (gibps * 2**30 / (clock_mhz * 1e6))


@functools.cache
def move_curve(key: str, bandwidth_scale: float = 1.0, clock_mhz: float | None = None) -> Curve:
    """Cycles of one data move vs its size in bytes; bandwidth multiplied by `bandwidth_scale`.

    The measured GiB/s become cycles of `clock_mhz` (the profile's clock, so a move lasts the
    measured time on every profile); None keeps the clock the curve was counted at."""
    rows = move_rows()
    if key not in rows:
        raise UnsupportedError(f"no move curve {key!r}; known: {', '.join(sorted(rows))}")
    pts = [(float(s), (measured_move_cycles(c, s, g) if clock_mhz is None else move_cycles_at(s, g, clock_mhz))
            / bandwidth_scale) for c, s, g in rows[key]]
    return _build(pts, tail="slope")


# --- cube ---------------------------------------------------------------------------------------
@functools.cache
def mmad_rows() -> dict[str, tuple[tuple[int, int, int, float], ...]]:
    """source_key -> ((m, k, n, ops_per_cycle), ...) from mmad_throughput_vs_mkn.csv."""
    out: dict[str, list[tuple[int, int, int, float]]] = {}
    for r in _csv("mmad_throughput_vs_mkn.csv"):
        out.setdefault(r["source_key"], []).append(
            (int(r["m"]), int(r["k"]), int(r["n"]), float(r["ops_per_cycle"]))
        )
    return {k: tuple(v) for k, v in out.items()}


def fractals(m: int, k: int, n: int, k0: int = 16) -> int:
    """Number of 16 x 16 x k0 cube fractals an m x k x n Mmad issues."""
    return -(-m // 16) * -(-n // 16) * -(-k // k0)


@functools.cache
def mmad_curve(key: str) -> Curve:
    """Cycles of one Mmad vs its fp16 fractal count (16x16x16 each)."""
    rows = mmad_rows()
    if key not in rows:
        raise UnsupportedError(f"no Mmad curve {key!r}; known: {', '.join(sorted(rows))}")
    pts = [(float(fractals(m, k, n)), 2.0 * m * k * n / ops) for m, k, n, ops in rows[key]]
    return _build(pts, tail="fractal")


# --- vector -------------------------------------------------------------------------------------
@functools.cache
def vector_rows() -> dict[tuple[str, str, str], tuple[tuple[int, float], ...]]:
    """(chip, instr, dtypes) -> ((repeat, cycles), ...), glitch rows dropped."""
    raw: dict[tuple[str, str, str], list[tuple[int, float, float]]] = {}
    for r in _csv("vector_throughput_vs_repeat.csv"):
        rate = float(r["elements_per_cycle"])
        raw.setdefault((r["chip"], r["instr"], r["dtypes"]), []).append(
            (int(r["repeat"]), int(r["elements"]) / rate, rate)
        )
    out = {}
    for key, rows in raw.items():
        median = statistics.median(rate for _, _, rate in rows)
        out[key] = tuple((rep, cyc) for rep, cyc, rate in rows if rate >= VECTOR_GLITCH_FRACTION * median)
    return out


@functools.cache
def vector_chips() -> tuple[str, ...]:
    """The chips whose vector instructions were measured (a profile's [vector] chip is one of them)."""
    return tuple(sorted({chip for chip, _, _ in vector_rows()}))


@functools.cache
def vector_curve_keys(chip: str) -> dict[str, tuple[str, ...]]:
    """instr -> dtypes strings measured on `chip` (e.g. "VADD" -> ("FP16_FP16_FP16", ...))."""
    out: dict[str, list[str]] = {}
    for c, instr, dtypes in vector_rows():
        if c == chip:
            out.setdefault(instr, []).append(dtypes)
    return {k: tuple(v) for k, v in out.items()}


@functools.cache
def vector_curve(chip: str, instr: str, dtypes: str) -> Curve:
    """Cycles of one vector instruction vs its repeat count (256-byte repeats of the input dtype)."""
    rows = vector_rows()[(chip, instr, dtypes)]
    return _build([(float(rep), cyc) for rep, cyc in rows], tail="slope")
