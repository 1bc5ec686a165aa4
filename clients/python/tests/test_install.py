"""`pip install ./clients/python` really installs the package: into a fresh
virtual environment, offline (no build isolation, so Debian's
python3-setuptools builds it instead of one fetched from PyPI), then imported
from there and nowhere else."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PACKAGE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


class InstallTest(unittest.TestCase):
    def test_offline_pip_install_into_a_venv(self):
        work = tempfile.mkdtemp(prefix="mg-py-install-")
        try:
            source = os.path.join(work, "src")
            # A copy, so the build's by-products never land in the checkout.
            shutil.copytree(PACKAGE_DIR, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
            venv = os.path.join(work, "venv")
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
            env["PIP_NO_INDEX"] = "1"
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
                           check=True, env=env, timeout=120)
            python = os.path.join(venv, "bin", "python")
            done = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", source],
                                  capture_output=True, text=True, env=env, cwd=work, timeout=300)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            probe = (
                "import os, movegate, movegate.receiver, movegate.signing\n"
                "print(os.path.dirname(movegate.__file__))\n"
                "print(movegate.__version__)\n"
                "print(os.path.exists(os.path.join(os.path.dirname(movegate.__file__), 'py.typed')))\n"
            )
            out = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env, cwd=work,
                                 timeout=60, check=True).stdout.split()
            self.assertTrue(out[0].startswith(os.path.realpath(venv)) or out[0].startswith(venv), out)
            self.assertEqual(out[1:], ["0.1.0", "True"])
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
