# The tests import the package from the build tree (ctest sets PYTHONPATH to <build>/python), the
# shared Flax models beside them and the examples' models (examples/jax).
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(1, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "jax"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")
