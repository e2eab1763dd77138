"""docs/optim.md's coverage of optax's documented API is true: each name listed as covered
exists in invarax.optim (and in optax), each name listed as not covered is absent, and the
counts add up."""

import re
from pathlib import Path

import pytest

from invarax import optim

DOC = Path(__file__).resolve().parent.parent / "docs" / "optim.md"
MODULES = {"optax": optim, "optax.losses": optim.losses, "optax.tree_utils": optim.tree_utils}
HEADING = re.compile(r"^### (.+) \(`(\S+)\.rst`, `(\S+)`\): (\d+) of (\d+)$")


def _sections():
    text = DOC.read_text().split("## Coverage of optax's documented API", 1)[1]
    text = text.split("\n## ", 1)[0]
    sections = []
    for block in text.split("\n### ")[1:]:
        heading, _, body = ("### " + block).partition("\n")
        match = HEADING.match(heading)
        assert match, heading
        title, page, module, covered_count, total = match.groups()
        paragraphs = [" ".join(p.split()) for p in body.strip().split("\n\n")]
        covered = [p for p in paragraphs if p.startswith("Covered:")]
        missing = [p for p in paragraphs if p.startswith("Not covered:")]
        assert len(covered) == 1 and len(missing) <= 1, title
        missing_names = []
        for part in (missing[0][len("Not covered:"):].split(";") if missing else []):
            names, _, reason = part.partition(":")
            assert reason.strip(), f"{title}: no reason given for {names}"
            missing_names += re.findall(r"`([^`]+)`", names)
        sections.append((title, page, module, int(covered_count), int(total),
                         re.findall(r"`([^`]+)`", covered[0]), missing_names))
    return sections


SECTIONS = _sections()


def test_the_counts_add_up():
    assert len(SECTIONS) >= 8
    for title, _, _, covered_count, total, covered, missing in SECTIONS:
        assert len(covered) == covered_count, title
        assert len(covered) + len(missing) == total, title
        assert len(set(covered + missing)) == total, f"{title}: a name is listed twice"
    summary = re.search(r"\*\*(\d+) of (\d+) names covered\*\*", DOC.read_text())
    assert summary and (int(summary[1]), int(summary[2])) == (
        sum(s[3] for s in SECTIONS), sum(s[4] for s in SECTIONS))


@pytest.mark.parametrize("section", SECTIONS, ids=[s[0] for s in SECTIONS])
def test_covered_names_exist_and_missing_ones_do_not(section):
    title, _, module, _, _, covered, missing = section
    ours = MODULES[module]
    assert [n for n in covered if not hasattr(ours, n)] == [], title
    assert [n for n in missing if hasattr(ours, n)] == [], f"{title}: now covered, move it"


@pytest.mark.parametrize("section", SECTIONS, ids=[s[0] for s in SECTIONS])
def test_covered_names_are_optax_names(section):
    optax = pytest.importorskip("optax")
    import importlib
    import warnings

    title, _, module, _, _, covered, _ = section
    theirs = importlib.import_module(module) if module != "optax" else optax
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # optax's deprecated aliases
        absent = [n for n in covered if not hasattr(theirs, n)]
    assert absent == [], title
    assert optax.__version__ >= "0.2.8"
