"""Two functions with identical bodies, called RATIO : 1 for DURATION
seconds of CPU, under ho_main.  Prints its own ground truth: the calls of
each and the thread CPU time spent in each (time.thread_time)."""
import sys
import time


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
    calls_a = calls_b = 0
    time_a = time_b = 0.0
    end = time.thread_time() + duration
    while time.thread_time() < end:
        t0 = time.thread_time()
        for _ in range(ratio):
            ho_fa(n)
        t1 = time.thread_time()
        ho_fb(n)
        t2 = time.thread_time()
        time_a += t1 - t0
        time_b += t2 - t1
        calls_a += ratio
        calls_b += 1
    print("truth calls_a=%d calls_b=%d time_a=%.6f time_b=%.6f"
          % (calls_a, calls_b, time_a, time_b), flush=True)


if __name__ == "__main__":
    ho_main(float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 2000)
