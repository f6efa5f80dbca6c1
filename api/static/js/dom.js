// A tiny DOM builder: h('button', {class: 'x', onclick: f}, 'text', child, ...).
// Text is always set as text (never parsed as HTML): names typed by players are safe.

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
    else el.append(child instanceof Node ? child : String(child));
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
