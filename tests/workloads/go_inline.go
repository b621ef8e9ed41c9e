// go_inline: a Go program whose hot code is inlined: main.mix, small
// enough for the compiler to inline, does the work of main.churn's loop
// (about 90% of its samples), for Go's inline trees in a stripped binary.
package main

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// CPU time of this thread in ns (CLOCK_THREAD_CPUTIME_ID).
func threadCPUNs() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// Inlined into churn (a leaf of a few instructions).
func mix(x, i uint64) uint64 {
	return (x<<5 | x>>59) ^ i*0x9E3779B97F4A7C15
}

//go:noinline
func churn(deadline int64) uint64 {
	x := uint64(7)
	for threadCPUNs() < deadline {
		for i := uint64(0); i < 65536; i++ {
			x = mix(x, i)
		}
	}
	return x
}

func main() {
	seconds := 1.0
	if len(os.Args) > 1 {
		if s, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			seconds = s
		}
	}
	x := churn(threadCPUNs() + int64(seconds*1e9))
	os.Exit(int(x & 0))
}
