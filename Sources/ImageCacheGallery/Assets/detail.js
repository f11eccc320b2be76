// One photo large. The `regular` size (1080 px wide) through `thumbnail.show` on
// the `detail` view, with its progress; the author linked to their profile (Unsplash links
// carry its attribution parameters); likes, description and `photo.get`'s details, with its
// dates named ("Taken", "Uploaded"); Metadata, the full list (metadata.js); and Save, a
// `download` whose progress and final path are shown as the daemon reports them (never
// offered for a video, which has no full-size photo to save).
'use strict';

const ATTRIBUTION = { utm_source: 'imagecached', utm_medium: 'referral' };

/** Unsplash asks every link to its pages to carry utm_source and utm_medium. */
function attributed(url, provider) {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
    if (provider === 'unsplash') for (const [k, v] of Object.entries(ATTRIBUTION)) if (!u.searchParams.has(k)) u.searchParams.set(k, v);
    return u.toString();
  } catch (e) { return null; }
}

/** Each provider's home page, linked beside its name in every attribution. */
const PROVIDER_HOMES = { unsplash: 'https://unsplash.com/', flickr: 'https://www.flickr.com/', pixabay: 'https://pixabay.com/' };

function providerName(p) { return { unsplash: 'Unsplash', flickr: 'Flickr', pixabay: 'Pixabay' }[p] || p; }

/** A photo's upload time: `uploadedAt`, or `createdAt` from a daemon that names the same time so. */
function uploadedAt(photo) { return photo.uploadedAt || photo.createdAt || null; }

/** An ISO 8601 time as a reader's date and time (UTC, said so); the text as it came when it is not one. */
function formatTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';
}

class DetailView {
  /** handlers: {onMetadata(photo, opener), onDetails(photo): photo.get answered}. */
  constructor(session, root, downloads, handlers) {
    this.session = session;
    this.root = root;
    this.downloads = downloads;
    this.handlers = handlers;
    this.view = 'detail';
    this.slot = 0;
    this.photo = null;
    this.request = null;
    this.el = (name) => root.querySelector(`[data-detail="${name}"]`);
    this.el('close').addEventListener('click', () => this.close());
    root.addEventListener('click', (e) => { if (e.target === root) this.close(); });
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && !root.hidden) this.close(); });
    this.el('save').addEventListener('click', () => this.save());
    this.el('metadata').addEventListener('click', () => { if (this.photo) this.handlers.onMetadata(this.full || this.photo, this.el('metadata')); });
    session.on('thumbnail.progress', (p) => {
      if (p.view === this.view && this.photo && p.photo === this.photo.id && p.total > 0) {
        this.el('progress').style.width = `${Math.min(100, (100 * p.received) / p.total).toFixed(1)}%`;
        this.el('loading').textContent = `loading ${formatBytes(p.received)} of ${formatBytes(p.total)}`;
      }
    });
  }

  open(photo, tile) {
    this.photo = photo;
    this.full = null;
    this.root.hidden = false;
    document.body.classList.add('detail-open');
    const image = this.el('image');
    image.removeAttribute('src');
    image.dataset.photo = '';
    // The grid's thumbnail stands in, blurred, while the large one arrives.
    const preview = this.el('preview');
    if (tile && tile.img.getAttribute('src')) preview.src = tile.img.getAttribute('src'); else preview.removeAttribute('src');
    const frame = this.el('frame');
    frame.style.aspectRatio = photo.width > 0 && photo.height > 0 ? `${photo.width} / ${photo.height}` : '3 / 2';
    frame.dataset.state = 'loading';
    this.el('progress').style.width = '0%';
    this.el('loading').textContent = 'loading…';
    this.fill(photo);
    this.el('save-state').textContent = '';
    this.el('save-bar').style.width = '0%';
    this.el('save').disabled = false;
    this.el('save').hidden = photo.media === 'video';
    this.currentJob = null;
    this.loadImage(photo);
    this.session.call('photo.get', { photo: photo.id }).then((full) => {
      this.handlers.onDetails(full);
      if (this.photo && this.photo.id === full.id) { this.full = full; this.fill(full); }
    }, () => {});
  }

  loadImage(photo) {
    const request = this.session.request('thumbnail.show', { slot: this.slot, view: this.view, photo: photo.id, size: 1080 });
    this.request = request.id;
    request.answer.then((thumb) => {
      if (this.request !== request.id) return;
      const image = this.el('image');
      image.dataset.photo = thumb.photo;
      image.onload = () => { if (this.request === request.id) this.el('frame').dataset.state = 'loaded'; };
      image.src = imageURL(thumb.path);
      this.el('progress').style.width = '100%';
      this.el('loading').textContent = `${thumb.width}×${thumb.height}, ${formatBytes(thumb.bytes)} from ${thumb.source}`;
    }, (error) => {
      if (this.request !== request.id || error.kind === 'cancelled') return;
      this.el('frame').dataset.state = 'failed';
      this.el('loading').textContent = error.kind === 'network_unavailable'
        ? 'The network is unavailable and this size is not in the cache.' : error.message;
    });
  }

  fill(photo) {
    const author = this.el('author');
    author.textContent = photo.author && photo.author.name || 'unknown author';
    const profile = attributed(photo.author && photo.author.profileURL, photo.provider);
    if (profile) author.href = profile; else author.removeAttribute('href');
    const site = this.el('provider');
    site.textContent = providerName(photo.provider);
    const home = PROVIDER_HOMES[photo.provider];
    if (home) site.href = attributed(home, photo.provider); else site.removeAttribute('href');
    const page = attributed(photo.pageURL, photo.provider);
    const pageLink = this.el('page');
    pageLink.hidden = !page;
    if (page) pageLink.href = page;
    this.el('likes').textContent = photo.likes === null || photo.likes === undefined ? '' : `♥ ${photo.likes.toLocaleString()}`;
    this.el('description').textContent = photo.description || '';
    const facts = [];
    if (photo.width && photo.height) facts.push(`${photo.width} × ${photo.height}`);
    if (photo.views) facts.push(`${photo.views.toLocaleString()} views`);
    if (photo.downloads) facts.push(`${photo.downloads.toLocaleString()} downloads`);
    if (photo.takenAt) facts.push(`Taken ${formatTime(photo.takenAt)}`);
    if (uploadedAt(photo)) facts.push(`Uploaded ${formatTime(uploadedAt(photo))}`);
    if (photo.location && (photo.location.city || photo.location.country)) facts.push([photo.location.city, photo.location.country].filter(Boolean).join(', '));
    if (photo.exif && photo.exif.model) facts.push([photo.exif.make, photo.exif.model].filter(Boolean).join(' '));
    this.el('facts').textContent = facts.join(' · ');
    this.el('tags').textContent = (photo.tags || []).map((t) => `#${t}`).join(' ');
    this.el('sponsored').textContent = photoLabel(photo);
    this.el('save').hidden = photo.media === 'video';
  }

  close() {
    if (this.root.hidden) return;
    if (this.el('frame').dataset.state === 'loading') {
      this.session.request('thumbnail.recycle', { slot: this.slot, view: this.view }).answer.catch(() => {});
    }
    this.request = null;
    this.photo = null;
    this.root.hidden = true;
    document.body.classList.remove('detail-open');
  }

  save() {
    const photo = this.photo;
    if (!photo || photo.media === 'video') return;
    const button = this.el('save');
    const state = this.el('save-state');
    const bar = this.el('save-bar');
    button.disabled = true;
    state.textContent = 'starting…';
    const started = {};
    this.currentJob = started;
    this.downloads.start(photo, (name, p) => {
      if (this.currentJob !== started) return;   // another photo's Save since
      renderDownload(name, p, state, bar);
      if (name !== 'download.progress') button.disabled = false;
    }).catch((error) => {
      if (this.currentJob !== started) return;
      button.disabled = false;
      state.textContent = `could not save: ${error.message}`;
    });
  }
}
