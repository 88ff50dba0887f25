#!/usr/bin/env bash
# Golden results: every scenario of scenarios/ and every documented --set
# variant (tests/golden/variants.txt), run with --json --no-store, with the two
# fields that may differ between identical runs removed (wall_time_s, version).
#   tests/golden/run.sh OUT.txt          write the results to OUT.txt
#   tests/golden/run.sh --check          compare with tests/golden/expected.txt
# A change that alters any number must say why and regenerate expected.txt
# (tests/golden/run.sh tests/golden/expected.txt) in the same commit.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${LATSIM_BIN:-./latsim}
out=${1:---check}
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.1"' EXIT
one() {  # one() LABEL ARGS...: run one case, append its normalised JSON to $tmp
    local label=$1; shift
    eval "\"$bin\" run $* --json --no-store" >"$tmp.1" 2>/dev/null
    local rc=$?
    printf '== %s (exit %d)\n' "$label" "$rc" >>"$tmp"
    sed -E 's/"wall_time_s": [-0-9.e+]+/"wall_time_s": 0/g; s/"version": "[^"]*"/"version": ""/g' \
        "$tmp.1" >>"$tmp"
    echo >>"$tmp"
}
for f in scenarios/*.ini; do one "$f" "$f"; done
while IFS= read -r line; do
    case $line in ''|'#'*) continue ;; esac
    one "$line" "scenarios/$line"
done < tests/golden/variants.txt
if [ "$out" = --check ]; then
    if diff -u tests/golden/expected.txt "$tmp" >"$tmp.1"; then
        echo "golden: $(grep -c '^== ' "$tmp") runs identical to tests/golden/expected.txt"
    else
        head -60 "$tmp.1"; echo "golden: results differ from tests/golden/expected.txt"; exit 1
    fi
else
    cp "$tmp" "$out"
fi
