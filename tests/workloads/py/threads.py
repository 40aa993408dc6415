"""Two threads running different functions (ho_ta, ho_tb) for DURATION
seconds of CPU time each; each prints "thread NAME tid=TID" (its native
thread id) first.  usage: threads.py DURATION"""
import os
import sys
import threading
import time


def say(name):
    # one write(2) per line: the two threads' lines never interleave
    os.write(1, ("thread %s tid=%d\n" % (name, threading.get_native_id())).encode())


def spin(duration):
    x = 0
    end = time.thread_time() + duration
    while time.thread_time() < end:
        for i in range(1000):
            x += i * i
    return x


def ho_ta(duration):
    say("ho_ta")
    return spin(duration)


def ho_tb(duration):
    say("ho_tb")
    return spin(duration)


if __name__ == "__main__":
    d = float(sys.argv[1])
    ts = [threading.Thread(target=ho_ta, args=(d,)), threading.Thread(target=ho_tb, args=(d,))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
