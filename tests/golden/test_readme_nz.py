"""The README's FRACTAL_NZ example prints what it shows."""

from __future__ import annotations

from .readme import example, rebinds

HEADING = '### FRACTAL_NZ weights: `ks.placeholder(..., format="NZ")`'


def test_readme_nz_example_prints_what_it_shows():
    code, printed, shown = example(HEADING)
    assert printed == shown
    assert not rebinds(code, "x|y|w|d|out|twin|result|tiled|src|prog")  # README blocks share one namespace
