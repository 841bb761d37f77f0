"""The one scrubber of credentials in URLs, for everything the package writes.

A served model's or judge's address may carry a password (``http://user:PW@host/v1``) or a key in
its query (``?api_key=...``). A normal run never shows it: the endpoint a record, a fingerprint or
an error names is :func:`public_url` (the OpenAI-compatible client, the judge, OmniParser's LLM).
Outputs that copy a command line (a shard's ``shard.json``, the merge's "running pytest ..." line)
go through :func:`scrub`, which rewrites every URL in a text the same way, so one rule decides
what a written address may show, whoever writes it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

#: a URL in free text: a scheme, ``://`` and everything up to whitespace, a quote or a comma (a list of endpoints)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>,]+")


def public_url(url: str) -> str:
    """``url`` without user:password or query (where keys sometimes hide). Raises ValueError on a
    malformed address (a bad port)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _public(match: re.Match[str]) -> str:
    url = match.group(0)
    try:
        return public_url(url)
    except ValueError:  # a malformed address still loses its user part and query
        scheme, rest = url.split("://", 1)
        return f"{scheme}://{rest.rsplit('@', 1)[-1].split('?', 1)[0]}"


def scrub(text: str) -> str:
    """``text`` with every URL in it as :func:`public_url` writes it (no password, no query)."""
    return _URL.sub(_public, text)


def scrub_args(args: Sequence[str]) -> list[str]:
    """A command line with every argument scrubbed (:func:`scrub`)."""
    return [scrub(str(a)) for a in args]
