"""The search space: the knobs a build function declares, and configurations as choice indices."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..schedule.knobs import Knob

__all__ = ["Space", "config_json"]

Genes = tuple[int, ...]  # one choice index per knob, in declaration order


def _plain(v: Any) -> Any:
    """A JSON-friendly Python value (NumPy scalars become Python numbers)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            return v.item()
        except (TypeError, ValueError):
            return v
    return v


def config_json(config: Mapping[str, Any]) -> str:
    """Canonical text of a configuration: sorted keys, plain values (the cache key and DB column)."""
    return json.dumps({k: _plain(v) for k, v in sorted(config.items())}, sort_keys=True, default=repr)


@dataclass(frozen=True)
class Space:
    """The product of the knobs' choices; a configuration is a tuple of choice indices."""

    knobs: tuple[Knob, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.knobs)

    @property
    def size(self) -> int:
        return math.prod(len(k.choices) for k in self.knobs)

    @property
    def radices(self) -> tuple[int, ...]:
        return tuple(len(k.choices) for k in self.knobs)

    @property
    def default(self) -> Genes:
        return tuple(k.choices.index(k.default) for k in self.knobs)

    def config(self, genes: Sequence[int]) -> dict[str, Any]:
        return {k.name: k.choices[g] for k, g in zip(self.knobs, genes, strict=True)}

    def genes(self, config: Mapping[str, Any]) -> Genes:
        """The indices of a configuration given by values (a value not among the choices: ValueError)."""
        out = []
        for k in self.knobs:
            v = config[k.name]
            for i, c in enumerate(k.choices):
                if type(c) is type(v) and c == v:
                    out.append(i)
                    break
            else:
                out.append(k.choices.index(v))
        return tuple(out)

    def unflatten(self, flat: int) -> Genes:
        """The configuration at position `flat` of the row-major product (the last knob varies fastest)."""
        out = []
        for r in reversed(self.radices):
            flat, g = divmod(flat, r)
            out.append(g)
        return tuple(reversed(out))

    def flatten(self, genes: Sequence[int]) -> int:
        flat = 0
        for g, r in zip(genes, self.radices, strict=True):
            flat = flat * r + g
        return flat
