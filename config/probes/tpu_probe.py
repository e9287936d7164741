# tpuctl's worker probe, for "tpuctl doctor NODE" and "tpuctl
# reset-workers NODE".  Python 3 standard library only (what a TPU VM
# image has).  Run by tpuctl on every worker as
#   python3 -c "$(cat tpu_probe.py)" doctor|reset [--dry-run] [--grace S]
# with, for doctor, TPUCTL_EXPECT: one line per framework version the
# compatibility matrix accepts on this node, "framework dist=ver dist=ver",
# and TPUCTL_NODE (the node's name, for the fixes).
#
# doctor prints one line per finding, "finding: WHAT; fix: HOW", then
# "doctor: N findings" (or "doctor: clean"), and exits 1 with findings.
# reset stops the processes that hold the TPU devices or a libtpu lock
# (SIGTERM, then SIGKILL after the grace period) and removes the
# lockfiles no live process holds; --dry-run only says what it would do.
import errno
import fcntl
import glob
import os
import signal
import sys
import time

NODE = os.environ.get("TPUCTL_NODE", "NODE")


def lockfiles():
    uid = os.getuid()
    return ["/tmp/libtpu_lockfile",
            "/tmp/libtpu_lock_%d/libtpu_lockfile" % uid,
            os.path.expanduser("~/.libtpu_lockfile")]


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            s = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        return " ".join(s.split())[:80] or "?"
    except OSError:
        return "?"


def lock_holders(path):
    """PIDs holding a POSIX lock on path, from /proc/locks (by inode)."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    want = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids = []
    try:
        with open("/proc/locks") as f:
            for line in f:
                p = line.split()
                # "1: POSIX ADVISORY WRITE 1234 08:01:5678 0 EOF"
                if "->" in p:
                    p.remove("->")
                if len(p) >= 6 and p[5] == want and p[4].isdigit():
                    pids.append(int(p[4]))
    except OSError:
        pass
    return sorted(set(pids))


def lock_is_held(path):
    """True/False, or None when the file cannot be probed."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EAGAIN):
            return True
        return None
    finally:
        os.close(fd)  # also releases our probe lock
    return False


def device_holders():
    """{pid: [device, ...]} for /dev/accel* and /dev/vfio/* opened.

    Matched by device and inode, never by path name: emulated workers (and
    containers) share one /proc but each has its own /dev, so another
    worker's process holding its /dev/accel0 reads back as "/dev/accel0"
    here too while it is another file.  stat() through /proc/PID/fd/N
    gives the file the process really holds."""
    devs = {}
    for d in glob.glob("/dev/accel*") + glob.glob("/dev/vfio/*"):
        try:
            st = os.stat(d)
        except OSError:
            continue
        devs[(st.st_dev, st.st_ino)] = d
    out = {}
    if not devs:
        return out
    me = os.getpid()
    for d in glob.glob("/proc/[0-9]*/fd/*"):
        try:
            st = os.stat(d)
        except OSError:
            continue
        dev = devs.get((st.st_dev, st.st_ino))
        if dev:
            pid = int(d.split("/")[2])
            if pid != me:
                out.setdefault(pid, set()).add(dev)
    return {p: sorted(v) for p, v in out.items()}


def installed(dist):
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def matches(have, want):
    return have == want or have.startswith(want + ".")


def doctor():
    findings = []
    ok = []
    ok.append("python %d.%d.%d" % sys.version_info[:3])
    # frameworks against the matrix
    expect = {}
    for line in os.environ.get("TPUCTL_EXPECT", "").splitlines():
        w = line.split()
        if w:
            expect.setdefault(w[0], []).append(
                dict(x.split("=", 1) for x in w[1:]))
    # the package that makes a framework a TPU installation (a CPU torch
    # without torch_xla is no pytorch-on-TPU install to judge)
    key = {"jax": "jax", "pytorch": "torch_xla", "tensorflow": "tensorflow-tpu"}
    for fw, combos in sorted(expect.items()):
        dists = sorted({d for c in combos for d in c})
        have = {d: installed(d) for d in dists}
        if not have.get(key.get(fw, ""), any(have.values())):
            continue
        if any(all(have.get(d) and matches(have[d], v) for d, v in c.items())
               for c in combos):
            ok.append("%s: %s" % (fw, ", ".join(
                "%s %s" % (d, v) for d, v in sorted(have.items()) if v)))
            continue
        findings.append(
            "%s packages %s match no version of the compatibility matrix "
            "for this node; fix: tpuctl install %s --framework %s" % (
                fw, ", ".join("%s %s" % (d, v or "missing")
                              for d, v in sorted(have.items())), NODE, fw))
    if installed("libtpu") and installed("libtpu-nightly"):
        findings.append(
            "both libtpu %s and libtpu-nightly %s are installed (two "
            "frameworks pin different libtpu builds); fix: keep one "
            "framework per environment, then tpuctl install %s" % (
                installed("libtpu"), installed("libtpu-nightly"), NODE))
    # libtpu lockfiles
    for path in lockfiles():
        if not os.path.exists(path):
            continue
        held = lock_is_held(path)
        if held:
            who = ", ".join("pid %d (%s)" % (p, cmdline(p))
                            for p in lock_holders(path)) or "another process"
            findings.append(
                "libtpu lock %s is held by %s: the TPU is in use; fix: stop "
                "it, or tpuctl reset-workers %s" % (path, who, NODE))
        elif held is False:
            findings.append(
                "stale libtpu lockfile %s (no process holds it); fix: rm %s, "
                "or tpuctl reset-workers %s" % (path, path, NODE))
    for pid, devs in sorted(device_holders().items()):
        findings.append(
            "pid %d (%s) holds %s; fix: stop it, or tpuctl reset-workers "
            "%s" % (pid, cmdline(pid), ", ".join(devs), NODE))
    pre = os.environ.get("LD_PRELOAD", "")
    if pre:
        findings.append(
            "LD_PRELOAD=%s is set in the login environment (libtpu and "
            "tcmalloc preloads conflict at start-up); fix: unset it in "
            "the shell profile unless the framework's docs ask for it" % pre)
    try:
        with open("/etc/ld.so.preload") as f:
            libs = f.read().split()
        if libs:
            findings.append("/etc/ld.so.preload preloads %s; fix: remove "
                            "the line unless it is wanted" % " ".join(libs))
    except OSError:
        pass
    for line in ok:
        print("ok: " + line)
    for line in findings:
        print("finding: " + line)
    print("doctor: %s" % ("%d finding%s" % (len(findings),
          "" if len(findings) == 1 else "s") if findings else "clean"))
    return 1 if findings else 0


def reset(dry_run, grace):
    pids = {}
    for path in lockfiles():
        if os.path.exists(path) and lock_is_held(path):
            for p in lock_holders(path):
                pids.setdefault(p, []).append(path)
    for p, devs in device_holders().items():
        pids.setdefault(p, []).extend(devs)
    pids.pop(os.getpid(), None)
    verb = "would stop" if dry_run else "stopping"
    for p, what in sorted(pids.items()):
        print("%s pid %d (%s): holds %s" % (verb, p, cmdline(p),
                                            ", ".join(what)))
    failed = 0
    if not dry_run and pids:
        for p in pids:
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        alive = set(pids)
        while alive and time.monotonic() < deadline:
            alive = {p for p in alive if os.path.exists("/proc/%d" % p)
                     and not open("/proc/%d/stat" % p).read().split(") ")[-1].startswith("Z")}
            if alive:
                time.sleep(0.1)
        for p in sorted(alive):
            print("pid %d did not exit in %g s: SIGKILL" % (p, grace))
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)
        for p in sorted(pids):
            if os.path.exists("/proc/%d" % p):
                st = open("/proc/%d/stat" % p).read().split(") ")[-1]
                if not st.startswith("Z"):
                    print("pid %d is still running" % p)
                    failed = 1
    for path in lockfiles():
        if os.path.exists(path) and lock_is_held(path) is False:
            if dry_run:
                print("would remove %s" % path)
            else:
                os.remove(path)
                print("removed %s" % path)
    if not pids and not any(os.path.exists(p) for p in lockfiles()):
        print("reset: nothing to do")
    return failed


def main(argv):
    if argv and argv[0] == "doctor":
        return doctor()
    if argv and argv[0] == "reset":
        dry = "--dry-run" in argv
        grace = 5.0
        if "--grace" in argv:
            grace = float(argv[argv.index("--grace") + 1])
        return reset(dry, grace)
    print("usage: tpu_probe.py doctor | reset [--dry-run] [--grace S]")
    return 2


sys.exit(main(sys.argv[1:]))
