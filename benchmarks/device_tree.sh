#!/usr/bin/env bash
# What the device tool sends to a GPU machine, and taking the real-PDF corpus out of it for a call.
#
# The device tool sends the checkout's tracked and untracked-not-ignored files plus the carried paths, at most
# 64 MiB in all (/work/.library/device/README.md). The real-article corpus (benchmarks/data/pdfs, ~61 MiB of
# PDFs that no GPU check reads) alone nearly fills that, so before a device call a session takes it out of git's
# index and ignores it locally (the files stay on disk), and puts it back right after:
#
#   bash benchmarks/device_tree.sh lighten        # the corpus out of the index, ignored in .git/info/exclude
#   bash benchmarks/device_tree.sh size .whl      # what would travel with .whl carried, against the limit
#   ... the device call (carry .whl) ...
#   bash benchmarks/device_tree.sh restore        # the index and .git/info/exclude as before
#
# Never commit between lighten and restore: the commit would delete the corpus. `restore` is safe to run twice.
set -euo pipefail
LIGHT=benchmarks/data/pdfs
MARK="# kb device_tree.sh lighten"
LIMIT=$((64 * 1024 * 1024))
cd "$(git rev-parse --show-toplevel)"
EXCLUDE=$(git rev-parse --git-path info/exclude)

case "${1:-}" in
  lighten)
    if ! git diff --cached --quiet -- "$LIGHT"; then
      echo "device_tree.sh: $LIGHT has staged changes; commit or unstage them first" >&2; exit 1
    fi
    mkdir -p "$(dirname "$EXCLUDE")"
    # (a comment must have a line of its own in an exclude file)
    grep -qxF "/$LIGHT/" "$EXCLUDE" 2>/dev/null || printf '%s\n%s\n' "$MARK" "/$LIGHT/" >>"$EXCLUDE"
    git rm -r -q --cached --ignore-unmatch -- "$LIGHT"
    echo "$LIGHT is out of git's index and ignored here; run 'bash $0 restore' after the device call"
    ;;
  restore)
    git reset -q -- "$LIGHT"
    if [ -f "$EXCLUDE" ]; then
      grep -vxF -e "/$LIGHT/" -e "$MARK" "$EXCLUDE" >"$EXCLUDE.tmp" || true
      mv "$EXCLUDE.tmp" "$EXCLUDE"
    fi
    echo "$LIGHT is back in git's index"
    ;;
  size)
    shift
    bytes=$({ git ls-files -z --cached --others --exclude-standard; \
              for carried in "$@"; do find "$carried" -type f -print0; done; } \
            | { xargs -0 -r stat -c %s -- 2>/dev/null || true; } | awk '{s += $1} END {print s + 0}')
    mib=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')
    if [ "$bytes" -le "$LIMIT" ]; then
      echo "travels: $mib MiB of 64 MiB"
    else
      echo "travels: $mib MiB, over the 64 MiB a device call takes (lighten first?)"; exit 1
    fi
    ;;
  *)
    echo "usage: bash benchmarks/device_tree.sh lighten|restore|size [CARRIED_PATH...]" >&2; exit 2
    ;;
esac
