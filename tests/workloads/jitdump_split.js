// jitdump_split.js: two hot JavaScript functions with a 70/30 split of the
// work by construction, for node --perf-prof (which writes a jitdump).
// Per round jsSeventy runs 700,000 iterations of a loop and jsThirty
// 300,000 of the same loop; V8 optimizes both early (on-stack replacement
// in the first rounds), so almost all the time is in their JIT code.
//
// Usage: node --perf-prof jitdump_split.js [CPU_SECONDS]   (default 1.0)
'use strict';

function jsSeventy(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) | 0;
  return x;
}

function jsThirty(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) | 0;
  return x;
}

const seconds = Number(process.argv[2] || 1.0);
const start = process.cpuUsage();
const cpuMicros = () => {
  const used = process.cpuUsage(start);
  return used.user + used.system;
};
let sink = 0;
while (cpuMicros() < seconds * 1e6) {
  sink ^= jsSeventy(700000);
  sink ^= jsThirty(300000);
}
// Printed so the loops cannot be optimized away.
console.log(sink === 42 ? 'unlikely' : 'done');
