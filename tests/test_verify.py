"""``invarax verify`` and ``invarax.verify()``: the battery's digests are fixed here, so a
change of bits anywhere in it (an elementary function, a kernel's order, a sampler, a
training step) fails this test and must be a deliberate change, documented in
docs/numerics.md with EXPECTED updated. The command line: --json and --compare between
"machines" (files), --threads, and clear errors."""

import json

import numpy as np
import pytest

import invarax
from invarax._verify import _battery, _models
from invarax.cli import main
from invarax.kernels import _support

# The digest of each workload (docs/numerics.md, "Checking machines: invarax verify").
EXPECTED = {
    "activations/float32": "981eaa01b0662013",
    "activations/float64": "98f0cfa7491fdd83",
    "arithmetic/float32": "64976fdcadf319c2",
    "arithmetic/float64": "82ec7a3d48088da3",
    "collectives/float32": "2f2518bc23837644",
    "contractions/float32": "d24e3235cb620f1f",
    "contractions/float64": "fd4bc5c1b79c6076",
    "conv_train/float32": "b04640c95efda69e",
    "convolutions/float32": "dc82a81a9d06a3af",
    "convolutions/float64": "d18896243b16839b",
    "elementary/acos/float32": "31e8d315edde48dd",
    "elementary/acos/float64": "f0b77e6816b9b86c",
    "elementary/acosh/float32": "61d529cd113709bf",
    "elementary/acosh/float64": "62138504b6731178",
    "elementary/asin/float32": "c4b6f744d102277c",
    "elementary/asin/float64": "2b22c607faa95dfb",
    "elementary/asinh/float32": "fa0e84615b967cbb",
    "elementary/asinh/float64": "1f5ac934bef2a4e5",
    "elementary/atan/float32": "5d7dac0aae7f1acd",
    "elementary/atan/float64": "7f660fc94038ea47",
    "elementary/atan2/float32": "d4dcbcde8ed5b937",
    "elementary/atan2/float64": "ea11537254a43d3c",
    "elementary/atanh/float32": "18f44d125375e7b7",
    "elementary/atanh/float64": "05be6f2d0a2fa18a",
    "elementary/cbrt/float32": "4e97e2090bd7ef69",
    "elementary/cbrt/float64": "e9e995c12e505f73",
    "elementary/cos/float32": "49be85e5d2790d46",
    "elementary/cos/float64": "cb787f1600bffc41",
    "elementary/cosh/float32": "ded50abd7acf5dcf",
    "elementary/cosh/float64": "59055442fc72b9fd",
    "elementary/digamma/float32": "4f58d016adabd310",
    "elementary/digamma/float64": "091729889a4c1730",
    "elementary/erf/float32": "046d6fc2da876181",
    "elementary/erf/float64": "71828970d3b820d2",
    "elementary/erf_inv/float32": "279932a8919c5971",
    "elementary/erf_inv/float64": "eff80b7c66d5efa5",
    "elementary/erfc/float32": "e06e14427ba9aed5",
    "elementary/erfc/float64": "62573130372b2d30",
    "elementary/exp/float32": "648198a858739603",
    "elementary/exp/float64": "8ce83c60fdbb5490",
    "elementary/exp2/float32": "30c743aae6934cf0",
    "elementary/exp2/float64": "0e81a24742d963df",
    "elementary/expm1/float32": "838c004e28f6faee",
    "elementary/expm1/float64": "c855da744f354170",
    "elementary/lgamma/float32": "f6822f70deb1e9b4",
    "elementary/lgamma/float64": "f2e800f9984871ce",
    "elementary/log/float32": "3e421856799565ab",
    "elementary/log/float64": "48ccd9407cbf3f8b",
    "elementary/log10/float32": "e7ab7c5955857c98",
    "elementary/log10/float64": "ba5401b75914fc14",
    "elementary/log1p/float32": "ad5c991335362ccc",
    "elementary/log1p/float64": "73a21279f343f7b1",
    "elementary/log2/float32": "4cfb56b5e3dea077",
    "elementary/log2/float64": "ce39787fecef20d2",
    "elementary/logistic/float32": "636241998089ced6",
    "elementary/logistic/float64": "f85bb6819f4afa75",
    "elementary/pow/float32": "e827701ec16467be",
    "elementary/pow/float64": "5f79f4bf83356e12",
    "elementary/sin/float32": "2b2cd400e715e698",
    "elementary/sin/float64": "f24d1f10252e8e98",
    "elementary/sinh/float32": "10cb266cca1395f8",
    "elementary/sinh/float64": "27532cb07889c97a",
    "elementary/tan/float32": "f01cbcfe3c073d12",
    "elementary/tan/float64": "2ce80827e852cc64",
    "elementary/tanh/float32": "bf4dba3790eb2568",
    "elementary/tanh/float64": "34301371cd2deb18",
    "fft/float32": "b9784ff9392f1d70",
    "fft/float64": "08ddb0eb1e5e7818",
    "fused/float32": "b434fb44275aa76f",
    "fused/float64": "aa441352a5dd022f",
    "linalg/batched/float32": "09ec77c13ef2600c",
    "linalg/batched/float64": "d2280a2c58e65453",
    "linalg/cho_solve/float32": "c13187d91b9dd02f",
    "linalg/cho_solve/float64": "7c196a2e2b9b698d",
    "linalg/cholesky/float32": "72bb4a7ee1f5d670",
    "linalg/cholesky/float64": "ee08d0e8f96f1d9a",
    "linalg/complex/complex128": "0d48d6e54ac568dc",
    "linalg/complex/complex64": "3bf527acb112d5ec",
    "linalg/det/float32": "6833ea9bfb6f61e4",
    "linalg/det/float64": "5f65b18ce4361b3e",
    "linalg/eigh/float32": "ddf31d7bde66d8bb",
    "linalg/eigh/float64": "3bf746c49ec4eaa1",
    "linalg/expm/float32": "59b387c4766a7002",
    "linalg/expm/float64": "0c2ef1b99853a115",
    "linalg/grad_solve/float32": "6d2ff35c7f359821",
    "linalg/grad_solve/float64": "32f8233a8e687814",
    "linalg/inv/float32": "2e4636fe2179989a",
    "linalg/inv/float64": "9fa586711e39ee42",
    "linalg/lstsq/float32": "58c66d3c33a1e281",
    "linalg/lstsq/float64": "7541f537565290db",
    "linalg/lu/float32": "9033315339236aad",
    "linalg/lu/float64": "98ba37ecbf08b6d8",
    "linalg/matrix_power/float32": "930851263060c656",
    "linalg/matrix_power/float64": "734b0a116ca21abe",
    "linalg/norm2/float32": "792f70b1d0601d26",
    "linalg/norm2/float64": "f2bcd4f5805b2453",
    "linalg/pinv/float32": "36cc69e3f1a26bf6",
    "linalg/pinv/float64": "820172b0b4964bd9",
    "linalg/qr/float32": "02155cefa9363093",
    "linalg/qr/float64": "2162e26e97810ade",
    "linalg/slogdet/float32": "54b439840a01d58a",
    "linalg/slogdet/float64": "123e25789c61a22d",
    "linalg/solve/float32": "a1cad221b79d5ef7",
    "linalg/solve/float64": "a069befa87c23c66",
    "linalg/solve_triangular/float32": "e210771e2b9be6d6",
    "linalg/solve_triangular/float64": "e9b4b0ac3c442ec3",
    "linalg/svd/float32": "81c456070c5a8d14",
    "linalg/svd/float64": "46499a98b4d139ee",
    "lstm_scan_grad/float32": "7d0f791383703724",
    "lstm_scan_grad/float64": "c145a1f2f98d9b65",
    "mlp_train_jit/float32": "67a57a50874f3ac5",
    "mlp_train_jit/float64": "16bf95440b703fdf",
    "mlp_train_vmap/float32": "b1aecb7bd69d421c",
    "random/bits": "ba3666a52c8969a9",
    "random/float32": "ed24ca3ed5653ab0",
    "random/float64": "ad355a263b36ea5a",
    "reductions/float32": "277180a98f99e4cf",
    "reductions/float64": "54d8bbef11b3ca44",
    "special/float32": "19f08f7c320ee7fd",
    "special/float64": "5e349c88a1f674c1",
    "windows/float32": "038bd961a082fb33",
    "windows/float64": "0dd8cc226c3001f9",
}


@pytest.fixture(scope="module")
def report():
    return invarax.verify()


def test_the_battery_gives_the_fixed_digests(report):
    got = report["digests"]
    changed = {name: (EXPECTED.get(name), got.get(name)) for name in EXPECTED.keys() | got.keys()
               if EXPECTED.get(name) != got.get(name)}
    assert not changed, (
        "the battery's bits changed (workload: (expected, got)); if the change is deliberate, "
        f"document it in docs/numerics.md and update EXPECTED: {dict(sorted(changed.items()))}")


def test_the_report(report):
    assert report["overall"] == _battery.overall(report["digests"])
    assert report["threads"] == [_support.num_threads()] and report["threads_differ"] == {}
    env = report["environment"]
    assert env["invarax"] == invarax.__version__ and env["numpy"] == np.__version__
    assert env["dispatch_level"] in ("scalar", "avx2", "avx512")
    assert env["local_devices"] == invarax.local_device_count()
    json.dumps(report)  # JSON-ready


def test_the_battery_covers_the_contract():
    names = [name for name, _, _ in _battery.workloads()]
    families = {name.split("/")[0] for name in names}
    assert {"elementary", "contractions", "reductions", "convolutions", "fft", "random",
            "linalg", "mlp_train_jit", "mlp_train_vmap", "conv_train", "lstm_scan_grad",
            "collectives"} <= families
    from invarax.kernels.elementary import NAMES, NAMES2

    for function in NAMES + NAMES2:
        for dtype in ("float32", "float64"):
            assert f"elementary/{function}/{dtype}" in names
    for function in ("cholesky", "solve", "inv", "det", "qr", "eigh", "svd", "lu",
                     "solve_triangular", "lstsq", "pinv", "matrix_power", "expm", "cho_solve",
                     "slogdet", "norm2", "grad_solve"):
        for dtype in ("float32", "float64"):
            assert f"linalg/{function}/{dtype}" in names


def test_collectives_compare_pmap_with_vmap(monkeypatch):
    assert invarax.local_device_count() > 1  # (tests/conftest.py asks for 8)

    def wrong_pmap(fun, axis_name):  # a pmap whose psum is off by one
        return lambda x: [y + 1 for y in invarax.vmap(fun, axis_name=axis_name)(x)]

    monkeypatch.setattr(_models, "pmap", wrong_pmap)
    got = _battery.run_battery(["collectives/"])
    assert got["collectives/float32"] != EXPECTED["collectives/float32"]


def test_a_float64_workload_must_compute_in_float64(monkeypatch):
    monkeypatch.setattr(_battery, "workloads", lambda: [
        ("sneaky/float64", True, lambda: [np.float32(1)])])
    with pytest.raises(RuntimeError, match="sneaky/float64 lacks float64 results"):
        _battery.run_battery()


def test_the_opt_out_does_not_change_the_battery(report):
    with invarax.config.flag("invarax_exact_elementary", False):
        again = invarax.verify(only=["elementary/exp/", "elementary/erf/float32"])
    assert again["digests"] == {k: v for k, v in report["digests"].items() if k in again["digests"]}


def test_thread_counts_that_disagree_are_reported(monkeypatch, capsys):
    def fake(only):
        count = _support.num_threads()
        return {"a": "00", "b": "11" if count == 1 else "22"}

    monkeypatch.setattr(_battery, "run_battery", fake)
    report = invarax.verify(threads=[1, 3])
    assert report["threads_differ"] == {"b": {"1": "11", "3": "22"}}
    code, out, _ = _cli(capsys, "--threads", "1,3")
    assert code == 1
    assert "threads 1, 3: 1 workload(s) DIFFER" in out and "  b  (1: 11, 3: 22)" in out


def test_bad_arguments():
    with pytest.raises(ValueError, match="threads must be a positive int"):
        invarax.verify(threads=[0])
    if not invarax.devices()[0].platform == "gpu":
        with pytest.raises(ValueError, match="verify: Unknown backend.*no GPU"):
            invarax.verify(device="gpu")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        invarax.verify(device="tpu")
    with pytest.raises(ValueError, match="no workload of the battery starts with"):
        invarax.verify(only=["nonsense"])


def _cli(capsys, *argv):
    code = main(["verify", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_and_compare_round_trip(tmp_path, capsys):
    path = str(tmp_path / "here.json")
    code, out, _ = _cli(capsys, "--only", "linalg/cholesky,fft/float32", "--json", path)
    assert code == 0 and f"wrote {path}" in out
    saved = json.loads((tmp_path / "here.json").read_text())
    assert sorted(saved["digests"]) == ["fft/float32", "linalg/cholesky/float32",
                                        "linalg/cholesky/float64"]
    assert saved["digests"]["fft/float32"] == EXPECTED["fft/float32"]
    assert saved["digests"]["fft/float32"] in out and saved["overall"] in out
    code, out, _ = _cli(capsys, "--only", "linalg/cholesky,fft/float32", "--compare", path)
    assert code == 0 and "all 3 workloads agree" in out


def test_compare_names_the_workloads_that_differ(tmp_path, capsys):
    path = tmp_path / "there.json"
    _cli(capsys, "--only", "linalg/cholesky", "--json", str(path))
    theirs = json.loads(path.read_text())
    theirs["digests"]["linalg/cholesky/float64"] = "0123456789abcdef"  # another machine's bits
    theirs["environment"]["cpu"] = "Some Other CPU"
    path.write_text(json.dumps(theirs))
    code, out, _ = _cli(capsys, "--only", "linalg/cholesky", "--compare", str(path))
    assert code == 1
    assert "Some Other CPU" in out and "1 of 2 workloads DIFFER" in out
    differ = [line for line in out.splitlines() if "DIFFER" not in line and "0123" in line]
    assert differ == [f"  linalg/cholesky/float64  {EXPECTED['linalg/cholesky/float64']} / "
                      "0123456789abcdef"]


def test_threads(tmp_path, capsys):
    path = tmp_path / "threads.json"
    code, out, _ = _cli(capsys, "--threads", "1,2,3", "--only", "linalg/svd,contractions/float32",
                        "--json", str(path))
    assert code == 0, out
    assert "threads 1, 2, 3: every workload gives the same digest" in out
    saved = json.loads(path.read_text())
    assert saved["threads"] == [1, 2, 3] and len(saved["seconds"]) == 3
    assert saved["threads_differ"] == {}


@pytest.mark.parametrize(("argv", "message"), [
    (["--threads", "1,x"], "--threads '1,x': give positive thread counts"),
    (["--threads", "0"], "--threads '0': give positive thread counts"),
    (["--compare", "/nonexistent/file.json"], "cannot read it"),
    (["--only", "nonsense"], "no workload of the battery starts with"),
])
def test_usage_errors(capsys, argv, message):
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and message in err, err


def test_compare_rejects_a_file_that_is_not_a_report(tmp_path, capsys):
    path = tmp_path / "other.json"
    path.write_text('{"results": []}')
    code, _, err = _cli(capsys, "--compare", str(path))
    assert code == 2 and "has no digests; give a file written by invarax verify --json" in err
    path.write_text("not json")
    code, _, err = _cli(capsys, "--compare", str(path))
    assert code == 2 and "not JSON" in err
