"""alpa_cpp.Cluster: the devices a plan is for."""

from alpa_cpp import _core


class Cluster:
    """The devices a plan is for: "local:4" (in-process devices, which run it), a preset such
    as "p3.16xlarge:2x8" or "dgx-h100:1x8" (planned for), or a cluster JSON file's path.
    A string that does not parse raises ValueError saying what is accepted."""

    def __init__(self, spec: str):
        self._core = _core.Cluster(spec)

    @property
    def device_count(self) -> int:
        return self._core.device_count

    @property
    def spec_text(self) -> str:
        return self._core.spec_text

    def json(self) -> str:
        """The cluster as a cluster JSON file writes it."""
        return self._core.json()

    def __repr__(self) -> str:
        return repr(self._core)
