"""A C function calling back into Python: ho_caller sorts with
sorted(key=ho_key) for DURATION seconds of CPU time.  usage: callback.py DURATION"""
import sys
import time


def ho_key(v):
    x = 0
    for i in range(200):
        x += i * v
    return x % 1000


def ho_caller(duration):
    data = list(range(200))
    end = time.thread_time() + duration
    n = 0
    while time.thread_time() < end:
        n += len(sorted(data, key=ho_key))
    return n


if __name__ == "__main__":
    ho_caller(float(sys.argv[1]))
