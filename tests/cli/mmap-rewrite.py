#!/usr/bin/env python3
"""Changes a file's bytes without changing its stat() state (tests/cli/test-cache-content.sh).

mmap-rewrite.py FILE OLD NEW DIR: maps FILE shared and writable, stores into it once (the
first store into a clean page updates mtime and ctime), waits 1.2 s so that the state is
not "changed less than a second ago", then creates DIR/ready. When DIR/go appears it
replaces the first OLD in the mapping with NEW (same length): the page is already dirty
and writable, so the kernel updates no timestamp. Then DIR/done; it exits when DIR/quit
appears (or after 60 s).
"""
import mmap
import os
import sys
import time


def wait_for(path):
    for _ in range(6000):
        if os.path.exists(path):
            return True
        time.sleep(0.01)
    return False


def main():
    path, old, new, d = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode(), sys.argv[4]
    assert len(old) == len(new)
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    at = m.find(old)
    if at < 0:
        sys.exit("mmap-rewrite: %r not in %s" % (old, path))
    m[at] = m[at]  # dirty the page: its timestamps move now, not at the rewrite
    time.sleep(1.2)
    open(os.path.join(d, "ready"), "w").close()
    if not wait_for(os.path.join(d, "go")):
        sys.exit(1)
    m[at:at + len(new)] = new
    open(os.path.join(d, "done"), "w").close()
    wait_for(os.path.join(d, "quit"))
    m.close()
    os.close(fd)


main()
