// goleaf: Go's frameless leaves, for the frame-pointer "leaf" problem in Go.
//
// main.main calls main.alpha, main.beta and main.gamma, round after round
// (each round in an order of its own); each calls main.spin, a small loop
// that calls nothing and needs no stack, so the Go compiler gives it no
// frame (it neither saves nor sets up BP). A frame-pointer walk taken in spin finds BP still pointing at its
// caller's frame, whose saved return address is in main.main: the chain
// reads spin, main.main and skips alpha, beta or gamma. Each round gives
// alpha 5, beta 3 and gamma 2 calls of spin with the same work, so their
// CPU time splits 50/30/20 by construction (in the children view: they are
// the callers).
//
// Usage: goleaf [CPU_SECONDS]   (default 1; decimals allowed)
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// Iterations of spin per call: about 50 us.
const chunk = 40000

var sink uint64

//go:noinline
func spin(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func alpha(x uint64) uint64 {
	for i := 0; i < 5; i++ {
		x = spin(x, chunk)
	}
	return x
}

//go:noinline
func beta(x uint64) uint64 {
	for i := 0; i < 3; i++ {
		x = spin(x, chunk)
	}
	return x
}

//go:noinline
func gamma(x uint64) uint64 {
	for i := 0; i < 2; i++ {
		x = spin(x, chunk)
	}
	return x
}

// The process's CPU time: one goroutine computes, and it allocates nothing,
// so the runtime's own threads add next to none.
func cpuNanos() int64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return usage.Utime.Nano() + usage.Stime.Nano()
}

func main() {
	seconds := 1.0
	if len(os.Args) > 1 {
		parsed, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || parsed < 0 {
			fmt.Fprintf(os.Stderr, "usage: %s [CPU_SECONDS]\n", os.Args[0])
			os.Exit(2)
		}
		seconds = parsed
	}
	runtime.GOMAXPROCS(1)
	deadline := cpuNanos() + int64(seconds*1e9)
	x := sink
	// The three in an order drawn afresh each round (xorshift): a round is
	// 10 calls of ~50 us, and at 1 kHz a sample every ~2 rounds could land
	// at the same point of each round, in the same function, for as long as
	// the two stay in step (a CI run read beta at 25% instead of 30).
	order := uint32(2463534242)
	for cpuNanos() < deadline {
		order ^= order << 13
		order ^= order >> 17
		order ^= order << 5
		switch order % 6 {
		case 0:
			x = gamma(beta(alpha(x)))
		case 1:
			x = beta(gamma(alpha(x)))
		case 2:
			x = gamma(alpha(beta(x)))
		case 3:
			x = alpha(gamma(beta(x)))
		case 4:
			x = beta(alpha(gamma(x)))
		default:
			x = alpha(beta(gamma(x)))
		}
	}
	sink = x
}
