"""A new benchmark is one folder plus one suite file, touching no core module.

The benchmark below (``tinybench``) lives entirely in the test's own directory: a
loader, a scorer with its own rule and components, and a look-alike data writer. It
is found once by ``module:function`` names in ``suite.toml`` and once through entry
points declared by a distribution on the path, and runs end to end, with and without
xdist, through the metrics, the summary and a ``--snapshot-update`` baseline.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import write_json

pytestmark = pytest.mark.slow

# Ten targets on a 100 x 100 screen. The ``center`` model always answers (0.5, 0.5). The
# benchmark's own rule: a graded "closeness" (100 at the box centre, 0 at distance >= 0.5)
# with a "near" component (distance < 0.1) that a metric reads.
BOXES = [[0.40, 0.40, 0.60, 0.60], [0.45, 0.45, 0.55, 0.55], [0.0, 0.0, 0.2, 0.2], [0.8, 0.8, 1.0, 1.0],
         [0.35, 0.5, 0.45, 0.6], [0.5, 0.0, 0.6, 0.1], [0.55, 0.55, 0.65, 0.65], [0.1, 0.45, 0.3, 0.55],
         [0.45, 0.8, 0.55, 0.9], [0.48, 0.48, 0.52, 0.52]]

BENCH = {
    "tinybench/__init__.py": "",
    "tinybench/loader.py": '''
        import json
        from pytest_uiground.record.geometry import Box
        from pytest_uiground.record.image import ImageRef
        from pytest_uiground.record.sample import Sample, Target


        def load(options, ctx):
            root = ctx.suite_dir / options["file"]
            out = []
            for i, rec in enumerate(json.loads(root.read_text())):
                out.append(Sample(id=f"tiny-{i:02d}", image=ImageRef.from_path(root.parent / rec["image"]),
                                  instruction=rec["text"], task="point", target=Target(box=Box(*rec["box"])),
                                  meta={"side": "left" if rec["box"][0] < 0.5 else "right"}))
            return out
    ''',
    "tinybench/scorer.py": '''
        import math
        from pytest_uiground.record.score import Score


        def score_near(sample, prediction):
            box = sample.target.box
            if prediction.point is None:
                return Score(0.0, None, True, {"near": False})
            d = math.dist(prediction.point, box.center)
            return Score(max(0.0, 100.0 * (1 - 2 * d)), None, False, {"near": d < 0.1},
                         notes={"distance": round(d, 4)})
    ''',
}

SUITE = """
[suite]
name = "tiny"
version = "1"

[loader]
name = "{loader}"

[loader.options]
file = "data/targets.json"

[scorer]
name = "{scorer}"

[[metrics]]
name = "closeness"
slices = ["side"]

[[metrics]]
name = "near_rate"
score = "near"
"""


def expected() -> tuple[float, float]:
    import math

    closeness, near = [], []
    for x0, y0, x1, y1 in BOXES:
        d = math.dist((0.5, 0.5), ((x0 + x1) / 2, (y0 + y1) / 2))
        closeness.append(max(0.0, 100.0 * (1 - 2 * d)))
        near.append(100.0 if d < 0.1 else 0.0)
    return sum(closeness) / len(closeness), sum(near) / len(near)


@pytest.fixture
def tinybench(pytester: pytest.Pytester) -> pytest.Pytester:
    from PIL import Image

    for name, text in BENCH.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    data = pytester.path / "suites" / "tiny" / "data"
    data.mkdir(parents=True)
    Image.new("RGB", (100, 100), (200, 200, 200)).save(data / "screen.png")
    write_json(data / "targets.json", [{"image": "screen.png", "text": f"target {i}", "box": b}
                                       for i, b in enumerate(BOXES)])
    pytester.makeini("[pytest]\n")
    return pytester


def _check_run(pytester: pytest.Pytester, xdist: list[str]) -> None:
    result = pytester.runpytest_subprocess("suites/tiny", "--model", "center", "--uiground-report", "out",
                                           "-p", "no:cacheprovider", "--snapshot-update", *xdist)
    assert result.ret == 0, result.stdout.str()
    doc = json.loads((pytester.path / "out" / "summary.json").read_text())
    want_closeness, want_near = expected()
    assert doc["metrics"]["closeness"]["value"] == pytest.approx(want_closeness, abs=1e-3)
    assert doc["metrics"]["near_rate"]["value"] == pytest.approx(want_near, abs=1e-3)
    assert set(doc["metrics"]["closeness"]["slices"]) == {"side=left", "side=right"}
    records = [json.loads(line) for line in (pytester.path / "out" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == len(BOXES)
    assert all("near" in r["score"]["components"] and "distance" in r["score"]["notes"] for r in records)
    # The benchmark's component is what the baseline keeps.
    update = pytester.runpytest_subprocess("suites/tiny", "--model", "center", "--snapshot-update",
                                           "-p", "no:cacheprovider", *xdist)
    assert update.ret == 0, update.stdout.str()
    stored = json.loads((pytester.path / "baselines" / "tiny" / "samples.json").read_text())
    assert {k: v["c"]["near"] for k, v in stored["samples"].items()} == {
        f"tiny-{i:02d}": n == 100.0 for i, n in enumerate(_near_flags())}
    rerun = pytester.runpytest_subprocess("suites/tiny", "--model", "center", "-p", "no:cacheprovider", *xdist)
    assert rerun.ret == 0, rerun.stdout.str()


def _near_flags() -> list[float]:
    import math

    return [100.0 if math.dist((0.5, 0.5), ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)) < 0.1 else 0.0 for b in BOXES]


def test_benchmark_by_import_path(tinybench: pytest.Pytester, xdist: list[str]) -> None:
    (tinybench.path / "suites" / "tiny" / "suite.toml").write_text(
        SUITE.format(loader="tinybench.loader:load", scorer="tinybench.scorer:score_near"))
    _check_run(tinybench, xdist)


def test_benchmark_by_entry_points(tinybench: pytest.Pytester, xdist: list[str]) -> None:
    dist = tinybench.path / "tinybench-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tinybench\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pytest_uiground.loaders]\ntiny = tinybench.loader:load\n\n"
                                           "[pytest_uiground.scorers]\nnear = tinybench.scorer:score_near\n")
    (tinybench.path / "suites" / "tiny" / "suite.toml").write_text(SUITE.format(loader="tiny", scorer="near"))
    _check_run(tinybench, xdist)


def test_unknown_scorer_is_a_collection_error_naming_the_file(tinybench: pytest.Pytester) -> None:
    (tinybench.path / "suites" / "tiny" / "suite.toml").write_text(
        SUITE.format(loader="tinybench.loader:load", scorer="nearr"))
    result = tinybench.runpytest_subprocess("suites/tiny", "--model", "center", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*suite.toml: [[]scorer[]] name: no scorer named 'nearr'; known:*task*"])
