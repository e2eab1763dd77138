"""Every page of docs/ runs as a doctest: its examples are what the code does. The pages'
links resolve, and docs/README.md lists every page.

(Devices: tests/conftest.py asks for 8 CPU devices, which docs/distributed.md shows.)
"""

import doctest
import re
from pathlib import Path

import pytest

DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"
DOCS = sorted(DOCS_DIR.glob("*.md"))
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def test_the_pages_are_found():
    assert len(DOCS) >= 15


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_page_runs(page):
    result = doctest.testfile(str(page), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0, f"{page.name}: {result.failed} failing examples"


def test_the_index_lists_every_page():
    index = (DOCS_DIR / "README.md").read_text()
    linked = set(LINK.findall(index))
    for page in DOCS:
        if page.name != "README.md":
            assert page.name in linked, f"docs/README.md does not link {page.name}"
    # one line per page: no page listed twice
    entries = re.findall(r"^- \[?([\w/.]+\.md)", index, re.M)
    assert len(entries) == len(set(entries))


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_page_links_resolve(page):
    for target in LINK.findall(page.read_text()):
        if not target.startswith(("http://", "https://", "mailto:")):
            assert (page.parent / target).exists(), f"{page.name}: {target}"


ROOT = DOCS_DIR.parent
SOURCE_NAME = re.compile(r"`((?:[\w.]+/)*[a-z_]\w*\.(?:py|h|c))`")


@pytest.mark.parametrize("page", [*DOCS, ROOT / "README.md"], ids=lambda p: p.name)
def test_named_source_files_exist(page):
    """A file a page names (``compiler/lower.py``, ``gemm.c``) exists: a path from the
    repository, the package or the kernels' sources, a bare name anywhere in the tree."""
    everywhere = {p.name for p in ROOT.rglob("*") if ".git" not in p.parts}
    kernels = ROOT / "invarax" / "kernels"
    bases = [ROOT, ROOT / "invarax", kernels, kernels / "csrc"]
    missing = []
    for name in set(SOURCE_NAME.findall(page.read_text())):
        if "/" in name:
            if not any((base / name).exists() for base in bases):
                missing.append(name)
        elif name not in everywhere:
            missing.append(name)
    assert not missing, f"{page.name} names files that do not exist: {sorted(missing)}"
