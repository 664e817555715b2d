#!/usr/bin/env bash
# Fails when a build log holds a warning from the package's own files (Sources/, Tests/, Package.swift,
# or SwiftPM's word on a file of ours it does not handle); dependencies' warnings (.build/) are not ours.
#   Tests/Scripts/own-warnings.sh .build/build-output.log
set -uo pipefail
log="${1:?usage: own-warnings.sh BUILD-LOG}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
own="$(awk -v root="$root/" '
    # A compiler diagnostic: path:line:column: warning: …
    /^[^ ].*:[0-9]+:([0-9]+:)? warning: / {
        path = $0; sub(/:[0-9]+:.*/, "", path)
        if (index(path, root) == 1) path = substr(path, length(root) + 1)
        if (path ~ /^(Sources|Tests)\// || path == "Package.swift") print
        next
    }
    # SwiftPM: "warning: '\''PACKAGE'\'': found N file(s) which are unhandled", then one indented path a line.
    /^warning: .*which are unhandled/ { unhandled = $0; next }
    unhandled != "" && /^ +\// {
        path = $0; sub(/^ +/, "", path)
        if (index(path, root) == 1 && substr(path, length(root) + 1) !~ /^\.build/) print unhandled ": " path
        next
    }
    { unhandled = "" }
' "$log" | sort -u)"
if [ -n "$own" ]; then
    echo "== $(printf '%s\n' "$own" | wc -l) warning(s) from our own files; the build must have none =="
    printf '%s\n' "$own"
    exit 1
fi
echo "own-warnings: no warning from our own files"
