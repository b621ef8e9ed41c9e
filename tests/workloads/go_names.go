// go_names: a small Go program whose hot code is a plain function and a
// method, for Go's symbol names (main.alpha, main.(*Worker).spin).
package main

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// CPU time of this thread in ns (CLOCK_THREAD_CPUTIME_ID); goroutines of
// this program stay on one thread while they spin.
func threadCPUNs() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

//go:noinline
func alpha(deadline int64) uint64 {
	x := uint64(7)
	for threadCPUNs() < deadline {
		for i := uint64(0); i < 65536; i++ {
			x = (x<<5 | x>>59) ^ i*0x9E3779B97F4A7C15
		}
	}
	return x
}

type Worker struct{ state uint64 }

//go:noinline
func (w *Worker) spin(deadline int64) uint64 {
	for threadCPUNs() < deadline {
		for i := uint64(0); i < 65536; i++ {
			w.state = (w.state<<7 | w.state>>57) ^ i*2862933555777941757
		}
	}
	return w.state
}

func main() {
	seconds := 1.0
	if len(os.Args) > 1 {
		if s, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			seconds = s
		}
	}
	start := threadCPUNs()
	w := &Worker{state: 12345}
	a := alpha(start + int64(seconds*0.6e9))
	b := w.spin(start + int64(seconds*1e9))
	os.Exit(int((a ^ b) & 0))
}
