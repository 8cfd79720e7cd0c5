"""What dump_debug_info writes, for the single-stage and the pipelined executables alike."""

from __future__ import annotations

import os
from typing import Union


def write_debug_files(folder: Union[str, os.PathLike], files: dict[str, str]) -> list[str]:
    """Writes each {file name: text} into `folder` (made when missing); returns the paths."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for file_name, text in files.items():
        path = os.path.join(folder, file_name)
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        paths.append(path)
    return paths
