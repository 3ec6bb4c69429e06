"""Every file, section and function a reference doc names exists.

Scanned: the tracked Markdown files outside results/experiments/ (dated logs
of past tries, which name what existed then) and docs/history.md (the
history log, likewise). Fenced code blocks are skipped. A reference is:

- a Markdown link or image, ``[text](target#anchor)``: the target, relative
  to the doc's folder, must exist; an anchor (``#x`` alone means the doc
  itself) must be the GitHub slug of a heading of the target Markdown file.
  Links with a scheme (``https:``) are not checked.
- a code span that is a repo path, ``bench/measure/plan.c``: one with a
  ``/`` whose first component is a tracked top-level entry or an entry of
  the doc's folder (so ``build/...``, ``~/...``, ``/proc/...`` and options
  are not paths of the tree). A ``:line`` suffix is dropped. ``<name>``,
  ``*`` and ``{a,b}`` are placeholders (often of files a run writes): the
  folder before the first one must then exist. A bare file name with a
  source extension (``rounds.c``, ``results_csv.h``, ``common.gp``; not
  ``.csv`` or ``.json``, which name data of other tools and examples) must
  be the name of a tracked file.
- a code span that is a call, ``name()`` or ``name(args)``: the identifier
  (the last part of ``rowops.name`` / ``rowops::name``; other qualified
  names belong to other libraries and are not checked) must occur followed
  by ``(`` in the tracked C, C++, CUDA or Python sources.

A line that says ``git show`` names files of an earlier commit on purpose
and is skipped. Run as a script to list what is wrong as doc:line: ref.
"""

import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]

SKIPPED_DOCS = ("results/experiments/", "docs/history.md")
SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".cu", ".cuh", ".py", ".def")
BARE_NAME_SUFFIXES = SOURCE_SUFFIXES + (".sh", ".gp", ".cmake")

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CALL = re.compile(rf"^((?:{IDENT}(?:\.|::))*)({IDENT})\(.*\)$")
PATH_CHARS = re.compile(r"^[A-Za-z0-9_.\-/<>*{},]+$")
PLACEHOLDER = re.compile(r"<[^>]*>|\*|\{[^}]*\}")
OWN_QUALIFIERS = ("", "rowops.", "rowops::", "torch.ops.rowops.")


def tracked_files(root):
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                         capture_output=True, text=True).stdout
    return [f for f in out.split("\0") if f and (root / f).exists()]


def github_slug(heading):
    text = re.sub(r"`|\*\*|__", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def heading_slugs(path):
    slugs, seen, fenced = set(), {}, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            slugs.add(slug if n == 0 else f"{slug}-{n}")
    return slugs


class Tree:
    """What exists: tracked files, their folders, top-level names, sources."""

    def __init__(self, root):
        self.root = root
        self.files = set(tracked_files(root))
        self.dirs = {str(p) for f in self.files
                     for p in PurePosixPath(f).parents if str(p) != "."}
        self.top = {f.split("/", 1)[0] for f in self.files}
        self.basenames = {PurePosixPath(f).name for f in self.files}
        self._called = None

    def exists(self, rel):
        rel = rel.rstrip("/")
        return rel in self.files or rel in self.dirs

    def called(self, name):
        if self._called is None:
            words = set()
            for f in self.files:
                if f.endswith(SOURCE_SUFFIXES) and \
                        not f.startswith("results/experiments/"):
                    text = (self.root / f).read_text(encoding="utf-8",
                                                     errors="replace")
                    words.update(re.findall(rf"({IDENT})\s*\(", text))
            self._called = words
        return name in self._called


def normalize(rel):
    parts = []
    for part in rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def check_link(tree, doc, target):
    if re.match(r"^[a-z][a-z0-9+.\-]*:", target):
        return True
    path, _, anchor = target.partition("#")
    rel = doc if not path else normalize(
        str(PurePosixPath(doc).parent / path))
    if rel is None or not tree.exists(rel):
        return False
    if anchor and rel.endswith(".md"):
        return anchor.lower() in heading_slugs(tree.root / rel)
    return True


def check_path(tree, doc, span):
    """True/False for a path that must exist; None when span is no path."""
    span = re.sub(r":\d+(-\d+)?$", "", span)
    if not PATH_CHARS.match(span) or span.startswith(("-", "/", ".")):
        return None
    folder = str(PurePosixPath(doc).parent)
    if "/" not in span:
        if not span.endswith(BARE_NAME_SUFFIXES) or PLACEHOLDER.search(span):
            return None
        return span in tree.basenames
    first = span.split("/", 1)[0]
    prefix = "" if folder == "." else folder + "/"
    candidates = []
    if first in tree.top:
        candidates.append(span)
    if prefix and tree.exists(prefix + first):
        candidates.append(prefix + span)
    if not candidates:
        return None
    for cand in candidates:
        fixed = PLACEHOLDER.split(cand, 1)[0]
        if fixed != cand:
            folder_of_fixed = fixed.rsplit("/", 1)[0]
            if tree.exists(folder_of_fixed):
                return True
        elif tree.exists(cand):
            return True
    return False


def check_call(tree, span):
    m = CALL.match(span)
    if not m or m.group(1) not in OWN_QUALIFIERS:
        return None
    return tree.called(m.group(2))


def doc_problems(tree, doc, text):
    """Each bad reference of one doc as 'doc:line: reference'."""
    problems, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or "git show" in line:
            continue
        for target in LINK.findall(line):
            if not check_link(tree, doc, target):
                problems.append(f"{doc}:{number}: {target}")
        for _, span in CODE_SPAN.findall(LINK.sub("", line)):
            span = span.strip()
            ok = check_path(tree, doc, span)
            if ok is None:
                ok = check_call(tree, span)
            if ok is False:
                problems.append(f"{doc}:{number}: {span}")
    return problems


def reference_docs(tree):
    return sorted(f for f in tree.files if f.endswith(".md")
                  and not f.startswith(SKIPPED_DOCS))


def all_problems(root=ROOT):
    tree = Tree(root)
    problems = []
    for doc in reference_docs(tree):
        text = (root / doc).read_text(encoding="utf-8")
        problems += doc_problems(tree, doc, text)
    return problems


@unittest.skipUnless((ROOT / ".git").exists(), "not a git checkout")
class DocReferences(unittest.TestCase):
    def test_every_reference_exists(self):
        problems = all_problems()
        self.assertEqual(problems, [], "references to nothing:\n" +
                         "\n".join(problems))

    def test_a_planted_bad_reference_is_reported(self):
        """A temporary repo: one good and one bad reference of each kind."""
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "docs").mkdir()
            (root / "src").mkdir()
            (root / "src" / "real.c").write_text(
                "int real_function(void) { return 0; }\n")
            (root / "docs" / "other.md").write_text("# A real section\n")
            (root / "docs" / "guide.md").write_text(
                "# Guide\n"
                "[ok](other.md#a-real-section) [ok](#guide)\n"
                "`src/real.c` `real.c` `real_function()` `src/<x>.c`\n"
                "[bad file](missing.md)\n"
                "[bad anchor](other.md#no-such-section)\n"
                "`src/gone.c`\n"
                "`no_such_function()`\n"
                "```\n`src/in_a_code_block.c`\n```\n")
            subprocess.run(["git", "init", "-q"], cwd=root, check=True)
            subprocess.run(["git", "add", "."], cwd=root, check=True)
            self.assertEqual(all_problems(root), [
                "docs/guide.md:4: missing.md",
                "docs/guide.md:5: other.md#no-such-section",
                "docs/guide.md:6: src/gone.c",
                "docs/guide.md:7: no_such_function()",
            ])

    def test_github_slugs(self):
        self.assertEqual(github_slug("CUDA kernels"), "cuda-kernels")
        self.assertEqual(github_slug("The results CSV (`schema`), v2"),
                         "the-results-csv-schema-v2")


if __name__ == "__main__":
    problems = all_problems()
    print("\n".join(problems))
    sys.exit(1 if problems else 0)
