"""precord's Python workload: ho_fa and ho_fb, identical bodies, called
RATIO : 1 under ho_main for DURATION seconds of the thread's CPU time.

Ground truth: the thread CPU time (time.thread_time) spent in each,
appended as one line "truth pid=PID ho_fa=S ho_fb=S calls_a=N calls_b=N"
to the file named by PRECORD_WL_TRUTH (stdout without it) at the end and
on each SIGUSR1 (tests/bats/helpers.bash: truth_share, truth_snapshot).

usage: ratio.py DURATION RATIO [N]   (N: loop iterations of one call,
default 50000: a call takes milliseconds, many sampling periods, so that
the samples do not alias with the calls' rhythm)
"""
import os
import signal
import sys
import time

state = {"a": 0.0, "b": 0.0, "ca": 0, "cb": 0}


def truth(*_):
    line = "truth pid=%d ho_fa=%.9f ho_fb=%.9f calls_a=%d calls_b=%d\n" % (
        os.getpid(), state["a"], state["b"], state["ca"], state["cb"])
    path = os.environ.get("PRECORD_WL_TRUTH")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, line.encode())
        os.close(fd)
    else:
        sys.stdout.write(line)
        sys.stdout.flush()


def ho_fa(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def ho_fb(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def ho_main(duration, ratio, n):
    end = time.thread_time() + duration
    while time.thread_time() < end:
        t0 = time.thread_time()
        for _ in range(ratio):
            ho_fa(n)
        t1 = time.thread_time()
        ho_fb(n)
        t2 = time.thread_time()
        state["a"] += t1 - t0
        state["b"] += t2 - t1
        state["ca"] += ratio
        state["cb"] += 1
    truth()


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, truth)
    print("ready", flush=True)
    ho_main(float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 50000)
