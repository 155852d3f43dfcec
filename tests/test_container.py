"""The container's build, as far as it can be checked without a Docker engine (none runs where the
tests do). The Dockerfile's own steps are read from it and run here with `sh`:

- the build stage's wheel step, on a copy of what its COPY lines copy (less what .dockerignore
  leaves out: extensions compiled in place, caches), must build a wheel that holds the compiled
  page walk, a shared object, and must fail, saying so, when the extension does not build (a C
  compiler that always fails, CC=false: setup.py lets the install go on without it);
- the image's check that the compiled walk is the one a crawl runs, with the `crawl` entry point,
  run in a virtual environment of its own that has the wheel installed. Its dependencies come
  from the environment running the tests (a .pth line), not from a download.

Not checked here: the base image, apt-get, the user, the volume, and `docker run` itself.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

EXTENSION = re.compile(r"crawler/page/_pagescan\.[^/]+\.so")
CJK_EXTENSION = re.compile(r"crawler/output/_cjkmark\.[^/]+\.so")


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, its arguments) in order: continuation lines joined, comments dropped (Docker
    drops comment lines inside a continuation too)."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in dockerfile.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("#") or (not line.strip() and not pending):
            continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        whole = (pending + line).strip()
        pending = ""
        name, _, arguments = whole.partition(" ")
        found.append((name.upper(), arguments.strip()))
    return found


def stages(dockerfile: Path) -> list[list[tuple[str, str]]]:
    """The instructions of each stage, FROM first."""
    split: list[list[tuple[str, str]]] = []
    for instruction in instructions(dockerfile):
        if instruction[0] == "FROM":
            split.append([])
        split[-1].append(instruction)
    return split


def build_context(repo: Path, build_stage: list[tuple[str, str]], into: Path) -> Path:
    """What the build stage's COPY lines put in its WORKDIR, copied from the repository."""
    into.mkdir()
    left_out = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    for name, arguments in build_stage:
        if name != "COPY":
            continue
        *sources, _destination = shlex.split(arguments)
        for source in sources:
            if (repo / source).is_dir():
                shutil.copytree(repo / source, into / source, ignore=left_out)
            else:
                shutil.copy2(repo / source, into / source)
    return into


def run_step(
    command: str, cwd: Path, wheels: Path, **environment: str
) -> subprocess.CompletedProcess[str]:
    """A RUN step of the Dockerfile under `sh`, with /wheels at `wheels` and this interpreter's
    environment first on the PATH (its python and pip)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        ["sh", "-c", command.replace("/wheels", str(wheels))],
        cwd=cwd,
        env={**os.environ, "PATH": path, **environment},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def offline(done: subprocess.CompletedProcess[str]) -> bool:
    """pip could not get the build backend (setuptools, into an isolated build environment)."""
    return "No matching distribution found for setuptools" in done.stderr + done.stdout


@pytest.mark.slow  # two wheel builds, about 20 s
def test_the_wheel_step_keeps_the_compiled_walk_and_fails_without_it(
    repo: Path, tmp_path: Path
) -> None:
    build_stage, image_stage = stages(repo / "Dockerfile")[:2]
    (wheel_step,) = [arguments for name, arguments in build_stage if "pip wheel" in arguments]

    built = run_step(wheel_step, build_context(repo, build_stage, tmp_path / "src"), tmp_path / "w")
    if offline(built):
        pytest.skip("pip could not download setuptools for the isolated build")
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "w").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert [name for name in names if EXTENSION.fullmatch(name)], names
    assert [name for name in names if CJK_EXTENSION.fullmatch(name)], names
    assert "crawler/page/_pagescan.c" in names  # which the old check matched, built or not

    # No compiler: setup.py builds the wheel all the same; the step must stop the image.
    failed = run_step(
        wheel_step, build_context(repo, build_stage, tmp_path / "bare"), tmp_path / "w2", CC="false"
    )
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert "the compiled page walk did not build" in failed.stderr
    (bare,) = (tmp_path / "w2").glob("*.whl")
    assert not [name for name in zipfile.ZipFile(bare).namelist() if EXTENSION.fullmatch(name)]

    # The image's check, with the entry point the image runs, from the wheel in a venv of its own.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = ["install", "--no-deps", "--no-index", "--quiet", str(wheel)]
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), *install], check=True)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies, from the environment running the tests: after the venv's own packages,
    # and without that environment's .pth files (its editable install of crawler).
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", "utf-8")
    (check_step,) = [arguments for name, arguments in image_stage if "crawl --version" in arguments]
    checked = subprocess.run(
        ["sh", "-c", check_step],
        cwd=tmp_path,
        env={**os.environ, "PATH": os.pathsep.join([str(venv / "bin"), os.environ["PATH"]])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("crawl ") and "page walk compiled" in checked.stdout
    where = subprocess.run(
        [str(python), "-c", "import crawler.page._pagescan as m; print(m.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(site)


def test_the_image_runs_as_a_user_who_owns_the_data_volume(repo: Path) -> None:
    """Read, not run: the last stage's user, working directory and volume agree with
    output.data_dir's default."""
    from crawler.config import OutputConfig

    image = dict(reversed(stages(repo / "Dockerfile")[-1]))  # the first of each instruction
    runs = [arguments for name, arguments in stages(repo / "Dockerfile")[-1] if name == "RUN"]
    workdir, user = image["WORKDIR"], image["USER"]
    volume = f"{workdir}/{OutputConfig().data_dir}"
    assert image["VOLUME"] == volume
    assert user != "root"
    assert any(f"chown -R {user}:{user} {workdir}" in run and volume in run for run in runs)
    assert image["ENTRYPOINT"] == '["crawl"]'
