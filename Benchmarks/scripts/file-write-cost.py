#!/usr/bin/python3
"""What a shared-tier hit's file system calls cost on one file system, off the daemon: into
files made ahead of time (as the daemon's shared hits write), write 8 KB, set a 220-byte
`user.imagecached.entry` attribute through the descriptor, rename into place; the median time
of those calls per file, with and without the attribute, in 3 rounds of 500 files.

usage: Benchmarks/scripts/file-write-cost.py FOLDER   (FOLDER on the file system to measure; a
scratch folder is made and removed inside it)
"""
import os
import shutil
import sys
import tempfile
import time

CONTENT = os.urandom(8192)
DESCRIPTION = os.urandom(220)


def median_micros(folder, count, attribute):
    made = []
    for index in range(count):
        path = os.path.join(folder, f"t{index}")
        made.append((os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), path))
    times = []
    for index, (fd, path) in enumerate(made):
        start = time.perf_counter()
        os.write(fd, CONTENT)
        if attribute:
            os.setxattr(fd, "user.imagecached.entry", DESCRIPTION)
        os.rename(path, os.path.join(folder, f"f{index}"))
        times.append(time.perf_counter() - start)
        os.close(fd)
    times.sort()
    return times[len(times) // 2] * 1e6


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for round_ in range(3):
        cells = []
        for attribute in (True, False):
            folder = tempfile.mkdtemp(dir=sys.argv[1])
            try:
                cells.append(median_micros(folder, 500, attribute))
            finally:
                shutil.rmtree(folder)
        print(f"round {round_ + 1}: write + attribute + rename {cells[0]:.1f} µs, write + rename {cells[1]:.1f} µs")


if __name__ == "__main__":
    main()
