#!/usr/bin/env python3
"""Fails on any docs link, cited file or cited section that does not resolve.

  check-doc-links.py SOURCE_DIR

What it checks, over the source tree (without build directories,
node_modules, fuzz corpora and hidden directories but .ci):
- links in every Markdown page (README.md, docs/, test/vm/README.md): a
  relative target exists, and an #anchor is a heading of the target page,
  by GitHub's slug rules;
- citations, in those pages and in code (C++, shell, Python, CMake,
  JavaScript, YAML, HCL, unit files): `docs/<page>.md`, `README.md` or
  `<dir>/README.md` names an existing file, and a quoted section after it
  (`docs/testing.md "Benchmarks"`, `README, "Tests"`) is one of its
  headings;
- the docs index: README.md links every page under docs/;
- the executed blocks: each `<!-- ... -->` marker a test names is a line of
  the page that test names, followed by a ```sh block, and each such marker
  in a page is named by a test.
Prints one line per failure, and exits 1 if there is any.
"""
import pathlib
import re
import sys

CODE_SUFFIXES = {".h", ".cc", ".sh", ".py", ".cmake", ".js", ".yaml", ".yml", ".hcl", ".service"}
SKIPPED_DIRS = {"node_modules", "corpus"}

FENCE = re.compile(r"^ {0,3}(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:[ \t]+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`[^`]*`")
# A cited page, then maybe a section in double quotes (escaped in a C++
# string), after a comma or a possessive and across a comment's line break.
CITATION = re.compile(
    r"(?<![\w./-])(?P<file>(?:[\w.-]+/)*[\w.-]+\.md|README)(?![\w/-])"
    r"(?:`?(?:'s)?,?(?:[ \t]|\n[ \t]*(?://+|#+|\*(?!/))?)+\\?\"(?P<section>[^\"\\]+)\\?\")?")
COMMENT_BREAK = re.compile(r"[ \t]*\n[ \t]*(?://+|#+|\*(?!/))?[ \t]*")
MARKER_LITERAL = re.compile(r"\"(<!-- [^\"]* -->)\"")
PAGE_LITERAL = re.compile(r"\"((?:[\w.-]+/)*[\w.-]+\.md)\"")
MARKER_LINE = re.compile(r"^<!-- [^\n]*runs the next block as written -->$", re.M)


def source_files(root):
    """Every file under root but in build directories, dependencies, fuzz
    corpora and hidden directories (except .ci, CI's entry point)."""
    stack = [root]
    while stack:
        for path in stack.pop().iterdir():
            if path.is_dir():
                if not (path.name in SKIPPED_DIRS or (path.name.startswith(".") and path.name != ".ci")
                        or (path.parent == root and path.name.startswith("build"))):
                    stack.append(path)
            elif path.is_file():
                yield path


def is_code(path):
    if path.suffix in CODE_SUFFIXES or path.name == "CMakeLists.txt":
        return True
    if path.suffix:
        return False
    with path.open("rb") as f:
        return f.read(2) == b"#!"


def blank(match):
    """The match's text as spaces, its line breaks kept (offsets stay)."""
    return re.sub(r"[^\n]", " ", match.group())


def without_target(link):
    """A Markdown link's text alone: its (target) blanked, offsets kept."""
    start = link.start(1) - 1 - link.start()
    return link.group()[:start] + " " * (len(link.group()) - start)


def without_fences(text):
    """The Markdown text with every fenced block's lines blanked."""
    lines, fenced = text.split("\n"), False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            lines[i] = ""
        elif fenced:
            lines[i] = ""
    return "\n".join(lines)


def plain(heading):
    """A heading's text without Markdown: link text, no backticks or emphasis."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[`*]", "", heading)


def slug(text):
    """GitHub's anchor for a heading's text."""
    return re.sub(r"[^\w\- ]", "", plain(text).strip().lower()).replace(" ", "-")


def normal(section):
    return " ".join(section.split()).casefold()


class Pages:
    """Each Markdown page's headings (as written, and as anchors), read once."""

    def __init__(self):
        self.cache = {}

    def read(self, path):
        path = path.resolve()
        if path not in self.cache:
            headings = [m.group(2) for m in map(HEADING.match, without_fences(path.read_text()).split("\n")) if m]
            anchors, seen = set(), {}
            for heading in headings:
                base = slug(heading)
                anchors.add(base if base not in seen else f"{base}-{seen[base]}")
                seen[base] = seen.get(base, 0) + 1
            self.cache[path] = ({normal(plain(h)) for h in headings}, anchors)
        return self.cache[path]


class Check:
    def __init__(self, root):
        self.root, self.pages, self.failures, self.counts = root, Pages(), [], {}

    def fail(self, path, text, offset, message):
        line = text.count("\n", 0, offset) + 1
        self.failures.append(f"{path.relative_to(self.root)}:{line}: {message}")

    def count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def links(self, path, text):
        """Markdown links to files in the tree, and their anchors."""
        targets = set()
        text = CODE_SPAN.sub(blank, without_fences(text))
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            self.count("links")
            name, _, anchor = target.partition("#")
            page = (path.parent / name) if name else path
            if not page.exists():
                self.fail(path, text, m.start(), f"link to {target}: no such file")
                continue
            targets.add(page.resolve())
            if anchor and (page.suffix != ".md" or anchor not in self.pages.read(page)[1]):
                self.fail(path, text, m.start(), f"link to {target}: no heading #{anchor} there")
        return targets

    def citations(self, path, text):
        """Cited pages (from the tree's root) and the sections cited in them."""
        if ".md" not in text and "README" not in text:
            return
        for m in CITATION.finditer(text):
            self.count("citations")
            name = "README.md" if m.group("file") == "README" else m.group("file")
            page = self.root / name
            if not page.is_file():
                self.fail(path, text, m.start(), f"cites {name}: no such file")
                continue
            section = m.group("section")
            if section is not None:
                section = COMMENT_BREAK.sub(" ", section)
                if normal(section) not in self.pages.read(page)[0]:
                    self.fail(path, text, m.start(), f"cites {name} \"{section}\": no such heading there")

    def markers(self, path, text):
        """A marker a test names must head a ```sh block of the page it names."""
        found = []
        for m in MARKER_LITERAL.finditer(text):
            self.count("markers")
            found.append(m.group(1))
            pages = [self.root / p for p in PAGE_LITERAL.findall(text) if (self.root / p).is_file()]
            if not any(self.heads_block(page, m.group(1)) for page in pages):
                self.fail(path, text, m.start(), f"no page this file names has {m.group(1)} before a ```sh block")
        return found

    @staticmethod
    def heads_block(page, marker):
        lines = page.read_text().split("\n")
        return any(line == marker and i + 1 < len(lines) and lines[i + 1] == "```sh"
                   for i, line in enumerate(lines))


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    check = Check(root)
    readme_links, named_markers, page_markers = set(), set(), []
    for path in sorted(source_files(root)):
        if path.suffix == ".md":
            text = path.read_text()
            linked = check.links(path, text)
            if path == root / "README.md":
                readme_links = linked
            check.citations(path, without_fences(LINK.sub(without_target, text)))
            page_markers += [(path, text, m) for m in MARKER_LINE.finditer(text)]
        elif is_code(path):
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            check.citations(path, text)
            if path.is_relative_to(root / "test"):
                named_markers.update(check.markers(path, text))
    for page in sorted((root / "docs").rglob("*.md")):
        if page.resolve() not in readme_links:
            check.failures.append(f"README.md: the docs index does not link {page.relative_to(root)}")
    for path, text, m in page_markers:
        if m.group() not in named_markers:
            check.fail(path, text, m.start(), f"{m.group()}: no test names this marker")
    for failure in check.failures:
        print(failure)
    print(", ".join(f"{n} {what}" for what, n in sorted(check.counts.items())) + f"; {len(check.failures)} failures")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
