// A tiny DOM builder: h('button', {class: 'x', onclick: f}, 'text', child, ...).
// Text is always set as text (never parsed as HTML): names typed by players are safe.

// A player's name is isolated from the text around it (UAX #9): a name in Hebrew or Arabic
// beside a seat number or a score would otherwise carry the number over to its side, and
// the server refuses names with bidi controls, but a name is shown wherever a sentence is
// built. isolate() wraps a name in FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE (text
// for attributes and live regions keeps them: they isolate there too), and text given to h()
// shows each such run as a <bdi> element.
const FSI = '\u2068';
const PDI = '\u2069';
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function isolate(name) {
  return `${FSI}${String(name).replace(BIDI_CONTROLS, '')}${PDI}`;
}

// ``text`` as nodes: each isolated run (isolate()) a <bdi>, the rest text.
function textNodes(text) {
  const nodes = [];
  let rest = text;
  for (let start = rest.indexOf(FSI); start >= 0; start = rest.indexOf(FSI)) {
    const end = rest.indexOf(PDI, start + 1);
    if (end < 0) break;
    if (start > 0) nodes.push(rest.slice(0, start));
    const bdi = document.createElement('bdi');
    bdi.textContent = rest.slice(start + 1, end);
    nodes.push(bdi);
    rest = rest.slice(end + 1);
  }
  if (rest) nodes.push(rest);
  return nodes;
}

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (name in el && typeof value !== 'string') {
      el[name] = value;
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.append(child);
    else el.append(...textNodes(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

// Re-rendering replaces elements: remember which one had the focus (by its data-focus key)
// and give the focus to its successor, or, when that is gone or disabled (the card just
// discarded, a move no longer allowed), to the element ``fallback`` selects.
export function keepFocus(render, fallback = null) {
  const active = document.activeElement;
  const key = active?.dataset?.focus;
  render();
  if (!key) return;
  let next = document.querySelector(`[data-focus="${CSS.escape(key)}"]`);
  if (!next || next.disabled) next = fallback ? document.querySelector(fallback) : null;
  if (next && !next.disabled) next.focus({ preventScroll: true });
}
