"""alpa_cpp.Plan: a plan document as a Python object, with what `alpa explain` and
`alpa plan --report` make of it.

The document is the one `alpa plan -o plan.json` writes (docs/pipeshard.md): a dict here,
`to_json()` / `save()` for the file that `alpa explain` and `alpa run --plan` read back.
"""

from __future__ import annotations

import json
import os
from typing import Any, Union

from alpa_cpp import _core


class Plan:
    """A plan document: `document` (the dict), `text` (as `alpa plan` prints it), `explain()`
    and `report_html()`."""

    def __init__(self, document_json: str, text: str = "", timeline_svg: str = ""):
        self._json = document_json
        self.document: dict[str, Any] = json.loads(document_json)
        self.text = text
        self._timeline_svg = timeline_svg

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Plan":
        """A document saved by `save` or `alpa plan -o` (its report has no timeline)."""
        with open(path, encoding="utf-8") as saved:
            return cls(saved.read())

    @property
    def step_time_s(self) -> float:
        return self.document["estimate"]["step_time_s"]

    @property
    def stages(self) -> list[dict]:
        """A pipelined plan's stages: layers, devices, logical mesh, times and memory."""
        return self.document.get("stages", [])

    def to_json(self) -> str:
        return self._json

    def save(self, path: Union[str, os.PathLike]) -> None:
        with open(path, "w", encoding="utf-8") as out:
            out.write(self._json + "\n")

    def explain(self) -> str:
        """Why the plan is what it is (`alpa explain`): each stage's time and memory, the
        bottleneck, the bubble, and the alternatives it beat."""
        return _core.explain_plan(self._json)[0]

    def explanation(self) -> dict:
        """The same as data (`alpa explain --json`)."""
        return json.loads(_core.explain_plan(self._json)[1])

    def report_html(self) -> str:
        """The plan as one self-contained HTML page (`alpa plan --report`): the cluster coloured
        by stage, the simulated timeline, memory per stage, the stages, the alternatives."""
        return _core.render_plan_report(self._json, self._timeline_svg)

    def write_report(self, path: Union[str, os.PathLike]) -> None:
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.report_html())

    def __str__(self) -> str:
        return self.text or self.explain()

    def __repr__(self) -> str:
        model = self.document.get("model", {}).get("name", "?")
        return (f"Plan({model} on {self.document.get('cluster', '?')}, "
                f"{self.document.get('method', '?')}, step {self.step_time_s:.4g} s)")
