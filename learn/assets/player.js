'use strict';
(function () {
  const tl = JSON.parse(document.getElementById('timeline').textContent);
  const answer = JSON.parse(document.getElementById('lesson').textContent);
  const choices = JSON.parse(document.getElementById('choices').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  const W = 1170, LABEL = 210, RIGHT = 12, ROW = 16, GAP = 4, TOP = 22;
  const plot = W - LABEL - RIGHT;
  const x = t => LABEL + (tl.end > 0 ? t / tl.end * plot : 0);
  const el = (name, attrs, parent) => {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  };
  const nodeColours = ['#0891b2', '#7c3aed', '#db2777', '#ca8a04', '#4b5563'];
  const nodeColour = p => nodeColours[((p % nodeColours.length) + nodeColours.length) % nodeColours.length];
  const spans = []; // {rect, from, to}
  const marks = []; // {node, at}
  const rows = [];  // {label, y}
  let y = TOP;
  const stuck = tl.red.some(r => r.kind === 'stuck');
  rows.push({ label: stuck ? 'held for a dead client' : 'two believe they hold it', y: y, red: true }); y += ROW + GAP * 3;
  for (const n of (tl.nodes || [])) { rows.push({ label: n.node + ': holds a key for', y: y, node: n }); y += ROW + GAP; }
  if ((tl.nodes || []).length) y += GAP * 2;
  const clientY = {};
  for (const c of tl.clients) {
    clientY[c.process] = y;
    rows.push({ label: 'process ' + c.process + ': server holds it', y: y, client: c, band: 'server' }); y += ROW + 2;
    rows.push({ label: 'process ' + c.process + ': believes it holds it', y: y, client: c, band: 'believe' }); y += ROW + GAP * 3;
  }
  const H = y + 16;
  const svg = el('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, id: 'timeline-svg', role: 'img' });
  document.getElementById('player').appendChild(svg);
  // Axis.
  const step = tl.end > 30 ? 5 : tl.end > 12 ? 2 : 1;
  for (let s = 0; s <= tl.end; s += step) {
    el('line', { x1: x(s), x2: x(s), y1: TOP - 4, y2: H - 14, stroke: '#e5e7eb' }, svg);
    el('text', { x: x(s), y: 12, 'font-size': 11, 'text-anchor': 'middle', fill: '#555' }, svg).textContent = s + ' s';
  }
  const band = (from, to, yy, h, fill, title, cls, extra) => {
    const r = el('rect', Object.assign({ x: x(from), y: yy, width: 0, height: h, fill: fill, class: cls }, extra || {}), svg);
    el('title', {}, r).textContent = title + ' (' + from.toFixed(2) + ' s to ' + to.toFixed(2) + ' s)';
    spans.push({ rect: r, from: from, to: to });
    return r;
  };
  // Faults, under everything: on the lanes of the clients they struck, else across all lanes.
  for (const f of tl.faults) {
    const ps = (f.processes || []).filter(p => clientY[p] !== undefined);
    if (ps.length) {
      for (const p of ps) band(f.from, f.to, clientY[p] - 2, ROW * 2 + 6, '#f59e0b', f.label, 'fault', { opacity: 0.35 });
    } else {
      band(f.from, f.to, TOP + ROW + GAP, H - TOP - ROW - 20, '#f59e0b', f.label, 'fault', { opacity: 0.2 });
    }
  }
  for (const r of rows) {
    el('text', { x: 4, y: r.y + ROW - 4, 'font-size': 12, fill: r.red ? '#b91c1c' : '#1f2328' }, svg).textContent = r.label;
    if (r.node) {
      for (const s of r.node.held) {
        const p = (s.processes || [])[0];
        band(s.from, s.to, r.y, ROW, nodeColour(p), s.label + (s.inferred ? ' (inferred)' : ''), 'node', s.inferred ? { 'fill-opacity': 0.5 } : {});
      }
    }
    if (r.band === 'server') {
      for (const s of r.client.server) band(s.from, s.to, r.y, ROW, '#3b82f6', s.label, 'server' + (s.inferred ? ' inferred' : ''), s.inferred ? { 'fill-opacity': 0.45, stroke: '#3b82f6', 'stroke-dasharray': '3 2' } : {});
    }
    if (r.band === 'believe') {
      for (const s of r.client.believe) band(s.from, s.to, r.y, ROW, '#16a34a', s.label, 'believe');
    }
  }
  // Red: on the top row, and over the believe bands of the clients concerned.
  for (const s of tl.red) {
    band(s.from, s.to, TOP, ROW, '#dc2626', s.label, 'red ' + s.kind);
    for (const p of (s.processes || [])) {
      if (clientY[p] === undefined) continue;
      const yy = s.kind === 'stuck' ? clientY[p] : clientY[p] + ROW + 2;
      band(s.from, s.to, yy, ROW, '#dc2626', s.label, 'red-over ' + s.kind, { opacity: 0.75 });
    }
  }
  const glyph = { grant: '▲', denied: '○', write: '|', refused: '✗', lost: '!', event: '◆', crash: '✕', doubt: '?' };
  const colour = { grant: '#14532d', denied: '#555', write: '#111', refused: '#b91c1c', lost: '#b91c1c', event: '#7c3aed', crash: '#111', doubt: '#b45309' };
  for (const c of tl.clients) {
    for (const m of c.marks) {
      const t = el('text', { x: x(m.at), y: clientY[c.process] + ROW * 2 - 2, 'font-size': m.kind === 'write' ? 14 : 11, 'text-anchor': 'middle', fill: colour[m.kind] || '#111', class: 'mark ' + m.kind, visibility: 'hidden' }, svg);
      t.textContent = glyph[m.kind] || '•';
      el('title', {}, t).textContent = 'process ' + c.process + ' at ' + m.at.toFixed(2) + ' s: ' + m.label;
      marks.push({ node: t, at: m.at });
    }
  }
  if ((tl.nodes || []).length) {
    // The lock nodes' lanes colour a key by the client it was set for.
    const legend = document.getElementById('legend');
    for (const c of tl.clients) {
      const item = document.createElement('span');
      const sw = document.createElement('i');
      sw.className = 'sw';
      sw.style.background = nodeColour(c.process);
      item.appendChild(sw);
      item.appendChild(document.createTextNode('a lock node holds process ' + c.process + "'s key"));
      legend.appendChild(item);
    }
  }
  const head = el('line', { x1: x(0), x2: x(0), y1: TOP - 6, y2: H - 14, stroke: '#111', 'stroke-width': 1.5, id: 'playhead' }, svg);

  const scrub = document.getElementById('scrub');
  const clock = document.getElementById('clock');
  const alertEl = document.getElementById('alert');
  const status = document.querySelector('#status tbody');
  const statusRows = {};
  for (const c of tl.clients) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td></td><td></td><td></td>';
    tr.cells[0].textContent = 'process ' + c.process;
    status.appendChild(tr);
    statusRows[c.process] = tr;
  }
  const within = (list, t) => list.find(s => s.from <= t && t < s.to);
  let now = 0;
  function render(t) {
    now = Math.max(0, Math.min(t, tl.end));
    for (const s of spans) {
      const w = Math.max(0, Math.min(s.to, now) - s.from);
      s.rect.setAttribute('width', w > 0 ? x(s.from + w) - x(s.from) : 0);
    }
    for (const m of marks) m.node.setAttribute('visibility', m.at <= now ? 'visible' : 'hidden');
    head.setAttribute('x1', x(now)); head.setAttribute('x2', x(now));
    scrub.value = Math.round(now * 1000);
    clock.value = 't = ' + now.toFixed(2) + ' s';
    clock.textContent = clock.value;
    const red = within(tl.red, now);
    alertEl.textContent = red ? (red.kind === 'overlap' ? 'OVERLAP: ' : 'STUCK: ') + red.label : '';
    alertEl.className = red ? 'on ' + red.kind : '';
    for (const c of tl.clients) {
      const srv = within(c.server, now), bel = within(c.believe, now);
      const tr = statusRows[c.process];
      tr.cells[1].textContent = 'the server holds it for you: ' + (srv ? 'yes' + (srv.inferred ? ' (inferred)' : '') : 'no');
      tr.cells[2].textContent = 'you believe you hold it: ' + (bel ? 'yes' : 'no');
      tr.className = bel && !srv ? 'unsafe' : '';
    }
    document.body.dataset.t = now.toFixed(3);
  }
  let timer = null, last = 0;
  const play = document.getElementById('play');
  function stop() { clearInterval(timer); timer = null; play.textContent = 'Play'; }
  play.addEventListener('click', () => {
    if (timer) { stop(); return; }
    if (now >= tl.end) render(0);
    last = performance.now();
    play.textContent = 'Pause';
    timer = setInterval(() => {
      const t = performance.now();
      const speed = parseFloat(document.getElementById('speed').value) || 1;
      render(now + (t - last) / 1000 * speed);
      last = t;
      if (now >= tl.end) stop();
    }, 40);
  });
  scrub.addEventListener('input', () => render(scrub.value / 1000));
  document.getElementById('jump').addEventListener('click', () => {
    stop();
    const r = tl.red[0];
    if (r) render((r.from + r.to) / 2);
  });
  if (!tl.red.length) document.getElementById('jump').disabled = true;
  // A link may name a moment: lesson.html#t=5.2.
  const m = /^#t=([0-9.]+)$/.exec(location.hash);
  render(m ? parseFloat(m[1]) : 0);

  // The quiz.
  const verdict = document.getElementById('verdict');
  document.getElementById('check').addEventListener('click', () => {
    const picked = document.querySelector('input[name=choice]:checked');
    if (!picked) { verdict.className = ''; verdict.textContent = 'Pick an answer first.'; return; }
    const right = Number(picked.value) === answer;
    verdict.className = right ? 'right' : 'wrong';
    verdict.textContent = (right ? 'Right: ' : 'Not quite. The answer: ') + choices[answer];
    document.getElementById('answer').hidden = false;
    const taught = document.getElementById('taught');
    if (taught) taught.hidden = false;
  });
})();
