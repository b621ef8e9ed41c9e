// selftest.js: a scripted check of the drawn page, run when the URL's hash
// is #selftest (tests/e2e/html_page_test.cc opens it in headless Chromium
// and reads the dumped DOM). It writes {ok, checks, errors, share,
// rendered_ms} as JSON into #selftest. It looks for the `split` workload's
// functions (tests/workloads/split.c): compute_sixty, _thirty and _ten,
// and checks the annotate panel that a click opens (S.annotateChecks).
'use strict';
S.selfTest = function () {
  const result = {ok: true, checks: [], errors: null, share: null, rendered_ms: S.renderedMs};
  const check = (name, pass, detail) => {
    result.checks.push({name, pass: !!pass, detail: detail === undefined ? '' : String(detail)});
    if (!pass) result.ok = false;
  };
  try {
    const m = S.state.model;
    const nodeOf = (name) => {
      let best = -1;
      for (let i = 1; i < m.n; i++) {
        if (S.funcName(m.fn[i]) === name && (best < 0 || m.total[i] > m.total[best])) best = i;
      }
      return best;
    };
    for (const name of ['compute_sixty', 'compute_thirty', 'compute_ten']) {
      const node = nodeOf(name);
      const rect = node >= 0 ? S.flame.rectOf(node) : null;
      check('drawn ' + name, rect !== null && rect.w >= 1, rect ? rect.w.toFixed(1) : 'absent');
    }
    check('table rows', S.$('functions').tBodies[0].rows.length > 0,
        S.$('functions').tBodies[0].rows.length);

    const found = S.search('compute_ten');
    result.share = found ? found.share : null;
    check('search finds compute_ten', found !== null && found.count >= 1 && found.share > 0,
        S.$('search-result').textContent);
    S.search('');

    const node = nodeOf('compute_sixty');
    const before = node >= 0 ? S.flame.rectOf(node) : null;
    if (before === null) {
      check('click zooms', false, 'compute_sixty is not drawn');
    } else {
      const box = S.flame.canvas.getBoundingClientRect();
      S.flame.canvas.dispatchEvent(new MouseEvent('click', {
        bubbles: true, clientX: box.left + before.x + before.w / 2,
        clientY: box.top + before.y + S.ROW / 2,
      }));
      const after = S.flame.rectOf(node);
      check('click zooms', S.flame.zoom === node && after !== null && after.x === 0 &&
          Math.abs(after.w - S.flame.width) < 0.01,
          after ? `x=${after.x} w=${after.w} width=${S.flame.width}` : 'not drawn');
      check('click selects', S.$('calls-name').textContent.startsWith('compute_sixty'),
          S.$('calls-name').textContent);
      // split.c: run_round is compute_sixty's only caller.
      const caller = S.$('calls').querySelector('table tbody tr');
      check('callers of compute_sixty', caller !== null && caller.cells.length === 3 &&
          caller.cells[2].textContent === 'run_round' &&
          caller.cells[0].textContent.startsWith('100'), caller ? caller.textContent : 'none');
      S.annotateChecks(check);
    }
    S.flame.zoomTo(0);
  } catch (e) {
    check('no exception', false, e && e.stack ? e.stack : e);
  }
  result.errors = S.errors.slice();
  check('no errors', S.errors.length === 0, S.errors.join('; '));
  const out = S.$('selftest');
  out.textContent = JSON.stringify(result);
  out.hidden = false;
};

// The shares in the first column of the panel's rows that match
// `selector`: their sum, how many are not empty, the largest and its row.
S.panelShares = function (selector) {
  const out = {sum: 0, count: 0, rows: 0, best: -1, bestRow: null};
  for (const tr of S.$('annotate-body').querySelectorAll(selector)) {
    out.rows++;
    const text = tr.cells[0].textContent;
    if (text === '') continue;
    const value = parseFloat(text);
    out.sum += value;
    out.count++;
    if (value > out.best) {
      out.best = value;
      out.bestRow = tr;
    }
  }
  return out;
};

// After the click on compute_sixty's frame: the panel shows its
// instructions, whose shares add up to 100 (each rounded to 0.01), the
// hottest highlighted, and its source lines, which add up to 100 too;
// Escape closes it; a click on a table row opens it again; a function the
// page does not annotate says why; the close button closes it.
S.annotateChecks = function (check) {
  const box = S.$('annotate-box');
  const name = () => S.$('annotate-name').textContent;
  check('annotate opens', !box.hidden && name() === 'compute_sixty',
      name() + ': ' + S.$('annotate-note').textContent);
  const near100 = (s) => s.count > 0 && Math.abs(s.sum - 100) <= 0.005 * s.count + 1e-9;
  const instructions = 'table.annotate-ins tbody tr.ins, table.annotate-ins tbody tr.extra';
  const ins = S.panelShares(instructions);
  check('annotate shares add up', ins.rows > 0 && near100(ins),
      `${ins.rows} rows, ${ins.count} with samples, sum ${ins.sum.toFixed(3)}`);
  const hottest = box.querySelector('tr.hottest');
  check('annotate hottest', hottest !== null && hottest === ins.bestRow,
      hottest ? hottest.textContent : 'none highlighted');
  const lines =
      S.panelShares('table.annotate-src tbody tr.line, table.annotate-src tbody tr.extra');
  check('annotate source lines', near100(lines),
      `${lines.rows} rows, ${lines.count} with samples, sum ${lines.sum.toFixed(3)}`);

  document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
  check('escape closes', box.hidden, box.hidden ? '' : 'still open');

  const row = Array.from(S.$('functions').tBodies[0].rows).find(
      (tr) => S.funcName(Number(tr.dataset.func)) === 'compute_thirty');
  if (row) row.cells[4].click();
  const thirty = S.panelShares(instructions);
  check('table row opens', row !== undefined && !box.hidden && name() === 'compute_thirty' &&
      near100(thirty), `${name()}: ${thirty.count} shares, sum ${thirty.sum.toFixed(3)}`);

  // A user function if there is one (split.c's main has no samples of its own).
  let plain = -1;
  S.data.funcs.forEach((r, f) => {
    if (r[2] === 'comm' || S.annotate.byFunc.has(f)) return;
    if (plain < 0 || (r[2] === 'user' && S.funcKind(plain) !== 'user')) plain = f;
  });
  if (plain >= 0) S.select(plain);
  const note = S.$('annotate-note').textContent;
  check('not annotated says why', plain >= 0 && /^not annotated: ./.test(note) &&
      S.$('annotate-body').childElementCount === 0,
      plain >= 0 ? S.funcName(plain) + ': ' + note : 'every function is annotated');
  S.$('annotate-close').click();
  check('close button closes', box.hidden, box.hidden ? '' : 'still open');
};
