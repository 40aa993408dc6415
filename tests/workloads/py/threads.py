"""Two threads running different functions (ho_ta, ho_tb) for DURATION
seconds of CPU time each; each prints "thread NAME tid=TID" (its native
thread id) first.  usage: threads.py DURATION"""
import sys
import threading
import time


def spin(duration):
    x = 0
    end = time.thread_time() + duration
    while time.thread_time() < end:
        for i in range(1000):
            x += i * i
    return x


def ho_ta(duration):
    print("thread ho_ta tid=%d" % threading.get_native_id(), flush=True)
    return spin(duration)


def ho_tb(duration):
    print("thread ho_tb tid=%d" % threading.get_native_id(), flush=True)
    return spin(duration)


if __name__ == "__main__":
    d = float(sys.argv[1])
    ts = [threading.Thread(target=ho_ta, args=(d,)), threading.Thread(target=ho_tb, args=(d,))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
