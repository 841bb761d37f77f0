"""Make the committed Label Studio export with Label Studio itself (run once; its output is committed).

Why: the importer was tested only on exports the tests wrote by hand (issue 42); this export is Label Studio's
own, from its own server and its own export code, so a field the tool writes and the tests forgot shows up.

Run with the interpreter of a separate environment holding ``label-studio`` (never the project's venv)::

    python3 -m venv /tmp/lsvenv && /tmp/lsvenv/bin/pip install label-studio
    /tmp/lsvenv/bin/python tests/data/exports/label-studio/make_export.py

It generates two screenshots, starts ``label-studio start`` on a scratch data folder, creates a project whose
labelling config has rectangle labels and a per-region ``instruction`` text area, brings one screenshot in by
upload (``/data/upload/...``) and one by a local-files storage (``/data/local-files/?d=...``), posts one
annotation per task through the REST API holding the regions of ``boxes.json`` (pixels, converted to the percent
of the image the editor writes), and saves ``GET /api/projects/ID/export?exportType=JSON`` as ``export.json``
and ``exportType=JSON_MIN`` as ``export-min.json``, beside the screenshots as the importer finds them.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import requests  # Label Studio's own dependency: present in its environment
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
TOKEN = "0123456789abcdef0123456789abcdef01234567"
CONFIG = """<View>
  <Image name="image" value="$image"/>
  <RectangleLabels name="label" toName="image">
    <Label value="button"/>
    <Label value="icon"/>
    <Label value="link"/>
  </RectangleLabels>
  <TextArea name="instruction" toName="image" perRegion="true" editable="true" maxSubmissions="1"/>
</View>"""


def screenshot(path: Path, size: tuple[int, int], boxes: list[dict]) -> None:
    """A plain screen with the boxes drawn in, so a human looking at the file sees what was labelled."""
    img = Image.new("RGB", size, (245, 246, 248))
    draw = ImageDraw.Draw(img)
    for box in boxes:
        draw.rectangle([round(v) for v in box["bbox"]], fill=(66, 133, 244), outline=(20, 20, 20))
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, optimize=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def regions(boxes: list[dict], width: int, height: int) -> list[dict]:
    """The results the editor writes for a drawn box and its per-region text: percent of the image, one id."""
    out: list[dict] = []
    for box in boxes:
        x1, y1, x2, y2 = box["bbox"]
        geometry = {"x": x1 * 100 / width, "y": y1 * 100 / height, "width": (x2 - x1) * 100 / width,
                    "height": (y2 - y1) * 100 / height, "rotation": 0}
        common = {"id": box["region"], "to_name": "image", "original_width": width, "original_height": height,
                  "image_rotation": 0, "origin": "manual"}
        out.append({**common, "from_name": "label", "type": "rectanglelabels",
                    "value": {**geometry, "rectanglelabels": [box["label"]]}})
        out.append({**common, "from_name": "instruction", "type": "textarea",
                    "value": {**geometry, "text": [box["instruction"]]}})
    return out


def main() -> int:
    spec = json.loads((HERE / "boxes.json").read_text(encoding="utf-8"))
    bin_dir = Path(sys.executable).parent
    work = Path(tempfile.mkdtemp(prefix="lsmake-"))  # removed at the end
    for shot in spec["screens"]:
        screenshot(work / "files" / shot["source"], tuple(shot["size"]), shot["boxes"])
    port = free_port()
    env = {**os.environ, "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
           "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(work / "files"), "LABEL_STUDIO_BASE_DATA_DIR": str(work)}
    server = subprocess.Popen([str(bin_dir / "label-studio"), "start", "--no-browser", "--port", str(port),
                               "--data-dir", str(work), "--username", "maker@example.com",
                               "--password", "make-export-1", "--user-token", TOKEN,
                               "--enable-legacy-api-token"], env=env, stdout=open(work / "server.log", "w"),
                              stderr=subprocess.STDOUT)
    api = f"http://127.0.0.1:{port}/api"
    auth = {"Authorization": f"Token {TOKEN}"}
    try:
        for _ in range(600):
            try:
                if requests.get(f"{api}/version", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            time.sleep(1)
        version = requests.get(f"{api}/version", timeout=10).json()
        project = requests.post(f"{api}/projects", headers=auth, timeout=30,
                                json={"title": "uiground real export", "label_config": CONFIG}).json()
        pid = project["id"]
        by_source = {s["source"]: s for s in spec["screens"]}
        for shot in spec["screens"]:
            if shot["how"] == "upload":
                with open(work / "files" / shot["source"], "rb") as fh:
                    r = requests.post(f"{api}/projects/{pid}/import", headers=auth, timeout=60,
                                      files={shot["source"]: (Path(shot["source"]).name, fh, "image/png")})
                r.raise_for_status()
        local = [s for s in spec["screens"] if s["how"] == "local-files"]
        if local:
            folder = work / "files" / Path(local[0]["source"]).parent
            r = requests.post(f"{api}/storages/localfiles", headers=auth, timeout=30,
                              json={"project": pid, "path": str(folder), "regex_filter": r".*\.png",
                                    "use_blob_urls": True, "title": "screens"})
            r.raise_for_status()
            requests.post(f"{api}/storages/localfiles/{r.json()['id']}/sync", headers=auth,
                          timeout=60).raise_for_status()
        tasks = requests.get(f"{api}/tasks", headers=auth, params={"project": pid, "page_size": 100},
                             timeout=30).json()
        tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
        for task in tasks:
            url = task["data"]["image"]
            shot = next(s for name, s in by_source.items() if url.endswith(Path(name).name))
            w, h = shot["size"]
            requests.post(f"{api}/tasks/{task['id']}/annotations", headers=auth, timeout=30,
                          json={"result": regions(shot["boxes"], w, h)}).raise_for_status()
        for kind, name in (("JSON", "export.json"), ("JSON_MIN", "export-min.json")):
            r = requests.get(f"{api}/projects/{pid}/export", headers=auth, params={"exportType": kind},
                             timeout=60)
            r.raise_for_status()
            (HERE / name).write_bytes(r.content)  # byte for byte as Label Studio wrote it
        # the screenshots as a user holds them beside the export: the upload under the name Label Studio gave it
        # (8 hex characters and '-' before the file's name), the local file at the path ?d= names
        for task in tasks:
            url = task["data"]["image"]
            if url.startswith("/data/upload/"):
                stored = work / "media" / "upload" / url.split("/data/upload/", 1)[1]
                shutil.copy2(stored, HERE / stored.name)
            else:
                rel = url.split("?d=", 1)[1]
                (HERE / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(work / "files" / rel, HERE / rel)
        (HERE / "VERSION").write_text(json.dumps({"label-studio": version.get("release"),
                                                  "label-studio-sdk": metadata.version("label-studio-sdk"),
                                                  "python": sys.version.split()[0]}, indent=1) + "\n")
        print(f"Label Studio {version.get('release')}: wrote {HERE / 'export.json'}")
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
