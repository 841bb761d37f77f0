"""``replay``: score raw outputs produced elsewhere with a model family's own parser.

For outputs made on a GPU cluster, by vLLM, or by the AutomotiveUI card's script:
a JSON-lines file with one record per sample, ``{"sample_id": ..., "output": "..."}``.
``sample_id`` matches the sample's id, or the dataset's own id of it (``meta["row_index"]``,
the card script's convention, or ``meta["dataset_id"]``, ScreenSpot-Pro's and OSWorld-G's ``id``:
the benchmarks' own logs key samples so; ScreenSpot-v2 and UI-Vision records carry no id of their
own). Image sizes come from the annotation or the image header, never from decoding the image, so
a replay runs at the speed of the file. A sample with no record is an error on that sample,
never silently skipped. Absolute-pixel families (UI-TARS, Qwen2.5-VL) need the size
the model actually saw: give it per record as ``model_input_size: [w, h]``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelAdapter, ModelLoadError, ModelOptions, to_prediction
from pytest_uiground.models.overrides import NONE, Overrides
from pytest_uiground.record import jsontext
from pytest_uiground.record.image import ImageError
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

#: Sample ``meta`` keys holding the dataset's own id of a sample (MMBench-GUI's and AutomotiveUI's
#: ``row_index``, ScreenSpot-Pro's and OSWorld-G's ``dataset_id``): a record keyed by it matches the sample too.
DATASET_ID_KEYS = ("row_index", "dataset_id")
TEXT_TASKS = ("option", "answer", "vqa")  # no coordinates to read, so no model input size needed
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def read_records(path: Path) -> tuple[dict[str, dict[str, Any]], str]:
    """The file's records by sample id, and its sha256. Read once at start-up (:func:`check_options`)
    so that a damaged file is one error before any test, naming the file and line, not one per test.

    A line that cannot be read is an error, never dropped: a dropped record would turn into
    "missing" on its sample, blaming the model. A UTF-8 byte-order mark at the start (what
    PowerShell and Notepad write) is accepted: it is an encoding marker, not part of the first record.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelLoadError(f"--uiground-predictions {str(path)!r}: cannot be read ({exc.strerror or exc})") from None
    sha256 = hashlib.sha256(raw).hexdigest()
    records: dict[str, dict[str, Any]] = {}
    for n, data in enumerate(raw.removeprefix(b"\xef\xbb\xbf").splitlines(), 1):
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelLoadError(f"{path}:{n}: not UTF-8 text ({exc.reason} at byte {exc.start}); write the "
                                 "file as UTF-8 JSON lines") from None
        if not line.strip():
            continue
        try:
            rec = jsontext.loads(line)
            if not isinstance(rec, dict):
                raise TypeError(f"expected a JSON object, got {type(rec).__name__}")
            sid = str(rec["sample_id"])
            if not isinstance(rec["output"], str):
                raise TypeError("'output' is not a string")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:  # RecursionError: jsontext.TooDeep
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ModelLoadError(f"{path}:{n}: not a replay record ({what}); each line must be "
                                 '{"sample_id": ..., "output": "..."}') from None
        if sid in records:
            raise ModelLoadError(f"{path}:{n}: duplicate record for sample_id {sid!r}; keep one per sample")
        records[sid] = rec
    return records, sha256


class ReplayModel(ModelAdapter):
    overrides: Overrides = NONE

    def use_overrides(self, overrides: Overrides) -> None:
        """A suite may swap the parser that reads the replayed text."""
        self.overrides = overrides

    def __init__(self, path: Path, parser: str) -> None:
        self.path, self.parser = path, parser
        self.name = "replay"
        self.overrides_table = parser  # the suite's [models.<parser>] overrides apply (see the module docstring)
        self.records, self.sha256 = read_records(path)

    @classmethod
    def of_records(cls, path: Path, parser: str, outputs: Mapping[str, str]) -> ReplayModel:
        """Answers already matched to sample ids (a published log's, :mod:`pytest_uiground.record.published`),
        read as a replay file's: ``path`` names their file in messages."""
        model = cls.__new__(cls)
        model.path, model.parser, model.name, model.overrides_table = path, parser, "replay", parser
        model.records = {sid: {"sample_id": sid, "output": text} for sid, text in outputs.items()}
        model.sha256 = ""
        return model

    def _record(self, sample: Sample) -> dict[str, Any] | None:
        rec = self.records.get(sample.id)
        for key in DATASET_ID_KEYS:
            if rec is None and key in sample.meta:
                rec = self.records.get(str(sample.meta[key]))
        return rec

    def _missing(self, sample: Sample) -> str:
        """Why a sample has no record, with the likely cause when the file's ids are this id
        less a prefix (the suite's own, such as ``sspro-``): the benchmarks' own logs key
        samples by the dataset's id, and "missing" alone would blame every sample."""
        why = f"missing: no record for sample {sample.id!r} in {self.path}"
        own = [f"{k} {sample.meta[k]!r}" for k in DATASET_ID_KEYS if k in sample.meta]
        for cut in range(1, len(sample.id)):
            if sample.id[cut:] in self.records:
                prefix = sample.id[:cut]
                return (why + f"; the file has {sample.id[cut:]!r}, which is this id without the prefix "
                        f"{prefix!r}: write sample_id as the suite's id ({sample.id!r})"
                        + (f" or as the dataset's own ({', '.join(own)})" if own else
                           ", or have the suite's loader record the dataset's id (meta 'dataset_id')"))
        if own:
            why += f" (nor under the dataset's own id: {', '.join(own)})"
        return why

    def _context(self, sample: Sample, rec: dict[str, Any]) -> families.ParseContext:
        size = rec.get("image_size")
        if not (isinstance(size, list | tuple) and len(size) == 2):
            size = sample.image.dimensions()  # the annotation's size or the header: no pixel decoded
        input_size = rec.get("model_input_size")
        family = None if self.overrides.parser else families.get(self.parser)
        if input_size is None and family is not None and family.needs_input_size and family.input_size_known:
            input_size = family.input_size((int(size[0]), int(size[1])))
        if (family is not None and family.needs_input_size and input_size is None
                and sample.task not in TEXT_TASKS):
            raise ValueError(
                f"record for {sample.id!r} has no model_input_size: --uiground-replay-parser {self.parser} "
                "reads absolute "
                "pixels of the resized image the model saw, and the plugin never guesses that size; add "
                "model_input_size [w, h] (image_grid_thw[1:] * 14) to each record"
            )
        return families.ParseContext(
            image_size=(int(size[0]), int(size[1])),
            model_input_size=(int(input_size[0]), int(input_size[1])) if input_size is not None else None,
        )

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        out = []
        for s in samples:
            rec = self._record(s)
            if rec is None:
                out.append(Prediction(error=self._missing(s)))
                continue
            text = rec["output"]
            if not families.is_family(self.parser) and not self.overrides.parser:
                out.append(Prediction(raw=text, error=(
                    f"--uiground-replay-parser {self.parser!r} is not a model family ({', '.join(families.names())}) "
                    f"and this suite has no [models.{self.parser}] parser to read it; use a family, or a suite "
                    "that declares that parser")))
                continue
            try:
                parsed = self.overrides.parse(self.parser, text, s.task, self._context(s, rec))
            except (ValueError, ImageError) as exc:  # one sample's bad record or image fails only it
                out.append(Prediction(raw=text, error=str(exc)))
                continue
            out.append(to_prediction(parsed, text))
        return out

    def fingerprint(self) -> dict[str, Any]:
        return {"model": "replay", "parser": self.parser, "file": str(self.path), "sha256": self.sha256}


def check_options(options: ModelOptions) -> None:
    """What ``--model replay`` needs, checked once at start-up (``options.check_model``) and by :func:`create`."""
    if not options.predictions:
        raise ModelLoadError("--model replay needs --uiground-predictions FILE.jsonl (records with sample_id "
                             "and output)")
    path = Path(options.predictions)
    if not path.is_file():
        raise ModelLoadError(f"--uiground-predictions {options.predictions!r}: no such file")
    read_records(path)  # a damaged file fails here, once, before any test
    if not options.replay_parser:
        raise ModelLoadError(
            f"--model replay needs --uiground-replay-parser NAME, the family whose parser reads the outputs; "
            f"known: {', '.join(families.names())}"
        )
    if not families.is_family(options.replay_parser) and not _NAME.fullmatch(options.replay_parser):
        raise ModelLoadError(
            f"--uiground-replay-parser {options.replay_parser!r} is unknown; known: {', '.join(families.names())}, "
            "or a name a suite declares a parser for in [models.<name>] (letters, digits, - and _)"
        )


def create(options: ModelOptions) -> ReplayModel:
    check_options(options)
    assert options.predictions is not None and options.replay_parser is not None
    return ReplayModel(Path(options.predictions), options.replay_parser)
