#!/usr/bin/env bash
# The peers `npm run bench` measures clibroker against, beside it in the same run: Debian's
# nginx-light (TLS terminated from the client and re-encrypted to the origin), openssl (it
# makes nginx's leaf), GNU time (whole-process figures of scenario W) and the npm peer
# http-mitm-proxy (bench/package.json). mitmproxy is
# optional and large: pass --with-mitmproxy to install it too. Installs only what is missing
# (apt needs root). The bench skips, with the reason printed, any peer that is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
pkgs=(nginx-light openssl time)
[ "${1:-}" = "--with-mitmproxy" ] && pkgs+=(mitmproxy)
for pkg in "${pkgs[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "== apt-get install ${need[*]}"
  apt-get update -qq
  # the package's own service is not wanted: the bench starts nginx on a configuration of its own
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
systemctl disable --now nginx >/dev/null 2>&1 || true
echo "== npm install --prefix bench"
npm install --prefix bench --no-audit --no-fund --silent
