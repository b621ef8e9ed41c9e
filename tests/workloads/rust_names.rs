// rust_names: a small Rust program whose hot functions are an inherent
// method and a trait method, for names demangled from both Rust manglings.
// Written for Debian 12's rustc 1.63: no std::hint::black_box (1.66), a
// volatile read stands in for it.
fn black_box<T: Copy>(value: T) -> T {
    unsafe { std::ptr::read_volatile(&value) }
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

// CPU time of this thread in ns (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu_ns() -> i64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { clock_gettime(3, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

trait Job {
    fn work(&self, deadline_ns: i64) -> u64;
}

struct Thirty;

impl Job for Thirty {
    #[inline(never)]
    fn work(&self, deadline_ns: i64) -> u64 {
        let mut x = 7u64;
        while thread_cpu_ns() < deadline_ns {
            for i in 0..65536u64 {
                x = black_box(x.rotate_left(5) ^ i).wrapping_mul(0x9E3779B97F4A7C15);
            }
        }
        x
    }
}

struct Worker {
    state: u64,
}

impl Worker {
    #[inline(never)]
    fn spin(&mut self, deadline_ns: i64) -> u64 {
        while thread_cpu_ns() < deadline_ns {
            for i in 0..65536u64 {
                self.state = black_box(self.state.rotate_left(7) ^ i).wrapping_mul(2862933555777941757);
            }
        }
        self.state
    }
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let start = thread_cpu_ns();
    let mut worker = Worker { state: 12345 };
    let a = worker.spin(start + (seconds * 0.7e9) as i64);
    let job: &dyn Job = black_box(&Thirty);
    let b = job.work(start + (seconds * 1e9) as i64);
    std::process::exit((black_box(a ^ b) & 0) as i32);
}
