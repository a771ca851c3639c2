#!/bin/sh
# Run the hit-cost measurement in the guest (see hitcost.c).
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
exec "$(dirname "$0")/hitcost" "$@"
