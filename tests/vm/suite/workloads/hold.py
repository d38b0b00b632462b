"""Touches NPAGES pages, prints "ready ADDRESS" and keeps them until its stdin closes:
a target for migratepages(8).

    hold.py NPAGES"""
import sys

from pages import Buffer, no_thp


def main():
    no_thp()
    buf = Buffer(int(sys.argv[1]))
    buf.touch()
    print(f"ready {buf.address:x}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
