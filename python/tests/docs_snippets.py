"""The Python snippets of the docs as one script, in the order a reader meets them (for mypy
--strict in test_stubs_and_example.py): each ```python block of docs/python.md and README.md,
the names the docs leave to the reader (x, y, n, ...) given just before their first use."""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/python.md")

# What some snippets use without defining (the reader's own data and settings), given by
# assignment just before the snippet that first uses them: a snippet reuses a name for a value
# of another type (y: numpy labels, then torch labels), as separate examples do.
LEAD_INS = {
    "make_private_with_epsilon": "import torch\n\nd = 784\nx = torch.zeros(8, d, dtype=torch.float64)\n"
                                 "y = torch.ones(8, dtype=torch.float64)\n",
    "planned = hsdp.Run(": "n, b, epochs, p, performed = 60000, 256, 3, 785, 700\n"
                           "eta, L, beta, radius = 0.1, 1.0, 0.25, 100.0\n",
}


def snippets():
    """[(doc, first line of the block's code, code)] for every ```python block."""
    out = []
    for doc in DOCS:
        lines = (REPO / doc).read_text().splitlines()
        code, start = None, 0
        for number, line in enumerate(lines, 1):
            if code is None and re.match(r"^```python\s*$", line):
                code, start = [], number + 1
            elif code is not None and line.startswith("```"):
                out.append((doc, start, "\n".join(code) + "\n"))
                code = None
            elif code is not None:
                code.append(line)
    return out


def script():
    """(the script's text, [(script line, doc, doc line)]) to map mypy's lines back to the docs."""
    text = ""
    where = []
    for doc, start, code in snippets():
        for marker, lead_in in LEAD_INS.items():
            if marker in code:
                text += lead_in
        first = text.count("\n") + 1
        text += code
        where.append((first, doc, start))
    return text, where


def doc_line(line, where):
    """The docs' file and line of the script's `line`."""
    for first, doc, start in reversed(where):
        if line >= first:
            return f"{doc}:{start + line - first}"
    return f"(preamble):{line}"
