#!/usr/bin/env bash
# The Debian packages the tests drive for real: curl, gh and azure-cli as vendor CLIs,
# bubblewrap for the sandbox's isolated profile, and the PostgreSQL server (bookworm's
# postgresql-15; the tests start throwaway clusters with its initdb/pg_ctl, and the package's
# `postgres` user runs them when the tests run as root), and chromium for the review page's
# browser test (driven headless by playwright-core at /usr/bin/chromium; nothing is downloaded
# at test time), and passwd and util-linux for the deployment tests, which create real users
# (useradd) and run the daemon and the agent as them (setpriv). Installs only what is missing
# (needs root).
set -euo pipefail
need=()
for pkg in curl bubblewrap gh azure-cli postgresql chromium passwd util-linux; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "== apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
