// page.js: wires the parts together: the event selector, the search, the
// selection shared by the flame graph, the table, the callers/callees and
// the annotate panel (which a selection opens), and the first draw, done
// synchronously while the page loads so that the load event (and a
// headless browser's --dump-dom) comes after it. The time from navigation
// start to the first flame graph goes in #timing, with the steps' own
// times (parse, model, flame).
'use strict';
S.state = {section: 0, model: null, selected: -1, query: ''};

// A click on a function: it is selected and the annotate panel opens on it
// (first, so that the flame graph is drawn once, at its new width).
S.select = function (f) {
  S.annotate.show(f);
  S.highlight(f);
};

S.highlight = function (f) {
  S.state.selected = f;
  S.flame.selected = f;
  S.flame.draw();
  S.table.selected = f;
  S.table.render();
  S.showCalls(S.state.model, f, S.select);
};

S.showSection = function (index) {
  S.state.section = index;
  const section = S.data.sections[index];
  const started = performance.now();
  S.state.model = S.buildModel(section);
  S.timings.model = performance.now() - started;
  S.$('flame-note').textContent = `${section.name}: ${section.samples} samples, ` +
      `${S.state.model.n - 1} frames; width is ${S.unit}` +
      (S.state.model.n > 1 ? '' : ' (no samples)');
  S.applySearch(S.state.query);
  S.flame.setModel(S.state.model);
  S.timings.flame = performance.now() - started - S.timings.model;
  S.table.setSection(section, S.state.model);
  if (S.state.selected >= 0) {
    if (S.annotate.isOpen()) S.annotate.show(S.state.selected);
    S.highlight(S.state.selected);
  }
};

// Highlights the functions whose name matches `query` (a case-insensitive
// substring, or /a regular expression/) and reports their total share.
// Returns {count, share} (share in percent), or null for an empty query.
S.search = function (query) {
  const found = S.applySearch(query);
  S.flame.draw();
  S.table.render();
  return found;
};

// S.search without the redraw.
S.applySearch = function (query) {
  S.state.query = query;
  const out = S.$('search-result');
  let test = null;
  const regex = /^\/(.+)\/([a-z]*)$/.exec(query);
  if (regex) {
    try {
      const re = new RegExp(regex[1], regex[2]);
      test = (name) => re.test(name);
    } catch (e) {
      out.textContent = 'invalid regular expression';
      return null;
    }
  } else if (query !== '') {
    const lower = query.toLowerCase();
    test = (name) => name.toLowerCase().includes(lower);
  }
  if (test === null) {
    S.flame.matches = S.table.matches = null;
    out.textContent = '';
    return null;
  }
  const matches = new Uint8Array(S.data.funcs.length);
  S.data.funcs.forEach((row, f) => { matches[f] = test(row[0]) ? 1 : 0; });
  S.flame.matches = S.table.matches = matches;
  const m = S.state.model;
  const count = m.section.table.filter((r) => matches[r[0]] === 1).length;
  const share = m.total[0] > 0 ? 100 * S.matchedTotal(m, matches) / m.total[0] : 0;
  out.textContent = `${count} function${count === 1 ? '' : 's'} match: ${share.toFixed(2)}% ` +
      `of ${S.unit}`;
  return {count, share};
};

S.start = function () {
  S.showFacts();
  S.flame = new S.Flame(S.$('flame'), S.$('tooltip'), S.select);
  S.table = new S.Table(S.$('functions'), S.select);
  S.annotate = new S.Annotate(S.$('annotate-box'));
  const chooser = S.$('section');
  S.data.sections.forEach((s, i) => chooser.append(new Option(`${s.name} (${s.samples})`, i)));
  S.$('section-label').hidden = S.data.sections.length < 2;
  chooser.addEventListener('change', () => S.showSection(Number(chooser.value)));
  let pending = 0;
  S.$('search').addEventListener('input', (e) => {
    clearTimeout(pending);
    pending = setTimeout(() => S.search(e.target.value), 120);
  });
  S.$('reset-zoom').addEventListener('click', () => S.flame.zoomTo(0));
  let resizing = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => S.flame.draw(), 100);
  });
  S.showSection(0);
  S.renderedMs = performance.now();
  const timing = S.$('timing');
  timing.dataset.renderedMs = S.renderedMs.toFixed(1);
  for (const [step, ms] of Object.entries(S.timings)) timing.dataset[step + 'Ms'] = ms.toFixed(1);
  timing.textContent = `rendered-ms=${S.renderedMs.toFixed(1)}`;
};

try {
  S.start();
} catch (e) {
  S.errors.push('start: ' + (e && e.stack ? e.stack : e));
}
if (location.hash === '#selftest') S.selfTest();
