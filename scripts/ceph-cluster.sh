#!/usr/bin/env bash
# ceph-cluster.sh -- a throw-away Ceph cluster on 127.0.0.1 for the RADOS
# store backend's tests: 1 monitor, 1 manager, 3 OSDs (memstore), one pool
# of size 3, cephx on, and a least-privilege client for the TSD.
#
#   scripts/ceph-cluster.sh start DIR [POOL]   build and start it in DIR (must
#                                              not hold a cluster); prints the
#                                              octsdb config file's path
#   scripts/ceph-cluster.sh stop DIR           stop every daemon started in DIR,
#                                              by the pid recorded at start
#
# DIR then holds ceph.conf (for librados and the ceph CLI), the keyrings
# (keyring: mon. and client.admin; client.octsdb.keyring, client.nocaps.keyring),
# octsdb.conf (tsd.storage.backend = rados and its tsd.storage.rados.* keys,
# as client.octsdb: what the rados tests read through OCTSDB_TEST_STORE_RADOS),
# pids/ (one file per daemon) and log/. No cephadm, no systemd: monmaptool,
# ceph-mon --mkfs, ceph osd new, ceph-osd --mkfs, each daemon in the
# foreground (-f) in the background of this script, so its pid is the one
# we recorded.
#
# Choices, for a test cluster that starts fast on a 2-core machine:
#  - a manager (ceph-mgr, started like the others): without one `ceph -s`
#    says HEALTH_WARN "no active mgr" and pool statistics stay empty.
#    Nothing the store does needs it; it loads only its always-on modules
#    (figures in docs/scale-out.md, "The test cluster").
#  - memstore: the OSDs keep objects in memory, no disk I/O; a test cluster
#    lives for one test run. Replication between the 3 OSDs is real.
#  - cephx on, as in production: client.admin for this script, and
#    client.octsdb with the caps docs/scale-out.md gives the TSD (mon r,
#    osd rw on the pool), which the tests use; client.nocaps (mon r, no osd
#    caps) for the test that such a client fails at start-up, clearly.
#  - osd_crush_chooseleaf_type = 0: the 3 replicas go to 3 OSDs on one host.
# A start that fails stops whatever it had started (trap), so no daemon
# outlives a failed start.
set -euo pipefail

die() {
    echo "ceph-cluster: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 start DIR [POOL] | stop DIR" >&2
    exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
pool=${3:-octsdb}
N_OSD=3

# Stops every daemon whose pid file is in DIR: TERM, then KILL after 20 s.
# Only pids we recorded, and only while they still run the ceph binary we
# started (a recycled pid is left alone).
stop_cluster() {
    local d=$1 f pid waited
    [ -d "$d/pids" ] || return 0
    local pids=()
    for f in "$d"/pids/*.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f")
        if [ -n "$pid" ] && grep -qs ceph- "/proc/$pid/comm"; then
            kill -TERM "$pid" 2>/dev/null || true
            pids+=("$pid")
        fi
        rm -f "$f"
    done
    for pid in ${pids[@]+"${pids[@]}"}; do
        waited=0
        while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 200 ]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        kill -KILL "$pid" 2>/dev/null || true
    done
}

# A free TCP port on 127.0.0.1 (the kernel picks it; racy only against
# another process binding the same port within milliseconds).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start_cluster() {
    local d=$1
    command -v ceph-mon >/dev/null || die "ceph-mon not found (scripts/install-deps.sh ceph)"
    [ -e "$d/ceph.conf" ] && die "$d already holds a cluster"
    mkdir -p "$d"
    d=$(cd "$d" && pwd)
    mkdir -p "$d/pids" "$d/log" "$d/run" "$d/mon" "$d/osd" "$d/mgr/mgr.x"
    trap 'stop_cluster "$d"' EXIT

    local fsid port conf
    fsid=$(cat /proc/sys/kernel/random/uuid)
    port=$(free_port)
    conf=$d/ceph.conf
    cat >"$conf" <<EOF
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:$port
public_addr = 127.0.0.1
ms_bind_ipv6 = false
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
osd_crush_chooseleaf_type = 0
osd_pool_default_size = 3
osd_pool_default_min_size = 2
osd_pool_default_pg_autoscale_mode = off
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
osd_objectstore = memstore
memstore_device_bytes = 1073741824
run_dir = $d/run
admin_socket = $d/run/\$name.asok
log_file = $d/log/\$name.log
mon_data = $d/mon/\$name
osd_data = $d/osd/\$name
keyring = $d/keyring
mgr_data = $d/mgr/\$name
# the manager loads only its always-on modules (below), not all 26
mgr_module_path = $d/mgr/modules
mgr_initial_modules = status
# cephx without the pre-2021 clients' global_id reclaim (a HEALTH_WARN otherwise)
auth_allow_insecure_global_id_reclaim = false
# a loopback cluster of one host: no clock or disk-space alarms
mon_clock_drift_allowed = 1
mon_data_avail_warn = 1
mon_data_avail_crit = 0
[client.octsdb]
keyring = $d/client.octsdb.keyring
[client.nocaps]
keyring = $d/client.nocaps.keyring
EOF
    local ceph=(ceph -c "$conf" --connect-timeout 30)
    # Every key is made here and given to the monitor at --mkfs (one ceph
    # CLI call costs a second on a busy machine): the daemons' and admin's
    # in "keyring"; the TSD's client and client.nocaps in files of their own.
    local at=(ceph-authtool "$d/keyring")
    "${at[@]}" --create-keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
    "${at[@]}" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
        --cap mgr 'allow *' >/dev/null
    "${at[@]}" --gen-key -n mgr.x --cap mon 'allow profile mgr' --cap osd 'allow *' >/dev/null
    for i in $(seq 0 $((N_OSD - 1))); do
        "${at[@]}" --gen-key -n "osd.$i" --cap osd 'allow *' --cap mon 'allow profile osd' \
            --cap mgr 'allow profile osd' >/dev/null
    done
    # The TSD's client: the caps of docs/scale-out.md, "Ceph auth for the TSD".
    ceph-authtool "$d/client.octsdb.keyring" --create-keyring --gen-key -n client.octsdb \
        --cap mon 'allow r' --cap osd "allow rw pool=$pool" >/dev/null
    ceph-authtool "$d/client.nocaps.keyring" --create-keyring --gen-key -n client.nocaps \
        --cap mon 'allow r' >/dev/null
    cat "$d/keyring" "$d/client.octsdb.keyring" "$d/client.nocaps.keyring" >"$d/mon-keyring"
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$d/monmap" >/dev/null
    ceph-mon -c "$conf" --mkfs -i a --monmap "$d/monmap" --keyring "$d/mon-keyring" \
        >"$d/log/mkfs-mon.log" 2>&1 ||
        die "ceph-mon --mkfs failed: $(tail -5 "$d/log/mkfs-mon.log")"
    ceph-mon -c "$conf" -i a -f </dev/null >>"$d/log/mon.a.out" 2>&1 &
    echo $! >"$d/pids/mon.a.pid"
    # Ceph's manager imports every module in its path (about a second each
    # here) before it reports in; these are the ones it always runs. It
    # starts now, so that its imports overlap the OSDs' start.
    local m src=/usr/share/ceph/mgr
    mkdir -p "$d/mgr/modules"
    for m in mgr_module.py mgr_util.py balancer crash devicehealth orchestrator pg_autoscaler \
        progress rbd_support status telemetry volumes; do
        ln -s "$src/$m" "$d/mgr/modules/$m"
    done
    ceph-mgr -c "$conf" -i x -f </dev/null >>"$d/log/mgr.x.out" 2>&1 &
    echo $! >"$d/pids/mgr.x.pid"

    local i id uuid
    for i in $(seq 0 $((N_OSD - 1))); do
        uuid=$(cat /proc/sys/kernel/random/uuid)
        id=$("${ceph[@]}" osd new "$uuid") || die "ceph osd new failed"
        mkdir -p "$d/osd/osd.$id"
        [ "$id" = "$i" ] || die "ceph osd new gave id $id, expected $i (its key)"
        ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$uuid" >"$d/log/mkfs-osd.$id.log" 2>&1 ||
            die "ceph-osd --mkfs failed: $(tail -5 "$d/log/mkfs-osd.$id.log")"
        ceph-osd -c "$conf" -i "$id" -f </dev/null >>"$d/log/osd.$id.out" 2>&1 &
        echo $! >"$d/pids/osd.$id.pid"
    done


    "${ceph[@]}" osd pool create "$pool" 32 32 replicated >/dev/null 2>&1 ||
        die "ceph osd pool create $pool failed"
    "${ceph[@]}" osd pool application enable "$pool" octsdb >/dev/null 2>&1 || true

    # Healthy enough: an object written to and read back from the pool, which
    # needs its placement group active on 3 OSDs (size 3, min_size 2).
    local t0=$SECONDS
    echo probe >"$d/run/probe.in"
    until timeout 10 rados -c "$conf" -p "$pool" put probe "$d/run/probe.in" 2>/dev/null &&
        timeout 10 rados -c "$conf" -p "$pool" get probe "$d/run/probe.out" 2>/dev/null &&
        cmp -s "$d/run/probe.in" "$d/run/probe.out"; do
        [ $((SECONDS - t0)) -lt 90 ] || die "pool $pool not writable after 90 s (logs in $d/log)"
        sleep 0.5
    done
    rados -c "$conf" -p "$pool" rm probe 2>/dev/null || true
    # The pool takes writes with min_size (2) OSDs up: wait for all 3, so
    # every write the tests make is replicated 3 times from the start.
    local up
    until up=$("${ceph[@]}" osd stat 2>/dev/null) && [[ $up == *"$N_OSD osds: $N_OSD up"* ]]; do
        [ $((SECONDS - t0)) -lt 90 ] || die "expected $N_OSD OSDs up, ceph osd stat says: $up"
        sleep 0.5
    done

    # HEALTH_OK with the manager active (the monitor does not warn about a
    # missing one in its first 2 minutes, so look for it too)
    local st=
    until st=$("${ceph[@]}" status -f json 2>/dev/null) &&
        [[ $st == *'"available":true'* && $st == *'"status":"HEALTH_OK"'* ]]; do
        [ $((SECONDS - t0)) -lt 90 ] || die "not HEALTH_OK with an active mgr after 90 s: $st"
        sleep 0.5
    done

    cat >"$d/octsdb.conf" <<EOF
# written by scripts/ceph-cluster.sh for the cluster in this dir
tsd.storage.backend = rados
tsd.storage.rados.conf = $conf
tsd.storage.rados.pool = $pool
tsd.storage.rados.user = octsdb
EOF
    trap - EXIT
    echo "$d/octsdb.conf"
}

case "$cmd" in
start) start_cluster "$dir" ;;
stop) stop_cluster "$dir" ;;
*) usage ;;
esac
