"""`pip install .`: installs the verity Python package that the CMake build
makes in build/python/verity (the extension module and its Python files).

It runs CMake first (configure on first use, then the verity_python target),
so it works offline with Debian's packages: there is deliberately no
pyproject.toml, so pip uses the setuptools and wheel installed by
scripts/setup.sh instead of downloading them into an isolated build
environment. In a venv, create it with `python3 -m venv --system-site-packages`
so numpy (and setuptools) come from Debian. VERITY_BUILD_DIR picks another
CMake build directory; VERITY_BUILD_JOBS the build parallelism.
"""
import os
import pathlib
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent
(ROOT / "build" / "setuptools").mkdir(parents=True, exist_ok=True)  # build_base, egg_base below
BUILD = pathlib.Path(os.environ.get("VERITY_BUILD_DIR") or ROOT / "build")
PACKAGE = BUILD / "python" / "verity"


def project_version():
    for line in (ROOT / "CMakeLists.txt").read_text().splitlines():
        if line.startswith("project(verity VERSION "):
            return line.split()[2]
    raise RuntimeError("CMakeLists.txt: no 'project(verity VERSION x.y.z' line")


class BuildWithCMake(build_py):
    """Builds the extension with the project's CMake build, then copies the package."""

    def run(self):
        if not (BUILD / "build.ninja").exists():
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(BUILD), "-G", "Ninja",
                                   "-DCMAKE_BUILD_TYPE=Release"])
        jobs = os.environ.get("VERITY_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.check_call(["cmake", "--build", str(BUILD), "--target", "verity_python", "-j", jobs])
        target = pathlib.Path(self.build_lib) / "verity"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(PACKAGE, target)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled module: tag it for this platform and Python."""

    def has_ext_modules(self):
        return True


setup(
    name="verity",
    version=project_version(),
    description="Retrieve fast, verify identity: two-stage search with token-map verification",
    packages=["verity"],
    package_dir={"verity": "python/verity"},
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    python_requires=">=3.9",
    install_requires=["numpy"],
    options={"build": {"build_base": "build/setuptools"}, "egg_info": {"egg_base": "build/setuptools"}},
    zip_safe=False,
)
