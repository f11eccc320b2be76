// A tile's menu (Save, Copy link, Metadata), opened by a right-click, a long press on
// a touch screen (500 ms without moving, as phones do), or the keyboard's context-menu key or
// Shift+F10 on a focused tile; arrow keys move through it and Escape closes it. Save starts a
// `download` and says where the file went (never offered for a video); Copy link puts the
// photo's page, with Unsplash's attribution parameters, on the clipboard, or where the
// clipboard cannot be written, into a selected field to copy from. What an action did is
// said in a notice at the bottom of the window.
'use strict';

const LONG_PRESS_MS = 500;
const LONG_PRESS_SLOP_PX = 10;

/**
 * Opens the menu from a tile's element: `current()` is the tile while it shows a photo, and
 * `open(tile, at, via, heldMs)` opens the menu at a point ({x, y}, null: the tile's middle).
 */
function attachMenuGestures(el, current, open) {
  let press = null;         // a touch held on the tile: {id, at, started, timer, fired}
  let swallowClick = false;
  const cancel = () => { if (press) clearTimeout(press.timer); press = null; };
  const longPress = (tile) => {
    clearTimeout(press.timer);
    press.fired = true;
    swallowClick = true;   // lifting the finger must not also open the photo
    open(tile, press.at, 'long-press', performance.now() - press.started);
  };
  el.addEventListener('contextmenu', (e) => {
    const tile = current();
    if (!tile) return;
    e.preventDefault();
    // The browser's own long-press gesture may come first: it is the same long press.
    if (press) { if (!press.fired) longPress(tile); return; }
    // A right-click says where; the keyboard's menu key sends no pointer position.
    open(tile, e.button === 2 ? { x: e.clientX, y: e.clientY } : null, e.button === 2 ? 'right-click' : 'contextmenu');
  });
  el.addEventListener('keydown', (e) => {
    if (e.target !== el || !(e.key === 'ContextMenu' || (e.key === 'F10' && e.shiftKey))) return;
    const tile = current();
    if (!tile) return;
    e.preventDefault();
    open(tile, null, 'keyboard');
  });
  el.addEventListener('pointerdown', (e) => {
    cancel();
    swallowClick = false;
    if (e.pointerType === 'mouse' || !e.isPrimary) return;
    const tile = current();
    if (!tile) return;
    press = { id: e.pointerId, at: { x: e.clientX, y: e.clientY }, started: performance.now(), fired: false };
    press.timer = setTimeout(() => { if (press && !press.fired && current() === tile) longPress(tile); }, LONG_PRESS_MS);
  });
  el.addEventListener('pointermove', (e) => {
    if (press && !press.fired && e.pointerId === press.id
        && Math.hypot(e.clientX - press.at.x, e.clientY - press.at.y) > LONG_PRESS_SLOP_PX) cancel();
  });
  for (const name of ['pointerup', 'pointercancel']) {
    el.addEventListener(name, (e) => { if (press && e.pointerId === press.id) cancel(); });
  }
  // Lifting the finger after a long press: no emulated mouse press (it would take the focus
  // from the menu) and no click.
  el.addEventListener('touchend', (e) => { if (swallowClick && e.cancelable) e.preventDefault(); }, { passive: false });
  // Capturing: it runs before the grid's own click handler, which listens as the click bubbles.
  el.addEventListener('click', (e) => {
    if (!swallowClick) return;
    swallowClick = false;
    e.preventDefault();
    e.stopImmediatePropagation();
  }, true);
}

/** A notice at the bottom of the window: what Save or Copy link did. */
class Notice {
  constructor(root) {
    this.root = root;
    this.body = root.querySelector('[data-notice="body"]');
    root.querySelector('[data-notice="close"]').addEventListener('click', () => this.hide());
  }

  /** Replaces the notice with `parts` (strings and elements); `kind` is read by the style and the tests. */
  show(kind, ...parts) {
    this.body.replaceChildren(...parts);
    this.root.dataset.kind = kind;
    this.root.hidden = false;
    return this.body;
  }

  hide() { this.root.hidden = true; this.root.dataset.kind = ''; }
}

/**
 * Puts `text` on the clipboard. Where the clipboard API is missing or refused (a page without
 * focus, a browser without the permission), the text is shown in the notice in a selected
 * field, and the browser's copy command is tried on it. Returns how it went: 'clipboard',
 * 'copied' (the copy command) or 'selected' (the reader copies it).
 */
async function copyText(text, notice) {
  try {
    if (!navigator.clipboard || !navigator.clipboard.writeText) throw new Error('no clipboard API');
    await navigator.clipboard.writeText(text);
    const code = document.createElement('code');
    code.textContent = text;
    notice.show('copied', 'Link copied: ', code);
    return 'clipboard';
  } catch (e) {
    const field = document.createElement('input');
    field.type = 'text';
    field.readOnly = true;
    field.value = text;
    field.className = 'copy-field';
    field.setAttribute('aria-label', 'The photo’s link');
    const said = document.createElement('span');
    notice.show('copy-field', said, field);
    field.focus();
    field.select();
    let copied = false;
    try { copied = document.execCommand('copy'); } catch (ignored) { copied = false; }
    said.textContent = copied ? 'Link copied: ' : 'Press Ctrl+C to copy the link: ';
    return copied ? 'copied' : 'selected';
  }
}

class PhotoMenu {
  /** actions: {save(photo), copy(photo), metadata(photo, opener)}. */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.tile = null;
    this.photo = null;
    this.last = null;   // how the last menu was opened: {photo, via, heldMs} (read by the tests)
    this.items = [...root.querySelectorAll('[role="menuitem"]')];
    for (const item of this.items) {
      item.addEventListener('click', () => this.choose(item.dataset.action));
    }
    root.addEventListener('keydown', (e) => this.onKey(e));
    document.addEventListener('pointerdown', (e) => { if (!root.hidden && !root.contains(e.target)) this.close(false); }, true);
    window.addEventListener('scroll', () => { if (!root.hidden && !root.contains(document.activeElement)) this.close(false); }, { passive: true });
    window.addEventListener('resize', () => this.close(false));
  }

  /** Opens the menu for `tile`'s photo at `at` ({x, y} in the window; null: the tile's middle). */
  open(tile, at, via, heldMs) {
    const photo = tile.item.photo;
    this.tile = tile;
    this.photo = photo;
    this.opener = tile.el;
    this.last = { photo: photo.id, via, heldMs: heldMs === undefined ? null : Math.round(heldMs) };
    this.item('save').hidden = photo.media === 'video';
    this.item('copy').disabled = !attributed(photo.pageURL, photo.provider);
    this.root.dataset.photo = photo.id;
    this.root.hidden = false;
    const box = tile.el.getBoundingClientRect();
    const point = at || { x: box.left + box.width / 2, y: box.top + box.height / 2 };
    const size = this.root.getBoundingClientRect();
    this.root.style.left = `${Math.max(8, Math.min(point.x, innerWidth - size.width - 8))}px`;
    this.root.style.top = `${Math.max(8, Math.min(point.y, innerHeight - size.height - 8))}px`;
    this.enabled()[0].focus();
  }

  close(restoreFocus = true) {
    if (this.root.hidden) return;
    this.root.hidden = true;
    if (restoreFocus && this.opener && this.tile && this.tile.item && this.tile.item.photo === this.photo) this.opener.focus();
    this.tile = null;
  }

  item(action) { return this.items.find((i) => i.dataset.action === action); }

  enabled() { return this.items.filter((i) => !i.hidden && !i.disabled); }

  onKey(e) {
    const items = this.enabled();
    const at = items.indexOf(document.activeElement);
    let next = null;
    switch (e.key) {
      case 'ArrowDown': next = items[(at + 1) % items.length]; break;
      case 'ArrowUp': next = items[(at - 1 + items.length) % items.length]; break;
      case 'Home': next = items[0]; break;
      case 'End': next = items[items.length - 1]; break;
      case 'Escape': e.preventDefault(); e.stopPropagation(); this.close(); return;
      case 'Tab': this.close(false); return;
      default: return;
    }
    e.preventDefault();
    if (next) next.focus();
  }

  choose(action) {
    const photo = this.photo;
    const opener = this.opener;
    if (!photo) return;
    this.close(action !== 'metadata');
    if (action === 'save' && photo.media !== 'video') this.actions.save(photo);
    else if (action === 'copy') this.actions.copy(photo);
    else if (action === 'metadata') this.actions.metadata(photo, opener);
  }
}
