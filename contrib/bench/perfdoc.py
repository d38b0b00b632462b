"""Writing a benchmark's results into docs/performance.md: each benchmark owns
one section between its own START/END markers, replaced in place on the next run."""
import pathlib
import re


def write_section(path, heading, start, end, text):
    """text starts with `start` and ends with `end`; a new section goes last under `## heading`."""
    path = pathlib.Path(path)
    doc = path.read_text() if path.exists() else "# Performance\n"
    if start in doc:
        doc = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: text, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n## " + heading + "\n\n" + text + "\n"
    path.write_text(doc)
