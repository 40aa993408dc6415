"""Benchmark workload (scripts/bench/python.sh).

  deep.py depth D SECONDS   spin D Python frames deep for SECONDS of CPU
  deep.py work D N          N rounds of fixed work D frames deep; prints
                            "cpu=S" (the thread's CPU time)
  deep.py many K SECONDS    K distinct functions (K code objects), each a
                            loop of 5000, called in turn for SECONDS of CPU
"""
import sys
import time


def ho_rec(d, n):
    if d <= 1:
        x = 0
        for i in range(n):
            x += i
        return x
    return ho_rec(d - 1, n)


def main():
    mode, a, b = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    if mode == "depth":
        end = time.thread_time() + b
        while time.thread_time() < end:
            ho_rec(a, 20000)
    elif mode == "work":
        t0 = time.thread_time()
        for _ in range(int(b)):
            ho_rec(a, 20000)
        print("cpu=%.6f" % (time.thread_time() - t0), flush=True)
    else:
        fs = []
        for k in range(a):
            ns = {}
            exec("def ho_f%d(n):\n    x = 0\n    for i in range(n):\n        x += i\n    return x\n"
                 % k, ns)
            fs.append(ns["ho_f%d" % k])
        end = time.thread_time() + b
        while time.thread_time() < end:
            for f in fs:
                f(5000)


if __name__ == "__main__":
    main()
