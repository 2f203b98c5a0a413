"""Build kb/papers/conferences.tsv, the lexicon of conference, workshop and symposium names ``kb add``
recognises on a PDF's page 1 (kb/papers/conferences.py), from two openly licensed lists of computing meetings:

- ccfddl/ccf-deadlines (github.com/ccfddl/ccf-deadlines, MIT licence): one YAML file per meeting under
  ``conference/<field>/``, its ``title`` the acronym ('SOSP') and its ``description`` the full name ('ACM
  Symposium on Operating Systems Principles'), some 350 meetings of every field of computing.
- huggingface/ai-deadlines (github.com/huggingface/ai-deadlines, MIT licence): one YAML file per meeting under
  ``src/data/conferences/``, ``title`` and ``full_name``, machine-learning meetings the first list lacks
  ('FAccT', 'LREC', 'CHIL').

Then ``ADDED``, kb's own rows: the meetings of computational biology and health the lists lack (ISMB,
ECCB, PSB, WABI, MLCB, ML4H), earlier and other names of listed ones ('NIPS', 'USENIX ATC'), and full names
the lists misspell ('International Conference on Research in Computational Molecular Biology'), each a name
its meeting prints.
A row of the lists is written as it is but for quotes, parenthesised acronyms and whitespace; an acronym two
meetings share ('FSE', 'SEC') is written for each.

Each written line is an acronym, a tab and a full name, sorted; the file's header lines (``#``) give the
sources, their commits and licences. 30 KB: kb reads it whole on its first lookup (kb.papers.conferences).

    .venv/bin/python benchmarks/build_conferences.py           # from the mirrors below, at their HEAD
    .venv/bin/python benchmarks/build_conferences.py --check   # rebuild and compare with the shipped file
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kb.papers.conferences import LEXICON  # noqa: E402

# (repository, its mirror, the folder of its YAML files, the key of the full name)
SOURCES = (
    ("ccfddl/ccf-deadlines", Path("/work/.mirror/ccfddl+ccf-deadlines/repo"), "conference", "description"),
    ("huggingface/ai-deadlines", Path("/work/.mirror/huggingface+ai-deadlines/repo"), "src/data/conferences",
     "full_name"),
)
LICENCE = "MIT (each repository's LICENSE)"
# kb's own rows: meetings of the field the lists lack, other names of listed ones, and corrected spellings.
ADDED = (
    ("ISMB", "Intelligent Systems for Molecular Biology"),
    ("ISMB", "International Conference on Intelligent Systems for Molecular Biology"),
    ("ECCB", "European Conference on Computational Biology"),
    ("PSB", "Pacific Symposium on Biocomputing"),
    ("WABI", "Workshop on Algorithms in Bioinformatics"),
    ("MLCB", "Machine Learning in Computational Biology"),
    ("MLSB", "Machine Learning in Structural Biology"),
    ("ML4H", "Machine Learning for Health"),
    ("MLHC", "Machine Learning for Healthcare Conference"),
    ("GCB", "German Conference on Bioinformatics"),
    ("WCB", "Workshop on Computational Biology"),
    ("BCB", "ACM Conference on Bioinformatics, Computational Biology, and Health Informatics"),
    ("RECOMB", "International Conference on Research in Computational Molecular Biology"),
    ("NIPS", "Conference on Neural Information Processing Systems"),
    ("NIPS", "Neural Information Processing Systems"),
    ("ICFP", "International Conference on Functional Programming"),
    ("COLING", "International Conference on Computational Linguistics"),
    ("ICTAI", "International Conference on Tools with Artificial Intelligence"),
    ("USENIX ATC", "USENIX Annual Technical Conference"),
    ("SciPy", "Python in Science Conference"),
    ("LoG", "Learning on Graphs Conference"),
)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def _clean(name: str) -> str:
    """A name without quotes, a parenthesised acronym ('Network and Distributed System Security (NDSS)
    Symposium') or doubled spaces."""
    return " ".join(re.sub(r"\s*\([^()]*\)", "", name.strip().strip("'\"")).split())


def _copyright(repo: Path) -> str:
    """The copyright line of a repository's LICENSE, which the MIT licence asks every copy to keep."""
    return next(line.strip() for line in _git(repo, "show", "HEAD:LICENSE").splitlines()
                if line.strip().startswith("Copyright"))


def read_source(repo: Path, folder: str, key: str) -> tuple[str, list[tuple[str, str]]]:
    """The commit read and each meeting's (acronym, full name) in its YAML files (a file is a list of one
    meeting's editions, each naming the meeting; the first that names both is taken)."""
    commit = _git(repo, "rev-parse", "HEAD").strip()
    yaml = YAML(typ="safe")
    rows = []
    for path in sorted(_git(repo, "ls-tree", "-r", "--name-only", "HEAD", folder).split()):
        if not path.endswith((".yml", ".yaml")):
            continue
        editions = yaml.load(_git(repo, "show", f"HEAD:{path}")) or []
        for edition in editions if isinstance(editions, list) else [editions]:
            if isinstance(edition, dict) and edition.get("title") and edition.get(key):
                rows.append((_clean(str(edition["title"])), _clean(str(edition[key]))))
                break
    return commit, rows


def build() -> str:
    """The file's text: the header, then each distinct (acronym, full name), sorted."""
    header, rows = [], set(ADDED)
    for name, repo, folder, key in SOURCES:
        commit, read = read_source(repo, folder, key)
        header.append(f"# from https://github.com/{name} at commit {commit} ({folder}/*.yml: title, {key})")
        header.append(f"#   {_copyright(repo)}, under the MIT licence (its LICENSE, copied in conferences.LICENSE)")
        rows.update((acronym, full) for acronym, full in read if acronym and full)
    header += [f"# licence: {LICENCE}; with kb's own rows (benchmarks/build_conferences.py's ADDED)",
               "# built by benchmarks/build_conferences.py; one meeting's name a line: its acronym, a tab, "
               "its full name"]
    return "\n".join([*header, *(f"{a}\t{f}" for a, f in sorted(rows))]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare a rebuild with the shipped file")
    args = parser.parse_args()
    text = build()
    if args.check:
        same = LEXICON.read_text(encoding="utf-8") == text
        print("same" if same else f"differs from {LEXICON}")
        sys.exit(0 if same else 1)
    LEXICON.write_text(text, encoding="utf-8")
    print(f"wrote {LEXICON}: {sum(not line.startswith('#') for line in text.splitlines())} names")


if __name__ == "__main__":
    main()
