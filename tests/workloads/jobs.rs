// jobs: a Rust workload whose CPU time splits 50/30/20 by construction
// between a method (`Worker::spin`), a trait implementation
// (`<Thirty as Job>::work`) and a closure, each spinning in small helpers
// the compiler inlines (`wrapping_mul`, `wrapping_add`, the iterator's
// `next`), for rows by function and inline frames in Rust (built
// -C opt-level=2 -g with frame pointers). Written for rustc 1.63 (Debian
// 12's): no std::hint::black_box, volatile accesses instead.
//
// Usage: jobs [CPU_SECONDS]   (default 1.0)
use std::ptr::{read_volatile, write_volatile};

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

fn thread_cpu_ns() -> i64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

// Spins `step` until the thread's CPU clock has advanced by `ns`.
#[inline(always)]
fn spin_for(ns: i64, mut x: u64, step: impl Fn(u64) -> u64) -> u64 {
    let deadline = thread_cpu_ns() + ns;
    let mut sink = 0u64;
    loop {
        for _ in 0..65536 {
            x = step(x);
            unsafe { write_volatile(&mut sink, x) };
        }
        if thread_cpu_ns() >= deadline {
            return x;
        }
    }
}

pub trait Job {
    fn work(&self, ns: i64) -> u64;
}

pub struct Thirty {
    seed: u64,
}

impl Job for Thirty {
    #[inline(never)]
    fn work(&self, ns: i64) -> u64 {
        spin_for(ns, self.seed, |x| x.wrapping_mul(2862933555777941757).wrapping_add(3))
    }
}

pub struct Worker {
    state: u64,
}

impl Worker {
    #[inline(never)]
    pub fn spin(&mut self, ns: i64) -> u64 {
        self.state = spin_for(ns, self.state, |x| {
            x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407)
        });
        self.state
    }
}

fn main() {
    let seconds: f64 = match std::env::args().nth(1) {
        None => 1.0,
        Some(text) => match text.parse::<f64>() {
            Ok(s) if s >= 0.0 => s,
            _ => {
                eprintln!("usage: jobs [CPU_SECONDS]");
                std::process::exit(2);
            }
        },
    };
    let mut worker = Worker { state: 1 };
    let thirty: Box<dyn Job> = Box::new(Thirty { seed: 7 });
    let twenty = |ns: i64| spin_for(ns, 11, |x| x.wrapping_add(x >> 7).wrapping_mul(3202034522624059733));
    // Called through a vtable the optimizer cannot see through, so the
    // closure stays a function of its own.
    let twenty: &dyn Fn(i64) -> u64 = &twenty;
    let twenty = unsafe { read_volatile(&twenty) };
    let round_ns: i64 = 10_000_000;
    let rounds = ((seconds * 1e9) as i64 / round_ns).max(1);
    let mut sink = 0u64;
    for _ in 0..rounds {
        sink ^= worker.spin(round_ns * 5 / 10);
        sink ^= thirty.work(round_ns * 3 / 10);
        sink ^= twenty(round_ns * 2 / 10);
    }
    let mut out = 0u64;
    unsafe { write_volatile(&mut out, sink) };
}
