// core.js: what every part of the page shares: error capture (first, so
// the self-test sees every error), the embedded data, small DOM helpers and
// the per-section model the flame graph and the views read.
'use strict';
const S = {};
S.errors = [];
window.addEventListener('error', (e) => S.errors.push('error: ' + e.message));
window.addEventListener('securitypolicyviolation',
    (e) => S.errors.push('blocked by policy: ' + e.violatedDirective + ' ' + e.blockedURI));
(function () {
  const original = console.error;
  console.error = function (...args) {
    S.errors.push('console.error: ' + args.map(String).join(' '));
    original.apply(console, args);
  };
})();

S.timings = {};
S.timings.parse = performance.now();
S.data = JSON.parse(document.getElementById('sample-data').textContent);
S.timings.parse = performance.now() - S.timings.parse;
S.$ = (id) => document.getElementById(id);

// An element with text content (never HTML: names hold <, > and &).
S.el = function (tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
};

S.percent = (value, total) => (total > 0 ? (100 * value / total).toFixed(2) + '%' : '-');
S.funcName = (f) => (f < 0 ? 'all' : S.data.funcs[f][0]);
S.funcDso = (f) => (f < 0 ? '' : S.data.funcs[f][1]);
S.funcKind = (f) => (f < 0 ? 'root' : S.data.funcs[f][2]);
S.unit = S.data.weight === 'period' ? 'period' : 'samples';

// A section's stack tree as typed arrays. Nodes come in preorder, so a
// node's subtree is the index range [i, i + size[i]) and its parent was
// seen before it: one pass lays out x (in weight units) and depth.
S.buildModel = function (section) {
  const rows = section.nodes;  // flat: func, parent, total, self per node
  const n = rows.length / 4;
  const m = {
    section, n, fn: new Int32Array(n), parent: new Int32Array(n), total: new Float64Array(n),
    self: new Float64Array(n), depth: new Int32Array(n), x: new Float64Array(n),
    size: new Int32Array(n), maxDepth: 0,
  };
  const nextX = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = rows[4 * i + 1];
    m.fn[i] = rows[4 * i];
    m.parent[i] = p;
    m.total[i] = rows[4 * i + 2];
    m.self[i] = rows[4 * i + 3];
    m.size[i] = 1;
    if (i === 0) continue;
    m.depth[i] = m.depth[p] + 1;
    m.x[i] = nextX[p];
    nextX[p] += m.total[i];
    nextX[i] = m.x[i];
    if (m.depth[i] > m.maxDepth) m.maxDepth = m.depth[i];
  }
  for (let i = n - 1; i > 0; i--) m.size[m.parent[i]] += m.size[i];
  return m;
};

// The summed total of the nodes whose function `matches` (a Uint8Array over
// funcs), each sample once: a match below a match adds nothing.
S.matchedTotal = function (m, matches) {
  const inside = new Uint8Array(m.n);
  let sum = 0;
  for (let i = 1; i < m.n; i++) {
    const outer = inside[m.parent[i]];
    const hit = matches[m.fn[i]] === 1;
    inside[i] = outer || hit ? 1 : 0;
    if (hit && !outer) sum += m.total[i];
  }
  return sum;
};
