// A Go workload for tests/bats/go.bats: two functions with identical
// bodies, main.hoGoAlpha and main.hoGoBeta, called in turn for SECONDS
// of wall time (default 2), each running until its thread has used 3 ms
// (alpha) or 1 ms (beta) of CPU time.  Each function measures the CPU
// time its thread used while it ran (CLOCK_THREAD_CPUTIME_ID; the main
// goroutine is locked to its thread): the ground truth of the test,
// which a busy machine does not skew (wall time would be, by the waits
// of a preempted turn).  At the end the program prints
//
//	truth pid=PID hoGoAlpha=NS hoGoBeta=NS
//
// the line tests/bats/helpers.bash's truth_share reads.  Built stripped:
// go build -ldflags='-s -w'.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID

var sink uint64

func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime,
		uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

//go:noinline
func hoGoAlpha(d int64) int64 {
	t0 := threadCPU()
	x := sink
	for threadCPU()-t0 < d {
		for i := 0; i < 20000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
	return threadCPU() - t0
}

//go:noinline
func hoGoBeta(d int64) int64 {
	t0 := threadCPU()
	x := sink
	for threadCPU()-t0 < d {
		for i := 0; i < 20000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
	return threadCPU() - t0
}

func main() {
	runtime.LockOSThread()
	secs := 2.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil && v > 0 {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var alpha, beta int64
	for time.Now().Before(end) {
		alpha += hoGoAlpha(int64(3 * time.Millisecond))
		beta += hoGoBeta(int64(1 * time.Millisecond))
	}
	fmt.Printf("truth pid=%d hoGoAlpha=%d hoGoBeta=%d\n", os.Getpid(), alpha, beta)
}
