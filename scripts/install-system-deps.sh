#!/usr/bin/env bash
# The Debian packages the tests drive for real: curl, gh and azure-cli as vendor CLIs, and
# bubblewrap for the sandbox's isolated profile. Installs only what is missing (needs root).
set -euo pipefail
need=()
for pkg in curl bubblewrap gh azure-cli; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "== apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
