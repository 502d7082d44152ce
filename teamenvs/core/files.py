"""Writing a file whole: through a temporary file beside it, renamed over it once written.

A write cut short (a full disk, Ctrl-C, a killed process) then leaves the old file or none, never a part of one that a
later run would read as its own, and a link planted where the file goes is replaced by the file, not written through
to whatever it points at. Used for every file that is written in one piece: a report's `results.csv` and `report.md`,
its figures, a bench run's `suite.json`, a replay page, an LLM response-cache entry.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_whole(path: str | Path, data: bytes | str) -> Path:
    """Write `data` (text is written as UTF-8) to `path` through a temporary file in the same folder (unique to this
    call, so processes writing the same file at once each rename a whole one); OSError as the system gives it, the
    temporary file removed."""
    target = Path(path)
    temp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        temp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target
