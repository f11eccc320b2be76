// The grid. A fixed pool of DOM tiles, each one daemon slot, mapped onto the
// photos that are on screen by an IntersectionObserver: a photo that comes into view takes
// a free tile (`thumbnail.show` on its slot), one that leaves gives it back
// (`thumbnail.recycle` while it still loads, so its transfer stops). A fling therefore
// recycles and cancels exactly as a native grid does on the socket. A filter (`setFilter`)
// takes photos out of the layout without forgetting them: the masonry is laid out again over
// the photos that stay, so no gap is left where a filtered one was.
'use strict';

/** Thumbnail widths asked of the daemon: few, so resizing the window reuses the cache. */
const THUMB_SIZES = [160, 240, 320, 480, 640, 800, 1080];

function thumbSizeFor(columnWidth) {
  const need = Math.ceil(columnWidth * (window.devicePixelRatio || 1));
  return THUMB_SIZES.find((s) => s >= need) || THUMB_SIZES[THUMB_SIZES.length - 1];
}

/** A placeholder colour: the provider's own when it gives one, else a muted tone from the id. */
function placeholderColour(photo) {
  if (photo.color && /^#[0-9a-fA-F]{3,8}$/.test(photo.color)) return photo.color;
  let h = 0;
  for (const ch of photo.id) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `hsl(${h % 360}, 14%, ${20 + (h >> 9) % 10}%)`;
}

function imageURL(path) { return 'image?path=' + encodeURIComponent(path); }

class Grid {
  /**
   * session: DaemonSession; root: the element the tiles live in; handlers: {onOpen(photo, tile),
   * onMenu(tile, at, via, heldMs), onNearEnd(), onTileError(error)}.
   */
  constructor(session, root, handlers, poolSize = 64) {
    this.session = session;
    this.root = root;
    this.handlers = handlers;
    this.view = 'main';
    this.items = [];            // {photo, frame, sentinel, tile, visible, shown}
    this.filter = null;         // (photo) => boolean: which photos stay in the layout; null: all
    this.bySentinel = new Map();
    this.waiting = new Set();   // visible items waiting for a free tile
    this.stale = false;
    this.stats = { shows: 0, recycles: 0, delivered: 0, cancelled: 0, failed: 0, wrongPhoto: 0 };

    this.layer = document.createElement('div');
    this.layer.className = 'sentinels';
    root.appendChild(this.layer);
    this.end = document.createElement('div');
    this.end.className = 'end-sentinel';
    root.appendChild(this.end);

    this.tiles = [];
    this.free = [];
    for (let slot = 0; slot < poolSize; slot++) {
      const tile = this.makeTile(slot);
      this.tiles.push(tile);
      this.free.push(tile);
    }
    this.free.reverse();   // lowest slots first

    this.observer = new IntersectionObserver((entries) => this.onIntersections(entries), { root: null, rootMargin: '0px' });
    this.endObserver = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.handlers.onNearEnd();
    }, { root: null, rootMargin: '0px 0px 900px 0px' });
    this.endObserver.observe(this.end);
    // The observer reports changes only: an end that stays in reach while a page lands is
    // caught by looking again on each scroll (once per frame).
    window.addEventListener('scroll', () => {
      if (this.scrollCheck) return;
      this.scrollCheck = true;
      requestAnimationFrame(() => { this.scrollCheck = false; if (this.nearEnd()) this.handlers.onNearEnd(); });
    }, { passive: true });

    session.on('thumbnail.progress', (p) => this.onProgress(p));
    session.on('thumbnail.dimensions', (p) => this.onDimensions(p));
    this.resizeObserver = new ResizeObserver(() => this.relayoutSoon());
    this.resizeObserver.observe(root);
  }

  makeTile(slot) {
    const el = document.createElement('figure');
    el.className = 'tile';
    el.dataset.slot = String(slot);
    el.dataset.state = 'idle';
    el.hidden = true;
    const img = document.createElement('img');
    img.alt = '';
    img.decoding = 'async';
    const caption = document.createElement('figcaption');
    const bar = document.createElement('div');
    bar.className = 'progress';
    const fill = document.createElement('div');
    bar.appendChild(fill);
    img.draggable = false;
    const badge = document.createElement('div');
    badge.className = 'badge';
    const label = document.createElement('div');
    label.className = 'label';
    el.append(img, caption, bar, badge, label);
    el.setAttribute('role', 'button');
    el.setAttribute('aria-haspopup', 'menu');
    el.tabIndex = -1;
    const tile = { slot, el, img, caption, fill, badge, label, item: null, request: null };
    el.addEventListener('click', () => { if (tile.item) this.handlers.onOpen(tile.item.photo, tile); });
    el.addEventListener('keydown', (e) => {
      if ((e.key === 'Enter' || e.key === ' ') && tile.item && e.target === el) { e.preventDefault(); this.handlers.onOpen(tile.item.photo, tile); }
    });
    attachMenuGestures(el, () => (tile.item ? tile : null), (t, at, via, heldMs) => this.handlers.onMenu(t, at, via, heldMs));
    img.addEventListener('load', () => {
      if (tile.item && img.dataset.photo === tile.item.photo.id) {
        el.dataset.state = 'loaded';
        this.checkAspect(tile);
      }
    });
    img.addEventListener('error', () => {
      // The file was evicted after its grace period: ask the daemon again, once.
      if (tile.item && tile.el.dataset.state === 'delivered' && !tile.retried) { tile.retried = true; this.show(tile); }
    });
    this.root.appendChild(el);
    return tile;
  }

  /** Replaces every photo (a new search): recycles what loads, forgets everything. */
  reset(stale) {
    for (const item of this.items) {
      this.observer.unobserve(item.sentinel);
      if (item.tile) this.release(item.tile);
    }
    this.items = [];
    this.bySentinel.clear();
    this.waiting.clear();
    this.layer.replaceChildren();
    this.setStale(stale);
    this.relayout();
  }

  setStale(stale) {
    this.stale = !!stale;
    this.root.classList.toggle('stale', this.stale);
  }

  /** Keeps in the layout only the photos `predicate` accepts (null: every photo), and lays them out again. */
  setFilter(predicate) {
    this.filter = predicate || null;
    for (const item of this.items) this.applyFilter(item);
    this.relayout();
  }

  /** How many photos the filter keeps. */
  get shownCount() { return this.items.reduce((n, item) => n + (item.shown ? 1 : 0), 0); }

  /** Shows or hides one photo by the filter: a hidden photo gives its tile back and is not observed. */
  applyFilter(item) {
    const shown = !this.filter || !!this.filter(item.photo);
    if (shown === item.shown) return;
    item.shown = shown;
    item.sentinel.hidden = !shown;
    if (shown) {
      this.observer.observe(item.sentinel);
    } else {
      this.observer.unobserve(item.sentinel);
      item.visible = false;
      item.frame = null;
      this.leave(item);
    }
  }

  /** Adds a page of photos below the others. */
  append(photos) {
    const known = new Set(this.items.map((i) => i.photo.id));
    for (const photo of photos) {
      if (known.has(photo.id)) continue;   // a provider may repeat a photo across pages
      known.add(photo.id);
      const sentinel = document.createElement('div');
      sentinel.className = 'sentinel';
      const item = { photo, frame: null, sentinel, tile: null, visible: false, shown: false, dims: { width: photo.width, height: photo.height } };
      this.items.push(item);
      this.bySentinel.set(sentinel, item);
      this.layer.appendChild(sentinel);
      sentinel.hidden = true;
      this.applyFilter(item);
    }
    this.relayout();
  }

  /** Whether the end of the grid is within 900 px below the window. */
  nearEnd() { return this.items.length > 0 && this.end.getBoundingClientRect().top < window.innerHeight + 900; }

  relayoutSoon() {
    if (this.relayoutPending) return;
    this.relayoutPending = true;
    requestAnimationFrame(() => { this.relayoutPending = false; this.relayout(); });
  }

  /** Places every photo for the current width; moves sentinels and tiles. */
  relayout() {
    const width = this.root.clientWidth;
    if (width <= 0) return;
    const shown = this.items.filter((i) => i.shown);
    const { frames, columnWidth, height } = Masonry.layout(shown.map((i) => i.dims), width);
    this.columnWidth = columnWidth;
    const size = thumbSizeFor(columnWidth);
    const resized = this.size !== undefined && this.size !== size;
    this.size = size;
    shown.forEach((item, i) => {
      item.frame = frames[i];
      place(item.sentinel, frames[i]);
      if (item.tile) place(item.tile.el, frames[i]);
    });
    this.root.style.height = `${Math.ceil(height)}px`;
    this.end.style.top = `${Math.ceil(height)}px`;
    if (resized) for (const tile of this.tiles) if (tile.item && tile.el.dataset.state !== 'loaded') this.show(tile);
  }

  onIntersections(entries) {
    for (const entry of entries) {
      const item = this.bySentinel.get(entry.target);
      if (!item || !item.shown) continue;
      item.visible = entry.isIntersecting;
      if (entry.isIntersecting) this.enter(item); else this.leave(item);
    }
  }

  /** A photo came on screen: it takes a tile, and the tile's slot asks for it. */
  enter(item) {
    if (item.tile) return;
    const tile = this.free.pop();
    if (!tile) { this.waiting.add(item); return; }
    tile.item = item;
    item.tile = tile;
    const { el, img, caption, fill } = tile;
    el.hidden = false;
    el.classList.remove('slow');
    tile.retried = false;
    el.dataset.photo = item.photo.id;
    el.style.backgroundColor = placeholderColour(item.photo);
    img.removeAttribute('src');
    img.dataset.photo = '';
    const photo = item.photo;
    caption.textContent = photo.author && photo.author.name || '';
    tile.label.textContent = photoLabel(photo);
    el.dataset.sponsored = photo.sponsored === true ? 'true' : 'false';
    el.dataset.media = photo.media === 'video' ? 'video' : 'photo';
    el.tabIndex = 0;
    el.setAttribute('aria-label', [photo.media === 'video' ? 'Video' : 'Photo',
      photo.author && photo.author.name ? `by ${photo.author.name}` : '', tile.label.textContent].filter(Boolean).join(', '));
    fill.style.width = '0%';
    place(el, item.frame);
    this.show(tile);
  }

  show(tile) {
    const item = tile.item;
    tile.el.dataset.state = 'loading';
    tile.badge.textContent = '';
    this.stats.shows++;
    const request = this.session.request('thumbnail.show', { slot: tile.slot, view: this.view, photo: item.photo.id, size: this.size });
    tile.request = request.id;
    request.answer.then((thumb) => {
      if (tile.request !== request.id || tile.item !== item) return;   // an answer for what this tile used to show
      if (thumb.photo !== item.photo.id) { this.stats.wrongPhoto++; return; }
      this.stats.delivered++;
      tile.el.dataset.state = 'delivered';
      tile.el.dataset.source = thumb.source;
      tile.fill.style.width = '100%';
      tile.img.dataset.photo = thumb.photo;
      tile.img.src = imageURL(thumb.path);
    }, (error) => {
      if (tile.request !== request.id || tile.item !== item) return;
      if (error.kind === 'cancelled') { this.stats.cancelled++; return; }
      this.stats.failed++;
      tile.el.dataset.state = 'failed';
      tile.badge.textContent = error.kind === 'network_unavailable' ? 'offline' : error.kind.replace(/_/g, ' ');
      tile.el.title = error.message;
      this.handlers.onTileError(error);
    });
  }

  /** A photo left the screen: its tile goes back to the pool, its slot is recycled if loading. */
  leave(item) {
    this.waiting.delete(item);
    if (item.tile) this.release(item.tile);
    const next = this.waiting.values().next();
    if (!next.done) { this.waiting.delete(next.value); this.enter(next.value); }
  }

  release(tile) {
    const loading = tile.el.dataset.state === 'loading';
    if (loading) {
      this.stats.recycles++;
      this.session.request('thumbnail.recycle', { slot: tile.slot, view: this.view }).answer.catch(() => {});
    }
    if (tile.item) tile.item.tile = null;
    tile.item = null;
    tile.request = null;
    tile.el.hidden = true;
    tile.el.tabIndex = -1;
    tile.el.dataset.state = 'idle';
    tile.el.dataset.photo = '';
    tile.el.title = '';
    tile.img.removeAttribute('src');
    tile.img.dataset.photo = '';
    this.free.push(tile);
  }

  onProgress(p) {
    if (p.view !== this.view) return;
    const tile = this.tiles[p.slot];
    if (!tile || !tile.item || tile.item.photo.id !== p.photo || tile.el.dataset.state !== 'loading') return;
    if (p.total > 0) tile.fill.style.width = `${Math.min(100, (100 * p.received) / p.total).toFixed(1)}%`;
    tile.el.classList.add('slow');
  }

  /** The real size, read from the header before the bytes are all there. */
  onDimensions(p) {
    if (p.view !== this.view) return;
    const item = this.items.find((i) => i.photo.id === p.photo);
    if (item) this.setDims(item, p.width, p.height);
  }

  checkAspect(tile) {
    const { naturalWidth: w, naturalHeight: h } = tile.img;
    if (tile.item && w > 0 && h > 0) this.setDims(tile.item, w, h);
  }

  setDims(item, width, height) {
    const old = item.dims;
    if (old.width > 0 && old.height > 0 && Math.abs(old.height / old.width - height / width) < 0.01) return;
    item.dims = { width, height };
    this.relayoutSoon();
  }

  /** What the tests and the status line read: each shown tile's slot, photo and state. */
  snapshot() {
    return this.tiles.filter((t) => t.item).map((t) => ({
      slot: t.slot, photo: t.item.photo.id, shown: t.img.dataset.photo || null, state: t.el.dataset.state,
      naturalWidth: t.img.naturalWidth, naturalHeight: t.img.naturalHeight,
      photoWidth: t.item.photo.width, photoHeight: t.item.photo.height,
    }));
  }
}

/**
 * What a tile says over its picture: "Sponsored" (and by whom, where the provider names the
 * sponsor) on a paid placement, as Unsplash asks of apps that show its feeds; "Video" on a video.
 */
function photoLabel(photo) {
  if (photo.sponsored === true) return typeof photo.sponsor === 'string' && photo.sponsor ? `Sponsored by ${photo.sponsor}` : 'Sponsored';
  return photo.media === 'video' ? 'Video' : '';
}

function place(el, frame) {
  if (!frame) return;
  el.style.transform = `translate(${frame.x}px, ${frame.y}px)`;
  el.style.width = `${frame.width}px`;
  el.style.height = `${frame.height}px`;
}
