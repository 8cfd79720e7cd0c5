# The tests import the package from the build tree (ctest sets PYTHONPATH to <build>/python) and
# the shared Flax models beside them.
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("JAX_PLATFORMS", "cpu")
