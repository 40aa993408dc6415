// A Go workload for tests/bats/go.bats: two functions with identical
// bodies, main.hoGoAlpha and main.hoGoBeta, called for SECONDS (default 2)
// in turns of 3 ms and 1 ms of wall time.  Each function measures the
// time it spends (its own ground truth, as CPU time is what the profiler
// samples and the process runs alone on a CPU) and the program prints
//
//	hogo alpha_ns=N beta_ns=N
//
// at the end.  Built stripped: go build -ldflags='-s -w'.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func hoGoAlpha(d time.Duration) time.Duration {
	t0 := time.Now()
	x := sink
	for time.Since(t0) < d {
		for i := 0; i < 2000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
	return time.Since(t0)
}

//go:noinline
func hoGoBeta(d time.Duration) time.Duration {
	t0 := time.Now()
	x := sink
	for time.Since(t0) < d {
		for i := 0; i < 2000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
	return time.Since(t0)
}

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil && v > 0 {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var alpha, beta time.Duration
	for time.Now().Before(end) {
		alpha += hoGoAlpha(3 * time.Millisecond)
		beta += hoGoBeta(1 * time.Millisecond)
	}
	fmt.Printf("truth pid=%d hoGoAlpha=%d hoGoBeta=%d\n", os.Getpid(), alpha.Nanoseconds(),
		beta.Nanoseconds())
}
