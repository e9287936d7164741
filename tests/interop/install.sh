#!/bin/sh
# Install the official Google Node.js clients used by the interop tests
# into tests/interop/node_modules.  Idempotent: runs npm only when
# node_modules is missing or older than package.json; fails loudly.
set -eu

dir=$(cd "$(dirname "$0")" && pwd)
cd "$dir"

command -v node >/dev/null 2>&1 || {
	echo "install.sh: node not found (scripts/install-deps.sh installs nodejs)" >&2
	exit 1
}
command -v npm >/dev/null 2>&1 || {
	echo "install.sh: npm not found (scripts/install-deps.sh installs npm)" >&2
	exit 1
}

stamp=node_modules/.tpuctl-installed
if [ -f "$stamp" ] && [ -z "$(find package.json -newer "$stamp")" ] &&
    [ -d node_modules/@google-cloud/storage ] &&
    [ -d node_modules/@google-cloud/tpu ] && [ -d node_modules/googleapis ]; then
	exit 0
fi

# The packages declare node >= 22 but work on Node 20 (EBADENGINE warnings).
if ! npm install --no-audit --no-fund --loglevel=error; then
	echo "install.sh: npm install failed in $dir" >&2
	exit 1
fi
for m in @google-cloud/storage @google-cloud/tpu googleapis; do
	node -e "require.resolve('$m')" || {
		echo "install.sh: $m did not install" >&2
		exit 1
	}
done
touch "$stamp"
