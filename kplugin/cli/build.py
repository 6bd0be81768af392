"""kplugin build: a static kube-scheduler binary and image for the project."""

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.options import ProjectPath, RetargetTemplate, json_option, k8s_option, load_for_version

if TYPE_CHECKING:  # the command's modules load only when it runs
    from kplugin.builder import BuilderName, BuildResult, Choice

EPILOG = """Examples:

  kplugin build --k8s 1.28.3

  kplugin build ./gpu-aware --builder local --platform linux/amd64,linux/arm64

  kplugin build --json --output dist/

  kplugin build --k8s 1.37 --builder local    # another version: bin/v1.37.2/kube-scheduler
"""


K8s = Annotated[
    str | None,
    k8s_option(
        help="Kubernetes version to build for. Default: the project's. Another version builds from a "
        "retargeted copy; the project is not changed.",
    ),
]
Builder = Annotated[str, typer.Option(help="auto (Docker if a daemon answers, else local), docker, local.")]
Image = Annotated[str | None, typer.Option("--image", "--tag", "-t", help="Image tag. Default: kplugin.yaml's.")]
GoImage = Annotated[str | None, typer.Option("--go-image", help="Go builder image.")]
BaseImage = Annotated[str, typer.Option("--base-image", help="Final stage base image.")]
Platforms = Annotated[
    str | None, typer.Option("--platform", help="linux/ARCH[,linux/ARCH...]. Default: this machine's.")
]
Output = Annotated[Path | None, typer.Option("--output", help="Keep the binary in this directory.")]
Push = Annotated[bool, typer.Option("--push", help="Push the image to the registry in its tag.")]
Network = Annotated[str | None, typer.Option("--network", help="Network for docker build RUN steps.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Show the full build log.")]
LogFile = Annotated[Path | None, typer.Option("--log-file", help="Write the full build log here.")]
Json = Annotated[bool, json_option(help="Print the result as one JSON object.")]
Cgo = Annotated[
    bool,
    typer.Option("--cgo", help="CGO_ENABLED=1, where a dependency needs cgo: a dynamic binary (--builder local)."),
]


@app.command(epilog=EPILOG)
def build(
    path: ProjectPath = Path("."),
    k8s: K8s = None,
    builder: Builder = "auto",
    image: Image = None,
    go_image: GoImage = None,
    base_image: BaseImage = "gcr.io/distroless/static:nonroot",
    platform: Platforms = None,
    output: Output = None,
    push: Push = False,
    network: Network = None,
    verbose: Verbose = False,
    log_file: LogFile = None,
    as_json: Json = False,
    template: RetargetTemplate = None,
    cgo: Cgo = False,
) -> None:
    """Build the project's kube-scheduler (static) and its image, then verify the binary."""
    from kplugin import builder as builds
    from kplugin.builder.ready import Nothing, ready
    from kplugin.cli.flags import render
    from kplugin.cli.progress import Reporter
    from kplugin.core import safefs
    from kplugin.core.errors import Setting, parse_choice
    from kplugin.model.spec import validate_image

    if image is not None:
        validate_image(image)
    _check_options(go_image, base_image, network, output)
    log_target = safefs.output_target(log_file, "--log-file", force=True) if log_file is not None else None
    pinned, target = load_for_version(path, template, k8s, adopted=True)
    platforms = builds.parse_platforms(platform)
    name = parse_choice(builds.BuilderName, builder, Setting.BUILDER)  # an enum from the edge on
    choice = _choice(name, cgo)
    log = _Log(verbose)
    request = builds.BuildRequest(
        project=pinned,
        builder=name,
        platforms=platforms,
        image=image,
        go_image=go_image,
        base_image=base_image,
        output=output,
        push=push,
        network=network,
        log=log.line,
        cgo=cgo,
    )
    try:
        with (
            Reporter(f"building with {choice.builder} ({render(choice.reason)})") as reporter,
            ready(pinned, target, request, choice, Nothing(), reporter) as done,
        ):
            result = done.built
    finally:
        if log_target is not None:
            safefs.write_atomic(log_target, ("\n".join(log.lines) + "\n").encode())
    _print(result, as_json, time.monotonic() - log.started)


def _choice(builder: "BuilderName", cgo: bool) -> "Choice":
    """The builder: --builder's, local for --cgo (refused with docker)."""
    from kplugin import builder as builds
    from kplugin.core.errors import UsageError

    if cgo and builder is builds.BuilderName.DOCKER:
        raise UsageError(
            "--cgo builds with --builder local (an image of a dynamic binary needs a base image with the C "
            "libraries, which kplugin does not make yet)"
        )
    if cgo:  # auto or local
        return builds.Choice(builds.BuilderName.LOCAL, "--cgo: the local Go toolchain and C compiler")
    return builds.choose_builder(builder)


def _check_options(go_image: str | None, base_image: str, network: str | None, output: Path | None) -> None:
    from kplugin.core.errors import UsageError

    for option, value in (("--go-image", go_image), ("--base-image", base_image), ("--network", network)):
        if value is not None and not value.strip():  # an unset shell variable, never the default
            raise UsageError(f"{option} {value!r} is empty; give a value, or leave the option out for its default")
    if output is not None and output.exists() and not output.is_dir():
        raise UsageError(f"--output {output} is not a directory; give the directory to keep the binary in")


class _Log:
    """The build's log: kept for --log-file, shown with --verbose."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.lines: list[str] = []
        self.started = time.monotonic()

    def line(self, text: str) -> None:
        self.lines.append(text)
        if self.verbose:
            sys.stderr.write(text + "\n")


def _print(result: "BuildResult", as_json: bool, seconds: float) -> None:
    from kplugin.cli.console import out, say
    from kplugin.cli.flags import render

    if as_json:
        out(json.dumps({**result.as_dict(), "reason": render(result.reason)}, indent=2, sort_keys=True) + "\n")
        return
    say(f"Built with {result.builder} ({render(result.reason)}) in {seconds:.0f}s")
    if result.image:
        say(f"  image     {result.image} ({result.image_id}) user {result.image_user}")
    for binary in result.binaries:
        linked = "static" if binary.static else "dynamic (cgo): it needs the C libraries at run time"
        say(f"  binary    {binary.path} [{binary.platform}, {linked}, {binary.size / 1e6:.1f} MB]")
        say(f"  sha256    {binary.sha256}")
        say(f"  go        {binary.go_version}   kubernetes {result.kubernetes}")
        if binary.version is None:
            say(f"  note      {binary.platform} binary not run on this machine: --version not checked")
    if result.pushed:
        say(f"  pushed    {result.image}")
