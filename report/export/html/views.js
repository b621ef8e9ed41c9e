// views.js: the header facts, the sortable function table and the
// callers/callees of the selected function. They read the section's table
// rows ([func, self, total]) and its model; they never parse names as HTML.
'use strict';
S.TABLE_ROWS = 500;  // rows drawn at once; search narrows the rest

S.showFacts = function () {
  const h = S.data.header;
  const facts = S.$('facts');
  const add = (name, value) => {
    if (value === '' || value === undefined) return;
    facts.append(S.el('dt', name), S.el('dd', String(value)));
  };
  add('Command', h.command);
  add('Host', [h.host, h.os, h.arch].filter((v) => v).join(', '));
  add('CPUs', h.cpus);
  add('Date', h.date);
  add('Duration', h.duration_s.toFixed(3) + ' s');
  add('Samples', `${h.samples} recorded, ${h.lost} lost`);
  add('Events', h.events.map(([name, n]) => `${name} (${n} samples)`).join(', '));
  add('In this page', S.data.sections.map(
      (s) => `${s.name}: ${s.samples} samples kept, period ${s.period}`).join('; '));
  add('Recorder', h.recorder);
  const warnings = [];
  if (!h.finalized) warnings.push('The recording was not finalized (its recorder died): ' +
      'what it held up to the last complete chunk is shown.');
  if (h.lost > 0) warnings.push(`${h.lost} samples were lost while recording.`);
  if (warnings.length) {
    S.$('warning').textContent = warnings.join(' ');
    S.$('warning').hidden = false;
  }
};

S.Table = class {
  constructor(table, onSelect) {
    this.body = table.tBodies[0];
    this.heads = Array.from(table.tHead.rows[0].cells);
    this.onSelect = onSelect;
    this.key = 'total';
    this.ascending = false;
    this.rows = [];
    this.matches = null;
    this.selected = -1;
    for (const th of this.heads) {
      th.addEventListener('click', () => {
        const key = th.dataset.key;
        this.ascending = key === this.key ? !this.ascending : key === 'name' || key === 'dso';
        this.key = key;
        this.render();
      });
    }
    this.body.addEventListener('click', (e) => {
      const tr = e.target.closest('tr');
      if (tr) this.onSelect(Number(tr.dataset.func));
    });
  }

  setSection(section, model) {
    this.rows = section.table;
    this.all = model.total[0];
    this.render();
  }

  sortValue(row) {
    switch (this.key) {
      case 'self': return row[1];
      case 'name': return S.funcName(row[0]);
      case 'dso': return S.funcDso(row[0]);
      default: return row[2];
    }
  }

  render() {
    const sign = this.ascending ? 1 : -1;
    const rows = this.rows.slice().sort((a, b) => {
      const va = this.sortValue(a);
      const vb = this.sortValue(b);
      if (va !== vb) return (va < vb ? -1 : 1) * sign;
      return b[2] - a[2];
    });
    const shown = this.matches ? rows.filter((r) => this.matches[r[0]] === 1) : rows;
    const fragment = document.createDocumentFragment();
    for (const [f, self, total] of shown.slice(0, S.TABLE_ROWS)) {
      const tr = document.createElement('tr');
      tr.dataset.func = f;
      if (this.matches) tr.className = 'match';
      if (f === this.selected) tr.classList.add('selected');
      tr.append(S.el('td', S.percent(self, this.all), 'num'), S.el('td', String(self), 'num'),
          S.el('td', S.percent(total, this.all), 'num'), S.el('td', String(total), 'num'),
          S.el('td', S.funcName(f), 'name'), S.el('td', S.funcDso(f), 'dso'));
      tr.cells[4].title = S.funcName(f);
      fragment.append(tr);
    }
    this.body.replaceChildren(fragment);
    for (const th of this.heads) {
      th.classList.toggle('sorted', th.dataset.key === this.key);
      th.classList.toggle('asc', this.ascending);
    }
    const hidden = shown.length - Math.min(shown.length, S.TABLE_ROWS);
    S.$('table-note').textContent = `${shown.length} of ${this.rows.length} functions` +
        (hidden > 0 ? `; the first ${S.TABLE_ROWS} shown, search to narrow` : '');
  }
};

// Who calls `f` and whom it calls, from the stack tree: a caller is weighed
// by the total of f's outermost frames under it (so callers add up to f's
// total, recursion counted once), a callee by its frames' totals under f.
S.calls = function (m, f) {
  const callers = new Map();
  const callees = new Map();
  const inside = new Uint8Array(m.n);
  let total = 0;
  let self = 0;
  for (let i = 1; i < m.n; i++) {
    const p = m.parent[i];
    inside[i] = inside[p] || m.fn[i] === f ? 1 : 0;
    if (m.fn[p] === f && m.fn[i] !== f) {
      callees.set(m.fn[i], (callees.get(m.fn[i]) || 0) + m.total[i]);
    }
    if (m.fn[i] !== f) continue;
    self += m.self[i];
    if (inside[p]) continue;
    total += m.total[i];
    callers.set(m.fn[p], (callers.get(m.fn[p]) || 0) + m.total[i]);
  }
  const sorted = (map) => Array.from(map.entries()).sort((a, b) => b[1] - a[1]);
  return {total, self, callers: sorted(callers), callees: sorted(callees)};
};

S.showCalls = function (m, f, onSelect) {
  const box = S.$('calls');
  const c = S.calls(m, f);
  S.$('calls-name').textContent = `${S.funcName(f)}: total ${S.percent(c.total, m.total[0])}, ` +
      `self ${S.percent(c.self, m.total[0])}`;
  const list = (caption, entries) => {
    const table = S.el('table');
    table.append(S.el('caption', caption));
    const head = table.createTHead().insertRow();
    head.append(S.el('th', `Share of ${S.funcName(f)}`, 'num'), S.el('th', S.unit, 'num'),
        S.el('th', 'Function'));
    const body = table.createTBody();
    for (const [g, weight] of entries.slice(0, S.TABLE_ROWS)) {
      const tr = body.insertRow();
      tr.dataset.func = g;
      tr.append(S.el('td', S.percent(weight, c.total), 'num'), S.el('td', String(weight), 'num'),
          S.el('td', g < 0 ? '(root)' : S.funcName(g), 'name'));
    }
    if (entries.length === 0) body.insertRow().append(S.el('td', 'none'));
    table.addEventListener('click', (e) => {
      const tr = e.target.closest('tbody tr');
      if (tr && tr.dataset.func !== undefined && Number(tr.dataset.func) >= 0) {
        onSelect(Number(tr.dataset.func));
      }
    });
    return table;
  };
  const selfRow = [[f, c.self]];
  box.replaceChildren(list('Called by', c.callers), list('Calls', c.callees),
      list('Self', selfRow));
};
