"""Two threads, one pinned to each CPU (node 0 = CPU 0, node 1 = CPU 1 in the guest),
each touching NPAGES pages of its own; the data's node is left to the caller's policy
(numactl --membind=0). Prints {"threads": [{"tid", "cpu", "pages"}...]} as JSON once both
threads are done.

    thread_per_node.py NPAGES"""
import json
import os
import sys
import threading

from pages import Buffer, no_thp


def worker(cpu, npages, barrier, results):
    os.sched_setaffinity(0, {cpu})  # 0 = the calling thread
    buf = Buffer(npages)
    barrier.wait()
    buf.touch()
    with open(f"/proc/self/task/{threading.get_native_id()}/stat") as f:
        ran_on = int(f.read().rsplit(")", 1)[1].split()[36])  # field 39: last CPU
    results.append({"tid": threading.get_native_id(), "cpu": cpu, "ran_on": ran_on, "pages": npages})
    barrier.wait()  # keep every buffer mapped until both threads are done


def main():
    npages = int(sys.argv[1])
    no_thp()
    barrier = threading.Barrier(2)
    results = []
    threads = [threading.Thread(target=worker, args=(cpu, npages, barrier, results)) for cpu in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    json.dump({"pid": os.getpid(), "threads": sorted(results, key=lambda r: r["cpu"])}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
