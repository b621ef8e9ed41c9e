// flame.js: the flame graph, drawn on a canvas from the section model.
// Frames narrower than half a pixel are skipped with their subtrees, so a
// draw costs what is visible, not what was recorded. Clicking a frame zooms
// to it (it becomes the full width; its ancestors stay as full-width bars
// below it); clicking the bottom bar or "Reset zoom" zooms out.
'use strict';
S.ROW = 18;

// A stable colour per function: the hue band says the kind (warm for user
// code, orange for the kernel, green for JIT code, aqua for inlined calls,
// grey for unknown frames and commands), the name's hash varies it.
S.colorOf = function (f) {
  const name = S.funcName(f);
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  const v = (h % 1000) / 1000;
  switch (S.funcKind(f)) {
    case 'kernel': return `hsl(${25 + 15 * v}, 85%, ${55 + 10 * v}%)`;
    case 'jit': return `hsl(${95 + 30 * v}, 55%, ${50 + 10 * v}%)`;
    case 'inlined': return `hsl(${175 + 15 * v}, 55%, ${55 + 10 * v}%)`;
    case 'unknown': return `hsl(0, 0%, ${65 + 10 * v}%)`;
    case 'comm': case 'root': return `hsl(220, 15%, ${72 + 8 * v}%)`;
    default: return `hsl(${5 + 45 * v}, 80%, ${58 + 10 * v}%)`;
  }
};

S.Flame = class {
  constructor(canvas, tooltip, onSelect) {
    this.canvas = canvas;
    this.tooltip = tooltip;
    this.onSelect = onSelect;
    this.model = null;
    this.zoom = 0;
    this.matches = null;  // Uint8Array over funcs, or null
    this.selected = -1;   // a function to outline
    this.colors = S.data.funcs.map((_, f) => S.colorOf(f));
    canvas.addEventListener('click', (e) => this.click(e));
    canvas.addEventListener('mousemove', (e) => this.hover(e));
    canvas.addEventListener('mouseleave', () => { this.tooltip.hidden = true; });
  }

  setModel(model) {
    this.model = model;
    this.zoom = 0;
    this.draw();
  }

  zoomTo(node) {
    this.zoom = node;
    this.draw();
  }

  rowY(depth) {
    const rows = this.model.maxDepth + 1;
    return S.data.icicle ? depth * S.ROW : (rows - 1 - depth) * S.ROW;
  }

  draw() {
    const m = this.model;
    const width = Math.max(200, this.canvas.parentElement.clientWidth);
    const height = (m.maxDepth + 1) * S.ROW;
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(height * ratio);
    this.canvas.style.width = width + 'px';
    this.canvas.style.height = height + 'px';
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '12px monospace';
    ctx.textBaseline = 'middle';
    this.ctx = ctx;
    this.width = width;
    this.charWidth = ctx.measureText('m').width || 7;
    this.hits = [];  // [node, x, y, w] of every frame drawn
    const z = this.zoom;
    for (let a = m.parent[z]; a >= 0; a = m.parent[a]) this.frame(a, 0, width);
    const scale = m.total[z] > 0 ? width / m.total[z] : 0;  // no samples: nothing to draw
    const x0 = m.x[z];
    const end = z + m.size[z];
    for (let i = z; i < end;) {
      const w = m.total[i] * scale;
      if (w < 0.5) {
        i += m.size[i];
        continue;
      }
      this.frame(i, (m.x[i] - x0) * scale, w);
      i++;
    }
  }

  frame(node, x, w) {
    const ctx = this.ctx;
    const f = this.model.fn[node];
    const y = this.rowY(this.model.depth[node]);
    const matched = this.matches !== null && f >= 0 && this.matches[f] === 1;
    ctx.fillStyle = matched ? '#e3c' : (f < 0 ? S.colorOf(-1) : this.colors[f]);
    ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), S.ROW - 1);
    if (f >= 0 && f === this.selected) {
      ctx.strokeStyle = '#124';
      ctx.lineWidth = 2;
      ctx.strokeRect(x + 1, y + 1, Math.max(w - 2.5, 0.5), S.ROW - 3);
    }
    const chars = Math.floor((w - 6) / this.charWidth);
    if (chars >= 3) {
      const name = S.funcName(f);
      ctx.fillStyle = '#000';
      ctx.fillText(name.length <= chars ? name : name.slice(0, chars - 2) + '..', x + 3,
          y + S.ROW / 2);
    }
    this.hits.push([node, x, y, w]);
  }

  // The frame under a mouse event, or -1.
  nodeAt(e) {
    const box = this.canvas.getBoundingClientRect();
    const mx = e.clientX - box.left;
    const my = e.clientY - box.top;
    for (const [node, x, y, w] of this.hits) {
      if (mx >= x && mx < x + w && my >= y && my < y + S.ROW) return node;
    }
    return -1;
  }

  // Where `node` was drawn: {x, y, w}, or null when it was not.
  rectOf(node) {
    const hit = this.hits.find((h) => h[0] === node);
    return hit ? {x: hit[1], y: hit[2], w: hit[3]} : null;
  }

  click(e) {
    const node = this.nodeAt(e);
    if (node < 0) return;
    this.zoomTo(node === this.zoom ? Math.max(this.model.parent[node], 0) : node);
    if (this.model.fn[node] >= 0) this.onSelect(this.model.fn[node]);
  }

  hover(e) {
    const node = this.nodeAt(e);
    if (node < 0) {
      this.tooltip.hidden = true;
      return;
    }
    const m = this.model;
    const f = m.fn[node];
    const all = m.total[0];
    const dso = S.funcDso(f);
    this.tooltip.textContent = S.funcName(f) + (dso ? '\n' + dso : '') +
        `\ntotal ${m.total[node]} ${S.unit} (${S.percent(m.total[node], all)})` +
        `, self ${m.self[node]} (${S.percent(m.self[node], all)})`;
    this.tooltip.hidden = false;
    const box = this.canvas.getBoundingClientRect();
    const left = Math.min(e.clientX - box.left + 12, this.width - this.tooltip.offsetWidth - 4);
    this.tooltip.style.left = Math.max(0, left) + 'px';
    this.tooltip.style.top = (e.clientY - box.top + 14) + 'px';
  }
};
