"""Content-addressed value encoding: a value becomes (hash, encoding, bytes), stored once per hash.

Strings stay text, small JSON-able values stay structured JSON, anything else falls back to a
readable `repr`. Large payloads are zlib-compressed; the encoding records how to read them back.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

TEXT = "text"
JSON = "json"
REPR = "repr"
COMPRESSED_SUFFIX = "+z"

#: Payloads above this many bytes are compressed before storage.
COMPRESS_ABOVE = 4096

_json_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode


def _not_json(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# The C encoder built once: json's Python wrapper rebuilds it on every call, which triples the cost.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
if _c_make_encoder is not None:
    _c_encode = _c_make_encoder(
        None, _not_json, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )

    def fast_json(value: Any) -> str:
        return "".join(_c_encode(value, 0))
else:  # pragma: no cover - CPython always has the C accelerator
    fast_json = _json_dumps

_blake2b = hashlib.blake2b
_JSON_SCALARS = (int, float, bool, type(None))
_JSON_TYPES = (dict, list, tuple, *_JSON_SCALARS)  # built once: a literal here rebuilt it per value
_PERSON = {name: name.encode() for name in (TEXT, JSON, REPR)}

# Strings cache their hash, so looking one up here is cheaper than hashing its bytes again:
# a prompt recorded ten thousand times is encoded once.
_text_cache: dict[str, tuple[str, str, bytes]] = {}
_TEXT_CACHE_LIMIT = 4096


def encode_value(value: Any) -> tuple[str, str, bytes]:
    """Encode a value for storage and return (content hash, encoding, payload bytes)."""
    if type(value) is str:
        cached = _text_cache.get(value)
        if cached is not None:
            return cached
        encoded = _finish(TEXT, value.encode("utf-8", "surrogatepass"))
        if len(_text_cache) >= _TEXT_CACHE_LIMIT:
            _text_cache.clear()
        _text_cache[value] = encoded
        return encoded
    if isinstance(value, _JSON_TYPES):
        try:
            return _finish(JSON, fast_json(value).encode("utf-8", "surrogatepass"))
        except (TypeError, ValueError, RecursionError):
            pass
    return _finish(REPR, readable_text(value).encode("utf-8", "surrogatepass"))


def content_hash(encoding: str, data: bytes) -> str:
    """The content address of an uncompressed payload in a base encoding (text, json or repr)."""
    return _blake2b(data, digest_size=16, person=_PERSON[encoding]).hexdigest()


def _finish(encoding: str, data: bytes) -> tuple[str, str, bytes]:
    # content_hash inlined: this runs for every new value recorded.
    digest = _blake2b(data, digest_size=16, person=_PERSON[encoding]).hexdigest()
    if len(data) > COMPRESS_ABOVE:
        return digest, encoding + COMPRESSED_SUFFIX, zlib.compress(data, 1)
    return digest, encoding, data


def decode_value(encoding: str, data: bytes) -> Any:
    """Turn a stored payload back into a value (repr-encoded objects come back as their text)."""
    if encoding.endswith(COMPRESSED_SUFFIX):
        encoding, data = encoding[: -len(COMPRESSED_SUFFIX)], zlib.decompress(data)
    text = bytes(data).decode("utf-8", "surrogatepass")
    if encoding == JSON:
        return json.loads(text)
    return text


def readable_text(value: Any) -> str:
    """A readable text form of an arbitrary object: pydantic/dataclass fields when it has them."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return f"{type(value).__name__}({_json_dumps(dump(mode='json'))})"
        except Exception:
            pass
    try:
        return repr(value)
    except Exception as exc:
        return f"<{type(value).__name__} object (repr failed: {exc})>"


def value_text(value: Any) -> str:
    """A value as text for matching and display: strings as they are, structures as JSON."""
    if isinstance(value, str):
        return value
    try:
        return _json_dumps(value)
    except (TypeError, ValueError):
        return readable_text(value)


#: The keys under which a dict-valued message or memory keeps its text (attribution reads them too).
TEXT_KEYS = ("memory", "content", "text", "message", "body", "utterance", "msg")


def display_text(value: Any) -> str:
    """A value as a person reads it in an explanation: a memory's own text rather than its JSON, list
    items and lines separated by ' / ', and no literal backslash-n from a stored escape."""
    if value is None:
        return ""
    if isinstance(value, str):
        return " / ".join(line.strip() for line in value.replace("\\n", "\n").split("\n") if line.strip())
    if isinstance(value, dict):
        for key in TEXT_KEYS:
            if isinstance(value.get(key), str):
                return display_text(value[key])
        return value_text(value)
    if isinstance(value, (list, tuple)):
        return " / ".join(display_text(item) for item in value)
    return value_text(value)
