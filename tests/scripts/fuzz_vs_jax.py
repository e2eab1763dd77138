"""The long differential fuzz run against JAX: ``python tests/scripts/fuzz_vs_jax.py [N]``
(default 2000 programs) from the repository root; prints each disagreement not listed
as known in docs/reliability.md, and the counts."""

import collections
import pathlib
import sys
import time
import warnings

from hypothesis import HealthCheck, Phase, given, settings

sys.path[:0] = [str(pathlib.Path(__file__).resolve().parents[2]),
                str(pathlib.Path(__file__).resolve().parents[1])]
import difffuzz  # noqa: E402

if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seen = collections.Counter()
    found = []
    start = time.perf_counter()

    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(difffuzz.programs())
    def run(program):
        source, inputs = program
        seen["programs"] += 1
        result = difffuzz.compare(source, inputs)
        for name, diff in result.items():
            known = difffuzz.known(diff, source)
            seen["known" if known else "disagreements"] += 1
            if not known:
                found.append((source, [(x.dtype, x.shape) for x in inputs], name, diff))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run()
    kinds = collections.defaultdict(list)  # the first line of a difference -> examples
    for source, inputs, name, diff in found:
        kinds[diff.splitlines()[0][:160]].append((name, inputs, source, diff))
    for head, examples in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        name, inputs, source, diff = min(examples, key=lambda e: len(e[2]))
        print(f"=== {len(examples)}x {head}\n--- e.g. {name} on {inputs}\n{source}"
              f"{diff[:400]}\n")
    print(f"{seen['programs']} programs ({seen['programs'] * 5} runs incl. jit/grad/vmap): "
          f"{seen['disagreements']} disagreements, {seen['known']} in known areas, "
          f"{time.perf_counter() - start:.0f} s")
    sys.exit(1 if found else 0)
