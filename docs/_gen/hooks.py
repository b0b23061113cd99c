"""mkdocs hooks: docstrings and schemas cite the papers by the file names of the project's
paper collection and use Sphinx roles (``:class:`~a.B```); on the site the roles become plain
code and each paper file name its short name, linked to the list of papers with full titles."""
from __future__ import annotations

import re

from loopmodel.fileio.machine_reference import PAPERS

_ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|obj):<code>(~?)([^<]*)</code>")
_ANCHORS = {"kerncraft-tool-paper.txt": "kerncraft", "cross-architecture-machine-models.txt": "cross-architecture",
            "ecm-model-slides.txt": "ecm-slides", "benchmark-based-coherence-model.txt": "coherence",
            "roofline-measurement-thesis.txt": "roofline-thesis"}


_PRE = re.compile(r"(<pre\b.*?</pre>)", re.S)


def _prose(html: str, up: str) -> str:
    html = _ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>", html)
    for name, (short, _) in PAPERS.items():
        link = f'<a href="{up}concepts/papers/#{_ANCHORS[name]}">{short}</a>'
        html = html.replace(f"<code>{name}</code>", link).replace(name, link)
    return html


def on_page_content(html, page, config, files):
    """Outside code blocks (which show what the commands print, as they print it): Sphinx roles
    as code, paper file names as linked short names."""
    up = "../" * page.url.count("/")
    return "".join(part if part.startswith("<pre") else _prose(part, up) for part in _PRE.split(html))
