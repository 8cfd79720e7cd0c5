"""The package itself: its version is the CLI's, and a parsed module reads back."""

import os
import subprocess
import sys

import pytest

import alpa_cpp


def test_python_m_alpa_cpp_version_matches_the_cli():
    ours = subprocess.run([sys.executable, "-m", "alpa_cpp", "--version"], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert ours == f"alpa {alpa_cpp.__version__}"
    cli = os.environ.get("ALPA_CLI")
    if not cli:
        pytest.skip("ALPA_CLI (set by ctest) names the alpa binary to compare with")
    assert ours == subprocess.run([cli, "--version"], check=True, capture_output=True,
                                  text=True).stdout.strip()


def test_a_module_prints_back_and_lists_its_parameters():
    text = """HloModule add
ENTRY main {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  ROOT sum = f32[4]{0} add(a, b)
}
"""
    module = alpa_cpp.Module(text, "add.hlo")
    assert module.parameters == [("a", "f32[4]"), ("b", "f32[4]")]
    assert alpa_cpp.Module(module.text()).text() == module.text()


def test_a_cluster_knows_its_devices():
    assert alpa_cpp.Cluster("local:4").device_count == 4
    assert alpa_cpp.Cluster("p3.16xlarge:2x8").device_count == 16
    assert "p3.16xlarge" in alpa_cpp.Cluster("p3.16xlarge:2x8").json()
