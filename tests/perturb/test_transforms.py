"""The perturbations map targets exactly: a point inside a target stays inside the perturbed target (and
the pixels agree), and a point of the perturbed target maps back inside the original, for boxes and
polygons, including crops that cut a target (pytest_uiground.perturb.transforms, .derive)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from pytest_uiground.perturb.derive import MIN_VISIBLE, derive, map_target, original_id
from pytest_uiground.perturb.transforms import (
    Perturbation,
    PerturbSpecError,
    forward,
    inverse,
    parse,
    parse_list,
    polygon_area,
)
from pytest_uiground.record.geometry import Box, Point, point_in_polygon, to_frame
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import PERTURB_KEY, Sample, Target

GEOMETRIC_SPECS = st.one_of(
    st.floats(0.3, 3.0).map(lambda f: f"scale:{f:.3f}"),
    st.tuples(st.floats(0.5, 3.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0)).map(
        lambda t: f"zoom:{t[0]:.3f}@{t[1]:.3f},{t[2]:.3f}"),
    st.tuples(st.floats(-0.4, 0.4), st.floats(-0.4, 0.4)).map(lambda t: f"translate:{t[0]:.3f},{t[1]:.3f}"),
    st.tuples(st.integers(200, 2000), st.integers(200, 2000)).map(lambda t: f"letterbox:{t[0]}x{t[1]}"),
    st.tuples(st.integers(1, 32), st.integers(1, 32)).map(lambda t: f"pad:{t[0]}x{t[1]}"),
    st.floats(0.01, 0.25).map(lambda e: f"perspective:{e:.3f}"),
)
SIZES = st.tuples(st.integers(100, 1600), st.integers(100, 1600))


@st.composite
def boxes(draw: st.DrawFn) -> Box:
    x0, y0 = draw(st.floats(0.0, 0.9)), draw(st.floats(0.0, 0.9))
    return Box(x0, y0, draw(st.floats(x0 + 0.02, 1.0)), draw(st.floats(y0 + 0.02, 1.0)))


def contains(target: Target, x: float, y: float) -> bool:
    """The scoring rule's verdict for a normalized point (score_point's two branches)."""
    if target.polygon is not None and target.frame is not None:
        return point_in_polygon(to_frame(x, target.frame[0]), to_frame(y, target.frame[1]), target.polygon)
    assert target.box is not None
    return target.box.contains(Point(x, y))


def _matrix(spec: str, size: tuple[int, int]) -> tuple[Perturbation, object]:
    p = parse(spec)
    return p, p.matrix(size, "screen-key")


@settings(max_examples=300, deadline=None)
@given(spec=GEOMETRIC_SPECS, size=SIZES, box=boxes(), t=st.floats(0.02, 0.98), u=st.floats(0.02, 0.98))
def test_a_point_inside_a_box_stays_inside_its_perturbed_target_and_maps_back(
        spec: str, size: tuple[int, int], box: Box, t: float, u: float) -> None:
    p, m = _matrix(spec, size)
    x, y = box.x0 + t * box.width, box.y0 + u * box.height
    assert inverse(m, *forward(m, x, y)) == pytest.approx((x, y), abs=1e-9)
    mapped = map_target(Target(box=box), m)
    fx, fy = forward(m, x, y)
    if mapped is None:  # left out: less than MIN_VISIBLE of the box is in view
        return
    if p.kind == "perspective":
        assert mapped.polygon is not None and mapped.frame is not None
    if 1e-6 < fx < 1 - 1e-6 and 1e-6 < fy < 1 - 1e-6:  # in view: the click is inside the perturbed target
        assert contains(mapped, fx, fy), (spec, box, (x, y), (fx, fy), mapped)


@settings(max_examples=300, deadline=None)
@given(spec=GEOMETRIC_SPECS, size=SIZES, box=boxes())
def test_a_point_of_the_perturbed_target_maps_back_inside_the_original(
        spec: str, size: tuple[int, int], box: Box) -> None:
    """The visible part of a cut target is still the element: its centroid maps back into the original box."""
    _, m = _matrix(spec, size)
    mapped = map_target(Target(box=box), m)
    if mapped is None:
        return
    if mapped.polygon is not None and mapped.frame is not None:
        fw, fh = mapped.frame
        pts = [(mapped.polygon[i] / fw, mapped.polygon[i + 1] / fh) for i in range(0, len(mapped.polygon), 2)]
    else:
        assert mapped.box is not None
        b = mapped.box
        pts = [(b.x0, b.y0), (b.x1, b.y0), (b.x1, b.y1), (b.x0, b.y1)]
    cx, cy = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    ox, oy = inverse(m, cx, cy)
    assert box.x0 - 1e-9 <= ox <= box.x1 + 1e-9 and box.y0 - 1e-9 <= oy <= box.y1 + 1e-9


@st.composite
def triangles(draw: st.DrawFn) -> tuple[float, ...]:
    pts = [(draw(st.floats(0.0, 1.0)), draw(st.floats(0.0, 1.0))) for _ in range(3)]
    area = polygon_area(pts)
    if area < 1e-3:
        pts = [(0.1, 0.1), (0.6, 0.15), (0.3, 0.7)]
    return tuple(c for x, y in pts for c in (x * 1000, y * 800))


@settings(max_examples=300, deadline=None)
@given(spec=GEOMETRIC_SPECS, size=SIZES, poly=triangles(), a=st.floats(0.05, 0.9), b=st.floats(0.05, 0.9))
def test_polygon_targets_map_exactly(spec: str, size: tuple[int, int], poly: tuple[float, ...], a: float,
                                     b: float) -> None:
    if a + b > 0.95:
        a, b = a / 2, b / 2
    target = Target(polygon=poly, frame=(1000, 800))
    v = [(poly[i] / 1000, poly[i + 1] / 800) for i in range(0, 6, 2)]
    x = v[0][0] + a * (v[1][0] - v[0][0]) + b * (v[2][0] - v[0][0])  # strictly inside the triangle
    y = v[0][1] + a * (v[1][1] - v[0][1]) + b * (v[2][1] - v[0][1])
    _, m = _matrix(spec, size)
    mapped = map_target(target, m)
    if mapped is None:
        return
    assert mapped.polygon is not None and mapped.frame == (1000, 800)
    fx, fy = forward(m, x, y)
    if 1e-6 < fx < 1 - 1e-6 and 1e-6 < fy < 1 - 1e-6:
        assert contains(mapped, fx, fy)


def test_a_crop_that_cuts_a_target_keeps_its_visible_part_or_leaves_it_out() -> None:
    m = parse("zoom:2").matrix(None, "k")  # the view is the middle half: 0.25..0.75 of the original
    half_in = map_target(Target(box=Box(0.6, 0.4, 0.8, 0.5)), m)  # 0.6..0.75 of 0.6..0.8 visible: 75 %
    assert half_in is not None and half_in.box == pytest.approx(Box(0.7, 0.3, 1.0, 0.5))
    assert map_target(Target(box=Box(0.7, 0.4, 0.9, 0.5)), m) is None  # 25 % visible < MIN_VISIBLE
    assert map_target(Target(box=Box(0.0, 0.0, 0.1, 0.1)), m) is None  # out of view entirely
    assert MIN_VISIBLE == 0.5


@pytest.mark.parametrize("spec", ["scale:0.5", "scale:1.7", "zoom:1.5", "zoom:0.7@0.3,0.6", "translate:0.1,-0.08",
                                  "letterbox:1920x720", "letterbox:400x800", "pad:16x9", "pad:1x2",
                                  "perspective:0.08", "perspective:0.2"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(box=boxes(), size=st.tuples(st.integers(200, 700), st.integers(200, 700)))
def test_the_pixels_move_with_the_target(spec: str, box: Box, size: tuple[int, int]) -> None:
    """The image operation and the target map agree: the mapped centre of a red box on a grey screen
    is red in the perturbed image (boxes of at least 24 px, so resampling cannot blur the centre)."""
    w, h = size
    x0, y0, x1, y1 = box.to_pixels(w, h)
    if x1 - x0 < 24 or y1 - y0 < 24:
        return
    img = Image.new("RGB", size, (128, 128, 128))
    ImageDraw.Draw(img).rectangle((round(x0), round(y0), round(x1) - 1, round(y1) - 1), fill=(255, 0, 0))
    p = parse(spec)
    out = p.apply(img, "screen-key")
    assert out.size == p.out_size(w, h)
    m = p.matrix(size, "screen-key")
    fx, fy = forward(m, *box.center)
    if not (0 <= fx < 1 and 0 <= fy < 1):
        return
    r, g, b = out.getpixel((int(fx * out.size[0]), int(fy * out.size[1])))  # type: ignore[misc]
    assert r > 200 and g < 60 and b < 60, (spec, box, (fx, fy), (r, g, b))


@pytest.mark.parametrize("spec", ["invert", "grayscale", "contrast:0.4", "brightness:1.8", "jpeg:20", "blur:2"])
def test_photometric_perturbations_keep_the_geometry_and_are_deterministic(spec: str) -> None:
    img = Image.new("RGB", (120, 80), (20, 200, 40))
    ImageDraw.Draw(img).rectangle((10, 10, 50, 30), fill=(250, 250, 250))
    p = parse(spec)
    a, b = p.apply(img, "k"), p.apply(img, "k")
    assert a.size == img.size and a.tobytes() == b.tobytes() and a.tobytes() != img.tobytes()
    target = Target(box=Box(0.1, 0.1, 0.4, 0.4))
    sample = Sample(id="s1", image=ImageRef.from_source("k", lambda: img), instruction="x", task="point",
                    target=target)
    (derived,) = derive([sample], [p]).samples
    assert derived.target == target
    if spec == "invert":
        assert a.getpixel((0, 0)) == (235, 55, 215)


def test_perspective_is_seeded_by_the_image_and_the_same_every_time() -> None:
    p = parse("perspective:0.1")
    assert (p.matrix(None, "a") == p.matrix(None, "a")).all()
    assert not (p.matrix(None, "a") == p.matrix(None, "b")).all()


def test_derived_samples_are_their_own_tests_slices_and_cache_entries() -> None:
    img = Image.new("RGB", (200, 100), (0, 0, 0))
    ref = ImageRef(key="screen-1", source=lambda: img, size=(200, 100))
    samples = [
        Sample(id="a", image=ref, instruction="OK", task="point", target=Target(box=Box(0.4, 0.4, 0.6, 0.6)),
               meta={"theme": "dark"}),
        Sample(id="edge", image=ref, instruction="Back", task="point", target=Target(box=Box(0.0, 0.0, 0.1, 0.1))),
        Sample(id="q", image=ref, instruction="Is it on?", task="option", target=Target(option="A")),
    ]
    out = derive(samples, parse_list("scale:0.5,zoom:2,letterbox:400x400"))
    ids = [s.id for s in out.samples]
    assert ids == ["a@scale:0.5", "edge@scale:0.5", "a@zoom:2", "a@letterbox:400x400", "edge@letterbox:400x400"]
    assert out.left_out == {"scale:0.5": ["q"], "zoom:2": ["edge", "q"], "letterbox:400x400": ["q"]}
    first = out.samples[0]
    assert first.meta == {"theme": "dark", PERTURB_KEY: "scale:0.5"} and original_id(first.id) == "a"
    assert first.image.dimensions() == (100, 50) and first.image.load().size == (100, 50)
    assert first.image.content_key() == "key:screen-1@scale:0.5" != out.samples[2].image.content_key()
    # letterbox 200x100 into 400x400: scaled by 2 to 400x200, bars of 100 px above and below
    assert out.samples[3].target.box == pytest.approx(Box(0.4, 0.25 + 0.4 * 0.5, 0.6, 0.25 + 0.6 * 0.5))


@pytest.mark.parametrize(("text", "message"), [
    ("scale", "expected scale:F, a factor > 0, e.g. scale:0.75"),
    ("scale:-1", "perturbation 'scale:-1': expected scale:F"),
    ("zoom:abc", "e.g. zoom:1.5"),
    ("letterbox:1920", "e.g. letterbox:1920x720"),
    ("invert:2", "invert takes no argument"),
    ("warp:3", "unknown perturbation 'warp:3'; known: alt, blur, brightness"),
    ("jpeg:2.5", "out of range"),
])
def test_a_bad_spec_is_one_line_naming_it_and_the_fix(text: str, message: str) -> None:
    with pytest.raises(PerturbSpecError) as info:
        parse(text)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_specs_are_canonical_and_deduplicated() -> None:
    assert [p.spec for p in parse_list(" scale:0.750 , INVERT,scale:.75, translate:0.1,-0.05,zoom:2@0.5,0.5")] == [
        "scale:0.75", "invert", "translate:0.1,-0.05", "zoom:2"]


def test_a_screen_is_transformed_once_for_its_samples_and_each_gets_its_own_copy() -> None:
    calls: list[int] = []

    def render() -> Image.Image:
        calls.append(1)
        return Image.new("RGB", (64, 48), (10, 20, 30))

    ref = ImageRef(key="screen-cache-test", source=render, size=(64, 48))
    samples = [Sample(id=f"c{i}", image=ref, instruction="x", task="point", target=Target(box=Box(0.1, 0.1, 0.5, 0.5)))
               for i in range(3)]
    variants = derive(samples, parse_list("invert")).samples
    first, second = variants[0].image.load(), variants[1].image.load()
    assert len(calls) == 1 and first.tobytes() == second.tobytes() and first is not second
    first.putpixel((0, 0), (0, 0, 0))
    assert variants[2].image.load().getpixel((0, 0)) == (245, 235, 225)
