"""kplugin build: a static kube-scheduler binary and image for the project."""

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from kplugin.cli import app

EPILOG = """Examples:

  kplugin build --k8s 1.28.3

  kplugin build ./gpu-aware --builder local --platform linux/amd64,linux/arm64

  kplugin build --json --output dist/
"""


@app.command(epilog=EPILOG)
def build(
    path: Annotated[Path, typer.Argument(help="The project directory.")] = Path("."),
    k8s: Annotated[
        str | None, typer.Option("--k8s", help="Kubernetes version to build for (must match the project's).")
    ] = None,
    builder: Annotated[
        str, typer.Option(help="auto (Docker if a daemon answers, else local), docker, local.")
    ] = "auto",
    image: Annotated[
        str | None, typer.Option("--image", "--tag", "-t", help="Image tag. Default: kplugin.yaml's.")
    ] = None,
    go_image: Annotated[str | None, typer.Option("--go-image", help="Go builder image.")] = None,
    base_image: Annotated[str, typer.Option("--base-image", help="Final stage base image.")] = (
        "gcr.io/distroless/static:nonroot"
    ),
    platform: Annotated[
        str | None, typer.Option("--platform", help="linux/ARCH[,linux/ARCH...]. Default: this machine's.")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", help="Keep the binary in this directory.")] = None,
    push: Annotated[bool, typer.Option("--push", help="Push the image to the registry in its tag.")] = False,
    network: Annotated[str | None, typer.Option("--network", help="Network for docker build RUN steps.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show the full build log.")] = False,
    log_file: Annotated[Path | None, typer.Option("--log-file", help="Write the full build log here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
) -> None:
    """Build the project's kube-scheduler (static) and its image, then verify the binary."""
    from kplugin import build as core
    from kplugin import project as projects
    from kplugin.cli.console import say, status
    from kplugin.errors import UsageError
    from kplugin.versions import resolve

    project = projects.load(path)
    if k8s is not None and resolve(k8s).version != project.version:
        raise UsageError(
            f"--k8s {k8s}: the project is pinned to Kubernetes {project.version}; "
            "building for another version is not supported yet"
        )
    platforms = core.parse_platforms(platform)
    log_lines: list[str] = []

    def log(line: str) -> None:
        log_lines.append(line)
        if verbose:
            sys.stderr.write(line + "\n")

    request = core.BuildRequest(
        project=project,
        builder=builder,
        platforms=platforms,
        image=image,
        go_image=go_image,
        base_image=base_image,
        output=output,
        push=push,
        network=network,
        log=log,
    )
    chosen = core.choose_builder(builder)
    started = time.monotonic()
    try:
        with status(f"building with {chosen[0]} ({chosen[1]})") as update:
            result = core.build(
                request, lambda step: update(f"{step} ({time.monotonic() - started:.0f}s)"), chosen=chosen
            )
    finally:
        if log_file is not None:
            log_file.write_text("\n".join(log_lines) + "\n")
    if as_json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2, sort_keys=True) + "\n")
        return
    say(f"Built with {result.builder} ({result.reason}) in {time.monotonic() - started:.0f}s")
    if result.image:
        say(f"  image     {result.image} ({result.image_id}) user {result.image_user}")
    for binary in result.binaries:
        say(f"  binary    {binary.path} [{binary.platform}, static, {binary.size / 1e6:.1f} MB]")
        say(f"  sha256    {binary.sha256}")
        say(f"  go        {binary.go_version}   kubernetes {result.kubernetes}")
        if binary.version is None:
            say(f"  note      {binary.platform} binary not run on this machine: --version not checked")
    if result.pushed:
        say(f"  pushed    {result.image}")
