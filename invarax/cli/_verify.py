"""``invarax verify``: run the numerics contract's battery, print one digest per workload,
and check that thread counts (``--threads 1,2,8``) and machines (``--json``, then
``--compare`` on another machine) give the same bits."""

from __future__ import annotations

import contextlib
import json
import os
import sys

from .._verify import compare, verify
from .._verify._environment import describe
from ..core.config import config
from ._ir import UsageError


def add_parser(commands) -> None:
    """Register the ``verify`` sub-command."""
    parser = commands.add_parser(
        "verify", help="check that this machine gives the contract's bits (compare machines)",
        description="Run a fixed battery of workloads (elementary functions, contractions, "
                    "reductions, linear algebra, FFT, random streams, training steps, "
                    "collectives) and print one digest per workload. Digests are the same on "
                    "every CPU and at every thread count: write them with --json on one "
                    "machine and check another with --compare.")
    parser.add_argument("--threads", default=None, metavar="N[,N...]",
                        help="kernel thread counts to run the battery at, e.g. 1,2,8; "
                             "every count must give the same digests (default: the current "
                             "count)")
    parser.add_argument("--json", default=None, metavar="FILE",
                        help="write the report (digests, versions, CPU) to FILE")
    parser.add_argument("--compare", default=None, metavar="FILE",
                        help="compare with a report written by --json on another machine; "
                             "list the workloads that differ (exit status 1 if any)")
    parser.add_argument("--only", default=None, metavar="PREFIX[,PREFIX...]",
                        help="run only the workloads whose names start with a prefix, "
                             "e.g. linalg,fft")
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu"),
                        help="where to run the battery (default cpu; no GPU backend yet)")


def _thread_counts(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise UsageError(f"--threads {text!r}: give positive thread counts separated by "
                         "commas, e.g. --threads 1,2,8")
    return counts


def _read_report(path: str) -> dict:
    try:
        with open(path) as file:
            report = json.load(file)
    except OSError as err:
        raise UsageError(f"--compare {path}: cannot read it ({err.strerror}); give a file "
                         "written by invarax verify --json") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"--compare {path}: not JSON ({err}); give a file written by "
                         "invarax verify --json") from None
    if not isinstance(report, dict) or not isinstance(report.get("digests"), dict):
        raise UsageError(f"--compare {path}: has no digests; give a file written by "
                         "invarax verify --json")
    return report


def _write_report(path: str, report: dict) -> None:
    try:
        with open(path, "w") as file:
            json.dump(report, file, indent=1, sort_keys=True)
            file.write("\n")
    except OSError as err:
        raise UsageError(f"--json {path}: cannot write it ({err.strerror}); choose another "
                         "path") from None


def _print_report(report: dict, out) -> bool:
    """Print the environment, the digests and the thread counts' agreement; True if the
    thread counts agree."""
    counts = report["threads"]
    print(f"invarax verify: {len(report['digests'])} workloads at "
          f"{', '.join(map(str, counts))} thread(s)", file=out)
    for line in describe(report["environment"]):
        print(f"  {line}", file=out)
    width = max(map(len, report["digests"])) + 2
    print(file=out)
    for name, value in report["digests"].items():
        print(f"{name:<{width}}{value}", file=out)
    print(f"{'overall':<{width}}{report['overall']}", file=out)
    print(file=out)
    timing = ", ".join(f"{s:.1f} s" for s in report["seconds"])
    differ = report["threads_differ"]
    if len(counts) > 1 and differ:
        print(f"threads {', '.join(map(str, counts))}: {len(differ)} workload(s) DIFFER "
              f"({timing}):", file=out)
        for name, by_count in differ.items():
            detail = ", ".join(f"{c}: {d}" for c, d in by_count.items())
            print(f"  {name}  ({detail})", file=out)
    elif len(counts) > 1:
        print(f"threads {', '.join(map(str, counts))}: every workload gives the same digest "
              f"({timing})", file=out)
    else:
        print(f"ran in {timing}", file=out)
    return not differ


def _print_comparison(path: str, report: dict, other: dict, out) -> bool:
    """Print how ``report`` compares with the file's; True if they agree."""
    env = other.get("environment", {})
    print(f"compared with {path} (invarax {env.get('invarax')}, numpy {env.get('numpy')}, "
          f"python {env.get('python')}, {env.get('cpu')}, dispatch level "
          f"{env.get('dispatch_level')}):", file=out)
    if other.get("threads_differ"):
        print(f"  note: that file's own thread counts disagree on "
              f"{', '.join(other['threads_differ'])}", file=out)
    differ = compare(report, other)
    if not differ:
        print(f"  all {len(report['digests'])} workloads agree (overall {report['overall']})",
              file=out)
        return True
    print(f"  {len(differ)} of {len(report['digests'].keys() | other['digests'].keys())} "
          "workloads DIFFER (here / there):", file=out)
    for name, (ours, theirs) in differ.items():
        print(f"  {name}  {ours or '(not run here)'} / {theirs or '(not in the file)'}",
              file=out)
    return False


def _several_devices(count: int = 4) -> None:
    """Give this process ``count`` CPU devices, so that the collectives' ``pmap`` runs over
    several (its bits must be ``vmap``'s), unless a count was chosen or devices are in use."""
    chosen = "--xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "")
    if config.jax_num_cpu_devices == 1 and not chosen:
        with contextlib.suppress(RuntimeError):  # devices already made: keep them
            config.update("jax_num_cpu_devices", count)


def run(args, out) -> int:
    """Run ``invarax verify`` with parsed ``args``: 0 if everything agrees, 1 if thread
    counts or machines differ, 2 for a usage error."""
    try:
        counts = _thread_counts(args.threads)
        other = _read_report(args.compare) if args.compare else None
        only = args.only.split(",") if args.only else None
        _several_devices()
        try:
            report = verify(counts, device=args.device, only=only)
        except ValueError as err:
            raise UsageError(str(err)) from None
        if args.json:
            _write_report(args.json, report)
    except UsageError as err:
        print(f"invarax verify: error: {err}", file=sys.stderr)
        return 2
    agree = _print_report(report, out)
    if args.json:
        print(f"wrote {args.json}", file=out)
    if other is not None:
        agree = _print_comparison(args.compare, report, other, out) and agree
    return 0 if agree else 1
