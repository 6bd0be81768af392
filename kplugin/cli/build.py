"""kplugin build: a static kube-scheduler binary and image for the project."""

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from kplugin.cli import app
from kplugin.cli.changes import RetargetTemplate, load_for_version

EPILOG = """Examples:

  kplugin build --k8s 1.28.3

  kplugin build ./gpu-aware --builder local --platform linux/amd64,linux/arm64

  kplugin build --json --output dist/

  kplugin build --k8s 1.37 --builder local    # another version: bin/v1.37.2/kube-scheduler
"""


@app.command(epilog=EPILOG)
def build(
    path: Annotated[Path, typer.Argument(help="The project directory.")] = Path("."),
    k8s: Annotated[
        str | None,
        typer.Option(
            "--k8s",
            help="Kubernetes version to build for. Default: the project's. Another version builds from a "
            "retargeted copy; the project is not changed.",
        ),
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
    template: RetargetTemplate = None,
) -> None:
    """Build the project's kube-scheduler (static) and its image, then verify the binary."""
    from contextlib import ExitStack

    from kplugin import build as core
    from kplugin.cli.console import out, say, status
    from kplugin.core.errors import UsageError
    from kplugin.generate import upgrade
    from kplugin.model.spec import validate_image

    if image is not None:
        validate_image(image)
    for option, value in (("--go-image", go_image), ("--base-image", base_image), ("--network", network)):
        if value is not None and not value.strip():  # an unset shell variable, never the default
            raise UsageError(f"{option} {value!r} is empty; give a value, or leave the option out for its default")
    if output is not None and output.exists() and not output.is_dir():
        raise UsageError(f"--output {output} is not a directory; give the directory to keep the binary in")
    log_target = None
    if log_file is not None:
        from kplugin.core import safefs

        log_target = safefs.output_target(log_file, "--log-file", force=True)
    project, target = load_for_version(path, template, k8s)
    platforms = core.parse_platforms(platform)
    chosen = core.choose_builder(builder)
    log_lines: list[str] = []

    def log(line: str) -> None:
        log_lines.append(line)
        if verbose:
            sys.stderr.write(line + "\n")

    started = time.monotonic()
    try:
        with ExitStack() as stack:
            if target.version != project.version:
                pinned = project
                with status(
                    f"retargeting a copy of {pinned.root.name} to Kubernetes {target.version} "
                    "(go mod tidy downloads modules)…"
                ):
                    project = stack.enter_context(upgrade.retargeted(pinned, target))
                if output is None and chosen[0] == "local":
                    output = pinned.root / "bin" / target.version.tag
                say(f"building for Kubernetes {target.version}; {pinned.root.name} stays pinned to {pinned.version}")
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
            with status(f"building with {chosen[0]} ({chosen[1]})") as update:
                result = core.build(
                    request, lambda step: update(f"{step} ({time.monotonic() - started:.0f}s)"), chosen=chosen
                )
    finally:
        if log_target is not None:
            safefs.write_atomic(log_target, ("\n".join(log_lines) + "\n").encode())
    if as_json:
        out(json.dumps(result.as_dict(), indent=2, sort_keys=True) + "\n")
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
