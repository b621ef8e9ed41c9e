// map_hash: a Map keyed by doubles, looked up for SECONDS of wall time
// (default 1.5): V8's Builtins_FindOrderedHashMapEntry calls the C++
// OrderedHashMap::GetHash for each heap-number key, so leaves in the node
// binary sit under builtins V8 maps away from the binary's own layout.
// Prints its pid first: --perf-basic-prof writes /tmp/perf-PID.map.
console.log(process.pid);
const seconds = process.argv[2] ? Number(process.argv[2]) : 1.5;
const keys = [];
const map = new Map();
for (let i = 0; i < 100000; i++) {
  const key = i + 0.5;
  keys.push(key);
  map.set(key, i);
}
let sum = 0;
const end = Date.now() + seconds * 1000;
while (Date.now() < end) {
  for (let i = 0; i < keys.length; i++) sum += map.get(keys[i]);
}
console.log(sum > 0 ? 'ok' : 'none');
