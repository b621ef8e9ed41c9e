// annotate.js: the annotate panel, beside the flame graph (below it on a
// narrow window): a function's source lines and instructions with the
// share of each, from the embedded annotation (html_annotation.h). It
// opens when a function is selected (S.select) and closes with its button
// or Escape; a function the page has no annotation of says why. Names,
// paths, source and instruction text go in as text, never as HTML.
'use strict';
S.UNPLACED = 'at addresses that start no instruction';

S.Annotate = class {
  constructor(box) {
    this.box = box;
    this.data = S.data.annotate;  // null: the page was written without it
    this.shown = -1;
    this.byFunc = new Map();      // page func -> annotated function
    this.text = new Map();        // file -> Map(line -> source text)
    if (this.data) {
      for (const fn of this.data.functions) for (const f of fn.funcs) this.byFunc.set(f, fn);
      for (const [file, first, lines] of this.data.text) {
        if (!this.text.has(file)) this.text.set(file, new Map());
        lines.forEach((t, i) => this.text.get(file).set(first + i, t));
      }
    }
    S.$('annotate-close').addEventListener('click', () => this.close());
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.isOpen()) this.close();
    });
  }

  isOpen() { return !this.box.hidden; }

  close() {
    this.box.hidden = true;
    this.shown = -1;
    S.flame.draw();  // the flame graph has the width back
  }

  // Opens the panel on function `f` (a page func).
  show(f) {
    this.shown = f;
    this.box.hidden = false;
    S.$('annotate-name').textContent = S.funcName(f);
    const fn = this.byFunc.get(f);
    const body = S.$('annotate-body');
    if (!fn || fn.note) {
      S.$('annotate-note').textContent = 'not annotated: ' + (fn ? fn.note : this.whyNot(f));
      body.replaceChildren();
      return;
    }
    const event = this.data.event;
    const other = S.data.sections[S.state.section].name !== event ?
      ` (the page annotates ${event}, its first event)` : '';
    S.$('annotate-note').textContent = `${fn.dso}: ${fn.samples} ${event} samples` +
        `${other}; shares of the function's ${S.unit}; code from ${fn.origin}` +
        (fn.cut ? `; ${fn.cut}` : '') + (fn.source_note ? `; ${fn.source_note}` : '');
    // Each table scrolls on its own, under the panel's title and note.
    const scroller = (table, kind) => {
      const div = S.el('div', undefined, 'annotate-scroll ' + kind);
      div.append(table);
      return div;
    };
    const instructions = this.instructions(fn);
    const list = scroller(instructions.table, 'ins');
    body.replaceChildren(scroller(this.sources(fn), 'src'), list);
    if (instructions.hottest) {
      const top = instructions.hottest.getBoundingClientRect().top -
          list.getBoundingClientRect().top;
      list.scrollTop += top - list.clientHeight / 3;
    }
    // Opened from the table, far below: bring the panel into view.
    if (this.box.getBoundingClientRect().bottom < 0) this.box.scrollIntoView({block: 'start'});
  }

  whyNot(f) {
    const name = S.funcName(f);
    switch (S.funcKind(f)) {
      case 'comm': return `${name} is a command, not a function`;
      case 'root': return 'the root is not a function';
      case 'kernel': return 'kernel code is not annotated';
      case 'unknown': return 'no symbol names this code';
      case 'inlined': return 'an inlined call: its instructions are annotated in the function ' +
          'it was inlined into';
    }
    if (!this.data) return 'this page was written without annotations';
    const first = S.data.sections[0];
    const row = first.table.find((r) => r[0] === f);
    if (row && row[1] === 0) {
      return `no ${first.name} samples in its own code (its time is in the functions it calls)`;
    }
    const fns = this.data.functions;
    const held = fns.reduce((sum, fn) => sum + fn.samples, 0);
    // Under one sample in a thousand: a recording holds no code of it.
    const all = S.data.weight === 'period' ? first.period : first.samples;
    if (row && row[1] * 1000 < all) {
      return `it has under one in a thousand of the ${first.samples} ${this.data.event} ` +
          `samples, too few to annotate; sample-report --annotate '${name}' shows it`;
    }
    return `it is not among the ${fns.length} hottest functions, which hold ` +
        `${S.percent(held, first.samples)} of the ${first.samples} ${this.data.event} ` +
        `samples (the page annotates the hottest functions holding ` +
        `${this.data.coverage}% of them, at most ${this.data.max_functions}); ` +
        `sample-report --annotate '${name}' shows it`;
  }

  lineText(file, line) {
    const lines = this.text.get(file);
    return lines ? lines.get(line) : undefined;
  }

  place(index) { return index >= 0 ? this.data.places[index] : null; }

  // One row per source line with samples, with the lines around it.
  sources(fn) {
    const weights = new Map();  // file -> Map(line -> weight)
    let none = 0;
    for (const [, text, weight, place] of fn.ins) {
      if (text === null) continue;
      const p = this.place(place);
      if (!p || p[1] === 0) {
        none += weight;
        continue;
      }
      if (!weights.has(p[0])) weights.set(p[0], new Map());
      const lines = weights.get(p[0]);
      lines.set(p[1], (lines.get(p[1]) || 0) + weight);
    }
    const table = S.el('table');
    table.className = 'annotate-src';
    table.append(S.el('caption', 'Source lines'));
    const head = table.createTHead().insertRow();
    head.append(S.el('th', 'Share', 'num'), S.el('th', 'Line', 'num'), S.el('th', 'Source'));
    const body = table.createTBody();
    const context = this.data.context;
    for (const [file, lines] of weights) {
      const path = this.data.files[file];
      const title = body.insertRow();
      title.className = 'file';
      const readable = this.text.has(file);
      const cell = S.el('td', path.slice(path.lastIndexOf('/') + 1) +
          (readable ? '' : fn.source_note ? ` (${fn.source_note})` :
                           ' (its text was not found where the page was written)'));
      cell.colSpan = 3;
      cell.title = path;
      title.append(cell);
      const shown = new Set();
      for (const [line, weight] of lines) {
        if (weight <= 0) continue;
        for (let l = Math.max(1, line - context); l <= line + context; l++) shown.add(l);
      }
      let previous = -1;
      for (const line of Array.from(shown).sort((a, b) => a - b)) {
        const weight = lines.get(line) || 0;
        const text = this.lineText(file, line);
        if (weight === 0 && text === undefined) continue;
        if (previous > 0 && line !== previous + 1) this.gap(body, '\u22ee');
        previous = line;
        const tr = body.insertRow();
        tr.className = 'line';
        tr.append(S.el('td', weight > 0 ? S.percent(weight, fn.weight) : '', 'num'),
            S.el('td', String(line), 'num'), S.el('td', text === undefined ? '' : text, 'code'));
      }
    }
    if (none > 0) this.extra(body, none, fn, '(no source line)');
    if (fn.unplaced > 0) this.extra(body, fn.unplaced, fn, S.UNPLACED);
    if (body.rows.length === 0) this.gap(body, 'no samples have a source line');
    return table;
  }

  // One row per instruction, perf annotate's way: the source line (and the
  // inlined call) before each run of instructions from it.
  instructions(fn) {
    const table = S.el('table');
    table.className = 'annotate-ins';
    table.append(S.el('caption', 'Instructions'));
    const head = table.createTHead().insertRow();
    head.append(S.el('th', 'Share', 'num'), S.el('th', 'Address'), S.el('th', 'Instruction'));
    const body = table.createTBody();
    const start = BigInt('0x' + fn.start);
    let lastPlace = -2;
    let lastCall = null;
    let hottest = null;
    let best = 0;
    for (const [offset, text, weight, place] of fn.ins) {
      if (text === null) {
        this.gap(body, `\u2026 ${weight} instructions without samples`);
        continue;
      }
      if (place !== lastPlace) {
        const p = this.place(place);
        const call = p ? p[2] : '';
        if (call !== lastCall) this.label(body, `${call || fn.name}():`);
        lastCall = call;
        if (p && p[1] > 0) {
          const path = this.data.files[p[0]];
          const source = this.lineText(p[0], p[1]);
          this.label(body, `${path.slice(path.lastIndexOf('/') + 1)}:${p[1]}` +
              (source === undefined ? '' : '   ' + source.trim()));
        }
        lastPlace = place;
      }
      const tr = body.insertRow();
      tr.className = 'ins';
      tr.append(S.el('td', weight > 0 ? S.percent(weight, fn.weight) : '', 'num'),
          S.el('td', (start + BigInt(offset)).toString(16), 'code'), S.el('td', text, 'code'));
      if (weight > best) {
        best = weight;
        hottest = tr;
      }
    }
    if (fn.unplaced > 0) this.extra(body, fn.unplaced, fn, S.UNPLACED);
    if (hottest) hottest.classList.add('hottest');
    return {table, hottest};
  }

  label(body, text) {
    const cell = S.el('td', text, 'code');
    cell.colSpan = 2;
    const tr = body.insertRow();
    tr.className = 'src';
    tr.append(S.el('td'), cell);
  }

  gap(body, text) {
    const cell = S.el('td', text);
    cell.colSpan = 3;
    const tr = body.insertRow();
    tr.className = 'gap';
    tr.append(cell);
  }

  extra(body, weight, fn, what) {
    const cell = S.el('td', `${weight} ${S.unit} ${what}`);
    cell.colSpan = 2;
    const tr = body.insertRow();
    tr.className = 'extra';
    tr.append(S.el('td', S.percent(weight, fn.weight), 'num'), cell);
  }
};
