#!/usr/bin/env bash
# bench-compare.sh REF [pushbridge-bench --compare options…]
#
# Builds the bench of REF (a version such as 0.36.1, or any commit) in a worktree of its own under
# .build/bench-ref/, builds this checkout's, and runs them alternated (pushbridge-bench --compare): core,
# serve and deliver, three rounds, each figure side by side with its change; a same-run ratio that fell
# by 10 % or more is flagged and the command exits 1. `make bench-compare REF=0.36.1` runs it;
# `SECTIONS=serve ROUNDS=5` narrow or widen it. The worktree stays for the next comparison with the
# same REF (its build is then incremental); `make clean` removes it.
set -euo pipefail
ref="${1:?usage: bench-compare.sh REF (a version such as 0.36.1, or a commit)}"
shift
cd "$(git rev-parse --show-toplevel)"

# A version is the commit that set it in PushBridgeVersion.swift (where a release tag would be); anything
# else is what git makes of it.
version_file=Sources/PushBridgeCore/PushBridgeVersion.swift
commit=""
if [[ "$ref" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    for candidate in $(git log --format=%H -S"\"$ref\"" -- "$version_file"); do
        # The oldest commit whose change mentions the version and that carries it set it.
        if git show "$candidate:$version_file" | grep -q "\"$ref\""; then commit="$candidate"; fi
    done
fi
if [ -z "$commit" ]; then
    commit="$(git rev-parse --verify --quiet "$ref^{commit}")" || { echo "bench-compare: $ref is neither a version in $version_file's history nor a commit" >&2; exit 2; }
fi
short="$(git rev-parse --short "$commit")"
folder=".build/bench-ref/$short"
if [ ! -d "$folder" ]; then
    git worktree prune
    git worktree add --detach "$folder" "$commit" >/dev/null
fi
echo "bench-compare: $ref is $short; building its bench in $folder and this checkout's"
(cd "$folder" && swift build -c release --product pushbridge-bench 2>&1 | tail -1)
swift build -c release --product pushbridge-bench 2>&1 | tail -1
current="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo +changes)"
exec .build/release/pushbridge-bench --compare "$folder/.build/release/pushbridge-bench" --reference-folder "$folder" \
    --reference-name "$ref" --current-name "$current" --sections "${SECTIONS:-core,serve,deliver}" --compare-rounds "${ROUNDS:-3}" \
    --seconds "${SECONDS_PER_RUN:-10}" "$@"
