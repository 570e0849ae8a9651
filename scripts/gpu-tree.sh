#!/usr/bin/env bash
# The working tree a device call sends is limited to 64 MiB; the repository is larger (its shipped
# networks). Before the call, move what a GPU window does not need (scripts/gpu-aside.txt) into
# .gpu-aside/ (git-ignored); after it, put it back. Both print the size that would travel.
#
#   bash scripts/gpu-tree.sh aside    # then the device call (carry .whl if the wheels are needed)
#   bash scripts/gpu-tree.sh back
#   bash scripts/gpu-tree.sh size
set -eu
cd "$(dirname "$0")/.."
LIST=scripts/gpu-aside.txt
ASIDE=.gpu-aside
size() {
    # tracked files still present and untracked ones git does not ignore, plus .whl/ (carried)
    { git ls-files -z --cached --others --exclude-standard; find .whl -type f -print0 2>/dev/null; } |
        xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {printf "travelling: %.1f MiB of the 64 MiB limit\n", s / 1048576}'
}
case "${1:-size}" in
aside)
    grep -v '^#' "$LIST" | while read -r path; do
        [ -n "$path" ] && [ -e "$path" ] || continue
        mkdir -p "$ASIDE/$(dirname "$path")"
        mv "$path" "$ASIDE/$path"
    done
    size ;;
back)
    [ -d "$ASIDE" ] || { echo "nothing aside"; exit 0; }
    grep -v '^#' "$LIST" | while read -r path; do
        [ -n "$path" ] && [ -e "$ASIDE/$path" ] || continue
        mkdir -p "$(dirname "$path")"
        if [ -d "$ASIDE/$path" ] && [ -d "$path" ]; then cp -a "$ASIDE/$path/." "$path/" && rm -rf "${ASIDE:?}/$path"
        else mv "$ASIDE/$path" "$path"; fi
    done
    find "$ASIDE" -type d -empty -delete 2>/dev/null || true
    git status --short | head
    size ;;
size) size ;;
*) echo "usage: $0 aside|back|size" >&2; exit 2 ;;
esac
