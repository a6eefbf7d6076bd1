"""Fixtures of the unit tests."""

from __future__ import annotations

import pytest

from kernelstudio.tune import evaluator as tuner_mod


@pytest.fixture
def fresh_db(tmp_path, monkeypatch):
    """$KS_DESIGN_DB in the test's own directory, and no in-process results left from other tests."""
    monkeypatch.setenv("KS_DESIGN_DB", str(tmp_path / "designs.sqlite"))
    tuner_mod._MEMO.clear()
    yield tmp_path / "designs.sqlite"
    tuner_mod._MEMO.clear()
