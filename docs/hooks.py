"""MkDocs hook: the reference pages, generated from the code at build time (arbiter/cli/reference_pages.py).

Nothing generated is written under docs/: each page is added to the build as a file of its own, so the
site's reference cannot drift from the CLI, the environment table, the profile models, the issue-code
catalogues or the JSON Schemas.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any) -> Files:
    from arbiter.cli.reference_pages import pages

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files
