#!/usr/bin/env bash
# Installs the built Gantry appliance under /opt/gantry, creates the gantry system user and
# its data directory, and installs and enables the systemd unit. Safe to run again (upgrade).
#
#   sudo ./install.sh             install or upgrade, then (re)start the service
#   ./install.sh --dry-run        print what would be done, change nothing (no root needed)
#
# Environment: PREFIX (default /opt/gantry), DATA_DIR (default /var/lib/gantry),
# UNIT_DIR (default /etc/systemd/system), NO_START=1 to install without starting.
set -euo pipefail

PREFIX="${PREFIX:-/opt/gantry}"
DATA_DIR="${DATA_DIR:-/var/lib/gantry}"
UNIT_DIR="${UNIT_DIR:-/etc/systemd/system}"
SERVICE_USER=gantry
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DRY_RUN=0

for arg in "$@"; do
  case "$arg" in
    --dry-run|-n) DRY_RUN=1 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

run() {
  if [ "$DRY_RUN" = 1 ]; then printf '+ %s\n' "$*"; else "$@"; fi
}

if [ "$DRY_RUN" != 1 ] && [ "$(id -u)" != 0 ]; then
  echo "install.sh: please run me as root (sudo ./install.sh); I create a system user and install a systemd unit." >&2
  echo "install.sh: to see what I would do, run ./install.sh --dry-run" >&2
  exit 1
fi

if [ ! -f "$SRC/dist/gantry.cjs" ]; then
  echo "install.sh: the appliance is not built; run 'npm ci && npm run build' first." >&2
  exit 1
fi
if [ ! -d "$SRC/node_modules" ]; then
  echo "install.sh: node_modules is missing; run 'npm ci' first." >&2
  exit 1
fi
if ! command -v node >/dev/null 2>&1; then
  echo "install.sh: Node.js 20 or newer is required (node not found)." >&2
  exit 1
fi
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" -lt 20 ]; then
  echo "install.sh: Node.js 20 or newer is required (found $(node -v))." >&2
  exit 1
fi

# 1. The system user (no login shell, no home of its own beyond the data dir).
if id "$SERVICE_USER" >/dev/null 2>&1; then
  echo "user $SERVICE_USER exists"
else
  run useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
fi

# 2. The data directory (systemd's StateDirectory also creates it; this covers manual runs).
run install -d -m 0700 -o "$SERVICE_USER" -g "$SERVICE_USER" "$DATA_DIR"

# 3. The program: a fresh copy, swapped in whole so an upgrade never mixes versions.
STAGE="$PREFIX.new"
run rm -rf "$STAGE"
run install -d -m 0755 "$STAGE"
run cp -a "$SRC/dist" "$SRC/bin" "$SRC/package.json" "$STAGE/"
[ -f "$SRC/package-lock.json" ] && run cp -a "$SRC/package-lock.json" "$STAGE/"
[ -f "$SRC/README.md" ] && run cp -a "$SRC/README.md" "$STAGE/"
# Production dependencies only (better-sqlite3's native addon is among them).
run install -d -m 0755 "$STAGE/node_modules"
run cp -a "$SRC/node_modules/." "$STAGE/node_modules/"
if [ -f "$SRC/package-lock.json" ]; then
  run sh -c "cd '$STAGE' && npm prune --omit=dev --no-audit --no-fund >/dev/null"
fi
run chown -R root:root "$STAGE"
run chmod 0755 "$STAGE/bin/gantry"
if [ -d "$PREFIX" ]; then run rm -rf "$PREFIX.old"; run mv "$PREFIX" "$PREFIX.old"; fi
run mv "$STAGE" "$PREFIX"
run rm -rf "$PREFIX.old"

# 4. Site configuration, kept across upgrades.
run install -d -m 0755 /etc/gantry
if [ ! -f /etc/gantry/gantry.env ]; then
  if [ "$DRY_RUN" = 1 ]; then
    printf '+ write /etc/gantry/gantry.env\n'
  else
    cat > /etc/gantry/gantry.env <<'ENV'
# Gantry settings (see /opt/gantry/README.md, Configuration). Restart after a change:
#   systemctl restart gantry
#GANTRY_HOST=127.0.0.1
#GANTRY_PORT=8080
#GANTRY_PUBLIC_URL=https://id.example.com
#GANTRY_SMTP_URL=smtp://relay.example.com:587
ENV
    chmod 0640 /etc/gantry/gantry.env
    chgrp "$SERVICE_USER" /etc/gantry/gantry.env
  fi
fi

# 5. Migrations now, as the service user, so a failure shows here rather than in the journal.
run runuser -u "$SERVICE_USER" -- env GANTRY_DATA_DIR="$DATA_DIR" node "$PREFIX/bin/gantry" migrate

# 6. The unit.
run install -m 0644 "$SRC/systemd/gantry.service" "$UNIT_DIR/gantry.service"
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ] || [ "$DRY_RUN" = 1 ]; then
  run systemctl daemon-reload
  run systemctl enable gantry.service
  if [ "${NO_START:-0}" != 1 ]; then run systemctl restart gantry.service; fi
  echo "gantry installed; status: systemctl status gantry; logs: journalctl -u gantry"
else
  echo "gantry installed under $PREFIX; systemd is not running here, so the unit was copied but not enabled."
fi
