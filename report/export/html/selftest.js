// selftest.js: a scripted check of the drawn page, run when the URL's hash
// is #selftest (tests/e2e/html_page_test.cc opens it in headless Chromium
// and reads the dumped DOM). It writes {ok, checks, errors, share,
// rendered_ms} as JSON into #selftest. It looks for the `split` workload's
// functions (tests/workloads/split.c): compute_sixty, _thirty and _ten.
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
