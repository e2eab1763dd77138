"""Every page of docs/ runs as a doctest: its examples are what the code does.

(Devices: tests/conftest.py asks for 8 CPU devices, which docs/distributed.md shows.)
"""

import doctest
from pathlib import Path

import pytest

DOCS = sorted((Path(__file__).resolve().parents[1] / "docs").glob("*.md"))


def test_the_pages_are_found():
    assert len(DOCS) >= 15


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_page_runs(page):
    result = doctest.testfile(str(page), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0, f"{page.name}: {result.failed} failing examples"
