"""kplugin's own Dockerfile for a repository it adopted: the project template's, which a
generated project has as its Dockerfile, rendered for the repository's recorded main
package, with its ENTRYPOINT giving the recorded arguments before the scheduler's flags.
It is written to a temporary directory and handed to docker build with ``-f``: the
repository's own Dockerfiles are neither used nor changed. Beside it, an ignore file
of kplugin's keeps .git and kplugin's own .kplugin/ out of the build context (BuildKit
reads ``<Dockerfile>.dockerignore`` instead of the repository's .dockerignore, which is
written for the repository's own Dockerfile)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kplugin.adopt import gomod
from kplugin.core.errors import Setting, UsageError
from kplugin.generate import scaffold, templating
from kplugin.model.buildfacts import BuildFacts
from kplugin.model.project import Project

TEMPLATE_FILE = "[[cookiecutter.project_name]]/Dockerfile"
IGNORED = (".git", ".kplugin")


def render(project: Project) -> str:
    """The Dockerfile that builds ``project``'s recorded main package, static."""
    import jinja2

    facts = BuildFacts.of(project)
    replaces = gomod.read(project.root).replaces
    outside = sorted(f"{old} => {r.path}" for old, r in replaces.items() if r.outside)
    if outside:
        raise UsageError(
            f"{project.root}/go.mod replaces {outside[0]}, outside the repository: a Docker build sees the repository "
            f"alone; build with {Setting.BUILDER} local"
        )
    local = any(r.directory for r in replaces.values())
    context: dict[str, Any] = {
        "k8s_version": str(project.version),
        "k8s_tag": project.version.tag,
        "image": project.image,
        "go_image": facts.go_image,
        "_build": scaffold.build_facts(
            facts, project.main_package, project.scheduler_arguments, download_first=not local
        ),
    }
    template = templating.templates_root() / templating.PROJECT_TEMPLATE
    settings = templating.template_variables(template)["_jinja2_env_vars"]
    environment = jinja2.Environment(
        **settings, keep_trailing_newline=True, undefined=jinja2.StrictUndefined, autoescape=False
    )
    return environment.from_string((template / TEMPLATE_FILE).read_text()).render(cookiecutter=context)


@contextmanager
def written(project: Project) -> Iterator[Path]:
    """The Dockerfile (and its ignore file) in a temporary directory, for the build's time."""
    with tempfile.TemporaryDirectory(prefix="kplugin-dockerfile-") as tmp:
        path = Path(tmp) / "Dockerfile"
        path.write_text(render(project))
        Path(f"{path}.dockerignore").write_text("".join(f"{name}\n" for name in IGNORED))
        yield path
